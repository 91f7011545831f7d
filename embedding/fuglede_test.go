package embedding

import (
	"math"
	"testing"

	"github.com/distfeat/distfeat/internal/numeric"
)

var allDivergences = []divergence{divJS, divHellinger, divTV}

// integrateHalfLine is ∫₀^∞ f by the substitution λ = t/(1−t) and composite
// Gauss–Legendre on [0, 1) (panels × 16 nodes). Independent of the λ sampler's own
// panel scheme; exact for the test to ~1e-14 for integrands decaying like λ⁻² or faster.
func integrateHalfLine(f func(float64) float64, panels int) float64 {
	gx, gw := numeric.GaussLegendre(16)
	sum := 0.0
	for k := 0; k < panels; k++ {
		a, b := float64(k)/float64(panels), float64(k+1)/float64(panels)
		h, m := 0.5*(b-a), 0.5*(a+b)
		for i, x := range gx {
			t := m + h*x
			l := t / (1 - t)
			sum += h * gw[i] * f(l) / ((1 - t) * (1 - t))
		}
	}
	return sum
}

// TestFugledeMeasureMass checks Z = μ(ℝ≥0) for the continuous measures by quadrature, and
// that the λ sampler's tabulated CDF reaches 1.
func TestFugledeMeasureMass(t *testing.T) {
	for _, div := range []divergence{divJS, divTV} {
		got := integrateHalfLine(div.measureDensity, 400)
		if want := div.mass(); math.Abs(got-want) > 1e-12*want {
			t.Errorf("%v: ∫dμ = %.15g, want Z = %.15g", div, got, want)
		}
		s := newLambdaSampler(div)
		if c := s.cdf(1e15); math.Abs(c-1) > 1e-13 {
			t.Errorf("%v: F(∞) = %.16g, want 1", div, c)
		}
	}
	if z := divHellinger.mass(); z != 0.5 {
		t.Errorf("hellinger: Z = %v, want ½", z)
	}
}

// fugledeGrid is the (x, y) grid of the identity tests: 13 log-spaced values on
// [0.01, 10] (neighbouring values differ by a factor 10^0.25 ≈ 1.78).
func fugledeGrid() []float64 {
	var g []float64
	for i := 0; i <= 12; i++ {
		g = append(g, 0.01*math.Pow(10, float64(i)/4))
	}
	return g
}

// fugledeTerm is |x^{½+iλ} − y^{½+iλ}|² = x + y − 2√(xy)·cos(λ ln(x/y)).
func fugledeTerm(x, y, lambda float64) float64 {
	return x + y - 2*math.Sqrt(x*y)*math.Cos(lambda*math.Log(x/y))
}

// measureRule is a quadrature rule for ∫₀^Λ · dμ: composite 16-point Gauss–Legendre on
// panels of width ¼ (on the test grid the integrand's phase λ·ln(x/y) turns by at most
// ¼·ln 1000 ≈ 1.7 rad per panel), with the weights multiplied by dμ/dλ.
type measureRule struct {
	lmax       float64
	nodes, wts []float64
}

func newMeasureRule(div divergence, lmax float64) measureRule {
	gx, gw := numeric.GaussLegendre(16)
	r := measureRule{lmax: lmax}
	for k := 0; k < int(lmax*4); k++ {
		for i, u := range gx {
			l := float64(k)/4 + 0.125 + 0.125*u
			r.nodes = append(r.nodes, l)
			r.wts = append(r.wts, 0.125*gw[i]*div.measureDensity(l))
		}
	}
	return r
}

// integrateMeasure is ∫₀^∞ |x^{½+iλ} − y^{½+iλ}|² dμ(λ) = (x+y)·μ(ℝ≥0) − 2√(xy)·∫cos(λL)dμ,
// L = ln(x/y), by the rule on [0, Λ] plus the tail beyond Λ:
//   - js: Λ = 16, the tail mass is < 1e-23: dropped.
//   - tv: Λ = 500. The non-oscillating tail is exact, (x+y)·(2/π)(π/2 − atan 2Λ); the
//     oscillating one, ∫_Λ^∞ cos(λL) f dλ with f = (4/π)/(1+4λ²), is integrated by parts
//     twice: −sin(ΛL)f(Λ)/L − cos(ΛL)f′(Λ)/L² + O(f″(Λ)/L³); the next term is at most
//     f″(Λ)/L³ ≈ (4/π)(3/2)Λ⁻⁴/L³ ≈ 1.6e-10 for |L| ≥ ln 1.78 (the smallest non-zero
//     |L| on the test grid).
func integrateMeasure(div divergence, r measureRule, x, y float64) float64 {
	if div == divHellinger {
		return 0.5 * fugledeTerm(x, y, 0) // μ = ½δ₀
	}
	sum := 0.0
	for i, l := range r.nodes {
		sum += r.wts[i] * fugledeTerm(x, y, l)
	}
	if div == divTV && x != y { // for x = y the integrand vanishes identically
		lm, L := r.lmax, math.Log(x/y)
		f := (4 / math.Pi) / (1 + 4*lm*lm)
		fp := -(4 / math.Pi) * 8 * lm / ((1 + 4*lm*lm) * (1 + 4*lm*lm))
		osc := -math.Sin(lm*L)*f/L - math.Cos(lm*L)*fp/(L*L)
		sum += (x+y)*(2/math.Pi)*(math.Pi/2-math.Atan(2*lm)) - 2*math.Sqrt(x*y)*osc
	}
	return sum
}

// TestFugledeIdentityQuadrature checks κ(x,y) = ∫|x^{½+iλ} − y^{½+iλ}|² dμ(λ) with the
// integral done by quadrature (no sampling), so a wrong measure table fails at once —
// the paper's tables (1+λ² instead of 1+4λ²) are off by tens of percent.
func TestFugledeIdentityQuadrature(t *testing.T) {
	grid := fugledeGrid()
	for _, div := range allDivergences {
		// Tolerance relative to the scale x+y (near x = y, κ is a difference of O(x+y)
		// terms): Gauss–Legendre is at rounding level (~1e-15); tv's tail remainder is
		// ≲ 2·1.6e-10·√(xy)/(x+y).
		tol := 1e-12
		if div == divTV {
			tol = 1e-9
		}
		rule := newMeasureRule(div, map[divergence]float64{divJS: 16, divTV: 500}[div])
		worst := 0.0
		for _, x := range grid {
			for _, y := range grid {
				got, want := integrateMeasure(div, rule, x, y), div.kappa(x, y)
				e := math.Abs(got-want) / (x + y)
				worst = max(worst, e)
				if e > tol {
					t.Errorf("%v: κ(%g,%g) = %.12g, ∫dμ gives %.12g", div, x, y, want, got)
				}
			}
		}
		t.Logf("%v: max |∫dμ − κ|/(x+y) = %.2g", div, worst)
	}
	// The printed tables must fail the same check (guards against a test that cannot fail):
	// js with 1+λ² instead of 1+4λ² at x=2, y=½.
	paper := 0.0
	gx, gw := numeric.GaussLegendre(16)
	for k := 0; k < 64; k++ {
		for i, u := range gx {
			l := float64(k)/4 + 0.125 + 0.125*u
			paper += 0.125 * gw[i] * fugledeTerm(2, 0.5, l) / (math.Cosh(math.Pi*l) * (1 + l*l))
		}
	}
	if want := divJS.kappa(2, 0.5); math.Abs(paper-want) < 0.1*want {
		t.Errorf("the paper's js measure reproduces κ(2,½) = %.4g as %.4g; the check is too weak", want, paper)
	}
}

// TestFugledeIdentitySampled is the identity test of docs/math.md: Z·E_{λ~μ/Z}|x^{½+iλ} −
// y^{½+iλ}|² = κ(x,y) to 1% on [0.01, 10]², with the λs the families actually use.
func TestFugledeIdentitySampled(t *testing.T) {
	grid := fugledeGrid()
	for _, div := range allDivergences {
		z := div.mass()
		// Stratified: the midpoint rule in q = F(λ). For tv the last stratum holds the
		// Cauchy tail, where the integrand oscillates without bound; its error is at most
		// 2√(xy)/M against κ = |x−y| ≥ 2√(xy)·sinh(0.29) on this grid, i.e. ≤ 3.4/M
		// relative: M = 4096 keeps it below 0.1%, well inside the 1% the test asserts.
		const m = 4096
		lams := drawLambdas(div, m, false, nil)
		worst := 0.0
		for _, x := range grid {
			for _, y := range grid {
				sum := 0.0
				for _, l := range lams {
					sum += fugledeTerm(x, y, l)
				}
				got, want := z*sum/m, div.kappa(x, y)
				if x == y {
					if math.Abs(got) > 1e-12 {
						t.Errorf("%v stratified: κ(%g,%g) estimate %g, want 0", div, x, y, got)
					}
					continue
				}
				e := math.Abs(got-want) / want
				worst = max(worst, e)
				if e > 0.01 {
					t.Errorf("%v stratified: κ(%g,%g) = %.6g, estimate %.6g (%.2f%%)", div, x, y, want, got, 100*e)
				}
			}
		}
		t.Logf("%v stratified M=%d: max relative error %.2g", div, m, worst)

		// I.i.d. (the paper's sampling): a mean of M i.i.d. terms, so within a few
		// standard errors. 5 SE: a correct estimator would exceed it with probability
		// ~6e-7 per pair (the draws are seeded, so the test is deterministic anyway).
		const mi = 20000
		iid := drawLambdas(div, mi, true, NewRNG(42, "test/"+div.String()+"/lambda"))
		for _, x := range grid {
			for _, y := range grid {
				var s, s2 float64
				for _, l := range iid {
					v := z * fugledeTerm(x, y, l)
					s += v
					s2 += v * v
				}
				mean := s / mi
				se := math.Sqrt(math.Max(s2/mi-mean*mean, 0) / mi)
				want := div.kappa(x, y)
				if math.Abs(mean-want) > 5*se+1e-12*(x+y) {
					t.Errorf("%v iid: κ(%g,%g) = %.6g, estimate %.6g ± %.2g", div, x, y, want, mean, se)
				}
			}
		}
	}
}

// TestFugledeQuantiles checks F(F⁻¹(q)) = q, monotonicity, the closed forms, and the js
// CDF against independent quadrature.
func TestFugledeQuantiles(t *testing.T) {
	for _, div := range []divergence{divJS, divTV} {
		s := newLambdaSampler(div)
		prev := -1.0
		for i := 0; i <= 4000; i++ {
			q := float64(i) / 4000 * (1 - 1e-9)
			l := s.quantile(q)
			if !(l > prev) && i > 0 {
				t.Fatalf("%v: F⁻¹ not increasing at q=%v: %v after %v", div, q, l, prev)
			}
			prev = l
			if back := s.cdf(l); math.Abs(back-q) > 1e-13 {
				t.Errorf("%v: F(F⁻¹(%v)) = %.16g", div, q, back)
			}
		}
	}
	// tv closed form: F(λ) = (2/π)·atan(2λ), the median is ½.
	tv := newLambdaSampler(divTV)
	if l := tv.quantile(0.5); math.Abs(l-0.5) > 1e-15 {
		t.Errorf("tv median λ = %v, want 0.5", l)
	}
	// js: the sampler's panel table against a different quadrature.
	js := newLambdaSampler(divJS)
	for _, l := range []float64{0.01, 0.1, 0.3, 0.777, 1.5, 3, 7.3} {
		gx, gw := numeric.GaussLegendre(20)
		want := 0.0
		const panels = 50
		for k := 0; k < panels; k++ {
			a, b := l*float64(k)/panels, l*float64(k+1)/panels
			for i, x := range gx {
				want += 0.5 * (b - a) * gw[i] * divJS.measureDensity(0.5*(a+b)+0.5*(b-a)*x)
			}
		}
		want /= divJS.mass()
		if got := js.cdf(l); math.Abs(got-want) > 1e-14 {
			t.Errorf("js F(%v) = %.16g, quadrature %.16g", l, got, want)
		}
	}
	for _, q := range []float64{0, 0.3, 0.99} {
		if l := newLambdaSampler(divHellinger).quantile(q); l != 0 {
			t.Errorf("hellinger F⁻¹(%v) = %v, want 0", q, l)
		}
	}
	t.Logf("stratified λ (M=5): js %.6f, tv %.6f", drawLambdas(divJS, 5, false, nil), drawLambdas(divTV, 5, false, nil))
}
