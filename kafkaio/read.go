package kafkaio

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/segmentio/kafka-go"

	"github.com/distfeat/distfeat/schema"
)

// Record is one record read from a topic.
type Record struct {
	Partition int
	Offset    int64
	Key       []byte
	Value     []byte
	Time      time.Time
	Headers   []Header
}

// Header is a record header.
type Header struct {
	Key   string
	Value []byte
}

func recordOf(m kafka.Message) Record {
	r := Record{Partition: m.Partition, Offset: m.Offset, Key: m.Key, Value: m.Value, Time: m.Time}
	if len(m.Headers) > 0 {
		r.Headers = make([]Header, len(m.Headers))
		for i, h := range m.Headers {
			r.Headers[i] = Header{Key: h.Key, Value: h.Value}
		}
	}
	return r
}

// Header returns the value of the header key and whether the record carries it.
func (r Record) Header(key string) ([]byte, bool) {
	for _, h := range r.Headers {
		if h.Key == key {
			return h.Value, true
		}
	}
	return nil, false
}

// ContentType is the record's content-type header ("" when absent: JSON).
func (r Record) ContentType() string {
	v, _ := r.Header(schema.HeaderContentType)
	return string(v)
}

// The feature readers' fetch settings. kafka-go uses MaxWait also as the read deadline for a
// fetch response's first bytes, and drops a fetch that misses it to send it again from the
// same offset; so MaxWait must leave the broker time to assemble the largest response
// (MaxBytes), or a backlog beyond what it can serve within MaxWait is never read (the soak's
// checker stalled this way behind the race-built embedded broker on a slow machine with
// 100 ms and 64 MiB; 1 MiB takes it ~13 ms there on an idle machine). With MinBytes 1 the broker answers as soon as data is there; MaxWait
// only lengthens fetches that find nothing. A record larger than MaxBytes still comes back
// whole (the broker returns a fetch's first batch whatever its size).
const (
	featureFetchBytes = 1 << 20
	featureFetchWait  = time.Second
)

// ConsumeFeatures reads every partition of topic (no consumer group) and calls onRecord for
// each decoded feature record until it returns false, ctx ends, or idle passes without
// records; onBad hears the records that do not decode.
func ConsumeFeatures(ctx context.Context, c Cluster, topic string, fromBeginning bool, idle time.Duration,
	onRecord func(Record, []schema.FeatureRecord, []string) bool, onBad func(Record, error)) error {
	return Consume(ctx, c, topic, fromBeginning, idle, func(m Record) bool {
		recs, cols, err := schema.DecodeFeatures(m.Value)
		if err != nil {
			onBad(m, err)
			return true
		}
		return onRecord(m, recs, cols)
	})
}

// Consume reads every partition of topic (no consumer group), from its oldest record or
// from new ones, and calls fn for each record until it returns false, ctx ends, or idle
// passes without records.
func Consume(ctx context.Context, c Cluster, topic string, fromBeginning bool, idle time.Duration, fn func(Record) bool) error {
	brokers := c.Brokers
	parts, err := c.Partitions(ctx, topic)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	msgs := make(chan kafka.Message, 256)
	errs := make(chan error, len(parts)) // a reader that gave up (not authorised to read, …)
	var wg sync.WaitGroup
	for _, p := range parts {
		r := kafka.NewReader(kafka.ReaderConfig{Brokers: brokers, Topic: topic, Partition: p, Dialer: c.dialer,
			MinBytes: 1, MaxBytes: featureFetchBytes, MaxWait: featureFetchWait})
		start := kafka.LastOffset
		if fromBeginning {
			start = kafka.FirstOffset
		}
		if err := r.SetOffset(start); err != nil {
			r.Close()
			return err
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer r.Close()
			for {
				m, err := r.ReadMessage(ctx)
				if err != nil {
					if ctx.Err() == nil {
						errs <- fmt.Errorf("partition %d: %w", p, err)
					}
					return
				}
				select {
				case msgs <- m:
				case <-ctx.Done():
					return
				}
			}
		}()
	}
	defer wg.Wait()
	defer cancel()
	var timer <-chan time.Time
	for {
		if idle > 0 {
			timer = time.After(idle)
		}
		select {
		case <-ctx.Done():
			return nil
		case <-timer:
			return nil
		case err := <-errs:
			return fmt.Errorf("reading %q: %w", topic, c.Explain(ctx, err, "read", fmt.Sprintf("topic %q", topic)))
		case m := <-msgs:
			if !fn(recordOf(m)) {
				return nil
			}
		}
	}
}

// ReadFromStart reads topic partition by partition, each from its oldest record to its end
// offset at the start, and calls fn for each record until fn returns false.
func ReadFromStart(ctx context.Context, c Cluster, topic string, fn func(Record) bool) error {
	parts, err := c.Partitions(ctx, topic)
	if err != nil {
		return err
	}
	ends, err := c.OffsetRanges(ctx, topic, parts)
	if err != nil {
		return err
	}
	more := true
	for _, p := range parts {
		if !more {
			break
		}
		if err := c.readPartition(ctx, topic, p, ends[p], func(r Record) bool {
			more = fn(r)
			return more
		}); err != nil {
			return c.Explain(ctx, err, "read", fmt.Sprintf("topic %q", topic))
		}
	}
	return nil
}

// readPartition calls fn for each record of one partition below r.End, until fn returns false.
func (c Cluster) readPartition(ctx context.Context, topic string, p int, r OffsetRange, fn func(Record) bool) error {
	if r.First >= r.End {
		return nil // empty (or everything deleted by retention)
	}
	end := r.End
	rd := kafka.NewReader(kafka.ReaderConfig{Brokers: c.Brokers, Topic: topic, Partition: p, Dialer: c.dialer,
		MinBytes: 1, MaxBytes: featureFetchBytes, MaxWait: FetchMaxWait})
	defer rd.Close()
	if err := rd.SetOffset(kafka.FirstOffset); err != nil {
		return err
	}
	for {
		m, err := rd.ReadMessage(ctx)
		if err != nil {
			return fmt.Errorf("reading %s/%d: %w", topic, p, err)
		}
		if !fn(recordOf(m)) || m.Offset+1 >= end {
			return nil
		}
	}
}

// Follow reads topic from its oldest records as member of the consumer group group and calls
// fn for each record until fn returns false or ctx ends (then ctx's error): for tools that
// wait for a known number of records, such as the predictions of sets they produced.
func Follow(ctx context.Context, c Cluster, topic, group string, fn func(Record) bool) error {
	rd := kafka.NewReader(kafka.ReaderConfig{Brokers: c.Brokers, GroupTopics: []string{topic}, GroupID: group,
		Dialer: c.dialer, StartOffset: kafka.FirstOffset, MinBytes: 1, MaxBytes: featureFetchBytes, MaxWait: FetchMaxWait})
	defer rd.Close()
	for {
		m, err := rd.ReadMessage(ctx)
		if err != nil {
			return c.Explain(ctx, fmt.Errorf("reading %s: %w", topic, err), "read", fmt.Sprintf("topic %q", topic))
		}
		if !fn(recordOf(m)) {
			return nil
		}
	}
}
