package embedding

import (
	"encoding/json"
	"errors"
	"math"
	"os"
	"strings"
	"testing"

	"github.com/distfeat/distfeat/internal/numeric"
	"github.com/distfeat/distfeat/internal/stats"
	"github.com/distfeat/distfeat/spec"
)

// marginalTestSpec is a 2-D spec whose mmd family supplies Ψ(P).
const marginalTestSpec = `{"version": 1, "seed": 42, "dim": 2, "bounds": {"lo": [0, 0], "hi": [1, 1]},
 "families": [{"name": "psi", "kind": "mmd", "features": 256, "bandwidth": 0.15},
              {"name": "psi_rbf", "kind": "mmd", "features": 64, "bandwidth": 0.15, "rbf_sigma": 0.5, "rbf_features": 64},
              {"name": "l2", "kind": "l2", "basis": 16}]}`

func marginalEmbedder(t testing.TB) *Embedder {
	t.Helper()
	s, err := spec.ParseSpec([]byte(marginalTestSpec))
	if err != nil {
		t.Fatal(err)
	}
	return mustNew(t, s)
}

func mustPointMap(t testing.TB, e *Embedder, ps spec.Family) *PointMap {
	t.Helper()
	m, err := NewPointMap(e, ps)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// blobSet is n points of a Gaussian blob at (cx, cy) with spread s, clamped to the unit square.
func blobSet(rng *RNG, n int, cx, cy, s float64) []float64 {
	u := make([]float64, 2*n)
	for i := 0; i < n; i++ {
		u[2*i] = min(max(cx+s*rng.Normal(), 0), 1)
		u[2*i+1] = min(max(cy+s*rng.Normal(), 0), 1)
	}
	return u
}

func sqDist64(a, b []float64) float64 {
	s := 0.0
	for i := range a {
		s += (a[i] - b[i]) * (a[i] - b[i])
	}
	return s
}

// TestPointMapKernel checks the per-point features against the exact product kernel
// exp(−‖Ψ−Ψ′‖²/2σ_P²)·exp(−‖u−u′‖²/2σ_X²), Ψ the same float32 mean-embedding vectors the
// map reads, over every pair of (set, point) items.
//
// Tolerance: z·z′ = (2/D)Σ_r cos(ω_r·Δ) over D/2 independent frequencies, each term with
// mean k(Δ) and variance (1 − k(Δ)²)²/2 ≤ ½ for a Gaussian kernel (k(2Δ) = k(Δ)⁴), so the
// error of one pair has standard deviation ≤ 1/√D (0.0156 at D = 4096). With 48 items
// (1128 pairs) a bound of 5/√D is exceeded by chance with probability ≈ 1128·5.7e-7 < 1e-3
// (the seed is fixed, so the test is deterministic; a wrong σ, a swapped frequency or a
// sine for a cosine gives errors of 0.1–1). The RMS error over all pairs must also be
// within 1.5× the predicted RMS standard deviation (errors of pairs sharing frequencies are
// correlated, so the RMS of one draw can exceed its expectation somewhat; 1.5× still fails
// for any systematic error of a few hundredths).
func TestPointMapKernel(t *testing.T) {
	e := marginalEmbedder(t)
	const D, perSet = 4096, 8
	rng := NewRNG(1, "marginal-kernel-test")
	centers := [][3]float64{{0.3, 0.3, 0.1}, {0.35, 0.3, 0.12}, {0.7, 0.6, 0.1}, {0.5, 0.5, 0.25}, {0.2, 0.8, 0.05}, {0.6, 0.4, 0.15}}
	type item struct{ psi, u []float64 }
	var psis [][]float64
	var windows [][][]float32
	var points [][]float64
	for _, c := range centers {
		u := blobSet(rng, 300, c[0], c[1], c[2])
		out := e.Embed(u)
		psi := make([]float64, len(out[0]))
		for j, v := range out[0] {
			psi[j] = float64(v)
		}
		psis, windows, points = append(psis, psi), append(windows, out), append(points, u[:2*perSet])
	}
	// σ_P at the median distance between the sets' Ψ: the set kernel then spreads over (0, 1).
	var dists []float64
	for i := range psis {
		for j := i + 1; j < len(psis); j++ {
			dists = append(dists, math.Sqrt(sqDist64(psis[i], psis[j])))
		}
	}
	sigmaP := median(dists)
	for _, tc := range []struct {
		name string
		ps   spec.Family
	}{
		{"marginal", spec.Family{Kind: spec.KindMarginal, Name: "mt", SetFamily: "psi", SigmaP: sigmaP, SigmaX: 0.2, Features: D}},
		{"narrow_x", spec.Family{Kind: spec.KindMarginal, Name: "mt", SetFamily: "psi", SigmaP: 2 * sigmaP, SigmaX: 0.05, Features: D}},
		{"pooling", spec.Family{Kind: spec.KindMarginal, Name: "mt", SigmaX: 0.2, Features: D, Pooling: true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := mustPointMap(t, e, tc.ps)
			var items []item
			var feats [][]float32
			for s := range psis {
				a := m.SetPart(windows[s], nil)
				out := make([]float32, perSet*D)
				m.Points(a, points[s], out)
				for i := 0; i < perSet; i++ {
					items = append(items, item{psis[s], points[s][2*i : 2*i+2]})
					feats = append(feats, out[i*D:(i+1)*D])
				}
			}
			var sumSq, sumVar, maxErr, minK, maxK float64
			minK, pairs := 1.0, 0
			for i := range items {
				for j := i + 1; j < len(items); j++ {
					kx := math.Exp(-sqDist64(items[i].u, items[j].u) / (2 * tc.ps.SigmaX * tc.ps.SigmaX))
					kp := 1.0
					if !tc.ps.Pooling {
						kp = math.Exp(-sqDist64(items[i].psi, items[j].psi) / (2 * tc.ps.SigmaP * tc.ps.SigmaP))
					}
					k := kp * kx
					err := stats.Dot32(feats[i], feats[j]) - k
					sumSq += err * err
					sumVar += (1 - k*k) * (1 - k*k) / D
					maxErr = max(maxErr, math.Abs(err))
					minK, maxK = min(minK, k), max(maxK, k)
					pairs++
				}
			}
			rms, want := math.Sqrt(sumSq/float64(pairs)), math.Sqrt(sumVar/float64(pairs))
			t.Logf("%d pairs, exact kernel in [%.3f, %.3f]: max |error| %.4f (bound %.4f), RMS %.4f (predicted %.4f)",
				pairs, minK, maxK, maxErr, 5/math.Sqrt(D), rms, want)
			if maxK-minK < 0.3 {
				t.Fatalf("the exact kernel spans only [%.3f, %.3f]: the test data do not exercise the kernel", minK, maxK)
			}
			if maxErr > 5/math.Sqrt(D) {
				t.Errorf("max |z·z′ − k| = %.4f > 5/√D = %.4f", maxErr, 5/math.Sqrt(D))
			}
			if rms > 1.5*want {
				t.Errorf("RMS error %.4f > 1.5 × the predicted %.4f", rms, want)
			}
		})
	}
}

// TestPointMapPoolingSharesOmegaX: a pooled map is the marginal-transfer map of the same name
// and σ_X with a zero set part (σ_P → ∞), bit for bit, and gives every set the same features.
func TestPointMapPoolingSharesOmegaX(t *testing.T) {
	e := marginalEmbedder(t)
	mt := mustPointMap(t, e, spec.Family{Kind: spec.KindMarginal, Name: "mt", SetFamily: "psi", SigmaP: 0.1, SigmaX: 0.3, Features: 64})
	pool := mustPointMap(t, e, spec.Family{Kind: spec.KindMarginal, Name: "mt", SigmaX: 0.3, Features: 64, Pooling: true})
	u := uniformPoints(NewRNG(3, "pool"), 5, 2)
	want := make([]float32, 5*64)
	mt.Points(make([]float64, mt.SetLen()), u, want)
	for _, set := range [][]float64{uniformPoints(NewRNG(4, "a"), 50, 2), blobSet(NewRNG(5, "b"), 50, 0.2, 0.2, 0.05)} {
		got := make([]float32, 5*64)
		pool.Points(pool.SetPart(e.Embed(set), nil), u, got)
		if !equalBits(got, want) {
			t.Fatalf("pooled features differ from the marginal-transfer map's with a zero set part")
		}
	}
	// And the set part matters when it is not pooled.
	got := make([]float32, 5*64)
	mt.Points(mt.SetPart(e.Embed(u), nil), u, got)
	if equalBits(got, want) {
		t.Fatalf("the marginal-transfer features ignore the set part")
	}
}

func equalBits(a, b []float32) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if math.Float32bits(a[i]) != math.Float32bits(b[i]) {
			return false
		}
	}
	return true
}

// TestPointMapPathsBitIdentical: the portable dot and sine/cosine kernels give the same bits
// as the fastest ones of this machine, for dims on both sides of the 8-lane blocks.
func TestPointMapPathsBitIdentical(t *testing.T) {
	for _, dim := range []int{1, 2, 3, 9, 17} {
		lo, hi := make([]float64, dim), make([]float64, dim)
		for j := range hi {
			hi[j] = 1
		}
		sp := &spec.Spec{Version: 1, Seed: 5, Dim: dim, Bounds: spec.Bounds{Lo: lo, Hi: hi}, OutOfBounds: "clip",
			Families: []spec.Family{{Name: "psi", Kind: spec.KindMMD, Features: 100, Bandwidth: 0.2}}}
		e := mustNew(t, sp)
		fast := mustPointMap(t, e, spec.Family{Kind: spec.KindMarginal, Name: "mt", SetFamily: "psi", SigmaP: 0.3, SigmaX: 0.2, Features: 202})
		slow := mustPointMap(t, e, spec.Family{Kind: spec.KindMarginal, Name: "mt", SetFamily: "psi", SigmaP: 0.3, SigmaX: 0.2, Features: 202})
		slow.path, slow.emit.path = numeric.PathPortable, numeric.PathPortable
		u := uniformPoints(NewRNG(6, "paths"), 40, dim)
		w := e.Embed(u)
		a1, a2 := fast.SetPart(w, nil), slow.SetPart(w, nil)
		for r := range a1 {
			if math.Float64bits(a1[r]) != math.Float64bits(a2[r]) {
				t.Fatalf("dim %d: set part %d: %v (path %v) vs %v (portable)", dim, r, a1[r], fast.path, a2[r])
			}
		}
		o1, o2 := make([]float32, 40*202), make([]float32, 40*202)
		fast.Points(a1, u, o1)
		slow.Points(a2, u, o2)
		if !equalBits(o1, o2) {
			t.Fatalf("dim %d: point features differ between path %v and the portable path", dim, fast.path)
		}
	}
}

// TestPointsParallelBitIdentical: PointsParallel gives the bits of Points for any number of
// goroutines, with point counts below, at and between the chunks its goroutines take.
func TestPointsParallelBitIdentical(t *testing.T) {
	sp := &spec.Spec{Version: 1, Seed: 5, Dim: 2, Bounds: spec.Bounds{Lo: []float64{0, 0}, Hi: []float64{1, 1}}, OutOfBounds: "clip",
		Families: []spec.Family{{Name: "psi", Kind: spec.KindMMD, Features: 64, Bandwidth: 0.2}}}
	e := mustNew(t, sp)
	m := mustPointMap(t, e, spec.Family{Kind: spec.KindMarginal, Name: "mt", SetFamily: "psi", SigmaP: 0.3, SigmaX: 0.2, Features: 34})
	rng := NewRNG(7, "points-parallel")
	for _, n := range []int{1, 31, 32, 33, 64, 100, 1000} {
		u := uniformPoints(rng, n, 2)
		a := m.SetPart(e.Embed(u), nil)
		want := make([]float32, n*34)
		m.Points(a, u, want)
		for _, workers := range []int{2, 3, 5} {
			got := make([]float32, n*34)
			m.PointsParallel(a, u, got, workers)
			if !equalBits(got, want) {
				t.Fatalf("%d points, %d workers: PointsParallel differs from Points", n, workers)
			}
		}
	}
}

// TestNewPointMapErrors: a marginal_transfer family is checked by the spec's rules, errors
// naming the field (families[3] is the family appended to the three of the test spec).
func TestNewPointMapErrors(t *testing.T) {
	e := marginalEmbedder(t)
	for _, tc := range []struct {
		f     spec.Family
		field string
		msg   string
	}{
		{spec.Family{Name: "", Kind: spec.KindMarginal, SetFamily: "psi", SigmaP: 1, SigmaX: 1, Features: 8}, "name", "required"},
		{spec.Family{Name: "Bad", Kind: spec.KindMarginal, SetFamily: "psi", SigmaP: 1, SigmaX: 1, Features: 8}, "name", "only lower-case"},
		{spec.Family{Name: "l2", Kind: spec.KindMarginal, SetFamily: "psi", SigmaP: 1, SigmaX: 1, Features: 8}, "name", "already the name"},
		{spec.Family{Name: "mt", Kind: spec.KindMarginal, SetFamily: "psi", SigmaP: 1, SigmaX: 1, Features: 7}, "features", "even"},
		{spec.Family{Name: "mt", Kind: spec.KindMarginal, SetFamily: "psi", SigmaP: 1, Features: 8}, "sigma_x", "> 0"},
		{spec.Family{Name: "mt", Kind: spec.KindMarginal, SetFamily: "psi", SigmaP: math.Inf(1), SigmaX: 1, Features: 8}, "sigma_p", "finite"},
		{spec.Family{Name: "mt", Kind: spec.KindMarginal, SetFamily: "psi", SigmaP: -1, SigmaX: 1, Features: 8}, "sigma_p", "> 0"},
		{spec.Family{Name: "mt", Kind: spec.KindMarginal, SetFamily: "psi", SigmaX: 1, Features: 8}, "sigma_p", "required unless pooling"},
		{spec.Family{Name: "mt", Kind: spec.KindMarginal, SigmaP: 1, SigmaX: 1, Features: 8}, "set_family", "required unless pooling"},
		{spec.Family{Name: "mt", Kind: spec.KindMarginal, SetFamily: "nope", SigmaP: 1, SigmaX: 1, Features: 8}, "set_family", "no family of that name"},
		{spec.Family{Name: "mt", Kind: spec.KindMarginal, SetFamily: "l2", SigmaP: 1, SigmaX: 1, Features: 8}, "set_family", "is a l2 family"},
		{spec.Family{Name: "mt", Kind: spec.KindMarginal, SetFamily: "psi_rbf", SigmaP: 1, SigmaX: 1, Features: 8}, "set_family", "rbf stage"},
		{spec.Family{Name: "mt", Kind: spec.KindMarginal, SetFamily: "psi", SigmaX: 1, Features: 8, Pooling: true}, "set_family", "not allowed with pooling"},
		{spec.Family{Name: "mt", Kind: spec.KindMarginal, SigmaP: 1, SigmaX: 1, Features: 8, Pooling: true}, "sigma_p", "not allowed with pooling"},
		{spec.Family{Name: "mt", Kind: spec.KindMarginal, SetFamily: "psi", SigmaP: 1, SigmaX: 1, Features: 8, Bandwidth: 0.1}, "bandwidth", "not a field of kind"},
		{spec.Family{Name: "mt", Kind: spec.KindMMD, Bandwidth: 0.1, Features: 8}, "kind", "want \"marginal_transfer\""},
	} {
		_, err := NewPointMap(e, tc.f)
		var se *spec.SpecError
		if !errors.As(err, &se) || se.Field != "families[3]."+tc.field || !strings.Contains(se.Msg, tc.msg) {
			t.Errorf("%+v: got %v, want a *SpecError on families[3].%s containing %q", tc.f, err, tc.field, tc.msg)
		}
	}
}

const goldenMarginalPath = "testdata/golden_marginal.json"

// goldenMarginal pins the per-point features: SHA-256 of the little-endian float32 features
// of fixed points of a fixed set, for a marginal-transfer and a pooled map.
type goldenMarginal struct {
	Comment  string            `json:"comment"`
	Features map[string]string `json:"features"`
}

func goldenMarginalSums(t *testing.T) map[string]string {
	t.Helper()
	e := marginalEmbedder(t)
	set := uniformPoints(NewRNG(7, "golden-points"), 1000, 2)
	w := e.Embed(set)
	sums := map[string]string{}
	for name, ps := range map[string]spec.Family{
		"marginal": {Name: "mt", Kind: spec.KindMarginal, SetFamily: "psi", SigmaP: 0.05, SigmaX: 0.1, Features: 512},
		"pooling":  {Name: "mt", Kind: spec.KindMarginal, SigmaX: 0.1, Features: 512, Pooling: true},
	} {
		m := mustPointMap(t, e, ps)
		out := make([]float32, 100*512)
		m.Points(m.SetPart(w, nil), set[:200], out)
		sums[name] = vectorSum(out)
	}
	return sums
}

func TestGoldenMarginal(t *testing.T) {
	sums := goldenMarginalSums(t)
	if *updateGolden {
		b, err := json.MarshalIndent(goldenMarginal{Comment: goldenComment, Features: sums}, "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(goldenMarginalPath, append(b, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("wrote %s", goldenMarginalPath)
		return
	}
	b, err := os.ReadFile(goldenMarginalPath)
	if err != nil {
		t.Fatalf("%v (create it with: go test ./embedding -run GoldenMarginal -update)", err)
	}
	var g goldenMarginal
	if err := json.Unmarshal(b, &g); err != nil {
		t.Fatalf("%s: %v", goldenMarginalPath, err)
	}
	for k, want := range g.Features {
		if sums[k] != want {
			t.Errorf("per-point features %q changed: sha256 %s, golden %s: every user's per-point features would change", k, sums[k], want)
		}
	}
	if len(sums) != len(g.Features) {
		t.Errorf("%d cases computed, %d in %s: regenerate with -update", len(sums), len(g.Features), goldenMarginalPath)
	}
}

func BenchmarkPointMap(b *testing.B) {
	for _, c := range []struct{ dim, features int }{{2, 1024}, {16, 1024}, {2, 256}} {
		lo, hi := make([]float64, c.dim), make([]float64, c.dim)
		for j := range hi {
			hi[j] = 1
		}
		sp := &spec.Spec{Version: 1, Seed: 5, Dim: c.dim, Bounds: spec.Bounds{Lo: lo, Hi: hi}, OutOfBounds: "clip",
			Families: []spec.Family{{Name: "psi", Kind: spec.KindMMD, Features: 1024, Bandwidth: 0.1}}}
		e := mustNew(b, sp)
		m := mustPointMap(b, e, spec.Family{Kind: spec.KindMarginal, Name: "mt", SetFamily: "psi", SigmaP: 0.3, SigmaX: 0.2, Features: c.features})
		u := uniformPoints(NewRNG(6, "bench"), 256, c.dim)
		w := e.Embed(u)
		a := m.SetPart(w, nil)
		out := make([]float32, 256*c.features)
		name := "d=" + itoa(c.dim) + "/D=" + itoa(c.features)
		b.Run("point/"+name, func(b *testing.B) {
			for b.Loop() {
				m.Points(a, u, out)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*256), "ns/point")
		})
		b.Run("set/"+name, func(b *testing.B) {
			for b.Loop() {
				a = m.SetPart(w, a)
			}
		})
	}
}

func itoa(i int) string {
	b, _ := json.Marshal(i)
	return string(b)
}
