package embedding

import (
	"fmt"
	"math"
	"testing"

	"github.com/distfeat/distfeat/internal/numeric"
	"github.com/distfeat/distfeat/spec"
)

// l2Spec is a one-family l2 spec on [0,1]^d.
func l2Spec(d, basis int) *spec.Spec {
	s := mmdSpec(d, 2, 1, 42)
	s.Families = []spec.Family{{Name: "l2", Kind: "l2", Basis: basis}}
	return s
}

// phi is φ_α(u) from its definition, with math.Cos.
func phi(alpha []int, u []float64) float64 {
	p := 1.0
	for j, k := range alpha {
		if k > 0 {
			p *= math.Sqrt2 * math.Cos(math.Pi*float64(k)*u[j])
		}
	}
	return p
}

// TestL2MatchesDefinition: a_α = (1/n) Σ φ_α(u_i) computed naively. The Chebyshev recurrence
// and the fixed point agree with math.Cos to ~1e-13; float32 output rounds values ≤ 2^{d/2}
// to ~1e-7 relative.
func TestL2MatchesDefinition(t *testing.T) {
	for _, tc := range []struct{ d, basis int }{{1, 100}, {2, 100}, {3, 57}, {7, 200}} {
		t.Run(fmt.Sprintf("d=%d,basis=%d", tc.d, tc.basis), func(t *testing.T) {
			e := mustNew(t, l2Spec(tc.d, tc.basis))
			u := uniformPoints(NewRNG(4, "l2-def"), 300, tc.d)
			got := e.Embed(u)[0]
			for m, alpha := range numeric.CosineIndices(tc.d, tc.basis) {
				want := 0.0
				for i := 0; i < 300; i++ {
					want += phi(alpha, u[i*tc.d:(i+1)*tc.d])
				}
				want /= 300
				if math.Abs(float64(got[m])-want) > 1e-6 {
					t.Fatalf("a_%v = %v, definition %v", alpha, got[m], want)
				}
			}
			if got[0] != 1 {
				t.Errorf("a_0 = %v, want exactly 1 (φ_0 ≡ 1)", got[0])
			}
		})
	}
}

// box is a uniform density on [lo, hi] (per axis) with mixture weight w.
type box struct {
	w      float64
	lo, hi []float64
}

// boxCoefficient is ∫ φ_α p for the mixture of uniform boxes: per axis,
// E[c(k) cos(πkU)] = √2 (sin πkb − sin πka)/(πk(b−a)) for U ~ U[a, b].
func boxCoefficient(alpha []int, mix []box) float64 {
	total := 0.0
	for _, b := range mix {
		p := b.w
		for j, k := range alpha {
			if k > 0 {
				x := math.Pi * float64(k)
				p *= math.Sqrt2 * (math.Sin(x*b.hi[j]) - math.Sin(x*b.lo[j])) / (x * (b.hi[j] - b.lo[j]))
			}
		}
		total += p
	}
	return total
}

// TestL2CoefficientsOfKnownDensity: for a mixture of uniform boxes the coefficients are known
// in closed form. With n = 200 000 samples each â_α is a mean of i.i.d. terms in [−2, 2]
// (d = 2), so by Hoeffding P(|â_α − a_α| ≥ 0.025) ≤ 2·exp(−n·0.025²/8) ≈ 3e-7, and a union
// over the 100 coefficients keeps the chance of a spurious failure for a fresh seed < 1e-4.
func TestL2CoefficientsOfKnownDensity(t *testing.T) {
	const d, n, basis = 2, 200000, 100
	mix := []box{
		{0.5, []float64{0.1, 0.2}, []float64{0.4, 0.9}},
		{0.3, []float64{0.5, 0.0}, []float64{1.0, 0.3}},
		{0.2, []float64{0.0, 0.0}, []float64{1.0, 1.0}},
	}
	rng := NewRNG(10, "l2-boxes")
	u := make([]float64, 0, n*d)
	for i := 0; i < n; i++ {
		pick, acc := rng.Float64(), 0.0
		b := mix[len(mix)-1]
		for _, c := range mix {
			if acc += c.w; pick < acc {
				b = c
				break
			}
		}
		for j := 0; j < d; j++ {
			u = append(u, b.lo[j]+(b.hi[j]-b.lo[j])*rng.Float64())
		}
	}
	e := mustNew(t, l2Spec(d, basis))
	a := e.Embed(u)[0]
	worst := 0.0
	for m, alpha := range numeric.CosineIndices(d, basis) {
		want := boxCoefficient(alpha, mix)
		diff := math.Abs(float64(a[m]) - want)
		worst = max(worst, diff)
		if diff > 0.025 {
			t.Errorf("a_%v = %.4f, exact %.4f", alpha, a[m], want)
		}
	}
	t.Logf("max |â − a| = %.4f over %d coefficients", worst, basis)
}

// cosineTerm is one term c·φ_α of a density expansion.
type cosineTerm struct {
	alpha []int
	c     float64
}

// sampleCosineDensity draws n points from p(u) = 1 + Σ c·φ_α(u) on [0,1]² by rejection.
func sampleCosineDensity(rng *RNG, n int, terms []cosineTerm) []float64 {
	pmax := 1.0
	for _, tm := range terms {
		pmax += 2 * math.Abs(tm.c) // |φ_α| ≤ 2 in 2-D
	}
	u := make([]float64, 0, 2*n)
	x := make([]float64, 2)
	for len(u) < 2*n {
		x[0], x[1] = rng.Float64(), rng.Float64()
		p := 1.0
		for _, tm := range terms {
			p += tm.c * phi(tm.alpha, x)
		}
		if rng.Float64()*pmax < p {
			u = append(u, x...)
		}
	}
	return u
}

// TestL2Parseval: for densities whose expansion lies inside V, ‖a − a′‖² estimates
// ∫(p − q)² = Σ_α (c_α − c′_α)² exactly (Parseval). Here ∫(p−q)² = 0.4² + 0.2² + 0.25² =
// 0.2625. With n = 200 000 points per set: the estimate's bias is Σ_α (Var_p φ_α + Var_q φ_α)/n
// ≈ 2·|V|/n = 1e-3 (E φ² ≈ 1), and its standard deviation ≈ 2·√(Σ diff²·2/n) ≈ 3.2e-3;
// a tolerance of 0.02 is > 5σ beyond the bias.
func TestL2Parseval(t *testing.T) {
	const n = 200000
	p := []cosineTerm{{[]int{1, 0}, 0.3}, {[]int{1, 1}, 0.2}}
	q := []cosineTerm{{[]int{0, 2}, 0.25}, {[]int{1, 0}, -0.1}}
	const exact = 0.4*0.4 + 0.2*0.2 + 0.25*0.25
	rng := NewRNG(13, "parseval")
	e := mustNew(t, l2Spec(2, 100))
	ap, aq := e.Embed(sampleCosineDensity(rng, n, p))[0], e.Embed(sampleCosineDensity(rng, n, q))[0]
	got := 0.0
	for i := range ap {
		diff := float64(ap[i]) - float64(aq[i])
		got += diff * diff
	}
	t.Logf("‖a − a′‖² = %.4f, ∫(p−q)² = %.4f", got, exact)
	if math.Abs(got-exact) > 0.02 {
		t.Errorf("‖a − a′‖² = %.4f, want ∫(p−q)² = %.4f ± 0.02", got, exact)
	}
}

// TestL2SecondStage: with sigma/features the output is the RFF map of a, so inner products
// estimate exp(−‖a−a′‖²/(2σ²)) with a from the same spec without the stage; 5 standard
// errors of the per-frequency terms, as in TestMMDApproximatesExactKernel.
func TestL2SecondStage(t *testing.T) {
	rng := NewRNG(14, "l2-rff")
	x, y := boxPoints(rng, 500, 2, 0, 0.7), boxPoints(rng, 500, 2, 0.3, 1)
	plain := mustNew(t, l2Spec(2, 20))
	sp := l2Spec(2, 20)
	sp.Families[0].Sigma, sp.Families[0].Features = 0.8, 4096
	staged := mustNew(t, sp)
	ax, ay := plain.Embed(x)[0], plain.Embed(y)[0]
	dist := 0.0
	for i := range ax {
		diff := float64(ax[i]) - float64(ay[i])
		dist += diff * diff
	}
	want := math.Exp(-dist / (2 * 0.8 * 0.8))
	got, se := pairTerms(staged.Embed(x)[0], staged.Embed(y)[0], innerTerm)
	t.Logf("l2 rff: %.4f, want %.4f (se %.4f)", got, want, se)
	if math.Abs(got-want) > 5*se+1e-5 {
		t.Errorf("l2 rff inner product %.4f, want %.4f ± %.4f", got, want, 5*se)
	}
}
