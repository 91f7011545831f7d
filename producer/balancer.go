package producer

import "github.com/segmentio/kafka-go"

// Murmur2Balancer is a kafka.Balancer that places a key exactly where the Java client's
// default partitioner (and librdkafka's "murmur2" partitioner) places it:
// toPositive(murmur2(key)) % numPartitions, with Kafka's murmur2 variant (seed 0x9747b28c,
// see Utils.murmur2 in the Java client) and toPositive(h) = h & 0x7fffffff. So a set ID is on
// the same partition whichever client produced it.
//
// The partitions kafka-go's Writer passes to Balance are always 0..n−1 in order, so indexing
// that list with the hash modulo its length is the Java formula. Any other list is indexed
// the same way (as kafka-go's own balancers do).
//
// Keys: distfeat keys every record by its set ID, and PointWriter refuses an empty set ID, so
// a keyless record never reaches this balancer from distfeat. Where the Java client sends a
// null key to a "sticky" partition that changes over time, this balancer is deliberately
// deterministic and stateless: a nil key is hashed like the empty key (librdkafka's
// "murmur2", not "murmur2_random"), so replays land where the original records did.
type Murmur2Balancer struct{}

// Balance implements kafka.Balancer. partitions must not be empty (kafka-go's Writer never
// calls a balancer for a topic without partitions).
func (Murmur2Balancer) Balance(msg kafka.Message, partitions ...int) int {
	return partitions[partitionIndex(msg.Key, len(partitions))]
}

// partitionIndex is Java's Utils.toPositive(Utils.murmur2(key)) % n.
func partitionIndex(key []byte, n int) int {
	return int((murmur2(key) & 0x7fffffff) % uint32(n))
}

// murmur2 is the Java client's Utils.murmur2: MurmurHash2 (32-bit) with seed 0x9747b28c,
// reading the body as little-endian 32-bit words. The result is returned as the unsigned bit
// pattern of Java's int.
func murmur2(data []byte) uint32 {
	const (
		seed uint32 = 0x9747b28c
		m    uint32 = 0x5bd1e995
		r           = 24
	)
	n := len(data)
	h := seed ^ uint32(n)
	for i := 0; i+4 <= n; i += 4 {
		k := uint32(data[i]) | uint32(data[i+1])<<8 | uint32(data[i+2])<<16 | uint32(data[i+3])<<24
		k *= m
		k ^= k >> r
		k *= m
		h *= m
		h ^= k
	}
	tail := data[n&^3:]
	switch len(tail) {
	case 3:
		h ^= uint32(tail[2]) << 16
		fallthrough
	case 2:
		h ^= uint32(tail[1]) << 8
		fallthrough
	case 1:
		h ^= uint32(tail[0])
		h *= m
	}
	h ^= h >> 13
	h *= m
	h ^= h >> 15
	return h
}
