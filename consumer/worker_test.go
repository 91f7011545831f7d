package consumer

import (
	"bytes"

	"fmt"
	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/array"
	"github.com/apache/arrow/go/v15/arrow/ipc"
	"github.com/apache/arrow/go/v15/arrow/memory"
	"math"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/segmentio/kafka-go"

	"github.com/distfeat/distfeat/embedding"
	"github.com/distfeat/distfeat/schema"
	"github.com/distfeat/distfeat/window"
)

// randomSets draws n sets of `points` uniform points in [0,1]² with the frozen RNG.
func randomSets(seed uint64, prefix string, n, points int, t0 int64) []schema.Batch {
	rng := embedding.NewRNG(seed, "consumer-test")
	out := make([]schema.Batch, n)
	for i := range out {
		pts := make([]float64, 2*points)
		for j := range pts {
			pts[j] = rng.Float64()
		}
		out[i] = schema.Batch{Set: fmt.Sprintf("%s-%03d", prefix, i), Points: pts, N: points, EventTime: t0 + int64(i), End: true}
	}
	return out
}

// offline is the `distfeat embed` path for one whole set.
func (h *harness) offline(t *testing.T, b schema.Batch) [][]float32 {
	t.Helper()
	u := make([]float64, len(b.Points))
	if _, err := h.emb.Normalize(u, b.Points); err != nil {
		t.Fatal(err)
	}
	return h.emb.Embed(u)
}

// TestEndToEndBitIdentical: sets produced as JSON and as Arrow come back as Arrow feature
// records whose vectors are bit-identical to the offline embedding of the same points.
func TestEndToEndBitIdentical(t *testing.T) {
	t.Parallel() // each test has its own broker; most of their time is waiting
	h := newHarness(t, 4, smallSpec)
	features := h.collect(h.env.Features)
	h.start(h.config("e2e", window.Config{}), nil)

	jsonSets := randomSets(1, "json", 6, 700, 1_700_000_000_000)
	arrowSets := randomSets(2, "arrow", 6, 700, 1_700_000_000_000)
	h.produce("json", 250, jsonSets...)
	h.produce("arrow", 300, arrowSets...)
	all := append(append([]schema.Batch(nil), jsonSets...), arrowSets...)

	msgs := features.waitFor(t, 60*time.Second, "12 windows", func(m []kafka.Message) bool { return distinctWindows(m) >= len(all) })
	got := map[string]kafka.Message{}
	for _, m := range byWindow(t, msgs) {
		got[string(m.Key)] = m
	}
	for _, b := range all {
		m, ok := got[b.Set]
		if !ok {
			t.Errorf("set %s: no feature record", b.Set)
			continue
		}
		if ct := headerOf(m, schema.HeaderContentType); ct != schema.ContentTypeArrow {
			t.Errorf("set %s: content-type %q", b.Set, ct)
		}
		if id := headerOf(m, schema.HeaderSpecID); id != h.emb.Spec().ID() {
			t.Errorf("set %s: spec-id %q, want %q", b.Set, id, h.emb.Spec().ID())
		}
		recs, cols, err := schema.DecodeFeatures(m.Value)
		if err != nil || len(recs) != 1 {
			t.Fatalf("set %s: decode: %v (%d rows)", b.Set, err, len(recs))
		}
		r := recs[0]
		if r.Set != b.Set || r.N != int64(b.N) || r.SpecID != h.emb.Spec().ID() {
			t.Errorf("set %s: got set=%q n=%d spec=%q", b.Set, r.Set, r.N, r.SpecID)
		}
		if strconv.FormatUint(r.Seq, 10) != headerOf(m, schema.HeaderWindowID) {
			t.Errorf("set %s: seq %d disagrees with window-id header %q", b.Set, r.Seq, headerOf(m, schema.HeaderWindowID))
		}
		want := h.offline(t, b)
		if len(cols) != len(want) {
			t.Fatalf("columns %v, want %d vectors", cols, len(want))
		}
		for c := range want {
			for j := range want[c] {
				if math.Float32bits(want[c][j]) != math.Float32bits(r.Vectors[c][j]) {
					t.Fatalf("set %s column %s[%d]: worker %v, embed %v (not bit-identical)", b.Set, cols[c], j, r.Vectors[c][j], want[c][j])
				}
			}
		}
	}
}

// TestDeadLetters sends one poison record per reason between valid sets on the same partition:
// each poison record lands on the DLQ with the headers of docs/input-output.md, and every valid
// window is still delivered.
func TestDeadLetters(t *testing.T) {
	t.Parallel() // each test has its own broker; most of their time is waiting
	h := newHarness(t, 1, smallSpec)
	features := h.collect(h.env.Features)
	dlq := h.collect(h.env.DLQ)
	cfg := h.config("dlq", window.Config{})
	cfg.MaxMessageBytes = 64 << 10
	h.start(cfg, nil)

	arrowNaN := arrowPoints(t, "p-nan", []float64{0.1, math.NaN()})
	valid, err := schema.EncodeArrow(2, []schema.Batch{{Set: "p-trunc", Points: []float64{0.1, 0.2, 0.3, 0.4}, N: 2, End: true}})
	if err != nil {
		t.Fatal(err)
	}
	long := make([]byte, 300)
	for i := range long {
		long[i] = 'k'
	}
	big := make([]byte, 0, 70<<10)
	big = append(big, `{"points":[`...)
	for len(big) < 66<<10 {
		big = append(big, `[0.5,0.5],`...)
	}
	big = append(big, `[0.5,0.5]],"end":true}`...)
	json := func(key, value string) kafka.Message { return kafka.Message{Key: []byte(key), Value: []byte(value)} }
	arrow := func(key string, v []byte) kafka.Message {
		return kafka.Message{Key: []byte(key), Value: v, Headers: []kafka.Header{{Key: schema.HeaderContentType, Value: []byte(schema.ContentTypeArrow)}}}
	}
	poison := []struct {
		reason string
		msg    kafka.Message
	}{
		{schema.ReasonDecode, json("p-malformed", `{"points": [[0.1, 0.2]`)},
		{schema.ReasonDecode, arrow("p-trunc", valid[:len(valid)/2])},
		{schema.ReasonDim, json("p-dim", `{"points": [[0.1, 0.2, 0.3]], "end": true}`)},
		{schema.ReasonNonFinite, arrow("p-nan", arrowNaN)},
		{schema.ReasonNonFinite, json("p-inf", `{"points": [[1e999, 0.2]], "end": true}`)},
		{schema.ReasonSetMismatch, json("p-key", `{"set": "other", "points": [[0.1, 0.2]], "end": true}`)},
		{schema.ReasonTooLarge, json(string(long), `{"points": [[0.1, 0.2]], "end": true}`)},
		{schema.ReasonTooLarge, json("p-big", string(big))},
	}
	sets := randomSets(3, "ok", len(poison)+1, 50, 1_700_000_000_000)
	for i, p := range poison {
		h.produce("json", 1000, sets[i])
		h.produceRaw(p.msg)
	}
	h.produce("json", 1000, sets[len(poison)])

	dl := dlq.waitFor(t, 60*time.Second, "dead letters", func(m []kafka.Message) bool { return len(m) >= len(poison) })
	features.waitFor(t, 60*time.Second, "valid windows", func(m []kafka.Message) bool { return distinctWindows(m) >= len(sets) })
	if len(dl) != len(poison) {
		t.Errorf("%d dead letters, want %d", len(dl), len(poison))
	}
	for i, p := range poison {
		if i >= len(dl) {
			break
		}
		m := dl[i] // one partition: DLQ order = input order
		if got := headerOf(m, schema.HeaderError); got != p.reason {
			t.Errorf("poison %d (%s): error header %q, want %q (detail %q)", i, p.msg.Key, got, p.reason, headerOf(m, schema.HeaderErrorDetail))
		}
		if headerOf(m, schema.HeaderErrorDetail) == "" {
			t.Errorf("poison %d: empty error-detail", i)
		}
		if headerOf(m, schema.HeaderSourceTopic) != h.env.Points || headerOf(m, schema.HeaderSourcePartition) != "0" {
			t.Errorf("poison %d: source headers %q/%q", i, headerOf(m, schema.HeaderSourceTopic), headerOf(m, schema.HeaderSourcePartition))
		}
		if _, err := strconv.ParseInt(headerOf(m, schema.HeaderSourceOffset), 10, 64); err != nil {
			t.Errorf("poison %d: source-offset %q", i, headerOf(m, schema.HeaderSourceOffset))
		}
		if string(m.Key) != string(p.msg.Key) || string(m.Value) != string(p.msg.Value) {
			t.Errorf("poison %d: key/value not preserved", i)
		}
		if ct := headerOf(p.msg, schema.HeaderContentType); ct != "" && headerOf(m, schema.HeaderContentType) != ct {
			t.Errorf("poison %d: original headers not preserved", i)
		}
	}
}

type windowMsg struct {
	seq uint64
	msg kafka.Message
}

// sortedWindowIDs orders messages by set then seq.
func sortedWindowIDs(m map[string]kafka.Message) []windowMsg {
	var out []windowMsg
	for _, k := range sortedKeys(m) {
		seq, _ := strconv.ParseUint(headerOf(m[k], schema.HeaderWindowID), 10, 64)
		out = append(out, windowMsg{seq: seq, msg: m[k]})
	}
	for i := 1; i < len(out); i++ {
		for j := i; j > 0 && string(out[j].msg.Key) == string(out[j-1].msg.Key) && out[j].seq < out[j-1].seq; j-- {
			out[j], out[j-1] = out[j-1], out[j]
		}
	}
	return out
}

// TestIdleExpiry: a set that never sends end is emitted after the idle timeout.
func TestIdleExpiry(t *testing.T) {
	t.Parallel() // each test has its own broker; most of their time is waiting
	h := newHarness(t, 1, smallSpec)
	features := h.collect(h.env.Features)
	rw := h.start(h.config("idle", window.Config{Mode: "set", IdleTimeout: 300 * time.Millisecond}), nil)
	b := randomSets(6, "idle", 1, 40, 1)[0]
	b.End = false
	h.produce("json", 100, b)
	msgs := features.waitFor(t, 30*time.Second, "idle window", func(m []kafka.Message) bool { return len(m) >= 1 })
	recs, _, err := schema.DecodeFeatures(msgs[0].Value)
	if err != nil || recs[0].N != 40 {
		t.Fatalf("idle window: %v n=%v", err, recs)
	}
	deadline := time.Now().Add(5 * time.Second)
	for testutilCounter(rw.metrics.WindowsEmitted.WithLabelValues("idle")) < 1 {
		if time.Now().After(deadline) {
			t.Fatal("windows_emitted_total{reason=idle} not incremented")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestShutdownCommitsAndResumes: a clean stop commits everything; a restarted worker in the
// same group emits nothing again, and new sets flow.
func TestShutdownCommitsAndResumes(t *testing.T) {
	t.Parallel() // each test has its own broker; most of their time is waiting
	h := newHarness(t, 2, smallSpec)
	features := h.collect(h.env.Features)
	rw := h.start(h.config("resume", window.Config{}), nil)
	h.produce("json", 100, randomSets(7, "a", 6, 30, 1)...)
	features.waitFor(t, 30*time.Second, "6 windows", func(m []kafka.Message) bool { return distinctWindows(m) >= 6 })
	rw.shutdown(t)

	h.start(h.config("resume", window.Config{}), nil)
	h.produce("json", 100, randomSets(8, "b", 3, 30, 1)...)
	features.waitFor(t, 30*time.Second, "9 windows", func(m []kafka.Message) bool { return distinctWindows(m) >= 9 })
	time.Sleep(500 * time.Millisecond)
	if n := len(features.snapshot()); n != 9 {
		t.Errorf("%d feature records after a clean restart, want 9 (no re-emission)", n)
	}
}

// TestScaleOut: three workers in one group over eight partitions share the work and every
// window arrives; any duplicate is byte-identical.
func TestScaleOut(t *testing.T) {
	t.Parallel() // each test has its own broker; most of their time is waiting
	h := newHarness(t, 8, smallSpec)
	features := h.collect(h.env.Features)
	var workers []*runningWorker
	for i := 0; i < 3; i++ {
		workers = append(workers, h.start(h.config("scale", window.Config{}), nil))
	}
	// Produce only once all three share the partitions; otherwise the first member may
	// finish everything before the others join.
	h.waitGroupMembers("scale", 3, 30*time.Second)
	sets := randomSets(9, "s", 48, 200, 1)
	h.produce("arrow", 100, sets...)
	msgs := features.waitFor(t, 90*time.Second, "48 windows", func(m []kafka.Message) bool { return distinctWindows(m) >= len(sets) })
	byWindow(t, msgs)
	busy := 0
	for _, w := range workers {
		if testutilCounter(w.metrics.Points) > 0 {
			busy++
		}
	}
	if busy < 2 {
		t.Errorf("only %d of 3 workers processed points; the group did not share the partitions", busy)
	}
}

// arrowPoints encodes one Arrow input record with the arrow library directly (EncodeArrow
// refuses non-finite values, but a third-party producer may send them).
func arrowPoints(t *testing.T, set string, pts []float64) []byte {
	t.Helper()
	mem := memory.NewGoAllocator()
	sc := arrow.NewSchema([]arrow.Field{
		{Name: "set", Type: arrow.BinaryTypes.String},
		{Name: "x", Type: arrow.FixedSizeListOf(2, arrow.PrimitiveTypes.Float64)},
	}, nil)
	b := array.NewRecordBuilder(mem, sc)
	defer b.Release()
	n := len(pts) / 2
	for i := 0; i < n; i++ {
		b.Field(0).(*array.StringBuilder).Append(set)
		lb := b.Field(1).(*array.FixedSizeListBuilder)
		lb.Append(true)
		lb.ValueBuilder().(*array.Float64Builder).AppendValues(pts[2*i:2*i+2], nil)
	}
	rec := b.NewRecord()
	defer rec.Release()
	var buf bytes.Buffer
	w := ipc.NewWriter(&buf, ipc.WithSchema(sc))
	if err := w.Write(rec); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestGracefulLeaveRebalancesOnce: when a worker stops cleanly, the remaining member goes
// through exactly one rebalance (the departure), not a rejoin followed by a leave.
func TestGracefulLeaveRebalancesOnce(t *testing.T) {
	t.Parallel() // each test has its own broker; most of their time is waiting
	h := newHarness(t, 4, smallSpec)
	stay := h.start(h.config("leave", window.Config{}), nil)
	leave := h.start(h.config("leave", window.Config{}), nil)
	h.waitGroupMembers("leave", 2, 30*time.Second)
	h.produce("json", 100, randomSets(11, "l", 8, 30, 1)...)
	// The group is Stable on the broker slightly before the member has taken its
	// generation; wait until the count has held still for a second.
	before := testutilCounter(stay.metrics.Rebalances)
	for settled := time.Now(); time.Since(settled) < time.Second; time.Sleep(50 * time.Millisecond) {
		if now := testutilCounter(stay.metrics.Rebalances); now != before {
			before, settled = now, time.Now()
		}
	}
	leave.shutdown(t)
	h.waitGroupMembers("leave", 1, 30*time.Second)
	waitUntil(t, 10*time.Second, "the remaining worker to join the generation after the leave", func() bool {
		return testutilCounter(stay.metrics.Rebalances) > before
	})
	// A second rebalance, if any, is set off by the leaving member before its Run returns
	// (a rejoin before the leave); the remaining member sees it at its next heartbeat
	// (200 ms in the harness) and completes it within the rebalance timeout (2 s). Give it
	// that long once more.
	time.Sleep(2 * time.Second)
	if got := testutilCounter(stay.metrics.Rebalances) - before; got != 1 {
		t.Errorf("the remaining worker went through %v rebalances after a clean leave, want 1", got)
	}
}

// TestOversizedDeadLetterDoesNotStall is issue 9's reproduction: with the worker's input limit
// at 1,000,000 bytes, a 1,005,000-byte JSON record (under the broker's limit) is too_large,
// and its dead letter with the original value would exceed the writer's 1,000,000-byte limit
// and be retried forever, holding every set behind it on the partition. The dead letter
// must be cut to fit (value-truncated, value-bytes) and every valid set after it delivered.
func TestOversizedDeadLetterDoesNotStall(t *testing.T) {
	t.Parallel() // each test has its own broker; most of their time is waiting
	h := newHarness(t, 1, smallSpec)
	features := h.collect(h.env.Features)
	dlq := h.collect(h.env.DLQ)
	cfg := h.config("oversized-dlq", window.Config{})
	cfg.MaxMessageBytes = 1_000_000
	h.start(cfg, nil)

	big := []byte(`{"points":[` + strings.Repeat(`[0.5,0.5],`, 100_500)) // 1,005,011 bytes, not even valid JSON
	h.produceRaw(kafka.Message{Key: []byte("big"), Value: big})
	sets := randomSets(61, "after", 5, 20, 1)
	h.produce("json", 100, sets...)
	h.checkAllWindows(t, features, 30*time.Second, sets)
	dl := dlq.waitFor(t, 10*time.Second, "the dead letter", func(m []kafka.Message) bool { return len(m) >= 1 })
	m := dl[0]
	if headerOf(m, schema.HeaderError) != schema.ReasonTooLarge || headerOf(m, schema.HeaderValueTruncated) != "true" ||
		headerOf(m, schema.HeaderValueBytes) != strconv.Itoa(len(big)) || !bytes.HasPrefix(big, m.Value) || len(m.Value) >= len(big) {
		t.Errorf("dead letter: error %q, value-truncated %q, value-bytes %q, %d-byte value; want too_large, cut to a prefix, original size %d",
			headerOf(m, schema.HeaderError), headerOf(m, schema.HeaderValueTruncated), headerOf(m, schema.HeaderValueBytes), len(m.Value), len(big))
	}
}
