package embedding

import (
	"fmt"
	"math"
	"testing"

	"github.com/distfeat/distfeat/internal/numeric"
)

// sorfOmega returns the dense matrix of s (rows × in, row-major): row r is the projection's
// response to the unit vectors, ω_rj = (W e_j)_r. Tests use it to check the structure.
func (s *sorf) sorfOmega() []float64 {
	w := make([]float64, s.rows*s.in)
	e := make([]float64, s.in)
	th := make([]float64, s.rows)
	y := make([]float64, s.p)
	for j := 0; j < s.in; j++ {
		clear(e)
		e[j] = 1
		s.project(e, th, y)
		for r, v := range th {
			w[r*s.in+j] = v
		}
	}
	return w
}

// TestSORFStructure: each block's rows are orthogonal with norm √p/σ (to rounding), the
// blocks are independent draws, the projection equals the dense matrix product, and the
// signs are ±1 with about half of each.
func TestSORFStructure(t *testing.T) {
	for _, tc := range []struct{ in, rows int }{{64, 64}, {50, 150}, {1, 5}, {100, 300}} {
		t.Run(fmt.Sprintf("in=%d/rows=%d", tc.in, tc.rows), func(t *testing.T) {
			const sigma = 0.7
			s := newSORF(NewRNG(3, "sorf-structure"), tc.in, tc.rows, sigma)
			w := s.sorfOmega()
			p := s.p
			if p < tc.in || p&(p-1) != 0 || p/2 >= tc.in && tc.in > 1 {
				t.Fatalf("padded length %d for input %d", p, tc.in)
			}
			if tc.in == p { // a full block: W_b W_bᵀ = (p/σ²) I
				norm2 := float64(p) / (sigma * sigma)
				for r := 0; r < tc.rows; r++ {
					for q := r - r%p; q < min(r-r%p+p, tc.rows); q++ {
						g := numeric.Dot(w[r*tc.in:(r+1)*tc.in], w[q*tc.in:(q+1)*tc.in])
						want := 0.0
						if q == r {
							want = norm2
						}
						if math.Abs(g-want) > 1e-12*norm2 {
							t.Fatalf("rows %d, %d: inner product %v, want %v", r, q, g, want)
						}
					}
				}
			}
			rng := NewRNG(4, "sorf-structure-input")
			a := make([]float64, tc.in)
			for i := range a {
				a[i] = rng.Normal()
			}
			th := make([]float64, tc.rows)
			s.project(a, th, make([]float64, p))
			for r := range th {
				want := 0.0
				for j, v := range a {
					want += w[r*tc.in+j] * v
				}
				// Both are sums of O(p) terms of size ~√p/σ·|a_j|: rounding differs by ~p ulps.
				if math.Abs(th[r]-want) > 1e-12*float64(p)*(1+math.Abs(want)) {
					t.Fatalf("row %d: θ = %v, dense product %v", r, th[r], want)
				}
			}
			neg := 0
			for _, v := range s.signs {
				if v != 1 && v != -1 {
					t.Fatalf("sign %v", v)
				}
				if v < 0 {
					neg++
				}
			}
			// Binomial(n, ½): 5 standard deviations.
			if n := len(s.signs); math.Abs(float64(neg)-float64(n)/2) > 5*math.Sqrt(float64(n))/2+1 {
				t.Fatalf("%d of %d signs negative", neg, n)
			}
		})
	}
}

// kernelErrors returns, for the feature maps made by mk(seed) for seeds 0..seeds−1, the
// errors k̂ − k of the Gaussian kernel estimate k̂(x, y) = z(x)·z(y) on pairs at scaled
// distances ‖x−y‖/σ = t: errs[ti][seed·pairs + q].
func kernelErrors(mk func(seed uint64) *rff, in int, sigma float64, ts []float64, pairs, seeds int) [][]float64 {
	rng := NewRNG(9, "sorf-kernel-pairs")
	type pair struct{ x, y []float64 }
	ps := make([][]pair, len(ts))
	for ti, tt := range ts {
		for q := 0; q < pairs; q++ {
			x, d := make([]float64, in), make([]float64, in)
			nd := 0.0
			for j := range x {
				x[j] = rng.Normal() * sigma
				d[j] = rng.Normal()
				nd += d[j] * d[j]
			}
			y := make([]float64, in)
			for j := range y {
				y[j] = x[j] + d[j]*tt*sigma/math.Sqrt(nd)
			}
			ps[ti] = append(ps[ti], pair{x, y})
		}
	}
	errs := make([][]float64, len(ts))
	for seed := 0; seed < seeds; seed++ {
		m := mk(uint64(seed))
		zx, zy := make([]float32, m.out), make([]float32, m.out)
		for ti, tt := range ts {
			k := math.Exp(-tt * tt / 2)
			for _, pr := range ps[ti] {
				m.apply(pr.x, zx)
				m.apply(pr.y, zy)
				est := 0.0
				for i := range zx {
					est += float64(zx[i]) * float64(zy[i])
				}
				errs[ti] = append(errs[ti], est-k)
			}
		}
	}
	return errs
}

func meanVar(v []float64) (mean, variance float64) {
	for _, x := range v {
		mean += x
	}
	mean /= float64(len(v))
	for _, x := range v {
		variance += (x - mean) * (x - mean)
	}
	return mean, variance / float64(len(v)-1)
}

// TestSORFKernelApproximation compares the Gaussian-kernel estimates of the orthogonal
// and the Gaussian projection at equal D over independent draws (seeds) and point pairs at
// several distances, for an input length that is a power of two (rows of fixed norm) and
// one that is padded.
func TestSORFKernelApproximation(t *testing.T) {
	const sigma, pairs, seeds = 0.5, 8, 40
	ts := []float64{0.5, 1, 1.5, 2, 3}
	for _, tc := range []struct{ in, features int }{{256, 512}, {200, 1024}} {
		gauss := kernelErrors(func(seed uint64) *rff {
			return newRFF(NewRNG(seed, "kernel-gauss"), tc.in, tc.features, sigma)
		}, tc.in, sigma, ts, pairs, seeds)
		orth := kernelErrors(func(seed uint64) *rff {
			return newOrthogonalRFF(NewRNG(seed, "kernel-orth"), tc.in, tc.features, sigma)
		}, tc.in, sigma, ts, pairs, seeds)
		var mseG, mseO float64
		for ti, tt := range ts {
			bg, vg := meanVar(gauss[ti])
			bo, vo := meanVar(orth[ti])
			n := float64(len(orth[ti]))
			t.Logf("in=%d D=%d t=%.1f k=%.3f: variance gauss %.3g orth %.3g (ratio %.3f); bias gauss %+.2g ± %.1g, orth %+.2g ± %.1g",
				tc.in, tc.features, tt, math.Exp(-tt*tt/2), vg, vo, vo/vg, bg, math.Sqrt(vg/n), bo, math.Sqrt(vo/n))
			mseG += vg + bg*bg
			mseO += vo + bo*bo
		}
		t.Logf("in=%d D=%d: mean squared error gauss %.3g, orth %.3g (ratio %.3f)", tc.in, tc.features, mseG, mseO, mseO/mseG)
		// Orthogonal rows cancel most of the variance at short distances (Yu et al. 2016,
		// Fig. 2 / Thm. 1; measured ratios 0.005 at t = 0.5 and 0.07 at t = 1) and little
		// at t ≥ 2 (ratios 0.7–1.1). Each variance is estimated from 320 errors, a
		// relative standard error of √(2/319) ≈ 8%, so the pooled ratio (measured 0.62–
		// 0.64, dominated by t ≥ 1.5) has a standard error of ~6%: 0.9 is > 4 of them
		// away, and per-distance ratios of 0.2 at t ≤ 1 leave a wide margin too.
		if mseO > 0.9*mseG {
			t.Errorf("in=%d D=%d: orthogonal mean squared error %.3g is not below 0.9 × gaussian %.3g", tc.in, tc.features, mseO, mseG)
		}
		for ti, tt := range ts {
			_, vg := meanVar(gauss[ti])
			bo, vo := meanVar(orth[ti])
			if tt <= 1 && vo > 0.2*vg {
				t.Errorf("in=%d D=%d t=%v: orthogonal variance %.3g is not below 0.2 × gaussian %.3g", tc.in, tc.features, tt, vo, vg)
			}
			// SORF's rows have (nearly) fixed norm √p/σ instead of a χ_p-distributed one,
			// which biases k̂ by O(1/p) at fixed t (Yu et al. Thm. 3 bounds it by 6t/√p);
			// measured |bias| ≤ 0.0032 with standard errors ≤ 0.002. 0.01 is ≥ 3 standard
			// errors above every measurement, and a wrong scale (e.g. √in instead of √p for
			// padded inputs) biases by ~0.1.
			if math.Abs(bo) > 0.01 {
				t.Errorf("in=%d D=%d t=%v: orthogonal bias %.3g exceeds 0.01", tc.in, tc.features, tt, bo)
			}
		}
	}
}

// TestSORFGolden pins the orthogonal map's draws and arithmetic: the first feature bits
// and the SHA-256 of the features of a fixed input through the default hdd shape (A of
// length 1000, padded to 1024; D = 4096, four blocks). A mismatch means the features of
// every spec with `projection: orthogonal` would change.
func TestSORFGolden(t *testing.T) {
	const (
		wantFirst = "3b11b79b 3cb419c1 bcb2e8b4 bb5c7b72"
		wantSum   = "8419f040a2091fd8cffadb895b6ac16d27d998c164d7b044c4e94637bb983abd"
	)
	m := newOrthogonalRFF(NewRNG(42, "hdd_js"), 1000, 4096, 0.5)
	rng := NewRNG(7, "sorf-golden-input")
	a := make([]float64, 1000)
	for i := range a {
		a[i] = rng.Normal() * 0.05
	}
	for _, p := range dotPaths(t) { // the path selects the FWHT and sin/cos kernels
		m.path, m.orth.path = p, p
		out := make([]float32, 4096)
		m.apply(a, out)
		first := fmt.Sprintf("%08x %08x %08x %08x", math.Float32bits(out[0]), math.Float32bits(out[1]),
			math.Float32bits(out[2]), math.Float32bits(out[3]))
		if sum := vectorSum(out); first != wantFirst || sum != wantSum {
			t.Fatalf("path %v: first features %s, checksum %s; pinned %s, %s", p, first, sum, wantFirst, wantSum)
		}
	}
}
