package consumer

import (
	"bytes"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/segmentio/kafka-go"

	"github.com/distfeat/distfeat/config"
	"github.com/distfeat/distfeat/schema"
	"github.com/distfeat/distfeat/window"
)

// lockedBuffer is a log sink safe for the worker's goroutines.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestWorkerSilentGarbage (issue 32) on a real broker: a set whose NaN record and far-future
// record were dead-lettered comes out with rejected-records on its feature record; points
// outside the spec's bounds are counted, logged as a WARN naming the set, and
// distfeat_ready and distfeat_buffer_limit_bytes are exported for the alerts.
func TestWorkerSilentGarbage(t *testing.T) {
	t.Parallel()
	h := newHarness(t, 1, smallSpec)
	features := h.collect(h.env.Features)
	dlq := h.collect(h.env.DLQ)
	var logs lockedBuffer
	cfg := h.config("issue32", window.Config{Mode: "set", IdleTimeout: time.Minute, MaxOpen: 100, MaxLead: 60_000})
	rw := h.startLogged(cfg, nil, slog.New(slog.NewTextHandler(&logs, nil)))

	now := time.Now()
	rec := func(key, value string) kafka.Message {
		return kafka.Message{Key: []byte(key), Value: []byte(value), Time: now}
	}
	h.produceRaw(
		rec("a", `{"points": [[0.1, 0.2], [0.3, 0.4], [0.5, 0.6]]}`),
		rec("a", `{"points": [[0.1, NaN], [0.2, 0.2]]}`),
		rec("a", `{"points": [[0.5, 0.5]], "t": 253402300799999}`),
		rec("a", `{"points": [[0.7, 0.8]], "end": true}`),
		rec("far", `{"points": [[5, 5], [6, 6], [0.5, 0.5]], "end": true}`),
	)
	feats := features.waitFor(t, 60*time.Second, "two windows", func(m []kafka.Message) bool { return len(m) >= 2 })
	dl := dlq.waitFor(t, 60*time.Second, "two dead letters", func(m []kafka.Message) bool { return len(m) >= 2 })
	if r1, r2 := headerOf(dl[0], schema.HeaderError), headerOf(dl[1], schema.HeaderError); r1 != schema.ReasonNonFinite || r2 != schema.ReasonFuture {
		t.Errorf("dead letters %s, %s; want nonfinite, future", r1, r2)
	}
	for _, m := range feats {
		rejected := headerOf(m, schema.HeaderRejectedRecords)
		switch string(m.Key) {
		case "a":
			// The NaN record's points cannot be counted (JSON's NaN fails the decoding).
			if rejected != "2" || headerOf(m, schema.HeaderRejectedPoints) != "" {
				t.Errorf("a: rejected-records %q, rejected-points %q; want 2 and none", rejected, headerOf(m, schema.HeaderRejectedPoints))
			}
		case "far":
			if rejected != "" {
				t.Errorf("far: rejected-records %q on a complete window", rejected)
			}
		}
	}
	if got := testutilCounter(rw.metrics.PointsClipped); got != 2 {
		t.Errorf("points_clipped_total %v, want 2", got)
	}
	l := logs.String()
	if !strings.Contains(l, "level=WARN") || !strings.Contains(l, `\"far\" (2 of 3)`) || !strings.Contains(l, "distfeat calibrate") {
		t.Errorf("no clipping WARN naming the set and the remedy in the log:\n%s", l)
	}
	if got := testutilCounter(rw.metrics.BufferLimit); got != float64(config.DefaultMaxBufferBytes) {
		t.Errorf("buffer_limit_bytes %v, want %d", got, config.DefaultMaxBufferBytes)
	}
	if got := testutilCounter(rw.metrics.Ready); got != 1 || !rw.w.Ready() {
		t.Errorf("distfeat_ready %v while Ready() is %v; want 1 and true", got, rw.w.Ready())
	}
}
