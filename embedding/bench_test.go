package embedding

import (
	"fmt"
	"testing"

	"github.com/distfeat/distfeat/internal/numeric"
	"github.com/distfeat/distfeat/spec"
)

// Benchmarks per family (docs/performance.md): ns/point for Add and ns/window for Finalize. Points
// are added in batches of 1000, like a record's worth of points. Run with
//
//	go test ./embedding -run '^$' -bench 'MMD|L2' -benchmem -benchtime=1s
//
// The mmd target is D = 1024, d = 2: ≥ 1.6 M points/s/core (≤ 625 ns/point).

const benchBatch = 1000

func reportPoints(b *testing.B, points int) {
	ns := float64(b.Elapsed().Nanoseconds()) / float64(b.N*points)
	b.ReportMetric(ns, "ns/point")
	b.ReportMetric(1e9/ns, "points/s")
}

// BenchmarkMMDAdd measures Sketch.Add of a D = 1024 mmd family on every kernel path, and
// the plain math.Sincos loop for comparison.
func BenchmarkMMDAdd(b *testing.B) {
	for _, d := range []int{2, 16} {
		e := mustNew(b, mmdSpec(d, 1024, 0.1, 42))
		fam := e.fams[0].(*mmdFamily)
		u := uniformPoints(NewRNG(1, "bench"), benchBatch, d)
		for _, path := range []numeric.MMDPath{numeric.MMDPathAVX512, numeric.MMDPathAVX2, numeric.MMDPathPortable} {
			b.Run(fmt.Sprintf("d=%d/%v", d, path), func(b *testing.B) {
				if !numeric.MMDPathSupported(path) {
					b.Skipf("kernel path %v is not supported on this machine", path)
				}
				saved := fam.path
				fam.path = path
				defer func() { fam.path = saved }()
				s := e.NewSketch()
				b.ReportAllocs()
				b.ResetTimer()
				for range b.N {
					s.Add(u)
				}
				reportPoints(b, benchBatch)
			})
		}
		b.Run(fmt.Sprintf("d=%d/math.Sincos", d), func(b *testing.B) {
			acc := make([]int64, 2*fam.hp)
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				numeric.MMDAccumulateSincos(fam.omega, u, benchBatch, d, fam.hp, acc)
			}
			reportPoints(b, benchBatch)
		})
	}
}

// BenchmarkMMDFinalize is the per-window cost: D = 1024, and with a 1024-feature second stage.
func BenchmarkMMDFinalize(b *testing.B) {
	plain := mmdSpec(2, 1024, 0.1, 42)
	rbf := mmdSpec(2, 1024, 0.1, 42)
	rbf.Families[0].RBFSigma, rbf.Families[0].RBFFeatures = 1, 1024
	for name, sp := range map[string]*spec.Spec{"D=1024": plain, "D=1024+rbf1024": rbf} {
		b.Run(name, func(b *testing.B) {
			e := mustNew(b, sp)
			s := e.NewSketch()
			s.Add(uniformPoints(NewRNG(1, "bench"), benchBatch, 2))
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				s.Finalize(nil)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N), "ns/window")
		})
	}
}

// BenchmarkL2Add measures Sketch.Add of an l2 family with |V| = 100.
func BenchmarkL2Add(b *testing.B) {
	for _, d := range []int{1, 2, 16} {
		b.Run(fmt.Sprintf("d=%d/basis=100", d), func(b *testing.B) {
			e := mustNew(b, l2Spec(d, 100))
			s := e.NewSketch()
			u := uniformPoints(NewRNG(1, "bench"), benchBatch, d)
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				s.Add(u)
			}
			reportPoints(b, benchBatch)
		})
	}
}

// BenchmarkL2Finalize is the per-window cost of l2, with and without a 1024-feature RFF stage.
func BenchmarkL2Finalize(b *testing.B) {
	plain := l2Spec(2, 100)
	staged := l2Spec(2, 100)
	staged.Families[0].Sigma, staged.Families[0].Features = 1, 1024
	for name, sp := range map[string]*spec.Spec{"basis=100": plain, "basis=100+rff1024": staged} {
		b.Run(name, func(b *testing.B) {
			e := mustNew(b, sp)
			s := e.NewSketch()
			s.Add(uniformPoints(NewRNG(1, "bench"), benchBatch, 2))
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				s.Finalize(nil)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N), "ns/window")
		})
	}
}

// BenchmarkEmbedDefaultSpec is one whole window of 2500 points through the default spec
// (mmd + hdd_js + l2): Add plus Finalize, the worker's per-window work; "default" is
// DefaultSpec (version 3), "v1" the built-in default of earlier releases (DefaultSpecV1).
func BenchmarkEmbedDefaultSpec(b *testing.B) {
	for _, c := range []struct {
		name string
		spec *spec.Spec
	}{{"default", spec.DefaultSpec()}, {"v1", spec.DefaultSpecV1()}} {
		b.Run(c.name, func(b *testing.B) {
			e := mustNew(b, c.spec)
			u := uniformPoints(NewRNG(1, "bench"), 2500, 2)
			s := e.NewSketch()
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				s.Reset()
				s.Add(u)
				s.Finalize(nil)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N), "ns/window")
			reportPoints(b, 2500)
		})
	}
}

// BenchmarkAddWorkers: Sketch.Add of one record's points with the default spec, on one
// goroutine and shared among 2 (WithAddWorkers); wall time per point.
func BenchmarkAddWorkers(b *testing.B) {
	for _, n := range []int{500, 2500} {
		for _, workers := range []int{1, 2} {
			b.Run(fmt.Sprintf("points=%d/workers=%d", n, workers), func(b *testing.B) {
				e, err := New(spec.DefaultSpec(), WithAddWorkers(workers))
				if err != nil {
					b.Fatal(err)
				}
				u := uniformPoints(NewRNG(1, "bench"), n, 2)
				s := e.NewSketch()
				for b.Loop() {
					s.Add(u)
					if s.Count() > MaxWindowPoints/2 {
						s.Reset()
					}
				}
				reportPoints(b, n)
			})
		}
	}
}
