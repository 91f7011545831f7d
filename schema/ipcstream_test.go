package schema

import (
	"bytes"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"

	"github.com/apache/arrow/go/v15/arrow/ipc"
	"github.com/apache/arrow/go/v15/arrow/memory"

	"github.com/distfeat/distfeat/embedding"
)

// freshFeatureStream is what Encode wrote before the schema message was cached: a new
// ipc.Writer per record, the record, Close.
func freshFeatureStream(t *testing.T, o *Output, r FeatureRecord) []byte {
	t.Helper()
	var rows rowBuffer
	rows.init(len(o.lens))
	rows.add(r, o.specID, false)
	rec := rows.record(o)
	defer rec.Release()
	var buf bytes.Buffer
	w := ipc.NewWriter(&buf, ipc.WithSchema(o.schema), ipc.WithAllocator(memory.DefaultAllocator))
	if err := w.Write(rec); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestEncodeMatchesFreshWriter: Output.Encode's value is byte for byte the stream a fresh
// Arrow writer writes for the record — for set IDs of every length (the string column's
// padding changes with it), special float values, many records through the same pooled
// writers, and concurrent callers — so feature records keep their bytes (replays, golden
// tests, downstream readers).
func TestEncodeMatchesFreshWriter(t *testing.T) {
	o := NewOutput(testSpec(), testColumns())
	rng := rand.New(rand.NewPCG(3, 4))
	var recs []FeatureRecord
	for i := range 40 {
		set := strings.Repeat("s", i) + "é"
		if i%7 == 0 {
			set = ""
		}
		r := testRecord(rng, o, set, uint64(i))
		if i%5 == 0 {
			r.Vectors[0][0], r.Vectors[1][1] = float32(math.NaN()), float32(math.Inf(-1))
		}
		recs = append(recs, r)
	}
	for round := range 3 { // later rounds reuse the pooled writers
		for i, r := range recs {
			got, err := o.Encode(r)
			if err != nil {
				t.Fatal(err)
			}
			if want := freshFeatureStream(t, o, r); !bytes.Equal(got, want) {
				t.Fatalf("round %d, record %d: Encode gives %d bytes, a fresh writer %d; they differ", round, i, len(got), len(want))
			}
		}
	}
	var wg sync.WaitGroup
	errs := make(chan error, len(recs))
	for i, r := range recs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			got, err := o.Encode(r)
			if err == nil && !bytes.Equal(got, freshFeatureStream(t, o, r)) {
				err = fmt.Errorf("record %d differs when encoded concurrently", i)
			}
			if err != nil {
				errs <- err
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// TestPointEncodeMatchesStreamWriter: PointOutput.Encode is byte for byte a fresh
// PointStreamWriter's stream of the batch, empty batches (no record batch) included.
func TestPointEncodeMatchesStreamWriter(t *testing.T) {
	o := NewPointOutput(testSpec(), []embedding.Column{{Name: "mt", Family: "mt", Len: 5}})
	rng := rand.New(rand.NewPCG(5, 6))
	for round := range 2 {
		for _, n := range []int{0, 1, 2, 7, 300} {
			b := PointBatch{Set: fmt.Sprintf("set-%d", n), Seq: uint64(n), First: int64(3 * n), N: n,
				Vectors: [][]float32{make([]float32, 5*n)}}
			for i := range b.Vectors[0] {
				b.Vectors[0][i] = float32(rng.NormFloat64())
			}
			got, err := o.Encode(b)
			if err != nil {
				t.Fatal(err)
			}
			var want bytes.Buffer
			sw := o.NewStreamWriter(&want)
			if err := sw.Write(b); err != nil {
				t.Fatal(err)
			}
			if err := sw.Close(); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want.Bytes()) {
				t.Fatalf("round %d, %d points: Encode gives %d bytes, the stream writer %d; they differ", round, n, len(got), want.Len())
			}
		}
	}
}
