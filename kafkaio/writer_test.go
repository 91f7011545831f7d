package kafkaio

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/distfeat/distfeat/internal/synth"
	"github.com/distfeat/distfeat/internal/testbroker"
	"github.com/distfeat/distfeat/schema"
	"github.com/segmentio/kafka-go"
)

const testParts = 8

// record is one consumed message with what the tests look at.
type record struct {
	partition   int
	offset      int64
	key         string
	contentType string
	headers     int
	timeMs      int64
	value       []byte
}

// readAll consumes every record currently in the topic, partition by partition, in offset
// order. It fetches on a plain connection rather than through a kafka.Reader, whose Close
// waits for its next (empty) prefetch, and waits on progress: each fetch, which returns at
// least one record, may take testbroker.StallTimeout, so a slow machine only reads slower.
func readAll(t *testing.T, env testbroker.Env, topic string) []record {
	t.Helper()
	var out []record
	for p := 0; p < testParts; p++ {
		ctx, cancel := context.WithTimeout(context.Background(), testbroker.StallTimeout)
		conn, err := kafka.DialLeader(ctx, "tcp", env.Brokers[0], topic, p)
		cancel()
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, readPartition(t, conn, p)...)
		conn.Close()
	}
	return out
}

// readPartition reads conn's partition from offset 0 to its current end.
func readPartition(t *testing.T, conn *kafka.Conn, p int) []record {
	t.Helper()
	conn.SetDeadline(time.Now().Add(testbroker.StallTimeout))
	last, err := conn.ReadLastOffset()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Seek(0, kafka.SeekAbsolute); err != nil {
		t.Fatal(err)
	}
	var out []record
	moved := time.Now()
	for off := int64(0); off < last; {
		if time.Since(moved) > testbroker.StallTimeout {
			t.Fatalf("partition %d: no record past offset %d for %s (end %d)", p, off, testbroker.StallTimeout, last)
		}
		conn.SetDeadline(time.Now().Add(testbroker.StallTimeout))
		b := conn.ReadBatchWith(kafka.ReadBatchConfig{MinBytes: 1, MaxBytes: testbroker.ReaderMaxBytes, MaxWait: testbroker.ReaderMaxWait})
		for {
			m, err := b.ReadMessage()
			if err != nil {
				break
			}
			rec := record{partition: p, offset: m.Offset, key: string(m.Key), headers: len(m.Headers),
				timeMs: m.Time.UnixMilli(), value: m.Value}
			for _, h := range m.Headers {
				if h.Key == HeaderContentType {
					rec.contentType = string(h.Value)
				}
			}
			out = append(out, rec)
			off, moved = m.Offset+1, time.Now()
		}
		if err := b.Close(); err != nil {
			t.Fatalf("partition %d offset %d: %v", p, off, err)
		}
	}
	return out
}

// decodeAll decodes records with distfeat's input decoder and groups the batches by set, in
// partition-offset order (the order the worker sees them).
func decodeAll(t *testing.T, recs []record, dim int) map[string][]schema.Batch {
	t.Helper()
	got := map[string][]schema.Batch{}
	for _, r := range recs {
		bs, err := schema.DecodeRecord([]byte(r.key), r.value, r.contentType, r.timeMs, schema.DecodeOptions{Dim: dim})
		if err != nil {
			t.Fatalf("partition %d offset %d: decode: %v", r.partition, r.offset, err)
		}
		for _, b := range bs {
			got[b.Set] = append(got[b.Set], b)
		}
	}
	return got
}

func sameBits(a, b []float64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if math.Float64bits(a[i]) != math.Float64bits(b[i]) {
			return false
		}
	}
	return true
}

func newPointWriter(t *testing.T, env testbroker.Env, format string, dim int) *PointWriter {
	t.Helper()
	w := NewPointWriter(WriterConfig{Brokers: env.Brokers, Topic: env.Points, Format: format, Dim: dim})
	t.Cleanup(func() {
		if err := w.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return w
}

// TestPointWriterEndToEnd publishes synthetic sets (each as two chunks, End on the second)
// in both formats through the embedded broker and checks every record: key, content-type,
// partition (the Java murmur2 formula), timestamp, and that decoding gives back exactly the
// batches written, in order.
func TestPointWriterEndToEnd(t *testing.T) {
	for _, format := range []string{FormatJSON, FormatArrow} {
		t.Run(format, func(t *testing.T) {
			const dim, nSets, nPoints = 2, 24, 40
			env := testbroker.ForTest(t, testParts)
			w := newPointWriter(t, env, format, dim)
			wantCT := map[string]string{FormatJSON: schema.ContentTypeJSON, FormatArrow: schema.ContentTypeArrow}[format]

			base := int64(1732000000123)
			var batches []schema.Batch
			for i, s := range synth.Sets(7, nSets, nPoints, dim) {
				b := schema.Batch{Set: s.ID, Points: s.Points, N: nPoints, EventTime: base + int64(i), End: true}
				batches = append(batches, Split(b, nPoints/2+3)...)
			}
			ctx, cancel := context.WithTimeout(context.Background(), testbroker.StallTimeout)
			defer cancel()
			if err := w.Write(ctx, batches...); err != nil {
				t.Fatalf("Write: %v", err)
			}

			recs := readAll(t, env, env.Points)
			if len(recs) != len(batches) {
				t.Fatalf("%d records, want %d (one per batch)", len(recs), len(batches))
			}
			parts := []int{0, 1, 2, 3, 4, 5, 6, 7}
			want := map[string][]schema.Batch{}
			for _, b := range batches {
				want[b.Set] = append(want[b.Set], b)
			}
			for _, r := range recs {
				if r.contentType != wantCT || r.headers != 1 {
					t.Errorf("%s @%d/%d: content-type %q (%d headers), want %q only", r.key, r.partition, r.offset, r.contentType, r.headers, wantCT)
				}
				if p := NewBalancer().Balance(kafka.Message{Key: []byte(r.key)}, parts...); p != r.partition {
					t.Errorf("%s is on partition %d, murmur2 says %d", r.key, r.partition, p)
				}
				if bs := want[r.key]; len(bs) == 0 || r.timeMs != bs[0].EventTime {
					t.Errorf("%s: record timestamp %d, want the event time", r.key, r.timeMs)
				}
			}
			got := decodeAll(t, recs, dim)
			if len(got) != nSets {
				t.Fatalf("decoded %d sets, want %d", len(got), nSets)
			}
			for set, wb := range want {
				gb := got[set]
				if len(gb) != len(wb) {
					t.Fatalf("%s: %d batches back, want %d", set, len(gb), len(wb))
				}
				for i := range wb {
					if gb[i].N != wb[i].N || gb[i].End != wb[i].End || gb[i].EventTime != wb[i].EventTime || !sameBits(gb[i].Points, wb[i].Points) {
						t.Errorf("%s chunk %d: got N=%d end=%v t=%d, want N=%d end=%v t=%d (points equal: %v)", set, i,
							gb[i].N, gb[i].End, gb[i].EventTime, wb[i].N, wb[i].End, wb[i].EventTime, sameBits(gb[i].Points, wb[i].Points))
					}
				}
			}
		})
	}
}

// TestPointWriterEdgeBatches covers the batches that do not map one-to-one onto records: no
// event time (→ now), an end marker without points (Arrow cannot express it → JSON record),
// and an empty non-end batch (→ nothing).
func TestPointWriterEdgeBatches(t *testing.T) {
	for _, format := range []string{FormatJSON, FormatArrow} {
		t.Run(format, func(t *testing.T) {
			env := testbroker.ForTest(t, testParts)
			w := newPointWriter(t, env, format, 1)
			before := time.Now().UnixMilli()
			err := w.Write(context.Background(),
				schema.Batch{Set: "a", Points: []float64{0.5}, N: 1},      // no event time
				schema.Batch{Set: "a", N: 0},                              // nothing
				schema.Batch{Set: "a", N: 0, End: true, EventTime: 12345}, // end marker
			)
			after := time.Now().UnixMilli()
			if err != nil {
				t.Fatal(err)
			}
			recs := readAll(t, env, env.Points)
			if len(recs) != 2 {
				t.Fatalf("%d records, want 2 (the empty non-end batch sends nothing)", len(recs))
			}
			got := decodeAll(t, recs, 1)["a"]
			if len(got) != 2 {
				t.Fatalf("decoded %d batches, want 2", len(got))
			}
			if got[0].EventTime < before || got[0].EventTime > after || recs[0].timeMs != got[0].EventTime {
				t.Errorf("batch without event time: value t=%d, record time %d; want both = write time in [%d, %d]",
					got[0].EventTime, recs[0].timeMs, before, after)
			}
			if got[1].N != 0 || !got[1].End || got[1].EventTime != 12345 || recs[1].timeMs != 12345 {
				t.Errorf("end marker came back as %+v (record time %d)", got[1], recs[1].timeMs)
			}
			if recs[1].contentType != schema.ContentTypeJSON {
				t.Errorf("end marker content-type %q, want JSON (in every format)", recs[1].contentType)
			}
			wantFirst := map[string]string{FormatJSON: schema.ContentTypeJSON, FormatArrow: schema.ContentTypeArrow}[format]
			if recs[0].contentType != wantFirst {
				t.Errorf("points record content-type %q, want %q", recs[0].contentType, wantFirst)
			}
		})
	}
}

// TestPointWriterSplitsLargeSets: a set whose encoding exceeds the record limit goes out as
// several records (each within the limit) that decode, in order, to the original points,
// with End only on the last.
func TestPointWriterSplitsLargeSets(t *testing.T) {
	for _, format := range []string{FormatJSON, FormatArrow} {
		t.Run(format, func(t *testing.T) {
			env := testbroker.ForTest(t, testParts)
			w := newPointWriter(t, env, format, 2)
			// JSON: ~40 bytes per point → ~3.2 MB; Arrow: ~25 bytes per point → ~2 MB.
			const n = 80000
			s := synth.SetAt(3, 0, n, 2)
			if err := w.Write(context.Background(), schema.Batch{Set: s.ID, Points: s.Points, N: n, EventTime: 99, End: true}); err != nil {
				t.Fatal(err)
			}
			recs := readAll(t, env, env.Points)
			if len(recs) < 2 {
				t.Fatalf("%d record(s), want the set split into several", len(recs))
			}
			for _, r := range recs {
				if len(r.value) > maxRecordBytes {
					t.Errorf("record of %d bytes exceeds %d", len(r.value), maxRecordBytes)
				}
			}
			got := decodeAll(t, recs, 2)[s.ID]
			var pts []float64
			for i, b := range got {
				pts = append(pts, b.Points...)
				if b.End != (i == len(got)-1) || b.EventTime != 99 {
					t.Errorf("chunk %d of %d: end=%v t=%d", i, len(got), b.End, b.EventTime)
				}
			}
			if !sameBits(pts, s.Points) {
				t.Errorf("reassembled %d coordinates differ from the %d written", len(pts), len(s.Points))
			}
		})
	}
}

func TestPointWriterRejects(t *testing.T) {
	env := testbroker.ForTest(t, testParts)
	w := newPointWriter(t, env, FormatJSON, 2)
	good := schema.Batch{Set: "ok", Points: []float64{0.1, 0.2}, N: 1}
	tests := []struct {
		name string
		b    schema.Batch
	}{
		{"empty set", schema.Batch{Points: []float64{0.1, 0.2}, N: 1}},
		{"long set", schema.Batch{Set: strings.Repeat("x", 257), Points: []float64{0.1, 0.2}, N: 1}},
		{"bad utf-8", schema.Batch{Set: "a\xff", Points: []float64{0.1, 0.2}, N: 1}},
		{"negative N", schema.Batch{Set: "a", N: -1}},
		{"wrong length", schema.Batch{Set: "a", Points: []float64{0.1, 0.2, 0.3}, N: 1}},
		{"NaN", schema.Batch{Set: "a", Points: []float64{0.1, math.NaN()}, N: 1}},
		{"Inf", schema.Batch{Set: "a", Points: []float64{math.Inf(-1), 0}, N: 1}},
	}
	for _, tc := range tests {
		// The invalid batch comes second: nothing at all may be sent.
		err := w.Write(context.Background(), good, tc.b)
		if !errors.Is(err, ErrInvalidBatch) {
			t.Errorf("%s: err = %v, want ErrInvalidBatch", tc.name, err)
		}
	}
	if recs := readAll(t, env, env.Points); len(recs) != 0 {
		t.Errorf("%d records written by rejected calls", len(recs))
	}
	// A 256-byte set ID is the maximum and is accepted.
	if err := w.Write(context.Background(), schema.Batch{Set: strings.Repeat("é", 128), Points: []float64{0, 1}, N: 1}); err != nil {
		t.Errorf("256-byte set ID: %v", err)
	}
}

func TestPointWriterConfigErrors(t *testing.T) {
	tests := []struct {
		name string
		cfg  WriterConfig
	}{
		{"format", WriterConfig{Brokers: []string{"127.0.0.1:1"}, Topic: "p", Dim: 2, Format: "csv"}},
		{"dim", WriterConfig{Brokers: []string{"127.0.0.1:1"}, Topic: "p"}},
		{"brokers", WriterConfig{Topic: "p", Dim: 2}},
		{"topic", WriterConfig{Brokers: []string{"127.0.0.1:1"}, Dim: 2}},
	}
	for _, tc := range tests {
		w := NewPointWriter(tc.cfg)
		err := w.Write(context.Background(), schema.Batch{Set: "a", Points: []float64{0, 0}, N: 1})
		if err == nil || !strings.Contains(err.Error(), tc.name) {
			t.Errorf("%s: Write error %v, want one naming %q", tc.name, err, tc.name)
		}
		w.Close()
	}
}

// TestPointWriterContextAndBrokerErrors: a cancelled context or an unreachable broker is an
// error, not a hang.
func TestPointWriterContextAndBrokerErrors(t *testing.T) {
	env := testbroker.ForTest(t, testParts)
	w := newPointWriter(t, env, FormatJSON, 1)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := w.Write(ctx, schema.Batch{Set: "a", Points: []float64{0.5}, N: 1}); err == nil {
		t.Error("Write with a cancelled context succeeded")
	}

	// Nothing listens on 127.0.0.1:1.
	dead := NewPointWriter(WriterConfig{Brokers: []string{"127.0.0.1:1"}, Topic: "points", Dim: 1})
	defer dead.Close()
	ctx, cancel = context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if err := dead.Write(ctx, schema.Batch{Set: "a", Points: []float64{0.5}, N: 1}); err == nil {
		t.Error("Write to an unreachable broker succeeded")
	}
}

func TestPointWriterUsesGivenTransport(t *testing.T) {
	env := testbroker.ForTest(t, testParts)
	tr := &kafka.Transport{ClientID: "distfeat-test"}
	defer tr.CloseIdleConnections()
	w := NewPointWriter(WriterConfig{Brokers: env.Brokers, Topic: env.Points, Dim: 1, Transport: tr})
	if w.ownedTr != nil || w.w.Transport != tr {
		t.Fatal("the configured transport is not the one used")
	}
	if err := w.Write(context.Background(), schema.Batch{Set: "a", Points: []float64{0.5}, N: 1, End: true}); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if n := len(readAll(t, env, env.Points)); n != 1 {
		t.Fatalf("%d records, want 1", n)
	}
}

func TestNewWriterSettings(t *testing.T) {
	w := NewWriter(WriterConfig{Brokers: []string{"h1:9092", "h2:9092"}, Topic: "features"})
	defer w.Close()
	if b, ok := w.Balancer.(kafka.Murmur2Balancer); !ok || !b.Consistent {
		t.Errorf("Balancer %#v, want kafka.Murmur2Balancer{Consistent: true}", w.Balancer)
	}
	if w.RequiredAcks != kafka.RequireAll {
		t.Errorf("RequiredAcks %v, want RequireAll", w.RequiredAcks)
	}
	if w.BatchTimeout != DefaultBatchTimeout || w.BatchSize != DefaultBatchSize || w.BatchBytes != DefaultBatchBytes {
		t.Errorf("batching %v/%d/%d", w.BatchTimeout, w.BatchSize, w.BatchBytes)
	}
	if w.Topic != "features" || w.Addr.String() != "h1:9092,h2:9092" || w.AllowAutoTopicCreation || w.Async {
		t.Errorf("topic %q addr %q auto-create %v async %v", w.Topic, w.Addr, w.AllowAutoTopicCreation, w.Async)
	}
	w2 := NewWriter(WriterConfig{BatchTimeout: 20 * time.Millisecond})
	defer w2.Close()
	if w2.BatchTimeout != 20*time.Millisecond {
		t.Errorf("explicit BatchTimeout ignored: %v", w2.BatchTimeout)
	}
}

func TestSplit(t *testing.T) {
	pts := make([]float64, 10*3)
	for i := range pts {
		pts[i] = float64(i)
	}
	b := schema.Batch{Set: "s", Points: pts, N: 10, EventTime: 5, End: true}
	tests := []struct {
		max   int
		sizes []int
	}{
		{4, []int{4, 4, 2}},
		{5, []int{5, 5}},
		{1, []int{1, 1, 1, 1, 1, 1, 1, 1, 1, 1}},
		{10, []int{10}},
		{11, []int{10}},
		{0, []int{10}},
		{-3, []int{10}},
	}
	for _, tc := range tests {
		chunks := Split(b, tc.max)
		if len(chunks) != len(tc.sizes) {
			t.Fatalf("Split(10 points, %d): %d chunks, want %d", tc.max, len(chunks), len(tc.sizes))
		}
		var all []float64
		for i, c := range chunks {
			if c.N != tc.sizes[i] || len(c.Points) != 3*c.N || c.Set != "s" || c.EventTime != 5 || c.End != (i == len(chunks)-1) {
				t.Errorf("Split(10, %d) chunk %d: %+v", tc.max, i, c)
			}
			all = append(all, c.Points...)
		}
		if !sameBits(all, pts) {
			t.Errorf("Split(10, %d): chunks do not concatenate to the points", tc.max)
		}
	}
	// End stays false everywhere when the batch does not end the set.
	b.End = false
	for _, c := range Split(b, 3) {
		if c.End {
			t.Error("a chunk of a non-final batch has End set")
		}
	}
	// Chunks alias the input; appending to one must not clobber the next.
	chunks := Split(b, 4)
	if &chunks[1].Points[0] != &pts[12] {
		t.Error("chunks do not share the batch's backing array")
	}
	_ = append(chunks[0].Points, -1)
	if pts[12] != 12 {
		t.Error("appending to a chunk overwrote the next chunk's points")
	}
	// Degenerate batches come back whole.
	for _, d := range []schema.Batch{{Set: "e", End: true}, {Set: "m", Points: []float64{1, 2, 3}, N: 2}} {
		if got := Split(d, 1); len(got) != 1 || got[0].N != d.N || len(got[0].Points) != len(d.Points) {
			t.Errorf("Split(%+v, 1) = %+v, want it whole", d, got)
		}
	}
}

func ExampleSplit() {
	b := schema.Batch{Set: "galaxy-7", Points: make([]float64, 2*5), N: 5, End: true}
	for _, c := range Split(b, 2) {
		fmt.Println(c.Set, c.N, c.End)
	}
	// Output:
	// galaxy-7 2 false
	// galaxy-7 2 false
	// galaxy-7 1 true
}

func BenchmarkPointWriterEncodeJSON(b *testing.B) {
	w := &PointWriter{format: FormatJSON, contentType: schema.ContentTypeJSON, dim: 2}
	s := synth.SetAt(1, 0, 2500, 2)
	batch := schema.Batch{Set: s.ID, Points: s.Points, N: 2500, EventTime: 1, End: true}
	for b.Loop() {
		if _, err := w.appendMessages(nil, batch); err != nil {
			b.Fatal(err)
		}
	}
}
