package embedding

import (
	"fmt"
	"math"
	"testing"

	"github.com/distfeat/distfeat/internal/numeric"
	"github.com/distfeat/distfeat/spec"
)

// mmdSpec is a one-family mmd spec on [0,1]^d.
func mmdSpec(d, features int, bandwidth float64, seed uint64) *spec.Spec {
	lo, hi := make([]float64, d), make([]float64, d)
	for j := range hi {
		hi[j] = 1
	}
	return &spec.Spec{Version: 1, Seed: seed, Dim: d, Bounds: spec.Bounds{Lo: lo, Hi: hi}, OutOfBounds: "clip",
		Families: []spec.Family{{Name: "mmd", Kind: "mmd", Features: features, Bandwidth: bandwidth}}}
}

// boxPoints draws n points uniform in the box [lo, hi]^d.
func boxPoints(rng *RNG, n, d int, lo, hi float64) []float64 {
	u := make([]float64, n*d)
	for i := range u {
		u[i] = lo + (hi-lo)*rng.Float64()
	}
	return u
}

// exactMMK is the biased mean map kernel (1/(nm)) Σ_i Σ_j exp(−‖x_i−y_j‖²/(2·bw²)).
func exactMMK(x, y []float64, d int, bw float64) float64 {
	sum := 0.0
	for i := 0; i < len(x); i += d {
		for j := 0; j < len(y); j += d {
			sq := 0.0
			for k := 0; k < d; k++ {
				diff := x[i+k] - y[j+k]
				sq += diff * diff
			}
			sum += math.Exp(-sq / (2 * bw * bw))
		}
	}
	return sum / float64(len(x)/d*len(y)/d)
}

// pairTerms splits an RFF inner-product estimate into its per-frequency terms: for feature
// vectors a, b of D = 2H sin/cos pairs scaled by √(2/D), term r is H·(a_2r b_2r + a_2r+1 b_2r+1),
// and aᵀb is their mean. The terms are i.i.d. over the independent frequencies, so their
// sample standard deviation gives the estimate's standard error.
func pairTerms(a, b []float32, f func(a0, a1, b0, b1 float64) float64) (mean, stderr float64) {
	h := len(a) / 2
	terms := make([]float64, h)
	for r := range terms {
		terms[r] = float64(h) * f(float64(a[2*r]), float64(a[2*r+1]), float64(b[2*r]), float64(b[2*r+1]))
		mean += terms[r]
	}
	mean /= float64(h)
	v := 0.0
	for _, x := range terms {
		v += (x - mean) * (x - mean)
	}
	return mean, math.Sqrt(v / float64(h-1) / float64(h))
}

func innerTerm(a0, a1, b0, b1 float64) float64 { return a0*b0 + a1*b1 }
func distTerm(a0, a1, b0, b1 float64) float64  { return (a0-b0)*(a0-b0) + (a1-b1)*(a1-b1) }

// TestMMDApproximatesExactKernel compares z̄ᵀz̄′ with the exact biased MMK and ‖z̄−z̄′‖² with
// the exact biased MMD² on concrete sample sets. The estimate is a mean of D/2 i.i.d.
// bounded per-frequency terms, so it is close to Gaussian with the standard error measured
// from those terms; 5 standard errors is exceeded with probability ~6e-7 for a fresh seed
// (the draws here are fixed, so the test is deterministic). Float32 output and fixed-point
// rounding add < 1e-6.
func TestMMDApproximatesExactKernel(t *testing.T) {
	const bw, d = 0.2, 2
	rng := NewRNG(5, "mmd-sets")
	p := boxPoints(rng, 300, d, 0.1, 0.6)
	q := boxPoints(rng, 250, d, 0.3, 0.9)
	kpq, kpp, kqq := exactMMK(p, q, d, bw), exactMMK(p, p, d, bw), exactMMK(q, q, d, bw)
	mmd2 := kpp + kqq - 2*kpq
	for _, features := range []int{1024, 8192} {
		e := mustNew(t, mmdSpec(d, features, bw, 42))
		zp, zq := e.Embed(p)[0], e.Embed(q)[0]
		k, se := pairTerms(zp, zq, innerTerm)
		t.Logf("D=%d: MMK %.5f exact %.5f (se %.5f)", features, k, kpq, se)
		if math.Abs(k-kpq) > 5*se+1e-6 {
			t.Errorf("D=%d: z̄ᵀz̄′ = %.5f, exact MMK %.5f: off by %.2f standard errors", features, k, kpq, math.Abs(k-kpq)/se)
		}
		m2, se2 := pairTerms(zp, zq, distTerm)
		t.Logf("D=%d: MMD² %.5f exact %.5f (se %.5f)", features, m2, mmd2, se2)
		if math.Abs(m2-mmd2) > 5*se2+1e-6 {
			t.Errorf("D=%d: ‖z̄−z̄′‖² = %.5f, exact MMD² %.5f: off by %.2f standard errors", features, m2, mmd2, math.Abs(m2-mmd2)/se2)
		}
		// Self inner product ≈ k(P, P).
		kp, sep := pairTerms(zp, zp, innerTerm)
		if math.Abs(kp-kpp) > 5*sep+1e-6 {
			t.Errorf("D=%d: z̄ᵀz̄ = %.5f, exact %.5f", features, kp, kpp)
		}
	}
}

// TestMMDErrorVarianceFallsLikeOneOverD: over independent seeds, the mean squared error of
// z̄ᵀz̄′ against the exact MMK scales as 1/D (the D/2 frequencies are i.i.d., so the MSE is
// exactly Var(term)/(D/2)). With S = 300 seeds each mean squared error has relative standard
// deviation ≈ √(2/S) ≈ 0.08 (≈ 0.08 in log), so the least-squares slope over
// ln D ∈ {ln 256, ln 1024, ln 4096} (spread 2·ln 4) has standard deviation
// ≈ 0.08/(√2·ln 4) ≈ 0.04: |slope + 1| < 0.2 is a 5σ band. D·MSE must also stay within a
// factor 1.5 across D (ratios of two such estimates have sd ≈ 0.12).
func TestMMDErrorVarianceFallsLikeOneOverD(t *testing.T) {
	const bw, d, seeds = 0.15, 2, 300
	rng := NewRNG(6, "mmd-variance")
	p := boxPoints(rng, 60, d, 0.2, 0.7)
	q := boxPoints(rng, 50, d, 0.3, 0.8)
	exact := exactMMK(p, q, d, bw)
	dims := []int{256, 1024, 4096}
	var xs, ys []float64
	for _, features := range dims {
		mse := 0.0
		for s := uint64(1); s <= seeds; s++ {
			e := mustNew(t, mmdSpec(d, features, bw, s))
			zp, zq := e.Embed(p)[0], e.Embed(q)[0]
			k, _ := pairTerms(zp, zq, innerTerm)
			mse += (k - exact) * (k - exact)
		}
		mse /= seeds
		t.Logf("D=%5d: MSE %.3g, D·MSE %.3f", features, mse, float64(features)*mse)
		xs = append(xs, math.Log(float64(features)))
		ys = append(ys, math.Log(mse))
	}
	mx, my := mean(xs), mean(ys)
	num, den := 0.0, 0.0
	for i := range xs {
		num += (xs[i] - mx) * (ys[i] - my)
		den += (xs[i] - mx) * (xs[i] - mx)
	}
	slope := num / den
	t.Logf("log-log slope %.3f (want −1)", slope)
	if math.Abs(slope+1) > 0.2 {
		t.Errorf("MSE falls like D^%.2f, want D^-1", slope)
	}
	for i := 1; i < len(ys); i++ {
		ratio := math.Exp((ys[i] + xs[i]) - (ys[0] + xs[0]))
		if ratio < 1/1.5 || ratio > 1.5 {
			t.Errorf("D·MSE at D=%d is %.2f× that at D=%d", dims[i], ratio, dims[0])
		}
	}
}

func mean(v []float64) float64 {
	s := 0.0
	for _, x := range v {
		s += x
	}
	return s / float64(len(v))
}

// TestMMDMatchesDefinition recomputes the features from their definition (docs/math.md) with
// math.Sin/Cos: frequencies drawn from NewRNG(seed, name) in the order r, j, ω =
// Normal()/bandwidth; output interleaved [sin, cos] per frequency scaled by √(2/D); mean over
// points. Tolerance: float32 rounding of values ≤ √(2/D) (< 2e-8) plus fixed-point rounding.
func TestMMDMatchesDefinition(t *testing.T) {
	for _, tc := range []struct {
		d, features int
		bw          float64
	}{{1, 2, 0.3}, {3, 38, 0.1}, {2, 1024, 0.1}, {5, 100, 1e-13}} {
		t.Run(fmt.Sprintf("d=%d,D=%d,bw=%g", tc.d, tc.features, tc.bw), func(t *testing.T) {
			sp := mmdSpec(tc.d, tc.features, tc.bw, 77)
			sp.Families[0].Name = "mmd_x"
			e := mustNew(t, sp)
			if tc.bw < 1e-9 {
				if m := e.fams[0].(*mmdFamily); m.path != numeric.MMDPathExact {
					t.Errorf("bandwidth %g: kernel path %v, want the exact fallback", tc.bw, m.path)
				}
			}
			u := uniformPoints(NewRNG(1, "def"), 57, tc.d)
			got := e.Embed(u)[0]
			rng := NewRNG(77, "mmd_x")
			half := tc.features / 2
			want := make([]float64, tc.features)
			for r := 0; r < half; r++ {
				w := make([]float64, tc.d)
				for j := range w {
					w[j] = rng.Normal() / tc.bw
				}
				for i := 0; i < 57; i++ {
					theta := 0.0
					for j := range w {
						theta += w[j] * u[i*tc.d+j]
					}
					want[2*r] += math.Sin(theta)
					want[2*r+1] += math.Cos(theta)
				}
			}
			scale := math.Sqrt(2 / float64(tc.features))
			tol := 1e-7
			if tc.bw < 1e-9 {
				// θ ~ 1e13: the rounding of θ itself (ulp ≈ 2e-3) changes sin θ, so
				// different summation orders legitimately disagree; only check ranges.
				tol = 2 * scale
			}
			for i := range want {
				w := scale * want[i] / 57
				if math.Abs(float64(got[i])-w) > tol {
					t.Fatalf("feature %d = %v, definition gives %v", i, got[i], w)
				}
			}
		})
	}
}

// TestMMDSecondStage: with rbf_sigma/rbf_features the output is the RFF map of z̄, so inner
// products of outputs estimate exp(−‖z̄−z̄′‖²/(2σ²)) where z̄ is the first stage (the same
// spec without the second stage: its draws come from the same stream). 5 standard errors
// as in TestMMDApproximatesExactKernel.
func TestMMDSecondStage(t *testing.T) {
	const d = 2
	rng := NewRNG(8, "rbf-sets")
	p := boxPoints(rng, 200, d, 0, 0.6)
	q := boxPoints(rng, 200, d, 0.2, 1)
	first := mustNew(t, mmdSpec(d, 512, 0.2, 3))
	sp := mmdSpec(d, 512, 0.2, 3)
	sp.Families[0].RBFSigma, sp.Families[0].RBFFeatures = 0.5, 4096
	second := mustNew(t, sp)
	if c := second.Columns(); len(c) != 1 || c[0].Len != 4096 {
		t.Fatalf("columns %+v", c)
	}
	zp, zq := first.Embed(p)[0], first.Embed(q)[0]
	dist := 0.0
	for i := range zp {
		diff := float64(zp[i]) - float64(zq[i])
		dist += diff * diff
	}
	want := math.Exp(-dist / (2 * 0.5 * 0.5))
	got, se := pairTerms(second.Embed(p)[0], second.Embed(q)[0], innerTerm)
	t.Logf("second stage: %.4f, exp(−‖z̄−z̄′‖²/2σ²) = %.4f (se %.4f)", got, want, se)
	if math.Abs(got-want) > 5*se+1e-5 {
		t.Errorf("second stage inner product %.4f, want %.4f ± %.4f", got, want, 5*se)
	}
	// Each output is a unit vector up to rounding: z(a)ᵀz(a) = (2/D)·Σ(sin²+cos²) = 1.
	self, _ := pairTerms(second.Embed(p)[0], second.Embed(p)[0], innerTerm)
	if math.Abs(self-1) > 1e-5 {
		t.Errorf("‖z‖² = %v, want 1", self)
	}
}
