package embedding

import "testing"

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
	f := mustCompileHDD(b, hddTestSpec(2, func(fam *Family) { fam.Features = 7000 }))
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

// BenchmarkHDDFinalizeStages splits one finalisation into its stages.
func BenchmarkHDDFinalizeStages(b *testing.B) {
	f := mustCompileHDD(b, hddTestSpec(2, func(fam *Family) { fam.Features = 7000 }))
	s := f.newSketch().(*hddSketch)
	s.add(hddBenchPoints(2500, 2), 2)
	sc := f.newScratch()
	out := make([]float32, 7000)
	b.Run("kde", func(b *testing.B) {
		for b.Loop() {
			f.densities(sc.dens, s.counts, 2500, sc)
		}
	})
	b.Run("coefficients", func(b *testing.B) {
		for b.Loop() {
			f.coefficients(sc.a, sc.dens, sc)
		}
	})
	b.Run("rff", func(b *testing.B) {
		for b.Loop() {
			f.rff.apply(sc.a, out)
		}
	})
}
