package twosample

import (
	"errors"
	"math"
	"math/rand/v2"
	"testing"
)

// TestWindowMergeExact: a window's result does not depend on how its points were split
// across Add calls and merged windows (fixed-point sums), bit for bit.
func TestWindowMergeExact(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 1))
	rf := buildReference(t, r, blobProblem.ref(r, 500), Config{NullDraws: 500})
	x := blobProblem.alt(r, 300)
	whole := rf.FeatureMap().NewWindow()
	whole.Add(x)
	want, err := rf.Test(whole)
	if err != nil {
		t.Fatal(err)
	}
	for _, cut := range []int{0, 1, 150, 299} {
		a, b := rf.FeatureMap().NewWindow(), rf.FeatureMap().NewWindow()
		for i := 0; i < cut; i++ { // point by point
			a.Add(x[2*i : 2*i+2])
		}
		b.Add(x[2*cut:])
		if err := b.Merge(a); err != nil {
			t.Fatal(err)
		}
		got, err := rf.Test(b)
		if err != nil {
			t.Fatal(err)
		}
		gv, wv := got.Vector(), want.Vector()
		for i := range wv {
			if math.Float64bits(gv[i]) != math.Float64bits(wv[i]) {
				t.Fatalf("cut %d: value %d is %v, want %v (the whole window's)", cut, i, gv[i], wv[i])
			}
		}
	}
	if err := whole.Merge(buildReference(t, r, blobProblem.ref(r, 100), Config{NullDraws: 100}).FeatureMap().NewWindow()); !errors.Is(err, ErrIncompatible) {
		t.Errorf("merging windows of two feature maps: error %v, want ErrIncompatible", err)
	}
}

// TestMMD2MatchesClosedForm checks the MMD² output for two isotropic Gaussians,
// P = N(a, s²I) and Q = N(b, s²I) (s small enough that clipping to [0,1]² is never hit),
// against two exact values:
//
//   - given the drawn frequencies, the quantity the estimator is unbiased for,
//     (1/K)Σ_k (1/F)Σ_f |φ_P(ω_kf) − φ_Q(ω_kf)|², with the characteristic function
//     φ_P(ω) = exp(iω·a − s²|ω|²/2). Its error is the samples': MMD²_u − MMD² ≈
//     2⟨(μ̂_P − μ_P) − (μ̂_Q − μ_Q), μ_P − μ_Q⟩, whose standard deviation is at most
//     2·√(MMD²·(1/n + 1/m)) (unit-norm features); we allow 4 of them.
//   - the kernel's MMD², (1/K)Σ_k [2E k_k(x,x') − 2E k_k(x,y)] with, for x ~ N(a, s²I),
//     y ~ N(b, s²I) in d dimensions, E exp(−|x−y|²/(2σ²)) = (σ²/(σ²+2s²))^{d/2}
//     exp(−|a−b|²/(2(σ²+2s²))), from which the frequency-conditional value differs by
//     the random features' Monte Carlo error: we allow 4 standard errors of the mean of
//     the per-frequency terms.
func TestMMD2MatchesClosedForm(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 5))
	const d, s, shift, n = 2, 0.08, 0.1, 20000
	draw := func(mu float64) []float64 {
		out := make([]float64, d*n)
		for i := range out {
			out[i] = clip01(0.5 + s*r.NormFloat64())
		}
		for i := 0; i < n; i++ {
			out[i*d] += mu
		}
		return out
	}
	bw := []float64{0.2, 0.1}
	const F = 50
	fm, err := NewFeatureMap([]float64{0.5, 0.5}, bw, F, normals{r}, math.Sincos)
	if err != nil {
		t.Fatal(err)
	}
	b := fm.NewReferenceBuilder()
	b.Add(draw(0))
	rf, err := b.Build(Config{NullDraws: 100}, normals{r})
	if err != nil {
		t.Fatal(err)
	}
	w := fm.NewWindow()
	w.Add(draw(shift))
	res, err := rf.Test(w)
	if err != nil {
		t.Fatal(err)
	}
	// Frequency-conditional value: |φ_P − φ_Q|² = e^{−s²|ω|²}·|1 − e^{iω₁·shift}|².
	var h []float64
	for f := range len(bw) * F {
		om := fm.omega[f*d : (f+1)*d]
		w2 := om[0]*om[0] + om[1]*om[1]
		h = append(h, math.Exp(-s*s*w2)*2*(1-math.Cos(om[0]*shift)))
	}
	cond, v := 0.0, 0.0
	for _, x := range h {
		cond += x / float64(len(h))
	}
	for _, x := range h {
		v += (x - cond) * (x - cond) / float64(len(h)-1)
	}
	if tol := 4 * 2 * math.Sqrt(cond*2.0/n); math.Abs(res.MMD2-cond) > tol {
		t.Errorf("MMD² %.5f, its expectation given the frequencies %.5f: apart by more than %.5f", res.MMD2, cond, tol)
	}
	ek := func(sig, dist2 float64) float64 {
		q := sig*sig + 2*s*s
		return math.Pow(sig*sig/q, d/2.0) * math.Exp(-dist2/(2*q))
	}
	exact := 0.0
	for _, sig := range bw {
		exact += (2*ek(sig, 0) - 2*ek(sig, shift*shift)) / float64(len(bw))
	}
	if tol := 4 * math.Sqrt(v/float64(len(h))); math.Abs(cond-exact) > tol {
		t.Errorf("random-feature MMD² %.5f, kernel's exact %.5f: apart by more than %.5f", cond, exact, tol)
	}
	t.Logf("MMD² %.5f; given the frequencies %.5f; kernel's exact %.5f", res.MMD2, cond, exact)
}

// TestBuildErrors: unusable settings and references are refused with errors naming them.
func TestBuildErrors(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 9))
	src := normals{r}
	fm, err := NewFeatureMap([]float64{0.5, 0.5}, []float64{0.1}, 4, src, math.Sincos)
	if err != nil {
		t.Fatal(err)
	}
	small := fm.NewReferenceBuilder()
	small.Add(meanShift.ref(r, MinReferencePoints-1))
	if _, err := small.Build(Config{}, src); !errors.Is(err, ErrReference) {
		t.Errorf("reference of %d points: error %v, want ErrReference", MinReferencePoints-1, err)
	}
	ok := fm.NewReferenceBuilder()
	ok.Add(meanShift.ref(r, 200))
	for name, cfg := range map[string]Config{
		"negative ridge":    {Ridge: -1},
		"too few draws":     {NullDraws: 10},
		"negative weight":   {Weights: [3]float64{1, -1, 1}},
		"infinite bandwid.": {Ridge: math.Inf(1)},
	} {
		if _, err := ok.Build(cfg, src); !errors.Is(err, ErrConfig) {
			t.Errorf("%s: error %v, want ErrConfig", name, err)
		}
	}
	for name, f := range map[string]func() error{
		"no bandwidths":  func() error { _, err := NewFeatureMap([]float64{0.5}, nil, 4, src, math.Sincos); return err },
		"zero bandwidth": func() error { _, err := NewFeatureMap([]float64{0.5}, []float64{0}, 4, src, math.Sincos); return err },
		"no frequencies": func() error { _, err := NewFeatureMap([]float64{0.5}, []float64{1}, 0, src, math.Sincos); return err },
		"centre outside": func() error { _, err := NewFeatureMap([]float64{1.5}, []float64{1}, 4, src, math.Sincos); return err },
		"coinciding pts": func() error { _, err := MedianBandwidth(make([]float64, 20), 2, 10); return err },
		"one point":      func() error { _, err := MedianBandwidth([]float64{0.1, 0.2}, 2, 10); return err },
		"zero dimension": func() error { _, err := NewFeatureMap(nil, []float64{1}, 4, src, math.Sincos); return err },
		"nil sincos":     func() error { _, err := NewFeatureMap([]float64{0.5}, []float64{1}, 4, src, nil); return err },
		"nan bandwidth": func() error {
			_, err := NewFeatureMap([]float64{0.5}, []float64{math.NaN()}, 4, src, math.Sincos)
			return err
		},
		"nan centre": func() error {
			_, err := NewFeatureMap([]float64{math.NaN()}, []float64{1}, 4, src, math.Sincos)
			return err
		},
		"negative centre": func() error { _, err := NewFeatureMap([]float64{-0.1}, []float64{1}, 4, src, math.Sincos); return err },
	} {
		if err := f(); !errors.Is(err, ErrConfig) {
			t.Errorf("%s: error %v, want ErrConfig", name, err)
		}
	}
}

// TestDegenerateReference: a reference whose points all lie on a line (one coordinate
// constant) still builds; a window off that line is flagged, a window on it is not.
func TestDegenerateReference(t *testing.T) {
	r := rand.New(rand.NewPCG(2, 2))
	line := func(n int, y float64) []float64 {
		out := make([]float64, 2*n)
		for i := 0; i < n; i++ {
			out[2*i], out[2*i+1] = clip01(0.5+0.1*r.NormFloat64()), y
		}
		return out
	}
	ref := line(1000, 0.3)
	fm, err := NewFeatureMap(Center(ref, 2, 1000), []float64{0.2, 0.05}, 10, normals{r}, math.Sincos)
	if err != nil {
		t.Fatal(err)
	}
	b := fm.NewReferenceBuilder()
	b.Add(ref)
	rf, err := b.Build(Config{NullDraws: 1000}, normals{r})
	if err != nil {
		t.Fatal(err)
	}
	on, off := fm.NewWindow(), fm.NewWindow()
	on.Add(line(200, 0.3))
	off.Add(line(200, 0.31))
	pOn, _ := rf.Test(on)
	pOff, _ := rf.Test(off)
	if pOff.PValue > 0.01 || pOn.PValue < 0.01 {
		t.Errorf("p-value on the reference's line %.4f (want ≥ 0.01), off it %.4f (want ≤ 0.01)", pOn.PValue, pOff.PValue)
	}
}

// TestEmptyWindow: no points, no evidence.
func TestEmptyWindow(t *testing.T) {
	r := rand.New(rand.NewPCG(2, 3))
	rf := buildReference(t, r, meanShift.ref(r, 200), Config{NullDraws: 100})
	res, err := rf.Test(rf.FeatureMap().NewWindow())
	if err != nil {
		t.Fatal(err)
	}
	if res.PValue != 1 || res.Statistic != 0 || res.MMD2 != 0 || res.N != 0 {
		t.Errorf("empty window: %+v, want p-value 1 and zeros", res)
	}
}

// TestNullSizes checks the simulated nulls a window is compared with: the Gaussian limit
// and one bootstrap null per size, by increasing 1/n, and the bracketing that interpolates
// between them (a window's 1/n on a simulated size uses that null alone; between two, the
// weights are linear in 1/n; beyond the smallest size, the smallest size's null).
func TestNullSizes(t *testing.T) {
	r := rand.New(rand.NewPCG(27, 9))
	rf := buildReference(t, r, meanShift.ref(r, 2000), Config{})
	if got, want := len(rf.nulls), 1+len(bootstrapSizes); got != want {
		t.Fatalf("%d nulls, want %d (Gaussian limit + bootstrap sizes)", got, want)
	}
	for i, ns := range rf.nulls {
		if i > 0 && !(ns.inv > rf.nulls[i-1].inv) {
			t.Errorf("null %d: 1/n = %v not above null %d's %v", i, ns.inv, i-1, rf.nulls[i-1].inv)
		}
		for k := range ns.stretch {
			if !(ns.stretch[k] >= 1 && ns.stretch[k] <= 2) {
				t.Errorf("null %d statistic %d: stretch %v outside [1, 2]", i, k, ns.stretch[k])
			}
		}
	}
	for _, c := range []struct {
		inv     float64
		lo, hi  int
		lambda  float64
		comment string
	}{
		{0, 0, 1, 0, "infinite window: the Gaussian limit"},
		{1.0 / 400, 1, 2, 0, "400 points: that null"},
		{1.0 / 800, 0, 1, 0.5, "800 points: halfway in 1/n"},
		{1.0 / 150, 2, 3, 1.0 / 3, "150 points: a third of the way from 1/200 to 1/100"},
		{1.0 / 50, 4, 4, 0, "50 points: the smallest size"},
		{1.0 / 10, 4, 4, 0, "10 points: the smallest size"},
	} {
		lo, hi, lam := rf.bracket(c.inv)
		if lo != c.lo || hi != c.hi || math.Abs(lam-c.lambda) > 1e-12 {
			t.Errorf("%s: bracket(%v) = %d, %d, %v; want %d, %d, %v", c.comment, c.inv, lo, hi, lam, c.lo, c.hi, c.lambda)
		}
	}
	// Windows of every size get a p-value in (0, 1].
	for _, n := range []int{1, 10, 49, 100, 3000} {
		res := pvalue(t, rf, meanShift.ref(r, n))
		if !(res.PValue > 0 && res.PValue <= 1) {
			t.Errorf("%d-point window: p-value %v outside (0, 1]", n, res.PValue)
		}
	}
}
