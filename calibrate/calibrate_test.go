package calibrate

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"strings"
	"testing"

	"gonum.org/v1/gonum/stat/distuv"

	"github.com/distfeat/distfeat/embedding"
	"github.com/distfeat/distfeat/internal/synth"
	"github.com/distfeat/distfeat/spec"
)

// synthSets are the demo's synthetic sets (truncated Gaussian mixtures on [0,1]²).
func synthSets(seed uint64, n, points int) []Set {
	var out []Set
	for _, s := range synth.Sets(seed, n, points, 2) {
		out = append(out, Set{ID: s.ID, Points: s.Points})
	}
	return out
}

// gaussianPoints draws n points of N(mu, s²I) in d dimensions.
func gaussianPoints(rng *embedding.RNG, n, d int, mu, s float64) []float64 {
	x := make([]float64, n*d)
	for i := range x {
		x[i] = mu + s*rng.Normal()
	}
	return x
}

// TestMedianHeuristicGaussian: for x, y iid N(μ, s²I_d), ‖x−y‖² = 2s²·χ²_d, so the median
// within-set distance is s·√(2·median(χ²_d)); the χ² median is computed by gonum, not typed in.
func TestMedianHeuristicGaussian(t *testing.T) {
	for _, tc := range []struct {
		d int
		s float64
	}{{1, 0.05}, {2, 0.1}, {5, 0.03}} {
		t.Run(fmt.Sprintf("d=%d", tc.d), func(t *testing.T) {
			rng := embedding.NewRNG(7, t.Name())
			smp := &sample{dim: tc.d}
			for k := 0; k < 16; k++ {
				smp.full = append(smp.full, gaussianPoints(rng, 4000, tc.d, 0.5, tc.s))
			}
			dist := withinDistances(smp, 3)
			got, _ := medianHeuristic(dist)
			chi := distuv.ChiSquared{K: float64(tc.d)}
			qMed := chi.Quantile(0.5)
			want := tc.s * math.Sqrt(2*qMed)
			// The sample median of N draws has sd √(¼/N)/f(m), f the density of the distance
			// r = s√(2Q) at the median: f_r(m) = f_χ²(m²/2s²)·m/s². Pairs share points (each
			// point is in about two of the 65 536 pairs), which inflates the variance a little;
			// 6 sd leaves room for that with a false-alarm rate far below 1e-6.
			fr := chi.Prob(qMed) * want / (tc.s * tc.s)
			sd := math.Sqrt(0.25/float64(len(dist))) / fr
			if math.Abs(got-want) > 6*sd {
				t.Fatalf("median heuristic %.5f, theory %.5f (sd %.5f over %d pairs)", got, want, sd, len(dist))
			}
		})
	}
}

// TestMedianHeuristicZeroGuard: mostly repeated points give a zero median; the guard takes
// the median of the positive distances.
func TestMedianHeuristicZeroGuard(t *testing.T) {
	dist := []float64{0, 0, 0, 0, 0, 0.2, 0.4, 0.6}
	h, rule := medianHeuristic(dist)
	if h != 0.4 || !strings.Contains(rule, "positive") {
		t.Fatalf("got %v (%s), want the median of the positive distances 0.4", h, rule)
	}
	if h, _ := medianHeuristic([]float64{0, 0}); h != 0 {
		t.Fatalf("all-zero distances gave %v", h)
	}
}

// TestBoundsUniform: per-axis quantiles of a uniform sample on [a, b] land at a + p(b−a)
// within their sampling error, the margin and outward rounding contain them, and nothing is
// clipped; a few wild points are clipped and counted exactly.
func TestBoundsUniform(t *testing.T) {
	const n = 200_000
	a, b := []float64{-3, 100}, []float64{5, 250}
	rng := embedding.NewRNG(1, "bounds")
	x := make([]float64, 0, 2*n)
	for i := 0; i < n; i++ {
		for j := range a {
			x = append(x, a[j]+(b[j]-a[j])*rng.Float64())
		}
	}
	wild := 60 // 0.03% < 0.1%: below the quantile, so clipped
	for i := 0; i < wild; i++ {
		x[2*i] = 1e6
	}
	bp := proposeBounds([][]float64{x}, 2)
	for j := range a {
		w := b[j] - a[j]
		for _, q := range []struct {
			p, got float64
		}{{QuantileLo, bp.QLo[j]}, {QuantileHi, bp.QHi[j]}} {
			// Quantile sampling sd: √(p(1−p)/n)/f with f = 1/w; 5 sd.
			sd := math.Sqrt(q.p*(1-q.p)/n) * w
			// The wild points shift the upper quantile of axis 0 by at most wild/n of mass.
			tol := 5*sd + float64(wild)/n*w
			if want := a[j] + q.p*w; math.Abs(q.got-want) > tol {
				t.Errorf("axis %d quantile %g: %v, want %v ± %v", j, q.p, q.got, want, tol)
			}
		}
		r := bp.QHi[j] - bp.QLo[j]
		step := math.Pow(10, math.Floor(math.Log10(r*(1+2*Margin)))-2)
		if lo := bp.QLo[j] - Margin*r; bp.Lo[j] > lo+1e-12 || bp.Lo[j] < lo-step-1e-12 {
			t.Errorf("axis %d lo %v, want in [%v, %v]", j, bp.Lo[j], lo-step, lo)
		}
		if hi := bp.QHi[j] + Margin*r; bp.Hi[j] < hi-1e-12 || bp.Hi[j] > hi+step+1e-12 {
			t.Errorf("axis %d hi %v, want in [%v, %v]", j, bp.Hi[j], hi, hi+step)
		}
	}
	if want := float64(wild) / n; bp.Clipped != want {
		t.Errorf("clipped fraction %v, want exactly %v", bp.Clipped, want)
	}
}

// TestSilvermanGaussian: for Gaussian sets the robust spread estimates s and Silverman's
// anchor is s·(4/((d+2)n))^(1/(d+4)) in normalised units; the likelihood cross-validated
// kde_bandwidth lands near it (for one Gaussian the normal reference is right, and LCV's
// Kullback–Leibler optimum sits close to the MISE optimum Silverman targets).
func TestSilvermanGaussian(t *testing.T) {
	const s, n = 0.08, 3000
	rng := embedding.NewRNG(5, "silverman")
	var sets []Set
	for k := 0; k < 12; k++ {
		sets = append(sets, Set{ID: fmt.Sprint(k), Points: gaussianPoints(rng, n, 2, 0.5, s)})
	}
	res, err := Calibrate(context.Background(), sets, 2, nil, Options{Families: []string{"hdd_js"}})
	if err != nil {
		t.Fatal(err)
	}
	width := res.Spec.Bounds.Hi[0] - res.Spec.Bounds.Lo[0]
	smp := &sample{dim: 2}
	for _, st := range sets {
		u := make([]float64, len(st.Points))
		for i, v := range st.Points {
			u[i] = (v - res.Spec.Bounds.Lo[i%2]) / (res.Spec.Bounds.Hi[i%2] - res.Spec.Bounds.Lo[i%2])
		}
		smp.full = append(smp.full, u)
	}
	want := s / width * math.Pow(4/(4.0*n), 1.0/6)
	// The spread of 3000 normal points is estimated to ~1.3% (sd of the sd; the IQR branch
	// ~2%), the median over 12 sets narrows it, and the two axes' widths differ by a few per
	// cent (geometric mean): 5%.
	if hS := silverman(typicalSpread(smp.full, 2, false), n, 2); math.Abs(hS-want)/want > 0.05 {
		t.Fatalf("Silverman anchor %v, formula %v", hS, want)
	}
	// LCV picks from a grid of quarter octaves (±9%) with the noise of 16×64 held-out points;
	// a factor 2^(±2/4) (±41%) separates "near the reference" from the grid's ends (2^(−4),
	// 2^(1/2)).
	if f := res.Spec.Families[0]; f.KDEBandwidth < want/math.Sqrt2 || f.KDEBandwidth > want*math.Sqrt2 {
		t.Fatalf("kde_bandwidth %v, Silverman %v", f.KDEBandwidth, want)
	}
	if f := res.Spec.Families[0]; float64(f.Grid)*f.KDEBandwidth < cellsPerBandwidth*0.99 {
		t.Fatalf("grid %d gives %.2f cells per bandwidth", f.Grid, float64(f.Grid)*f.KDEBandwidth)
	}
}

// TestFeatureCount: the rule's two terms, the floor, the cap and the even rounding
// (ε = 0.03, R² = 0.98 so R²/(1−R²) = 49; with ê² = 1/D₀, the RFF bound, the error term is
// ⌈1/ε²⌉ = ⌈1111.1⌉ = 1112).
func TestFeatureCount(t *testing.T) {
	o := Options{}.withDefaults()
	bound := 1.0 / PilotFeatures
	for _, tc := range []struct {
		mse, r2 float64
		want    int
	}{
		{bound, 0, 1112},
		{4 * bound, 1, 4446}, // ⌈4444.4⌉ = 4445 → even
		{bound, 0.99, 1112},  // n₀ = 1/99: 1024·49/99 = 506.8 < 1112
		{bound, 0.9, 5576},   // n₀ = 1/9: 1024·49/9 = 5575.1
		{1e-6, 0.999, MinFeatures},
		{bound, 0.5, DefaultMaxFeatures}, // n₀ = 1: 50 176
	} {
		if got, rule := featureCount(tc.mse, tc.r2, o); got != tc.want {
			t.Errorf("ê² %g, R₀² %g: D = %d (%s), want %d", tc.mse, tc.r2, got, rule, tc.want)
		}
	}
}

// TestSelfCheckSynthetic: on the demo's synthetic sets every family with random features
// reaches R² ≥ 0.95 against its exact kernel, and the spec loads.
func TestSelfCheckSynthetic(t *testing.T) {
	res, err := Calibrate(context.Background(), synthSets(1, 40, 2500), 2, nil, Options{})
	if err != nil {
		t.Fatal(err)
	}
	var sum bytes.Buffer
	if err := res.WriteSummary(&sum); err != nil {
		t.Fatal(err)
	}
	t.Log(sum.String())
	checked := 0
	for _, c := range res.Checks {
		if c.Exact {
			continue
		}
		checked++
		if c.R2 < 0.95 || c.Pairs != 40*39/2 {
			t.Errorf("%s: R² %.4f over %d pairs, want ≥ 0.95 over 780", c.Family, c.R2, c.Pairs)
		}
	}
	if checked != 2 {
		t.Fatalf("%d families checked, want mmd and hdd_js", checked)
	}
	if _, err := spec.ParseSpec(res.Spec.CanonicalJSON()); err != nil {
		t.Fatal(err)
	}
}

// TestDeterministic: the same sets and options give the same spec bytes, whatever the
// parallelism; sub-sampling (more sets than MaxSets) is seeded.
func TestDeterministic(t *testing.T) {
	sets := synthSets(2, 30, 400)
	var first []byte
	for _, workers := range []int{1, 2, 3} {
		res, err := Calibrate(context.Background(), sets, 2, nil, Options{MaxSets: 20, MaxPoints: 64, Workers: workers})
		if err != nil {
			t.Fatal(err)
		}
		got := res.Spec.CanonicalJSON()
		if first == nil {
			first = got
			continue
		}
		if !bytes.Equal(got, first) {
			t.Fatalf("workers %d: spec differs:\n%s\n%s", workers, got, first)
		}
	}
}

// TestBaseSpecStages: with a base spec, other fields are kept (the version too) and the
// optional second stages (mmd rbf_sigma, l2 sigma) are sized and checked too — in spec
// version 2 with the orthogonal projection it gives every stage, measured as such.
func TestBaseSpecStages(t *testing.T) {
	var base *spec.Spec
	for _, version := range []int{1, 2} {
		var err error
		base, err = spec.ParseSpec([]byte(fmt.Sprintf(`{"version":%d,"dim":2,"seed":9,"families":[
	 {"name":"m","kind":"mmd","bandwidth":0.1,"rbf_sigma":1,"rbf_features":64},
	 {"name":"h","kind":"hdd","divergence":"hellinger","sigma":0.5,"lambdas":3},
	 {"name":"l","kind":"l2","basis":30,"sigma":1,"features":64}]}`, version)))
		if err != nil {
			t.Fatal(err)
		}
		res, err := Calibrate(context.Background(), synthSets(3, 30, 1500), 2, base, Options{})
		if err != nil {
			t.Fatal(err)
		}
		s := res.Spec
		if s.Version != version || s.Seed != 9 || s.Families[1].Lambdas != 3 || s.Families[1].Divergence != "hellinger" || s.Families[2].Basis != 30 {
			t.Fatalf("version %d: base fields not kept: %s", version, s.CanonicalJSON())
		}
		for _, c := range res.Checks {
			if c.Exact || c.R2 < 0.95 {
				t.Errorf("version %d, %s: exact=%v R² %.4f, want a random stage with R² ≥ 0.95", version, c.Family, c.Exact, c.R2)
			}
		}
	}
	if _, err := Calibrate(context.Background(), synthSets(3, 5, 100), 2, base, Options{Families: []string{"nope"}}); err == nil {
		t.Fatal("an unknown family name was accepted")
	}
}

// TestErrors: bad input is an error, not a panic.
func TestErrors(t *testing.T) {
	ctx := context.Background()
	if _, err := Calibrate(ctx, nil, 2, nil, Options{}); err == nil {
		t.Error("no sets accepted")
	}
	if _, err := Calibrate(ctx, []Set{{ID: "a", Points: []float64{1, 2, 3}}}, 2, nil, Options{}); err == nil {
		t.Error("a partial point accepted")
	}
	if _, err := Calibrate(ctx, []Set{{ID: "a", Points: []float64{1, math.NaN()}}}, 2, nil, Options{}); err == nil {
		t.Error("NaN accepted")
	}
	if _, err := Calibrate(ctx, synthSets(1, 3, 50), 2, nil, Options{Families: []string{"hdd_kl"}}); err == nil {
		t.Error("unknown family accepted")
	}
}

// TestEdgeCases: one set, constant points, and a 5-d sample (hdd in marginal mode) all give
// a spec that loads.
func TestEdgeCases(t *testing.T) {
	rng := embedding.NewRNG(1, "edge")
	constant := make([]float64, 200)
	for i := range constant {
		constant[i] = 3
	}
	for _, tc := range []struct {
		name string
		dim  int
		sets []Set
	}{
		{"one set", 2, []Set{{ID: "a", Points: gaussianPoints(rng, 300, 2, 0, 1)}}},
		{"constant points", 2, []Set{{ID: "a", Points: constant}, {ID: "b", Points: constant}}},
		{"single points", 2, []Set{{ID: "a", Points: []float64{1, 2}}, {ID: "b", Points: []float64{3, 4}}, {ID: "c", Points: []float64{5, 1}}}},
		{"5-d", 5, []Set{{ID: "a", Points: gaussianPoints(rng, 400, 5, 0, 1)}, {ID: "b", Points: gaussianPoints(rng, 400, 5, 1, 2)}, {ID: "c", Points: gaussianPoints(rng, 400, 5, -1, 0.5)}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// MaxFeatures keeps it quick: degenerate samples give the kernel no spread and the
			// rule asks for the cap.
			res, err := Calibrate(context.Background(), tc.sets, tc.dim, nil, Options{MaxFeatures: 1024})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := embedding.New(res.Spec); err != nil {
				t.Fatal(err)
			}
			for _, f := range res.Spec.Families {
				// Grid within its cap, ≥ 2 cells per bandwidth (1.99: the bandwidth is rounded
				// to 3 digits), and resolving the basis (ParseSpec above checks that).
				if f.Kind == "hdd" && (f.Grid > gridCap(tc.dim, f.Mode == "joint") || f.KDEBandwidth*float64(f.Grid) < 1.99) {
					t.Errorf("%s: grid %d, kde_bandwidth %v", f.Name, f.Grid, f.KDEBandwidth)
				}
			}
			var b bytes.Buffer
			if err := res.WriteSummary(&b); err != nil {
				t.Fatal(err)
			}
			if err := res.WriteReport(&b); err != nil {
				t.Fatal(err)
			}
		})
	}
}
