package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/segmentio/kafka-go"

	"github.com/distfeat/distfeat/internal/kafkaconn"
	"github.com/distfeat/distfeat/schema"
)

func runTail(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("tail", "", "Records that are not feature records are reported on stderr and skipped; but a record\nwithout a spec-id header read before any feature record ends tail with an error (--topic\nis then not a feature topic). --max stops after N records, --idle-exit after a quiet spell\n(exit 0), --timeout after a fixed time (exit 1 if --max records have not arrived).", stderr)
	brokers := fs.String("brokers", envOr("BROKERS", "127.0.0.1:9092"), "bootstrap brokers, comma-separated (DISTFEAT_BROKERS; `host:port,...`)")
	topic := fs.String("topic", envOr("OUTPUT_TOPIC", "features"), "feature `topic` (DISTFEAT_OUTPUT_TOPIC)")
	fromBeginning := fs.Bool("from-beginning", false, "start at the oldest record instead of new ones")
	max := fs.Int("max", 0, "stop after N records (0: run until interrupted)")
	idle := fs.Duration("idle-exit", 0, "stop after this long without records (0: never)")
	timeout := fs.Duration("timeout", 0, "stop after this long in all; an error if --max records have not arrived by then (0: no limit)")
	cc, err := parseClientFlags(fs, args)
	if err != nil {
		return err
	}
	switch {
	case *max < 0:
		return usageError(fmt.Sprintf("--max %d: want 0 (no limit) or more", *max))
	case *idle < 0:
		return usageError(fmt.Sprintf("--idle-exit %s: want 0 (never) or more", *idle))
	case *timeout < 0:
		return usageError(fmt.Sprintf("--timeout %s: want 0 (no limit) or more", *timeout))
	}
	cc.brokers = strings.Split(*brokers, ",")
	out := bufio.NewWriter(stdout)
	defer out.Flush()
	tctx, cancel := context.WithCancel(ctx)
	if *timeout > 0 {
		tctx, cancel = context.WithTimeout(ctx, *timeout)
	}
	defer cancel()
	n := 0
	var wrongTopic error
	err = consumeFeatures(tctx, cc, *topic, *fromBeginning, *idle, func(m kafka.Message, recs []schema.FeatureRecord, cols []string) bool {
		for _, r := range recs {
			b, err := json.Marshal(schema.LineFromRecord(r, cols))
			if err != nil {
				fmt.Fprintf(stderr, "tail: partition %d offset %d: %v\n", m.Partition, m.Offset, err)
				continue
			}
			out.Write(b)
			out.WriteByte('\n')
			n++
		}
		out.Flush()
		return *max == 0 || n < *max
	}, func(m kafka.Message, err error) {
		if wrongTopic != nil {
			return // stopping: records already fetched add nothing
		}
		if n == 0 && !hasHeader(m, schema.HeaderSpecID) {
			wrongTopic = fmt.Errorf("topic %q: partition %d offset %d is not a feature record and has no %s header (%v): is --topic the feature topic (DISTFEAT_OUTPUT_TOPIC)?",
				*topic, m.Partition, m.Offset, schema.HeaderSpecID, err)
			cancel()
			return
		}
		fmt.Fprintf(stderr, "tail: partition %d offset %d: not a feature record: %v\n", m.Partition, m.Offset, err)
	})
	switch {
	case wrongTopic != nil:
		return wrongTopic
	case err == nil && ctx.Err() == nil && errors.Is(tctx.Err(), context.DeadlineExceeded) && *max > 0 && n < *max:
		return fmt.Errorf("%d of --max %d records within --timeout %s", n, *max, *timeout)
	}
	return err
}

// hasHeader reports whether m carries the header key.
func hasHeader(m kafka.Message, key string) bool {
	for _, h := range m.Headers {
		if h.Key == key {
			return true
		}
	}
	return false
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

// consumeFeatures reads every partition of topic (no consumer group) and calls onRecord for
// each decoded message until it returns false, ctx ends, or idle passes without records.
func consumeFeatures(ctx context.Context, cc clusterConn, topic string, fromBeginning bool, idle time.Duration,
	onRecord func(kafka.Message, []schema.FeatureRecord, []string) bool, onBad func(kafka.Message, error)) error {
	brokers := cc.brokers
	parts, err := partitionsOf(ctx, cc, topic)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	msgs := make(chan kafka.Message, 256)
	errs := make(chan error, len(parts)) // a reader that gave up (not authorised to read, …)
	var wg sync.WaitGroup
	for _, p := range parts {
		r := kafka.NewReader(kafka.ReaderConfig{Brokers: brokers, Topic: topic, Partition: p, Dialer: cc.dialer,
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
			return fmt.Errorf("reading %q: %w", topic, cc.explain(ctx, err, "read", fmt.Sprintf("topic %q", topic)))
		case m := <-msgs:
			recs, cols, err := schema.DecodeFeatures(m.Value)
			if err != nil {
				onBad(m, err)
				continue
			}
			if !onRecord(m, recs, cols) {
				return nil
			}
		}
	}
}

// clusterConn is how a client command reaches the cluster: bootstrap brokers plus the
// TLS/SASL-configured dialer (readers) and transport (clients, writers). Nil dialer and
// transport mean plain TCP.
type clusterConn struct {
	brokers   []string
	dialer    *kafka.Dialer
	transport *kafka.Transport
	user      string // the SASL user, named in authentication and authorisation errors
}

func plainConn(brokers []string) clusterConn { return clusterConn{brokers: brokers} }

// partitionsOf lists a topic's partitions.
func partitionsOf(ctx context.Context, cc clusterConn, topic string) ([]int, error) {
	// A transport of its own when cc has none: kafka.DefaultTransport answers metadata
	// requests from its process-wide cache, which does not list a topic created since it
	// was filled (a long-lived process, or tests that share a real cluster).
	tr := cc.transport
	if tr == nil {
		own := &kafka.Transport{}
		defer own.CloseIdleConnections()
		tr = own
	}
	client := &kafka.Client{Addr: kafka.TCP(cc.brokers...), Timeout: 10 * time.Second, Transport: tr}
	md, err := client.Metadata(ctx, &kafka.MetadataRequest{Topics: []string{topic}})
	if err != nil {
		return nil, fmt.Errorf("metadata for %q from %v: %w", topic, cc.brokers, cc.explain(ctx, err, "describe", "the cluster"))
	}
	for _, t := range md.Topics {
		if t.Name != topic {
			continue
		}
		if t.Error != nil {
			if aerr := kafkaconn.Authorization(t.Error, cc.user, "describe", fmt.Sprintf("topic %q", topic)); aerr != nil {
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
