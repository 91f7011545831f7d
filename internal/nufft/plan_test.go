package nufft

import (
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/distfeat/distfeat/internal/quadrature"
)

// TestStreamingEqualsBatchEqualsMerged: the grid is the window state, so a window's sums
// must not depend on how its points arrived: one at a time, all at once, in another order,
// or as two partial grids merged. Integer cells make that exact, and the outputs are
// compared bit for bit.
func TestStreamingEqualsBatchEqualsMerged(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	for _, d := range []int{1, 2, 3} {
		freqs := testFreqs(rng, 128, d, 0.2)
		p, err := NewPlan(freqs, d, Options{Sincos: testSincos})
		if err != nil {
			t.Fatal(err)
		}
		pts := testPoints(rng, 501, d)
		batch := make([]int64, p.GridLen())
		p.Spread(batch, pts)

		stream := make([]int64, p.GridLen())
		for k := len(pts) - d; k >= 0; k -= d { // reversed order, one point per call
			p.Spread(stream, pts[k:k+d])
		}
		left, right := make([]int64, p.GridLen()), make([]int64, p.GridLen())
		cut := 217 * d
		p.Spread(left, pts[:cut])
		p.Spread(right, pts[cut:])
		Merge(left, right)

		want := sums(p, batch)
		for name, g := range map[string][]int64{"streamed in reverse": stream, "merged halves": left} {
			if !slices.Equal(g, batch) {
				t.Errorf("d=%d: %s grid differs from the batch grid", d, name)
			}
			if got := sums(p, g); !slices.Equal(got, want) {
				t.Errorf("d=%d: %s sums differ from the batch sums", d, name)
			}
		}
	}
}

// sums finalises grid into one slice (re then im).
func sums(p *Plan, grid []int64) []float64 {
	out := make([]float64, 2*p.Frequencies())
	p.Finalize(grid, out[:p.Frequencies()], out[p.Frequencies():], p.NewWork())
	return out
}

// TestEmptyGrid: no points give all-zero sums (not NaN, not noise).
func TestEmptyGrid(t *testing.T) {
	p, err := NewPlan([]float64{3, -4, 10, 2}, 2, Options{Sincos: testSincos})
	if err != nil {
		t.Fatal(err)
	}
	for i, v := range sums(p, make([]int64, p.GridLen())) {
		if v != 0 {
			t.Fatalf("empty grid: sum %d = %v, want 0", i, v)
		}
	}
}

// TestKernelFit: the committed polynomial pieces follow the exponential of semicircle they
// were fitted to (genkernel) inside its support; a corrupted or mis-ordered table shows
// up here as an O(1) error. Degree w−1 fits to about half the width's aliasing level
// 10^(1−w) (4e-8 at w = 8); the bound is twice that level. The fit need not be tighter: the
// deconvolution uses the pieces' own transform, and TestAccuracy measures the result.
func TestKernelFit(t *testing.T) {
	for _, w := range Widths() {
		tab := kernelTables[w]
		worst := 0.0
		for i := 1; i < 20000; i++ {
			z := -1 + 2*float64(i)/20000
			want := math.Exp(tab.beta * (math.Sqrt(1-z*z) - 1))
			worst = max(worst, math.Abs(tab.at(z)-want))
		}
		if bound := 2 * math.Pow(10, float64(1-w)); worst > bound {
			t.Errorf("width %d: kernel pieces differ from exp(β(√(1−z²)−1)) by %.3g, want ≤ %.1g", w, worst, bound)
		}
		if tab.w != w || tab.nc*w != len(tab.coef) {
			t.Errorf("width %d: table has w=%d, %d coefficients for nc=%d", w, tab.w, len(tab.coef), tab.nc)
		}
	}
}

// TestKernelTransform: Φ(ξ) = ∫φ(z)cos(ξz)dz by the per-piece Gauss–Legendre rule agrees
// with a composite Simpson rule on 2·10⁵ intervals (error ~1e-13 for these smooth pieces)
// for ξ across the range the plan uses (α·|ω| ≤ wπ/4 ≈ 6.3 at w = 8, and the stage-2 modes).
func TestKernelTransform(t *testing.T) {
	qx, qw := gaussLegendreTest()
	for _, w := range []int{6, 8, 10} {
		tab := kernelTables[w]
		for _, xi := range []float64{0, 0.5, 2, 6.3, 9} {
			got := tab.transform(xi, qx, qw, math.Cos)
			const n = 200000
			want := 0.0
			for i := 0; i <= n; i++ {
				z := -1 + 2*float64(i)/n
				c := 2.0
				if i == 0 || i == n {
					c = 1
				} else if i%2 == 1 {
					c = 4
				}
				want += c * tab.at(z) * math.Cos(xi*z)
			}
			want *= 2.0 / n / 3
			if math.Abs(got-want) > 1e-10 {
				t.Errorf("width %d: Φ(%v) = %.15g, Simpson %.15g", w, xi, got, want)
			}
		}
	}
}

// TestNewPlanErrors: bad frequencies or options are refused with an error naming them.
func TestNewPlanErrors(t *testing.T) {
	ok := Options{Sincos: testSincos}
	cases := []struct {
		name  string
		freqs []float64
		d     int
		opt   Options
		want  string
	}{
		{"d=0", []float64{1}, 0, ok, "dimension 0"},
		{"d=4", []float64{1, 2, 3, 4}, 4, ok, "dimension 4"},
		{"no frequencies", nil, 2, ok, "not a positive multiple"},
		{"ragged", []float64{1, 2, 3}, 2, ok, "not a positive multiple"},
		{"NaN", []float64{1, math.NaN()}, 2, ok, "coordinate 1 is NaN"},
		{"huge", []float64{1e7}, 1, ok, "coordinate 0"},
		{"no sincos", []float64{1}, 1, Options{}, "Sincos is required"},
		{"width 5", []float64{1}, 1, Options{Width: 5, Sincos: testSincos}, "width 5"},
		{"grid side", []float64{1e5}, 1, ok, "grid points along dimension 0"},
		{"grid cells", []float64{300, 300, 300}, 3, ok, "cells is more than 1048576"},
		{"grid cells option", []float64{30, 30}, 2, Options{MaxGridCells: 100, Sincos: testSincos}, "cells is more than 100"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := NewPlan(c.freqs, c.d, c.opt)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("NewPlan: error %v, want one containing %q", err, c.want)
			}
		})
	}
}

// TestSpreadClampsOutside: a coordinate outside the unit cube (the grid's domain) is
// clamped into it, exactly as if the clamped point had been given; a NaN panics rather
// than writing anywhere.
func TestSpreadClampsOutside(t *testing.T) {
	p, err := NewPlan([]float64{3, 1, -20, 7}, 2, Options{Sincos: testSincos})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ in, clamped []float64 }{
		{[]float64{0.5, 0.5, -1e-9, 0.5}, []float64{0.5, 0.5, 0, 0.5}},
		{[]float64{0.5, 1.0000001, 0.2, 7}, []float64{0.5, 1, 0.2, 1}},
	} {
		got, want := make([]int64, p.GridLen()), make([]int64, p.GridLen())
		in := slices.Clone(c.in)
		p.Spread(got, in)
		p.Spread(want, c.clamped)
		if !slices.Equal(got, want) {
			t.Errorf("Spread(%v) differs from Spread(%v)", c.in, c.clamped)
		}
		if !slices.Equal(in, c.in) {
			t.Errorf("Spread modified its input: %v", in)
		}
	}
	defer func() {
		if recover() == nil {
			t.Error("Spread with a NaN coordinate did not panic")
		}
	}()
	p.Spread(make([]int64, p.GridLen()), []float64{math.NaN(), 0.5})
}

// gaussLegendreTest is the plan's per-piece quadrature rule.
func gaussLegendreTest() (x, w []float64) { return quadrature.GaussLegendre(quadNodes) }

// TestSpreadSIMDBitIdentical: the assembly spreading kernels (d = 1 and 2, w = 8, AVX2)
// write the same cells as the portable code, including points on the cube's faces and
// corners and points exactly on grid lines (where ⌈pos − 4⌉ changes).
func TestSpreadSIMDBitIdentical(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	for _, c := range []struct {
		d  int
		bw float64
	}{{2, 0.03}, {2, 0.1}, {2, 1}, {1, 0.03}, {1, 0.2}, {1, 3}} {
		d, bw := c.d, c.bw
		p, err := NewPlan(testFreqs(rng, 64, d, bw), d, Options{Sincos: testSincos})
		if err != nil {
			t.Fatal(err)
		}
		if !p.simd {
			t.Skip("skipping: no assembly kernel on this machine/build (purego, non-amd64 or no AVX2); the portable code is all there is")
		}
		pts := testPoints(rng, 3000, d)
		for i := 0; i < 200; i++ { // points on grid lines: u = 0.5 + (l − L)·Δ
			l := rng.IntN(p.nf[0])
			u := min(1, max(0, 0.5+float64(l-p.lhalf[0])/p.inv[0]))
			pts = append(pts, u)
			if d == 2 {
				pts = append(pts, rng.Float64())
			}
		}
		simd, portable := make([]int64, p.GridLen()), make([]int64, p.GridLen())
		p.Spread(simd, pts)
		p.spreadGo(portable, pts)
		if !slices.Equal(simd, portable) {
			t.Errorf("d=%d bandwidth %v: assembly and portable grids differ", d, bw)
		}
	}
}

// TestFinalizeSIMDBitIdentical: the d = 2 transform's assembly kernels (row updates, dot
// products four and eight columns at a time) give the portable code's bits, for grids of
// several shapes (column counts that are and are not multiples of 4 and 8).
func TestFinalizeSIMDBitIdentical(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	for _, bw := range []float64{0.03, 0.1, 0.3, 2} {
		p, err := NewPlan(testFreqs(rng, 200, 2, bw), 2, Options{Sincos: testSincos})
		if err != nil {
			t.Fatal(err)
		}
		if !p.simd {
			t.Skip("skipping: no assembly kernel on this machine/build (purego, non-amd64 or no AVX2); the portable code is all there is")
		}
		grid := make([]int64, p.GridLen())
		p.Spread(grid, testPoints(rng, 700, 2))
		simd := sums(p, grid)
		scalar := *p
		scalar.simd = false
		if got := sums(&scalar, grid); !slices.Equal(got, simd) {
			t.Errorf("bandwidth %v (m1 = %d): assembly and portable sums differ", bw, p.mcount[1])
		}
	}
}
