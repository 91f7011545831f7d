package embedding

import (
	"testing"

	"github.com/distfeat/distfeat/spec"
)

// BenchmarkTwoSample is the two_sample family's cost per point (Sketch.Add: 204 features of a
// 2-D point, 100 sines and cosines) and per window (Finalize: the test), with the default
// fields and the committed test reference.
func BenchmarkTwoSample(b *testing.B) {
	sp, err := spec.ParseSpec([]byte(`{"dim": 2, "families": [{"name": "drift", "kind": "two_sample", "reference": "testdata/two_sample_ref.jsonl"}]}`))
	if err != nil {
		b.Fatal(err)
	}
	e := mustNew(b, sp)
	u := uniformPoints(NewRNG(1, "bench"), benchBatch, 2)
	b.Run("add", func(b *testing.B) {
		s := e.NewSketch()
		b.ReportAllocs()
		for b.Loop() {
			s.Add(u)
		}
		reportPoints(b, benchBatch)
	})
	b.Run("finalize", func(b *testing.B) {
		s := e.NewSketch()
		s.Add(u)
		b.ReportAllocs()
		for b.Loop() {
			s.Finalize(nil)
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N), "ns/window")
	})
}
