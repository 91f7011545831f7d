package nufft

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/distfeat/distfeat/internal/benchclock"
)

// BenchmarkSpread is the per-point cost: ns/op is one point's kernel evaluation and its w^d
// fixed-point cell updates (D = 1024: 512 frequencies, bandwidth 0.1, as the default mmd).
func BenchmarkSpread(b *testing.B) {
	for _, d := range []int{1, 2, 3} {
		b.Run(fmt.Sprintf("d=%d", d), func(b *testing.B) {
			rng := rand.New(rand.NewPCG(3, 4))
			p, err := NewPlan(testFreqs(rng, 512, d, 0.1), d, Options{Sincos: testSincos})
			if err != nil {
				b.Fatal(err)
			}
			pts := testPoints(rng, 4096, d)
			grid := make([]int64, p.GridLen())
			clk := benchclock.Start(b)
			for i := 0; i < b.N; i++ {
				k := i % 4096 * d
				p.Spread(grid, pts[k:k+d])
			}
			clk.Stop(0, "")
		})
	}
}

// BenchmarkFinalize is the per-window cost: the pruned type-2 transform and the
// interpolation at the 512 targets.
func BenchmarkFinalize(b *testing.B) {
	for _, d := range []int{1, 2, 3} {
		b.Run(fmt.Sprintf("d=%d", d), func(b *testing.B) {
			rng := rand.New(rand.NewPCG(3, 4))
			p, err := NewPlan(testFreqs(rng, 512, d, 0.1), d, Options{Sincos: testSincos})
			if err != nil {
				b.Fatal(err)
			}
			grid := make([]int64, p.GridLen())
			p.Spread(grid, testPoints(rng, 2500, d))
			re, im := make([]float64, 512), make([]float64, 512)
			wk := p.NewWork()
			clk := benchclock.Start(b)
			for i := 0; i < b.N; i++ {
				p.Finalize(grid, re, im, wk)
			}
			clk.Stop(0, "")
		})
	}
}

// BenchmarkDirect is the scalar direct method for comparison (math.Sincos per frequency and
// point; distfeat's SIMD direct kernel is embedding's BenchmarkMMD).
func BenchmarkDirect(b *testing.B) {
	rng := rand.New(rand.NewPCG(3, 4))
	freqs := testFreqs(rng, 512, 2, 0.1)
	acc := make([]float64, 1024)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		u0, u1 := 0.3, 0.7
		for r := 0; r < 512; r++ {
			s, c := math.Sincos(freqs[2*r]*u0 + freqs[2*r+1]*u1)
			acc[2*r] += s
			acc[2*r+1] += c
		}
	}
}

// BenchmarkWindow is the amortised cost per point of a whole window: spreading n points
// (one call, as a sketch's add receives them) plus the window's Finalize, reported as
// cpu-ns/point (D = 1024, bandwidth 0.1).
func BenchmarkWindow(b *testing.B) {
	for _, d := range []int{1, 2, 3} {
		rng := rand.New(rand.NewPCG(3, 4))
		p, err := NewPlan(testFreqs(rng, 512, d, 0.1), d, Options{Sincos: testSincos})
		if err != nil {
			b.Fatal(err)
		}
		for _, n := range []int{100, 500, 2500, 10000} {
			b.Run(fmt.Sprintf("d=%d/n=%d", d, n), func(b *testing.B) {
				pts := uniformPoints(rng, n, d)
				grid := make([]int64, p.GridLen())
				re, im := make([]float64, 512), make([]float64, 512)
				wk := p.NewWork()
				clk := benchclock.Start(b)
				for i := 0; i < b.N; i++ {
					clear(grid)
					p.Spread(grid, pts)
					p.Finalize(grid, re, im, wk)
				}
				clk.Stop(float64(n), "cpu-ns/point")
			})
		}
	}
}
