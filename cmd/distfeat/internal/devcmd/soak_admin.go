//go:build dev

package devcmd

// Topic administration on the soak's embedded broker: end offsets, segment size, trimming.

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"strconv"
	"time"

	"github.com/segmentio/kafka-go"

	"github.com/distfeat/distfeat/internal/testbroker"
)

// topicEnd is the number of records ever written to a topic: Σ over partitions of the high
// watermark (the topics start empty at offset 0; records already read may have been trimmed).
func topicEnd(ctx context.Context, brokers []string, topic string) (int64, error) {
	tr := &kafka.Transport{DialTimeout: 5 * time.Second}
	defer tr.CloseIdleConnections()
	cl := &kafka.Client{Addr: kafka.TCP(brokers...), Transport: tr, Timeout: 10 * time.Second}
	md, err := cl.Metadata(ctx, &kafka.MetadataRequest{Topics: []string{topic}})
	if err != nil {
		return 0, err
	}
	var reqs []kafka.OffsetRequest
	for _, t := range md.Topics {
		if t.Name == topic {
			for _, p := range t.Partitions {
				reqs = append(reqs, kafka.LastOffsetOf(p.ID))
			}
		}
	}
	if len(reqs) == 0 {
		return 0, fmt.Errorf("topic %q not found", topic)
	}
	res, err := cl.ListOffsets(ctx, &kafka.ListOffsetsRequest{Topics: map[string][]kafka.OffsetRequest{topic: reqs}})
	if err != nil {
		return 0, err
	}
	var n int64
	for _, po := range res.Topics[topic] {
		if po.Error != nil {
			return 0, fmt.Errorf("partition %d: %w", po.Partition, po.Error)
		}
		n += po.LastOffset
	}
	return n, nil
}

// trim deletes the feature records already read from the embedded broker, which keeps
// every record in memory: 100 000 keys make ~200 000 records of ~23 kB each with the
// default spec. Only hashes are needed to compare later duplicates.
func (c *soakCollector) trim(b *testbroker.Broker, topic string) {
	c.mu.Lock()
	readTo := maps.Clone(c.readTo)
	c.mu.Unlock()
	for p, off := range readTo {
		_ = b.Cluster().DeleteRecords(topic, int32(p), off)
	}
}

// soakSmallSegments sets segment.bytes of the input and feature topics to 4 MiB: the
// embedded broker frees a deleted range only a whole segment at a time (default 100 MiB per
// partition), so without it trimming (trimConsumed, soakCollector.trim) frees nothing.
func soakSmallSegments(ctx context.Context, brokers []string) error {
	tr := &kafka.Transport{DialTimeout: 5 * time.Second}
	defer tr.CloseIdleConnections()
	cl := &kafka.Client{Addr: kafka.TCP(brokers...), Transport: tr, Timeout: 10 * time.Second}
	req := &kafka.AlterConfigsRequest{}
	for _, t := range []string{testbroker.TopicPoints, testbroker.TopicFeatures} {
		req.Resources = append(req.Resources, kafka.AlterConfigRequestResource{ResourceType: kafka.ResourceTypeTopic, ResourceName: t,
			Configs: []kafka.AlterConfigRequestConfig{{Name: "segment.bytes", Value: strconv.Itoa(4 << 20)}}})
	}
	res, err := cl.AlterConfigs(ctx, req)
	if err == nil {
		for r, e := range res.Errors {
			if e != nil {
				err = errors.Join(err, fmt.Errorf("%s: %w", r.Name, e))
			}
		}
	}
	if err != nil {
		return fmt.Errorf("setting segment.bytes: %w", err)
	}
	return nil
}

// trimConsumed deletes input records below the group's committed offsets from the embedded
// broker (no member ever reads below them again), so that long soaks do not accumulate
// every point in the soak process's memory.
func trimConsumed(ctx context.Context, b *testbroker.Broker, admin *kafka.Client, partitions int) {
	parts := make([]int, partitions)
	for i := range parts {
		parts[i] = i
	}
	res, err := admin.OffsetFetch(ctx, &kafka.OffsetFetchRequest{GroupID: soakGroup, Topics: map[string][]int{testbroker.TopicPoints: parts}})
	if err != nil || res.Error != nil {
		return
	}
	for _, p := range res.Topics[testbroker.TopicPoints] {
		if p.Error == nil && p.CommittedOffset > 0 {
			_ = b.Cluster().DeleteRecords(testbroker.TopicPoints, int32(p.Partition), p.CommittedOffset)
		}
	}
}
