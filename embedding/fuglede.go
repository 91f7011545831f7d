package embedding

import (
	"fmt"
	"math"

	"github.com/distfeat/distfeat/internal/numeric"
)

// Fuglede measures of the hdd divergences (docs/math.md).
//
// A 1-homogeneous negative-definite κ on ℝ≥0 has the representation (Fuglede 2005)
//
//	κ(x, y) = ∫_{λ≥0} |x^{½+iλ} − y^{½+iλ}|² dμ(λ),
//
// and with Z = μ(ℝ≥0), κ(x, y) = Z·E_{λ~μ/Z}|x^{½+iλ} − y^{½+iλ}|². The measures below are
// the ones that reproduce κ; the tables printed in the AAAI paper and the thesis are wrong
// (1+λ² where 1+4λ² is needed, 2/π instead of 4/π for tv, δ(λ=1) instead of δ(λ=0) for
// hellinger). fuglede_test.go checks the identity numerically for every divergence.
//
//	js        κ = ½x ln(2x/(x+y)) + ½y ln(2y/(x+y))   dμ = dλ/(cosh(πλ)(1+4λ²))   Z = ½ ln 2
//	hellinger κ = ½(√x − √y)²                        μ = ½δ₀                     Z = ½
//	tv        κ = |x − y|                             dμ = (4/π) dλ/(1+4λ²)       Z = 1
//
// Derivation sketch (x = eᵗ, y = e⁻ᵗ): |x^{½+iλ} − y^{½+iλ}|² = 2cosh t − 2cos(2λt), so
// κ(eᵗ, e⁻ᵗ) = 2Z cosh t − 2∫cos(2λt)dμ. For tv, 2|sinh t| = 2cosh t − 2e^{−|t|} and
// (4/π)∫₀^∞ cos(2λt)/(1+4λ²) dλ = e^{−|t|}; for hellinger, ½(e^{t/2} − e^{−t/2})² =
// cosh t − 1 = 2·½·cosh t − 2·½·cos(0). The js measure is checked numerically only.

// divergence selects the κ of an hdd family.
type divergence int

const (
	divJS divergence = iota
	divHellinger
	divTV
)

// parseDivergence maps the spec's `divergence` value to a divergence.
func parseDivergence(s string) (divergence, error) {
	switch s {
	case "js", "":
		return divJS, nil
	case "hellinger":
		return divHellinger, nil
	case "tv":
		return divTV, nil
	}
	return 0, fmt.Errorf("unknown divergence %q (want js, hellinger or tv)", s)
}

func (v divergence) String() string {
	switch v {
	case divJS:
		return "js"
	case divHellinger:
		return "hellinger"
	case divTV:
		return "tv"
	}
	return fmt.Sprintf("divergence(%d)", int(v))
}

// mass is Z = μ(ℝ≥0).
func (v divergence) mass() float64 {
	switch v {
	case divJS:
		return 0.5 * math.Ln2
	case divHellinger:
		return 0.5
	default:
		return 1
	}
}

// kappa is κ(x, y) for x, y ≥ 0.
func (v divergence) kappa(x, y float64) float64 {
	switch v {
	case divJS:
		s := x + y
		if s == 0 {
			return 0
		}
		k := 0.0
		if x > 0 {
			k += float64(0.5 * x * math.Log(2*x/s))
		}
		if y > 0 {
			k += float64(0.5 * y * math.Log(2*y/s))
		}
		return k
	case divHellinger:
		d := math.Sqrt(x) - math.Sqrt(y)
		return 0.5 * d * d
	default:
		return math.Abs(x - y)
	}
}

// measureDensity is dμ/dλ at λ ≥ 0 for the absolutely continuous measures (js, tv). The
// hellinger measure is an atom at 0 and has no density: it returns 0.
func (v divergence) measureDensity(lambda float64) float64 {
	switch v {
	case divJS:
		return jsDensity(lambda)
	case divTV:
		return (4 / math.Pi) / (1 + float64(4*lambda*lambda))
	default:
		return 0
	}
}

// jsDensity is 1/(cosh(πλ)(1+4λ²)) = 2e^{−πλ}/((1+e^{−2πλ})(1+4λ²)), λ ≥ 0, evaluated with
// the portable exponential so that the λ quantiles are identical on every amd64 CPU.
func jsDensity(lambda float64) float64 {
	e := numeric.Exp(-math.Pi * lambda)
	return 2 * e / ((1 + float64(e*e)) * (1 + float64(4*lambda*lambda)))
}

// lambdaSampler evaluates the CDF F and quantile F⁻¹ of the normalised measure μ/Z.
type lambdaSampler struct {
	div divergence
	// js only: cumulative ∫₀^{k·jsPanel} f at panel boundaries k = 0..jsPanels, and the
	// Gauss–Legendre rule used inside panels.
	cum    []float64
	gx, gw []float64
}

const (
	// jsPanel is the width of a quadrature panel for the js CDF. The integrand f(λ) =
	// 1/(cosh(πλ)(1+4λ²)) is analytic in the strip |Im λ| < ½ (its nearest singularity is
	// the double pole at ±i/2), so an n-point Gauss–Legendre rule on a panel of half-width
	// w = 1/8 converges like ρ^{−2n} with ρ = ½/w + √((½/w)²+1) ≈ 8.1: 12 nodes give
	// ~1e-22 relative error per panel, far below float64 resolution.
	jsPanel  = 0.25
	jsNodes  = 12
	jsPanels = 64 // covers λ ∈ [0, 16]; the mass beyond 16 is < 2e^{−16π}/(π·1025) ≈ 1e-25
)

func newLambdaSampler(div divergence) *lambdaSampler {
	s := &lambdaSampler{div: div}
	if div == divJS {
		s.gx, s.gw = numeric.GaussLegendre(jsNodes)
		s.cum = make([]float64, jsPanels+1)
		for k := 0; k < jsPanels; k++ {
			a := float64(float64(k) * jsPanel)
			s.cum[k+1] = s.cum[k] + s.integrate(a, a+jsPanel)
		}
	}
	return s
}

// integrate is ∫_a^b jsDensity by the sampler's Gauss–Legendre rule (b − a ≤ jsPanel).
func (s *lambdaSampler) integrate(a, b float64) float64 {
	h, m := float64(0.5*(b-a)), float64(0.5*(a+b))
	sum := 0.0
	for i, x := range s.gx {
		sum += float64(s.gw[i] * jsDensity(m+float64(h*x)))
	}
	return float64(h * sum)
}

// cdf is F(λ) = μ([0, λ])/Z.
func (s *lambdaSampler) cdf(lambda float64) float64 {
	if lambda < 0 {
		return 0
	}
	switch s.div {
	case divHellinger:
		return 1
	case divTV:
		return (2 / math.Pi) * math.Atan(2*lambda)
	}
	z := s.div.mass()
	k := int(lambda / jsPanel)
	if k >= jsPanels {
		return math.Min(1, s.cum[jsPanels]/z)
	}
	a := float64(k) * jsPanel
	return (s.cum[k] + s.integrate(a, lambda)) / z
}

// quantile is F⁻¹(q) for q ∈ [0, 1): the smallest λ ≥ 0 with F(λ) ≥ q.
//
//   - hellinger: 0 (μ/Z = δ₀).
//   - tv: F(λ) = (2/π)·atan(2λ), so F⁻¹(q) = ½·tan(πq/2) (λ = ½|Cauchy|).
//   - js: no closed form; F is tabulated at panel boundaries by Gauss–Legendre quadrature,
//     the panel holding q is found by binary search, and inside it Newton's method on
//     F(λ) − q (F' = f/Z > 0) runs with bisection safeguards to full float64 accuracy.
//     Every step is deterministic.
func (s *lambdaSampler) quantile(q float64) float64 {
	if !(q > 0) {
		return 0
	}
	switch s.div {
	case divHellinger:
		return 0
	case divTV:
		if q >= 1 {
			return math.Inf(1)
		}
		return 0.5 * numeric.Tan(0.5*math.Pi*q)
	}
	z := s.div.mass()
	target := float64(q * z)
	if target >= s.cum[jsPanels] {
		return float64(jsPanels) * jsPanel
	}
	// Largest k with cum[k] ≤ target.
	lo, hi := 0, jsPanels
	for hi-lo > 1 {
		mid := (lo + hi) / 2
		if s.cum[mid] <= target {
			lo = mid
		} else {
			hi = mid
		}
	}
	a, b := float64(float64(lo)*jsPanel), float64(float64(lo+1)*jsPanel)
	// g(λ) = ∫_{a0}^λ f − (target − cum[lo]) is increasing on [a, b], g(a) ≤ 0 < g(b).
	a0 := a
	need := target - s.cum[lo]
	x := a + float64(jsPanel*need/(s.cum[lo+1]-s.cum[lo])) // start from the linear interpolant
	for iter := 0; iter < 100; iter++ {
		g := s.integrate(a0, x) - need
		if g == 0 {
			return x
		}
		if g > 0 {
			b = x
		} else {
			a = x
		}
		// Newton step (f > 0 everywhere), falling back to bisection outside (a, b).
		nx := x - g/jsDensity(x)
		if !(nx > a && nx < b) {
			nx = 0.5 * (a + b)
		}
		if math.Abs(nx-x) <= 0x1p-52*nx {
			return nx
		}
		x = nx
	}
	return x
}

// drawLambdas returns the M frequencies of an hdd family: stratified quantiles
// λ_j = F⁻¹((j−½)/M), or i.i.d. draws F⁻¹(U_j) with U_j uniform from rng (the paper's
// sampling). For hellinger every λ is 0.
func drawLambdas(div divergence, m int, iid bool, rng *RNG) []float64 {
	s := newLambdaSampler(div)
	out := make([]float64, m)
	for j := range out {
		var q float64
		if iid {
			q = rng.Float64()
		} else {
			q = (float64(j) + 0.5) / float64(m)
		}
		out[j] = s.quantile(q)
	}
	return out
}
