package kafkaio

import (
	"context"
	"fmt"
	"time"

	"github.com/segmentio/kafka-go"

	"github.com/distfeat/distfeat/config"
)

// Cluster is how a client command reaches the cluster: bootstrap brokers plus the
// TLS/SASL-configured dialer (readers) and transport (clients, writers). Nil dialer and
// transport mean plain TCP.
type Cluster struct {
	Brokers   []string
	dialer    *kafka.Dialer
	transport *kafka.Transport
	user      string // the SASL user, named in authentication and authorisation errors
}

// NewCluster is the cluster reached with sec's TLS and SASL settings (Clients); the caller
// sets Brokers.
func NewCluster(sec *config.Security) (Cluster, error) {
	dialer, transport, err := Clients(sec)
	return Cluster{dialer: dialer, transport: transport, user: sec.SASLUsername}, err
}

// PlainCluster is brokers reached over plain TCP, without SASL.
func PlainCluster(brokers []string) Cluster { return Cluster{Brokers: brokers} }

// Explain names the cause of a failed request: the principal, operation and resource of an
// authorisation error, else the connection layer that fails (TCP, TLS, SASL), found by a
// probe. Without a finding it returns err.
func (c Cluster) Explain(ctx context.Context, err error, operation, resource string) error {
	if err == nil || ctx.Err() != nil {
		return err
	}
	if aerr := Authorization(err, c.user, operation, resource); aerr != nil {
		return aerr
	}
	dialer := c.dialer
	if dialer == nil {
		dialer = &kafka.Dialer{}
	}
	pctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if perr := Probe(pctx, Target{Brokers: c.Brokers, Dialer: dialer, User: c.user}); perr != nil {
		return fmt.Errorf("%w (the request failed with: %v)", perr, err)
	}
	return err
}

// Partitions lists a topic's partitions.
func (c Cluster) Partitions(ctx context.Context, topic string) ([]int, error) {
	// A transport of its own when c has none: kafka.DefaultTransport answers metadata
	// requests from its process-wide cache, which does not list a topic created since it
	// was filled (a long-lived process, or tests that share a real cluster).
	tr := c.transport
	if tr == nil {
		own := &kafka.Transport{}
		defer own.CloseIdleConnections()
		tr = own
	}
	client := &kafka.Client{Addr: kafka.TCP(c.Brokers...), Timeout: 10 * time.Second, Transport: tr}
	md, err := client.Metadata(ctx, &kafka.MetadataRequest{Topics: []string{topic}})
	if err != nil {
		return nil, fmt.Errorf("metadata for %q from %v: %w", topic, c.Brokers, c.Explain(ctx, err, "describe", "the cluster"))
	}
	for _, t := range md.Topics {
		if t.Name != topic {
			continue
		}
		if t.Error != nil {
			if aerr := Authorization(t.Error, c.user, "describe", fmt.Sprintf("topic %q", topic)); aerr != nil {
				return nil, aerr
			}
			return nil, fmt.Errorf("topic %q: %w", topic, t.Error)
		}
		ids := make([]int, 0, len(t.Partitions))
		for _, p := range t.Partitions {
			ids = append(ids, p.ID)
		}
		return ids, nil
	}
	return nil, fmt.Errorf("topic %q not found", topic)
}

// OffsetRange is a partition's first offset and end offset (the next one to be written).
type OffsetRange struct{ First, End int64 }

// OffsetRanges returns each partition's offset range.
func (c Cluster) OffsetRanges(ctx context.Context, topic string, parts []int) (map[int]OffsetRange, error) {
	client := &kafka.Client{Addr: kafka.TCP(c.Brokers...), Timeout: 10 * time.Second}
	if c.transport != nil {
		client.Transport = c.transport
	}
	req := &kafka.ListOffsetsRequest{Topics: map[string][]kafka.OffsetRequest{}}
	for _, p := range parts {
		req.Topics[topic] = append(req.Topics[topic], kafka.FirstOffsetOf(p), kafka.LastOffsetOf(p))
	}
	res, err := client.ListOffsets(ctx, req)
	if err != nil {
		return nil, fmt.Errorf("offsets of %q: %w", topic, err)
	}
	ranges := map[int]OffsetRange{}
	for _, po := range res.Topics[topic] {
		if po.Error != nil {
			return nil, fmt.Errorf("offsets of %s/%d: %w", topic, po.Partition, po.Error)
		}
		ranges[po.Partition] = OffsetRange{First: po.FirstOffset, End: po.LastOffset}
	}
	return ranges, nil
}
