package kafkaio

import "github.com/segmentio/kafka-go"

// NewBalancer returns the partitioner of distfeat's keyed records: kafka-go's
// Murmur2Balancer with Consistent set. It places a key exactly where the Java client's
// default partitioner (and librdkafka's "murmur2" partitioner) places it:
// toPositive(murmur2(key)) % numPartitions, with Kafka's murmur2 variant (seed 0x9747b28c,
// Utils.murmur2 in the Java client) and toPositive(h) = h & 0x7fffffff. So a set ID is on the
// same partition whichever client produced it; balancer_test.go pins this with the Java and
// librdkafka test vectors.
//
// Keys: distfeat keys every record by its set ID, and PointWriter refuses an empty set ID.
// Consistent makes a nil key hash like the empty key (librdkafka's "murmur2", not
// "murmur2_random", and not the Java client's sticky partition), so the balancer is
// deterministic and stateless and replays land where the original records did.
func NewBalancer() kafka.Balancer { return kafka.Murmur2Balancer{Consistent: true} }
