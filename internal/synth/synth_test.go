package synth

import (
	"fmt"
	"math"
	"sync"
	"testing"

	"github.com/distfeat/distfeat/internal/numeric"
	"github.com/distfeat/distfeat/internal/quadrature"
	"gonum.org/v1/gonum/stat/distuv"
)

func TestGaussLegendreExactOnPolynomials(t *testing.T) {
	// An n-point rule integrates x^k exactly for k < 2n: ∫_0^1 x^k dx = 1/(k+1).
	for _, n := range []int{1, 2, 5, 8, 16} {
		for k := 0; k < 2*n; k++ {
			got := integrate1D(func(x float64) float64 { return math.Pow(x, float64(k)) }, 0, 1, 1, n)
			if want := 1 / float64(k+1); math.Abs(got-want) > 1e-13 {
				t.Errorf("n=%d: ∫x^%d = %.16g, want %.16g", n, k, got, want)
			}
		}
	}
}

func TestNormMass(t *testing.T) {
	pdf := func(z float64) float64 { return math.Exp(-z*z/2) / math.Sqrt(2*math.Pi) }
	for _, ab := range [][2]float64{{-1, 1}, {0, 3}, {-7, -5}, {5, 7}, {-0.3, 9}, {2, 2}} {
		want := integrate1D(pdf, ab[0], ab[1], 64, 16)
		got := normMass(ab[0], ab[1])
		// Relative accuracy in the tails is the point of normMass's case split.
		if math.Abs(got-want) > 1e-12*math.Max(want, 1e-300) && math.Abs(got-want) > 1e-15 {
			t.Errorf("normMass(%v, %v) = %.16g, quadrature %.16g", ab[0], ab[1], got, want)
		}
	}
	if got, want := normCDF(0), 0.5; got != want {
		t.Errorf("Φ(0) = %v", got)
	}
}

func TestNewMixtureRejects(t *testing.T) {
	ok := []float64{0.5, 0.5}
	tests := []struct {
		name  string
		dim   int
		comps []Component
	}{
		{"dim 0", 0, []Component{{Weight: 1, Mean: nil, Var: nil}}},
		{"no components", 2, nil},
		{"zero weight", 2, []Component{{Weight: 0, Mean: ok, Var: []float64{0.01, 0.01}}}},
		{"NaN weight", 2, []Component{{Weight: math.NaN(), Mean: ok, Var: []float64{0.01, 0.01}}}},
		{"short mean", 2, []Component{{Weight: 1, Mean: []float64{0.5}, Var: []float64{0.01, 0.01}}}},
		{"NaN mean", 2, []Component{{Weight: 1, Mean: []float64{0.5, math.NaN()}, Var: []float64{0.01, 0.01}}}},
		{"zero var", 2, []Component{{Weight: 1, Mean: ok, Var: []float64{0.01, 0}}}},
		{"no covariance", 2, []Component{{Weight: 1, Mean: ok}}},
		{"var and cov", 2, []Component{{Weight: 1, Mean: ok, Var: []float64{0.01, 0.01}, Cov: []float64{0.01, 0, 0, 0.01}}}},
		{"full cov in 3-d", 3, []Component{{Weight: 1, Mean: []float64{0.5, 0.5, 0.5}, Cov: make([]float64, 9)}}},
		{"asymmetric cov", 2, []Component{{Weight: 1, Mean: ok, Cov: []float64{0.01, 0.001, 0, 0.01}}}},
		{"singular cov", 2, []Component{{Weight: 1, Mean: ok, Cov: []float64{0.01, 0.01, 0.01, 0.01}}}},
		{"far outside (diag)", 2, []Component{{Weight: 1, Mean: []float64{0.5, 3}, Var: []float64{0.01, 0.01}}}},
		{"far outside (full)", 2, []Component{{Weight: 1, Mean: []float64{-2, 0.5}, Cov: []float64{0.01, 0.001, 0.001, 0.01}}}},
	}
	for _, tc := range tests {
		if _, err := NewMixture(tc.dim, tc.comps); err == nil {
			t.Errorf("%s: NewMixture succeeded, want error", tc.name)
		}
	}
}

// testMixtures are the shapes the statistical tests run on: every covariance kind, heavy
// truncation at edges and corners, unequal weights, d = 1, 2, 3.
func testMixtures(t *testing.T) map[string]*Mixture {
	t.Helper()
	mk := func(dim int, comps ...Component) *Mixture {
		m, err := NewMixture(dim, comps)
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	return map[string]*Mixture{
		"1d": mk(1,
			Component{Weight: 1, Mean: []float64{0.02}, Var: []float64{0.1 * 0.1}},
			Component{Weight: 3, Mean: []float64{0.6}, Var: []float64{0.05 * 0.05}}),
		"2d diag": mk(2,
			Component{Weight: 2, Mean: []float64{0.0, 0.9}, Var: []float64{0.15 * 0.15, 0.08 * 0.08}},
			Component{Weight: 1, Mean: []float64{0.5, 0.3}, Var: []float64{0.05 * 0.05, 0.12 * 0.12}}),
		"2d full": mk(2,
			Component{Weight: 1, Mean: []float64{0.3, 0.35}, Cov: []float64{0.04, 0.03, 0.03, 0.04}}, // ρ = 0.75
			Component{Weight: 1, Mean: []float64{0.95, 0.1}, Cov: []float64{0.01, -0.006, -0.006, 0.02}},
			Component{Weight: 2, Mean: []float64{0.5, 0.8}, Var: []float64{0.01, 0.002}}),
		"2d random": RandomMixture(numeric.NewRNG(7, "test"), 2),
		"3d random": RandomMixture(numeric.NewRNG(8, "test"), 3),
	}
}

// gridIntegrate integrates f over the box [lo, hi] (per axis) with a tensor-product composite
// Gauss–Legendre rule of `panels` panels of `nodes` nodes per axis.
func gridIntegrate(d int, lo, hi []float64, panels, nodes int, f func([]float64) float64) float64 {
	x, w := quadrature.GaussLegendre(nodes)
	per := panels * nodes
	pts := make([][]float64, d)
	wts := make([][]float64, d)
	for a := 0; a < d; a++ {
		h := (hi[a] - lo[a]) / float64(panels)
		for p := 0; p < panels; p++ {
			for i := range x {
				pts[a] = append(pts[a], lo[a]+float64(p)*h+(x[i]+1)*h/2)
				wts[a] = append(wts[a], w[i]*h/2)
			}
		}
	}
	idx := make([]int, d)
	u := make([]float64, d)
	var sum float64
	for {
		wt := 1.0
		for a := 0; a < d; a++ {
			u[a] = pts[a][idx[a]]
			wt *= wts[a][idx[a]]
		}
		sum += wt * f(u)
		a := 0
		for ; a < d; a++ {
			idx[a]++
			if idx[a] < per {
				break
			}
			idx[a] = 0
		}
		if a == d {
			return sum
		}
	}
}

func unitBox(d int) (lo, hi []float64) {
	lo, hi = make([]float64, d), make([]float64, d)
	for i := range hi {
		hi[i] = 1
	}
	return lo, hi
}

// TestDensityIntegratesToOne: ∫_{[0,1]^d} p = 1. The quadrature uses panels no wider than
// twice the smallest standard deviation in testMixtures (0.05) with 10–12 Gauss–Legendre
// nodes each, accurate to ~1e-12 on these smooth integrands; 1e-7 leaves room without
// hiding a wrong normalisation constant (a mistake there is at least of the order of 1e-3).
func TestDensityIntegratesToOne(t *testing.T) {
	for name, m := range testMixtures(t) {
		d := m.Dim()
		panels, nodes := 40, 12
		if d == 3 {
			panels, nodes = 10, 10
		}
		lo, hi := unitBox(d)
		got := gridIntegrate(d, lo, hi, panels, nodes, m.Density)
		t.Logf("%s: ∫p − 1 = %.2g", name, got-1)
		if math.Abs(got-1) > 1e-7 {
			t.Errorf("%s: ∫p = %.12f, want 1", name, got)
		}
	}
}

func TestDensityOutsideAndPanics(t *testing.T) {
	m := testMixtures(t)["2d diag"]
	for _, u := range [][]float64{{-1e-9, 0.5}, {0.5, 1.0000001}, {math.NaN(), 0.5}, {math.Inf(1), 0.5}} {
		if p := m.Density(u); p != 0 {
			t.Errorf("Density(%v) = %v, want 0 outside [0,1]^2", u, p)
		}
	}
	if p := m.Density([]float64{0, 1}); !(p > 0) {
		t.Errorf("Density at the corner (0,1) = %v, want > 0 (the box is closed)", p)
	}
	defer func() {
		if recover() == nil {
			t.Error("Density of a 3-d point on a 2-d mixture did not panic")
		}
	}()
	m.Density([]float64{0.5, 0.5, 0.5})
}

// TestMasses checks the truncation masses against brute-force quadrature of the untruncated
// Gaussian density over [0,1]^d, independently of the conditional-normal formula used for
// full covariances and of the erfc products used for diagonal ones.
func TestMasses(t *testing.T) {
	for name, m := range testMixtures(t) {
		if m.Dim() != 2 {
			continue
		}
		lo, hi := unitBox(2)
		for k, c := range m.Components() {
			cov := c.Cov
			if cov == nil {
				cov = []float64{c.Var[0], 0, 0, c.Var[1]}
			}
			det := cov[0]*cov[3] - cov[1]*cov[2]
			pdf := func(u []float64) float64 {
				d0, d1 := u[0]-c.Mean[0], u[1]-c.Mean[1]
				q := (cov[3]*d0*d0 - 2*cov[1]*d0*d1 + cov[0]*d1*d1) / det
				return math.Exp(-q/2) / (2 * math.Pi * math.Sqrt(det))
			}
			want := gridIntegrate(2, lo, hi, 40, 12, pdf)
			if got := m.Masses()[k]; math.Abs(got-want) > 1e-9 {
				t.Errorf("%s component %d: mass %.12f, quadrature %.12f", name, k, got, want)
			}
		}
	}
	// A full covariance with zero correlation is the diagonal case.
	full, err := NewMixture(2, []Component{{Weight: 1, Mean: []float64{0.1, 0.7}, Cov: []float64{0.04, 0, 0, 0.09}}})
	if err != nil {
		t.Fatal(err)
	}
	diag, err := NewMixture(2, []Component{{Weight: 1, Mean: []float64{0.1, 0.7}, Var: []float64{0.04, 0.09}}})
	if err != nil {
		t.Fatal(err)
	}
	if a, b := full.Masses()[0], diag.Masses()[0]; math.Abs(a-b) > 1e-12 {
		t.Errorf("ρ=0 full mass %.15f ≠ diagonal mass %.15f", a, b)
	}
	for _, u := range [][]float64{{0.1, 0.7}, {0.9, 0.05}, {0, 1}} {
		if a, b := full.Density(u), diag.Density(u); math.Abs(a-b) > 1e-12*b {
			t.Errorf("ρ=0 full density %v ≠ diagonal %v at %v", a, b, u)
		}
	}
}

func TestSampleBoundsAndDeterminism(t *testing.T) {
	for name, m := range testMixtures(t) {
		a := m.Sample(numeric.NewRNG(1, "s"), 5000)
		if len(a) != 5000*m.Dim() {
			t.Fatalf("%s: %d coordinates, want %d", name, len(a), 5000*m.Dim())
		}
		for i, v := range a {
			if !(v >= 0 && v <= 1) {
				t.Fatalf("%s: coordinate %d = %v outside [0,1]", name, i, v)
			}
		}
		b := m.Sample(numeric.NewRNG(1, "s"), 5000)
		c := m.Sample(numeric.NewRNG(1, "other"), 5000)
		same, diff := true, false
		for i := range a {
			same = same && math.Float64bits(a[i]) == math.Float64bits(b[i])
			diff = diff || a[i] != c[i]
		}
		if !same {
			t.Errorf("%s: same seed and stream gave different samples", name)
		}
		if !diff {
			t.Errorf("%s: another stream gave identical samples", name)
		}
	}
	if got := testMixtures(t)["1d"].Sample(numeric.NewRNG(1, "s"), 0); len(got) != 0 {
		t.Errorf("Sample(0) returned %d values", len(got))
	}
}

// chiSquare bins n samples on a regular grid of `bins` cells per axis and returns Pearson's
// statistic against the probabilities of `density` per cell (by Gauss–Legendre quadrature),
// pooling cells expected to hold fewer than 5 points into one (the usual validity rule), and
// the degrees of freedom (cells after pooling − 1: the probabilities are exact, not fitted).
func chiSquare(d, bins int, samples []float64, density func([]float64) float64) (chi2 float64, df int) {
	cells := 1
	for i := 0; i < d; i++ {
		cells *= bins
	}
	n := len(samples) / d
	obs := make([]float64, cells)
	for i := 0; i < n; i++ {
		c, stride := 0, 1
		for a := 0; a < d; a++ {
			b := min(int(samples[i*d+a]*float64(bins)), bins-1)
			c += b * stride
			stride *= bins
		}
		obs[c]++
	}
	lo, hi := make([]float64, d), make([]float64, d)
	var poolObs, poolExp float64
	for c := 0; c < cells; c++ {
		rest := c
		for a := 0; a < d; a++ {
			b := rest % bins
			rest /= bins
			lo[a], hi[a] = float64(b)/float64(bins), float64(b+1)/float64(bins)
		}
		exp := float64(n) * gridIntegrate(d, lo, hi, 1, 8, density)
		if exp < 5 {
			poolObs += obs[c]
			poolExp += exp
			continue
		}
		chi2 += (obs[c] - exp) * (obs[c] - exp) / exp
		df++
	}
	if poolExp > 0 {
		chi2 += (poolObs - poolExp) * (poolObs - poolExp) / poolExp
		df++
	}
	return chi2, df - 1
}

// TestSampleMatchesDensity: Pearson's χ² goodness of fit of Sample's histogram against
// Density's cell probabilities. The threshold is the 0.999 quantile of χ²(df): a correct
// sampler fails a given seed with probability 0.1% (and the seeds are fixed, so the test is
// deterministic). The same statistic against a plausible wrong density, the mixture
// truncated as a whole instead of per component, must exceed the threshold by far, which
// shows the test has the power to catch such a mistake.
func TestSampleMatchesDensity(t *testing.T) {
	for name, m := range testMixtures(t) {
		d := m.Dim()
		bins, n := 20, 40000
		switch d {
		case 1:
			bins = 50
		case 3:
			bins = 6
		}
		samples := m.Sample(numeric.NewRNG(2024, name), n)
		chi2, df := chiSquare(d, bins, samples, m.Density)
		limit := distuv.ChiSquared{K: float64(df)}.Quantile(0.999)
		t.Logf("%s: χ² = %.1f with %d df (limit %.1f)", name, chi2, df, limit)
		if chi2 > limit {
			t.Errorf("%s: χ² = %.1f > %.1f (df %d): samples do not follow Density", name, chi2, limit, df)
		}
	}

	// Power: "2d diag" has very different truncation masses, so whole-mixture truncation
	// p'(u) ∝ Σ w_k N_k(u) is a clearly different density.
	m := testMixtures(t)["2d diag"]
	comps, masses := m.Components(), m.Masses()
	var z float64
	for k, c := range comps {
		z += c.Weight * masses[k]
	}
	singles := make([]*Mixture, len(comps))
	for k, c := range comps {
		var err error
		if singles[k], err = NewMixture(2, []Component{c}); err != nil {
			t.Fatal(err)
		}
	}
	wrong := func(u []float64) float64 {
		// Σ_k w_k N_k(u) / Σ_k w_k Z_k = Σ_k (w_k Z_k / z) · (N_k(u)/Z_k)
		var p float64
		for k, single := range singles {
			p += comps[k].Weight * masses[k] / z * single.Density(u)
		}
		return p
	}
	samples := m.Sample(numeric.NewRNG(2024, "power"), 40000)
	chi2, df := chiSquare(2, 20, samples, wrong)
	limit := distuv.ChiSquared{K: float64(df)}.Quantile(0.999)
	t.Logf("whole-mixture truncation: χ² = %.1f with %d df (limit %.1f)", chi2, df, limit)
	if chi2 < 2*limit {
		t.Errorf("χ² against the whole-mixture truncation is only %.1f (limit %.1f): the test lacks power", chi2, limit)
	}
}

func TestRandomMixtureParameters(t *testing.T) {
	for _, d := range []int{1, 2, 5} {
		m := RandomMixture(numeric.NewRNG(3, fmt.Sprint(d)), d)
		cs := m.Components()
		if len(cs) != 5 || m.Dim() != d {
			t.Fatalf("d=%d: %d components of dim %d", d, len(cs), m.Dim())
		}
		for _, c := range cs {
			if math.Abs(c.Weight-0.2) > 1e-15 || c.Cov != nil {
				t.Errorf("d=%d: component %+v: want weight 0.2, diagonal covariance", d, c)
			}
			for j := 0; j < d; j++ {
				sd := math.Sqrt(c.Var[j])
				if c.Mean[j] < 0 || c.Mean[j] >= 1 || sd < 0.05-1e-12 || sd > 0.15+1e-12 {
					t.Errorf("d=%d: mean %v, sd %v out of the paper's ranges", d, c.Mean[j], sd)
				}
			}
		}
	}
}

func TestSets(t *testing.T) {
	const seed, n, d = 42, 300, 2
	a := Sets(seed, 5, n, d)
	if len(a) != 5 {
		t.Fatalf("%d sets", len(a))
	}
	for i, s := range a {
		if s.ID != fmt.Sprintf("set-%06d", i) || len(s.Points) != n*d || s.Mixture.Dim() != d {
			t.Errorf("set %d: ID %q, %d coordinates, dim %d", i, s.ID, len(s.Points), s.Mixture.Dim())
		}
		for _, v := range s.Points {
			if !(v >= 0 && v <= 1) {
				t.Fatalf("set %d: coordinate %v outside [0,1]", i, v)
			}
		}
	}
	if SetID(42) != "set-000042" {
		t.Errorf("SetID(42) = %q", SetID(42))
	}
	// Set i does not depend on how many sets are drawn, and SetAt regenerates it alone.
	b := Sets(seed, 3, n, d)
	c := SetAt(seed, 4, n, d)
	equal := func(x, y []float64) bool {
		if len(x) != len(y) {
			return false
		}
		for i := range x {
			if math.Float64bits(x[i]) != math.Float64bits(y[i]) {
				return false
			}
		}
		return true
	}
	for i := range b {
		if !equal(a[i].Points, b[i].Points) {
			t.Errorf("set %d differs between Sets(…, 5, …) and Sets(…, 3, …)", i)
		}
	}
	if !equal(a[4].Points, c.Points) {
		t.Error("SetAt(seed, 4) differs from Sets(seed, 5)[4]")
	}
	if equal(a[0].Points, a[1].Points) || equal(a[0].Points, Sets(seed+1, 1, n, d)[0].Points) {
		t.Error("different sets or seeds gave identical points")
	}
}

func TestExactMMKSmall(t *testing.T) {
	// One point each: exp(−‖x−y‖²/(2h²)) exactly.
	x, y := []float64{0.1, 0.2}, []float64{0.4, 0.6}
	want := math.Exp(-(0.09 + 0.16) / (2 * 0.3 * 0.3))
	if got := ExactMMK(x, y, 2, 0.3); math.Abs(got-want) > 1e-15 {
		t.Errorf("ExactMMK = %v, want %v", got, want)
	}
	// Two against three in 1-d, by hand.
	x, y = []float64{0, 1}, []float64{0, 0.5, 2}
	k := func(a, b float64) float64 { return math.Exp(-(a - b) * (a - b) / 2) }
	want = (k(0, 0) + k(0, 0.5) + k(0, 2) + k(1, 0) + k(1, 0.5) + k(1, 2)) / 6
	if got := ExactMMK(x, y, 1, 1); math.Abs(got-want) > 1e-15 {
		t.Errorf("ExactMMK = %v, want %v", got, want)
	}
	if got := ExactMMK(y, x, 1, 1); math.Abs(got-want) > 1e-15 {
		t.Errorf("ExactMMK not symmetric: %v vs %v", got, want)
	}
	if got := ExactMMK(nil, y, 1, 1); !math.IsNaN(got) {
		t.Errorf("empty sample: %v, want NaN", got)
	}
	defer func() {
		if recover() == nil {
			t.Error("ExactMMK with a ragged sample did not panic")
		}
	}()
	ExactMMK([]float64{1, 2, 3}, y, 2, 1)
}

// TestExactMMKPopulation: for Gaussians N(μx, σx²I) and N(μy, σy²I) the population mean-map
// kernel is (h²/s)^{d/2} exp(−‖μx−μy‖²/(2s)), s = h² + σx² + σy². Components at 10σ from
// every face are untruncated for practical purposes (mass deficit < 1e-22). The estimator is
// a two-sample V-statistic of a kernel bounded in [0,1], so by Hoeffding's inequality for
// U-statistics it is within 0.05 of its mean except with probability ≤ 2·exp(−2·2000·0.05²)
// ≈ 1e-4 (the V-vs-U bias is ≤ 1/2000). A wrong bandwidth convention (exp(−r²/h²))
// moves the value by 0.18.
func TestExactMMKPopulation(t *testing.T) {
	const n, h = 2000, 0.1
	px, err := NewMixture(2, []Component{{Weight: 1, Mean: []float64{0.5, 0.5}, Var: []float64{0.0025, 0.0025}}})
	if err != nil {
		t.Fatal(err)
	}
	py, err := NewMixture(2, []Component{{Weight: 1, Mean: []float64{0.55, 0.45}, Var: []float64{0.0016, 0.0016}}})
	if err != nil {
		t.Fatal(err)
	}
	x := px.Sample(numeric.NewRNG(5, "x"), n)
	y := py.Sample(numeric.NewRNG(5, "y"), n)
	s := h*h + 0.0025 + 0.0016
	want := (h * h / s) * math.Exp(-0.005/(2*s))
	got := ExactMMK(x, y, 2, h)
	t.Logf("MMK = %.4f, population %.4f", got, want)
	if math.Abs(got-want) > 0.05 {
		t.Errorf("ExactMMK = %.4f, population value %.4f", got, want)
	}
}

// TestExactMMKConcurrent runs ExactMMK from several goroutines on shared inputs (under -race
// this checks it neither writes its inputs nor shares state) and expects identical results.
func TestExactMMKConcurrent(t *testing.T) {
	sets := Sets(9, 3, 200, 2)
	want := ExactMMK(sets[0].Points, sets[1].Points, 2, 0.1)
	var wg sync.WaitGroup
	res := make([]float64, 8)
	for g := range res {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res[g] = ExactMMK(sets[0].Points, sets[1].Points, 2, 0.1)
		}()
	}
	wg.Wait()
	for g, r := range res {
		if math.Float64bits(r) != math.Float64bits(want) {
			t.Errorf("goroutine %d: %v, want %v", g, r, want)
		}
	}
}

func BenchmarkExactMMK(b *testing.B) {
	sets := Sets(1, 2, 2500, 2)
	for b.Loop() {
		ExactMMK(sets[0].Points, sets[1].Points, 2, 0.1)
	}
}

func BenchmarkSample(b *testing.B) {
	m := RandomMixture(numeric.NewRNG(1, "b"), 2)
	rng := numeric.NewRNG(1, "s")
	for b.Loop() {
		m.Sample(rng, 2500)
	}
}
