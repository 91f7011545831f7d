package twosample

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// goFixed is a FixedSincos written with the map's Sincos and toFixed, so it is bit-identical
// by construction: the tests below check the Window's plumbing around the bulk kernel (the
// arguments' order and rounding, the padding, the layout of its sums, merges and the
// scalar fallback). distfeat's SIMD kernel is checked against the scalar path in
// embedding (TestTwoSampleKernelBitIdentical).
type goFixed struct {
	lanes  int
	maxArg float64
	sc     Sincos
	calls  int // AddFixed calls
	beyond int // arguments with |θ| > maxArg (must stay 0)
	ragged int // rows that are not whole lanes (must stay 0)
}

func (k *goFixed) Lanes() int      { return k.lanes }
func (k *goFixed) MaxArg() float64 { return k.maxArg }

func (k *goFixed) AddFixed(theta []float64, acc []int64) {
	k.calls++
	if len(theta)%k.lanes != 0 || len(acc) != 2*len(theta) {
		k.ragged++
	}
	for r, t := range theta {
		if !(math.Abs(t) <= k.maxArg) {
			k.beyond++
		}
		s, c := k.sc(t)
		acc[r] += toFixed(s)
		acc[len(theta)+r] += toFixed(c)
	}
}

// evalSums is the definition of a window's sums: Σ toFixed(Eval(u_i)) over the points.
func evalSums(fm *FeatureMap, u []float64) []int64 {
	d := fm.Dim()
	phi := make([]float64, fm.Features())
	sum := make([]int64, fm.Features())
	for i := 0; i < len(u); i += d {
		fm.Eval(u[i:i+d], phi)
		for j, v := range phi {
			sum[j] += toFixed(v)
		}
	}
	return sum
}

// maxArgument is the largest Σ_j |ω_j| over the map's frequencies: the bound of |θ| on
// [0,1]^d.
func maxArgument(fm *FeatureMap) float64 {
	d, m := fm.dim, 0.0
	for f := range len(fm.omega) / d {
		b := 0.0
		for _, w := range fm.omega[f*d : (f+1)*d] {
			b += math.Abs(w)
		}
		m = max(m, b)
	}
	return m
}

// edgePoints are points of dimension d at and beyond the cube's faces: zeros, ones, −0,
// subnormals, points just outside, far outside, NaN and ±Inf coordinates (the last ones
// only exercise the fallback: the window's inputs are normalised points in distfeat).
func edgePoints(d int) []float64 {
	vals := []float64{0, 1, math.Copysign(0, -1), 5e-324, 0.5, 1 - 0x1p-53, 1 + 0x1p-52, -1e-300, 1.5, -0.25, 3e5}
	var out []float64
	for _, v := range vals {
		for j := range d {
			if j%2 == 0 {
				out = append(out, v)
			} else {
				out = append(out, 1-v)
			}
		}
	}
	for _, v := range []float64{math.NaN(), math.Inf(1), math.Inf(-1)} {
		p := make([]float64, d)
		for j := range p {
			p[j] = 0.25
		}
		p[d-1] = v
		out = append(out, p...)
	}
	return out
}

// TestFixedSincosSums: windows summing their random Fourier features with a FixedSincos
// hold exactly the sums of the scalar definition (Eval, then toFixed), for d = 1, 2, 3, 5,
// bandwidths from 1e-12 (arguments up to ~1e12: the bulk path is then off) to 1e4, lane
// counts 1, 3 and 8, random and edge points, points added whole, one by one, in chunks and
// merged; and the kernel never sees an argument beyond its MaxArg.
func TestFixedSincosSums(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 7))
	bandwidths := [][]float64{{1e-12}, {1e-10, 1e-3}, {0.3, 0.15, 0.075, 0.0375, 0.01875}, {10, 1e4}}
	for _, d := range []int{1, 2, 3, 5} {
		for _, bw := range bandwidths {
			for _, lanes := range []int{1, 3, 8} {
				t.Run(fmt.Sprintf("d=%d/bands=%v/lanes=%d", d, bw, lanes), func(t *testing.T) {
					center := make([]float64, d)
					for j := range center {
						center[j] = r.Float64()
					}
					seed := r.Uint64()
					const freqs = 13 // K·F not a multiple of the lanes
					scalar, err := NewFeatureMap(center, bw, freqs, normals{rand.New(rand.NewPCG(seed, 1))}, math.Sincos)
					if err != nil {
						t.Fatal(err)
					}
					k := &goFixed{lanes: lanes, maxArg: 0x1p40, sc: math.Sincos}
					bulk, err := NewFeatureMap(center, bw, freqs, normals{rand.New(rand.NewPCG(seed, 1))}, math.Sincos, WithFixedSincos(k))
					if err != nil {
						t.Fatal(err)
					}
					if wantOn := maxArgument(scalar) <= k.maxArg; (bulk.fixed != nil) != wantOn {
						t.Fatalf("bulk path on = %v with |θ| ≤ %g on the cube, want %v", bulk.fixed != nil, maxArgument(scalar), wantOn)
					}
					u := make([]float64, 0, 300*d)
					for range 300 * d {
						u = append(u, r.Float64())
					}
					u = append(u, edgePoints(d)...)
					checkWindowSums(t, bulk, u, evalSums(scalar, u))
					checkWindowSums(t, scalar, u, evalSums(scalar, u))
					if bulk.fixed != nil && k.calls < 300 {
						t.Errorf("the kernel ran %d times for more than 300 points of the cube", k.calls)
					}
					if k.beyond != 0 || k.ragged != 0 {
						t.Errorf("the kernel saw %d arguments beyond its MaxArg and %d rows of partial lanes", k.beyond, k.ragged)
					}
				})
			}
		}
	}
}

// checkWindowSums requires every way of adding u to a window of fm (all at once, point by
// point, in chunks merged into one window, after a Reset) to give the sums want.
func checkWindowSums(t *testing.T, fm *FeatureMap, u []float64, want []int64) {
	t.Helper()
	d := fm.Dim()
	n := len(u) / d
	whole := fm.NewWindow()
	whole.Add(u)
	if got := whole.Sums(); !slices.Equal(got, want) {
		t.Fatalf("all points at once: %s", firstDiff(got, want))
	}
	single := fm.NewWindow()
	for i := range n {
		single.Add(u[i*d : (i+1)*d])
	}
	if got := single.Sums(); !slices.Equal(got, want) {
		t.Fatalf("point by point: %s", firstDiff(got, want))
	}
	merged := fm.NewWindow()
	for _, cut := range [][2]int{{0, 1}, {1, n / 3}, {n / 3, n - 5}, {n - 5, n}} {
		part := fm.NewWindow()
		part.Add(u[cut[0]*d : cut[1]*d])
		if err := merged.Merge(part); err != nil {
			t.Fatal(err)
		}
	}
	if got := merged.Sums(); !slices.Equal(got, want) || merged.Count() != int64(n) {
		t.Fatalf("chunks merged (%d points): %s", merged.Count(), firstDiff(got, want))
	}
	whole.Reset()
	if got := whole.Sums(); slices.ContainsFunc(got, func(v int64) bool { return v != 0 }) {
		t.Fatal("a reset window's sums are not zero")
	}
	whole.Add(u)
	if got := whole.Sums(); !slices.Equal(got, want) {
		t.Fatalf("after Reset: %s", firstDiff(got, want))
	}
}

func firstDiff(got, want []int64) string {
	for i := range want {
		if got[i] != want[i] {
			return fmt.Sprintf("sum %d is %d, want %d", i, got[i], want[i])
		}
	}
	return "equal"
}

// TestFixedSincosGuard: a point outside the cube can have arguments beyond the bound the
// map checked on [0,1]^d; with a kernel whose MaxArg is exactly that bound, such points
// must go to the scalar path (the kernel sees no argument beyond it) and the sums stay
// those of the definition. A kernel whose MaxArg is below the bound is never called.
func TestFixedSincosGuard(t *testing.T) {
	center, bw := []float64{0.5, 0.5, 0.5}, []float64{0.2, 0.05}
	newMap := func(opts ...Option) *FeatureMap {
		fm, err := NewFeatureMap(center, bw, 20, normals{rand.New(rand.NewPCG(5, 5))}, math.Sincos, opts...)
		if err != nil {
			t.Fatal(err)
		}
		return fm
	}
	scalar := newMap()
	bound := maxArgument(scalar)
	u := []float64{1, 1, 1, 0, 0, 0, 1.25, 1, 1, -0.5, 0.5, 0.5, 0.3, 0.6, 0.9}
	want := evalSums(scalar, u)

	tight := &goFixed{lanes: 8, maxArg: bound, sc: math.Sincos}
	fm := newMap(WithFixedSincos(tight))
	if fm.fixed == nil {
		t.Fatal("the bulk path is off with MaxArg equal to the bound")
	}
	w := fm.NewWindow()
	w.Add(u)
	if got := w.Sums(); !slices.Equal(got, want) {
		t.Fatalf("tight MaxArg: %s", firstDiff(got, want))
	}
	if tight.calls != 3 || tight.beyond != 0 {
		t.Errorf("tight MaxArg: %d kernel calls (want 3: the points of the cube), %d arguments beyond MaxArg", tight.calls, tight.beyond)
	}

	low := &goFixed{lanes: 8, maxArg: bound * 0.999, sc: math.Sincos}
	fm = newMap(WithFixedSincos(low))
	w = fm.NewWindow()
	w.Add(u)
	if got := w.Sums(); !slices.Equal(got, want) {
		t.Fatalf("MaxArg below the bound: %s", firstDiff(got, want))
	}
	if low.calls != 0 || fm.fixed != nil {
		t.Errorf("MaxArg below the bound: the bulk path is on (%d kernel calls)", low.calls)
	}
}
