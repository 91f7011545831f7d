package embedding

import (
	"fmt"
	"testing"

	"github.com/distfeat/distfeat/spec"
)

// hddBenchPoints returns n deterministic points in [0,1]^d (a 3-component mixture).
func hddBenchPoints(n, d int) []float64 {
	rng := NewRNG(7, "bench/points")
	u := make([]float64, n*d)
	for i := 0; i < n; i++ {
		c := float64(i%3) * 0.3
		for j := 0; j < d; j++ {
			x := 0.2 + c + 0.08*rng.Normal()
			u[i*d+j] = min(1, max(0, x))
		}
	}
	return u
}

// BenchmarkHDDAdd measures binning cost per point (d=2, G=64; target ≤ 30 ns/point).
func BenchmarkHDDAdd(b *testing.B) {
	f := mustCompileHDD(b, hddTestSpec(2, nil))
	s := f.newSketch()
	const n = 4096
	u := hddBenchPoints(n, 2)
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		s.add(u, 2)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/point")
}

// BenchmarkHDDFinalize measures one window's finalisation: js, d=2, G=64, M=5, |V|=100,
// D=7000 (target ≤ 2 ms/window).
func BenchmarkHDDFinalize(b *testing.B) {
	f := mustCompileHDD(b, hddTestSpec(2, func(fam *spec.Family) { fam.Features = 7000 }))
	s := f.newSketch()
	s.add(hddBenchPoints(2500, 2), 2)
	out := [][]float32{make([]float32, 7000)}
	s.finalize(2500, out) // warm the scratch pool
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		s.finalize(2500, out)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N), "ns/window")
}

// hddBenchFamily is the BenchmarkHDDFinalize family (js, d=2, G=64, M=5, |V|=100,
// D=7000) with the gaussian or the orthogonal projection.
func hddBenchFamily(b *testing.B, projection string) *hddFamily {
	f := mustCompileHDD(b, hddTestSpec(2, func(fam *spec.Family) { fam.Features = 7000 }))
	if projection == "orthogonal" {
		f.rff = newOrthogonalRFF(NewRNG(42, f.name), f.coefLen, 7000, 0.5)
	}
	return f
}

// BenchmarkHDDFinalizeBatch measures finalisation amortised over batches of windows
// (finalizeBatch: one pass over ω per batch), per projection; ns/window is the metric to
// compare with BenchmarkHDDFinalize (targets: ≤ 200 µs/window gaussian, ≤ 80 µs/window
// orthogonal, batches of ≥ 16).
func BenchmarkHDDFinalizeBatch(b *testing.B) {
	for _, projection := range []string{"gaussian", "orthogonal"} {
		f := hddBenchFamily(b, projection)
		for _, nw := range []int{1, 16, 64} {
			b.Run(fmt.Sprintf("%s/batch=%d", projection, nw), func(b *testing.B) {
				ns := make([]int64, nw)
				parts := make([]familySketch, nw)
				outs := make([][][]float32, nw)
				for w := range parts {
					s := f.newSketch()
					s.add(hddBenchPointsSeeded(2500, 2, uint64(w)), 2)
					ns[w], parts[w], outs[w] = 2500, s, [][]float32{make([]float32, 7000)}
				}
				f.finalizeBatch(ns, parts, outs, 1) // warm the pools
				b.ReportAllocs()
				b.ResetTimer()
				for b.Loop() {
					f.finalizeBatch(ns, parts, outs, 1)
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*nw), "ns/window")
			})
		}
	}
}

// hddBenchPointsSeeded is hddBenchPoints with the mixture's centres shifted per seed, so
// that the windows of a batch differ.
func hddBenchPointsSeeded(n, d int, seed uint64) []float64 {
	u := hddBenchPoints(n, d)
	shift := 0.05 * float64(seed%5)
	for i := range u {
		u[i] = min(1, u[i]+shift)
	}
	return u
}

// BenchmarkHDDFinalizeStages splits one finalisation of the BenchmarkHDDFinalize window
// into its stages: the KDE, the coefficients A, the gaussian RFF stage per window
// (rff) and amortised over a batch of 16 windows (rff-batch16, per window), and the
// orthogonal RFF stage (rff-orthogonal).
func BenchmarkHDDFinalizeStages(b *testing.B) {
	f := hddBenchFamily(b, "gaussian")
	s := f.newSketch().(*hddSketch)
	s.add(hddBenchPoints(2500, 2), 2)
	sc := f.newScratch()
	out := make([]float32, 7000)
	// The coefficients and rff stages need the window's densities and A (their cost
	// depends on them: cells at the density floor share one sin/cos).
	f.densities(sc.dens, s.counts, 2500, sc)
	f.gridCoefficients(sc.a, sc.dens, sc)
	b.Run("kde", func(b *testing.B) {
		for b.Loop() {
			f.densities(sc.dens, s.counts, 2500, sc)
		}
	})
	b.Run("coefficients", func(b *testing.B) {
		for b.Loop() {
			f.gridCoefficients(sc.a, sc.dens, sc)
		}
	})
	b.Run("rff", func(b *testing.B) {
		for b.Loop() {
			f.rff.apply(sc.a, out)
		}
	})
	b.Run("rff-batch16", func(b *testing.B) {
		const nw = 16
		bt := f.rff.getBatch(nw)
		outs := make([][]float32, nw)
		for w := range outs {
			copy(bt.a[w*f.coefLen:], sc.a)
			outs[w] = make([]float32, 7000)
		}
		for b.Loop() {
			f.rff.applyBatch(bt, outs, 1)
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*nw), "ns/window")
	})
	orth := newOrthogonalRFF(NewRNG(42, f.name), f.coefLen, 7000, 0.5)
	b.Run("rff-orthogonal", func(b *testing.B) {
		for b.Loop() {
			orth.apply(sc.a, out)
		}
	})
}
