package consumer

import (
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/segmentio/kafka-go"

	"github.com/distfeat/distfeat/internal/testbroker"
	"github.com/distfeat/distfeat/window"
)

// TestNewBudget: a partition's shares add up to no more than its part of the budget when the
// budget is above the floor, and the floor is what a partition holds whatever the budget.
func TestNewBudget(t *testing.T) {
	const maxRecord, maxOutput = 2 << 20, 1_000_000
	for _, tc := range []struct {
		total      int64
		partitions int
	}{
		{128 << 20, 1}, {128 << 20, 8}, {128 << 20, 16}, {16 << 20, 1}, {256 << 20, 3}, {1 << 20, 64},
	} {
		b := newBudget(tc.total, tc.partitions, maxRecord, maxOutput)
		sum := b.fetchBytes() + b.queue + b.output + maxOutput
		if sum != b.floor {
			t.Errorf("%+v: floor %d, shares add up to %d", tc, b.floor, sum)
		}
		if b.requested >= b.floor && sum > b.requested {
			t.Errorf("%+v: shares add up to %d, over the partition's %d", tc, sum, b.requested)
		}
		if b.fetchCap < 1 || b.queue < maxRecord || b.output < maxOutput {
			t.Errorf("%+v: %+v cannot hold one maximum record per stage", tc, b)
		}
	}
}

// TestBufferedBytesBounded is issue 13's reproduction with the output blocked: 200 KB records
// (each one dead-lettered, so its output is as large as itself) keep arriving while the
// dead-letter topic refuses writes. The records the worker holds — queued for the processor,
// and output pending or in flight — stay within DISTFEAT_MAX_BUFFER_BYTES less the fetch
// stage's share, the worker stops reading (far fewer records processed than produced), and
// once the topic accepts writes every dead letter is delivered and the gauges return to 0.
func TestBufferedBytesBounded(t *testing.T) {
	t.Parallel()
	skipOnRealCluster(t)
	b := startBroker(t, testbroker.Options{Partitions: 1})
	h := newHarnessEnv(t, defaultTopics(b.Addrs()[0]), smallSpec)
	cfg := h.config("budget", window.Config{})
	cfg.MaxMessageBytes = 256 << 10
	cfg.MaxBufferBytes = 16 << 20
	rw := h.start(cfg, nil)
	waitUntil(t, 10*time.Second, "Ready()", rw.w.Ready)

	var blocked atomic.Bool
	blocked.Store(true)
	failed := blockOutput(b, h.env.DLQ, &blocked)
	const records, size = 100, 200_000
	msgs := make([]kafka.Message, records)
	for i := range msgs {
		key := fmt.Sprintf("big-%03d", i)
		// Three coordinates for a two-dimensional spec: a dim error, dead-lettered whole.
		v := `{"set":"` + key + `","points":[` + strings.Repeat(`[0.25,0.5,0.75],`, size/16) + `[0.1,0.2,0.3]]}`
		msgs[i] = kafka.Message{Key: []byte(key), Value: []byte(v)}
	}
	h.produceRaw(msgs...)

	bud := newBudget(int64(cfg.MaxBufferBytes), 1, cfg.MaxMessageBytes+(1<<20), 1_000_000)
	bound := float64(int64(cfg.MaxBufferBytes) - bud.fetchBytes())
	held := func() float64 {
		return testutilCounter(rw.metrics.BufferedBytes.WithLabelValues("queue")) +
			testutilCounter(rw.metrics.BufferedBytes.WithLabelValues("output"))
	}
	invalid := func() float64 { return testutilCounter(rw.metrics.Records.WithLabelValues("invalid")) }
	var peak float64
	last, since := invalid(), time.Now()
	waitUntil(t, 30*time.Second, "the worker to stall with its output blocked", func() bool {
		peak = max(peak, held())
		if n := invalid(); n != last {
			last, since = n, time.Now()
		}
		return failed.Load() > 0 && time.Since(since) > 500*time.Millisecond
	})
	for range 20 {
		peak = max(peak, held())
		time.Sleep(10 * time.Millisecond)
	}
	t.Logf("stalled: %v of %d records processed, peak %.0f bytes held (bound %.0f)", last, records, peak, bound)
	if peak > bound {
		t.Errorf("the worker held %.0f bytes of records, over DISTFEAT_MAX_BUFFER_BYTES less the fetch share (%.0f)", peak, bound)
	}
	if peak < float64(bud.queue)/2 {
		t.Errorf("peak %.0f bytes held: the queue (%d bytes) never filled, the test did not load it", peak, bud.queue)
	}
	if last >= records {
		t.Errorf("all %d records processed with the output blocked: no back-pressure", records)
	}

	blocked.Store(false)
	// The DLQ's end offset, not a reader: reading megabytes of dead letters back under -race
	// on a loaded machine trips kafka-go's fetch deadline, which says nothing of the worker.
	waitUntil(t, 60*time.Second, fmt.Sprintf("%d dead letters", records), func() bool { return h.topicEnds(h.env.DLQ)[0] == records })
	waitUntil(t, 10*time.Second, "the buffered bytes to drain", func() bool { return held() == 0 })
}
