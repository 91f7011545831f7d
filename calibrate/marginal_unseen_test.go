package calibrate

import (
	"context"
	"fmt"
	"math"
	"os"
	"slices"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/distfeat/distfeat/embedding"
	"github.com/distfeat/distfeat/spec"
)

// Issue #38's domain-generalisation cases, with streams of their own: "rotated" — two
// classes at ±1.5 along each domain's own axis, turned by an angle uniform in (−90°, 90°)
// (sd 0.6 along it, 1.2 across) and shifted by an offset uniform in [−1.5, 1.5]²; "noinfo"
// — the classes split at x₁ = 0 in every domain (±1.2, sd 0.8), domains differing by a
// shift in [−3, 3] and a spread in [0.3, 1.5] of x₂, which moves the marginal and not the
// boundary.
func dgDomains(kind string, seed uint64, n, points int, prefix string) []LabelledSet {
	var sets []LabelledSet
	for k := 0; k < n; k++ {
		rng := embedding.NewRNG(seed, fmt.Sprintf("issue38/%s/%s/%d", kind, prefix, k))
		s := LabelledSet{ID: fmt.Sprintf("%s-%03d", prefix, k)}
		th := math.Pi * (rng.Float64() - 0.5)
		ox, oy := 3*rng.Float64()-1.5, 3*rng.Float64()-1.5
		shift, spread := 6*rng.Float64()-3, 0.3+1.2*rng.Float64()
		for i := 0; i < points; i++ {
			sign, l := 1.0, "a"
			if i%2 == 1 {
				sign, l = -1, "b"
			}
			var x, y float64
			if kind == "rotated" {
				a, c := sign*1.5+0.6*rng.Normal(), 1.2*rng.Normal()
				x, y = ox+a*math.Cos(th)-c*math.Sin(th), oy+a*math.Sin(th)+c*math.Cos(th)
			} else {
				x, y = sign*1.2+0.8*rng.Normal(), shift+spread*rng.Normal()
			}
			s.Points = append(s.Points, x, y)
			s.Labels = append(s.Labels, l)
		}
		sets = append(sets, s)
	}
	return sets
}

// dgOutcome is one case's proposal and its accuracy on the unseen domains.
type dgOutcome struct {
	res    *MarginalResult
	unseen float64
}

// runDG calibrates the training domains as `distfeat calibrate --point-label` does (the
// unlabelled calibration's mmd family supplies Ψ, then MarginalTransfer), fits the
// proposed family's ridge classifier on every training domain with the proposed penalty,
// and scores it on the unseen domains.
func runDG(t *testing.T, train, test []LabelledSet, o MarginalOptions) dgOutcome {
	t.Helper()
	var in []Set
	for _, s := range train {
		in = append(in, Set{ID: s.ID, Points: s.Points})
	}
	f, err := familyByName("mmd", 2)
	if err != nil {
		t.Fatal(err)
	}
	base := &spec.Spec{Version: NewestVersion, Seed: 42, Dim: 2, OutOfBounds: "clip", Bounds: spec.Bounds{Lo: []float64{0, 0}, Hi: []float64{1, 1}}, Families: []spec.Family{f}}
	cal, err := Calibrate(context.Background(), in, 2, base, Options{})
	if err != nil {
		t.Fatal(err)
	}
	emb, err := embedding.New(cal.Spec)
	if err != nil {
		t.Fatal(err)
	}
	res, err := MarginalTransfer(context.Background(), emb, train, o)
	if err != nil {
		t.Fatal(err)
	}
	sp := *cal.Spec
	if res.SetFamilySpec != nil { // NewPointMap adds the marginal family itself
		sp.Families = append(slices.Clone(sp.Families), *res.SetFamilySpec)
	}
	if emb, err = embedding.New(&sp); err != nil {
		t.Fatal(err)
	}
	return dgOutcome{res, unseenAccuracy(t, emb, res.Family, res.Lambda, train, test)}
}

// unseenAccuracy fits the one-vs-rest ridge classifier of calibrate's search (each domain
// weighted equally, penalty lambda times the mean diagonal) on the per-point features of
// every training domain and returns the mean over the test domains of their accuracy.
func unseenAccuracy(t *testing.T, emb *embedding.Embedder, fam spec.Family, lambda float64, train, test []LabelledSet) float64 {
	t.Helper()
	m, err := embedding.NewPointMap(emb, fam)
	if err != nil {
		t.Fatal(err)
	}
	D := m.Len()
	feats := func(s LabelledSet) *mat.Dense {
		u := make([]float64, len(s.Points))
		if _, err := emb.Normalize(u, s.Points); err != nil {
			t.Fatal(err)
		}
		f := make([]float32, len(s.Labels)*D)
		m.Points(m.SetPart(emb.Embed(u), nil), u, f)
		z := mat.NewDense(len(s.Labels), D, nil)
		for i, v := range f {
			z.RawMatrix().Data[i] = float64(v)
		}
		return z
	}
	g, b := mat.NewSymDense(D, nil), mat.NewDense(D, 2, nil)
	for _, s := range train {
		z := feats(s)
		w := 1 / float64(len(s.Labels))
		gs := mat.NewSymDense(D, nil)
		gs.SymOuterK(w, z.T())
		g.AddSym(g, gs)
		y := mat.NewDense(len(s.Labels), 2, nil)
		for i, l := range s.Labels {
			y.Set(i, map[string]int{"a": 0, "b": 1}[l], 1)
		}
		var bs mat.Dense
		bs.Mul(z.T(), y)
		bs.Scale(w, &bs)
		b.Add(b, &bs)
	}
	tr := 0.0
	for j := 0; j < D; j++ {
		tr += g.At(j, j)
	}
	for j := 0; j < D; j++ {
		g.SetSym(j, j, g.At(j, j)+lambda*tr/float64(D))
	}
	var chol mat.Cholesky
	if !chol.Factorize(g) {
		t.Fatal("ridge system not positive definite")
	}
	var wts mat.Dense
	if err := chol.SolveTo(&wts, b); err != nil {
		t.Fatal(err)
	}
	total := 0.0
	for _, s := range test {
		y := make([]int, len(s.Labels))
		for i, l := range s.Labels {
			y[i] = map[string]int{"a": 0, "b": 1}[l]
		}
		total += classifierAccuracy(feats(s), &wts, y)
	}
	return total / float64(len(test))
}

// TestMarginalTransferUnseenDomains is issue #38's check of calibrate --point-label's
// promise on domains it never saw: on the rotated case (a seed of its own, 24 training and
// 20 unseen domains of 48 points) the promised accuracy (cross-validated, less
// the best-of-grid optimism) must hold on the unseen domains: they may not fall short of
// it by more than 2.5 of its standard errors combined with the unseen domains' own (their
// mean over 20 domains has a standard error ≈ the training sets' SE·√(24/20)); on the
// no-harm case (the marginal carries no label information) pooling must be proposed. The larger study
// (five seeds, 40 training domains, CALIBRATE_DG_STUDY=1) prints the table of the report.
func TestMarginalTransferUnseenDomains(t *testing.T) {
	if testing.Short() {
		t.Skip("about 20 s of cross-validation (run without -short)")
	}
	// The default run: one seed, 24 training domains of 48 points, a smaller grid (D = 256,
	// Ψ at 1 and 2 times the set family's bandwidth, three penalties: about 12 s of CPU);
	// the study: the five seeds, 40 domains of 64 points, the default options.
	seeds, nTrain, points := []uint64{7}, 24, 48
	opts := MarginalOptions{Features: []int{256}, PsiScales: []float64{1, 2}, Lambdas: []float64{1e-3, 1e-2, 1e-1}}
	study := os.Getenv("CALIBRATE_DG_STUDY") != ""
	if study {
		seeds, nTrain, points, opts = []uint64{1, 2, 3, 4, 5}, 40, 64, MarginalOptions{}
	}
	for _, kind := range []string{"rotated", "noinfo"} {
		for _, seed := range seeds {
			o := runDG(t, dgDomains(kind, seed, nTrain, points, "train"), dgDomains(kind, seed, 20, points, "test"), opts)
			r := o.res
			what := "pooling"
			if !r.Family.Pooling {
				what = fmt.Sprintf("σ_P %g, σ_X %g, Ψ bandwidth %g", r.Family.SigmaP, r.Family.SigmaX, r.Chosen.PsiBandwidth)
			}
			t.Logf("%-8s seed %d: proposed %s, D %d, λ %g; cross-validated %.3f, promised %.3f ± %.3f (optimism %.3f); unseen domains %.3f",
				kind, seed, what, r.Family.Features, r.Lambda, r.Chosen.Accuracy, r.Promised, r.PromisedSE, r.Optimism, o.unseen)
			t.Log(r.Rule)
			if os.Getenv("DG_VERBOSE") != "" {
				t.Log("\n" + r.Summary())
			}
			if study {
				continue
			}
			if kind == "noinfo" && !r.Family.Pooling {
				t.Errorf("noinfo: proposed marginal transfer (%s); the marginal carries no label information", r.Rule)
			}
			se := r.PromisedSE * math.Sqrt(1+float64(nTrain)/20)
			if o.unseen < r.Promised-2.5*se {
				t.Errorf("%s: promised %.3f ± %.3f, unseen domains gave %.3f (below by more than 2.5 × %.3f)", kind, r.Promised, r.PromisedSE, o.unseen, se)
			}
		}
	}
}
