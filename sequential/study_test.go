package sequential_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/distfeat/distfeat/sequential"
	"github.com/distfeat/distfeat/twosample"
)

// The studies here run the whole per-window test (twosample, the family's default
// collection) on simulated streams; they take minutes, so they run only with
// DISTFEAT_SEQ_STUDY=1 (docs/drift.md quotes their output). DISTFEAT_SEQ_STREAMS sets the
// streams per row; DISTFEAT_SEQ_ERT (one ERT) and DISTFEAT_SEQ_REF_POINTS (the reference's
// size, default 2000) set TestStudyRunLengthFullPipeline's.

func studyEnabled(t *testing.T) int {
	t.Helper()
	if os.Getenv("DISTFEAT_SEQ_STUDY") == "" {
		t.Skip("full-pipeline study: set DISTFEAT_SEQ_STUDY=1 to run it (minutes of CPU)")
	}
	n := 200
	if s := os.Getenv("DISTFEAT_SEQ_STREAMS"); s != "" {
		v, err := strconv.Atoi(s)
		if err != nil || v < 1 {
			t.Fatalf("DISTFEAT_SEQ_STREAMS=%q: want a positive integer", s)
		}
		n = v
	}
	return n
}

type normals struct{ r *rand.Rand }

func (n normals) Normal() float64 { return n.r.NormFloat64() }

func clip01(v float64) float64 { return min(max(v, 0), 1) }

// gen draws n points of [0,1]² (row-major).
type gen func(r *rand.Rand, n int) []float64

// gaussian: N((shift, 0), diag(sx², 1)) mapped by u = 1/2 + x/12 (the twosample studies').
func gaussian(shift, sx float64) gen {
	return func(r *rand.Rand, n int) []float64 {
		out := make([]float64, 2*n)
		for i := 0; i < n; i++ {
			out[2*i] = clip01(0.5 + (shift+sx*r.NormFloat64())/12)
			out[2*i+1] = clip01(0.5 + r.NormFloat64()/12)
		}
		return out
	}
}

// blobs: the blobs problem (thesis §6.4.3): Gaussians on a 3×3 grid of spacing 10, unit
// variances, covariance eigenvalue ratio eps, mapped by u = 1/2 + x/32.
func blobs(eps float64) gen {
	rho := (eps - 1) / (eps + 1)
	c := math.Sqrt(1 - rho*rho)
	return func(r *rand.Rand, n int) []float64 {
		out := make([]float64, 2*n)
		for i := 0; i < n; i++ {
			cx, cy := float64(r.IntN(3)-1)*10, float64(r.IntN(3)-1)*10
			a, b := r.NormFloat64(), r.NormFloat64()
			out[2*i] = clip01(0.5 + (cx+a)/32)
			out[2*i+1] = clip01(0.5 + (cy+rho*a+c*b)/32)
		}
		return out
	}
}

// defaultMap is the default two_sample collection (median heuristic, 5 bands × 20
// frequencies) for the reference points ref.
func defaultMap(t *testing.T, r *rand.Rand, ref []float64) *twosample.FeatureMap {
	t.Helper()
	med, err := twosample.MedianBandwidth(ref, 2, 1000)
	if err != nil {
		t.Fatal(err)
	}
	fm, err := twosample.NewFeatureMap(twosample.Center(ref, 2, 1000), twosample.DyadicBandwidths(med, 5), 20, normals{r}, math.Sincos)
	if err != nil {
		t.Fatal(err)
	}
	return fm
}

// reference summarises ref with the default collection and the pooled-points null.
func reference(t *testing.T, r *rand.Rand, ref []float64) *twosample.Reference {
	t.Helper()
	b := defaultMap(t, r, ref).NewReferenceBuilder()
	b.Add(ref)
	rf, err := b.Build(twosample.Config{}, normals{r})
	if err != nil {
		t.Fatal(err)
	}
	return rf
}

// pvalue is the window's p-value as the embedding writes it (float32).
func pvalue(t *testing.T, rf *twosample.Reference, x []float64) float64 {
	w := rf.FeatureMap().NewWindow()
	w.Add(x)
	res, err := rf.Test(w)
	if err != nil {
		t.Fatal(err)
	}
	return float64(float32(res.PValue))
}

// TestStudyRunLengthFullPipeline: no-change streams of real windows (100 points from the
// reference's distribution, a 2000-point reference per 10 streams, Gaussian and blobs):
// mean run length against the ERT and the KS test against the geometric law. References
// vary in how far their sample is from the population, so the run length of one
// deployment varies around the ERT (docs/drift.md, Limits); the mean over references is
// the calibrated quantity.
func TestStudyRunLengthFullPipeline(t *testing.T) {
	streams := studyEnabled(t)
	const n, perRef = 100, 10
	m := 2000
	if s := os.Getenv("DISTFEAT_SEQ_REF_POINTS"); s != "" { // the reference's size
		v, err := strconv.Atoi(s)
		if err != nil || v < 100 {
			t.Fatalf("DISTFEAT_SEQ_REF_POINTS=%q: want an integer ≥ 100", s)
		}
		m = v
	}
	erts := []float64{100, 1000}
	if s := os.Getenv("DISTFEAT_SEQ_ERT"); s != "" { // one ERT only
		v, err := strconv.ParseFloat(s, 64)
		if err != nil {
			t.Fatalf("DISTFEAT_SEQ_ERT=%q: %v", s, err)
		}
		erts = []float64{v}
	}
	for _, ert := range erts {
		d, err := sequential.Calibrate(ert, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, pr := range []struct {
			name string
			g    gen
		}{{"gaussian", gaussian(0, 1)}, {"blobs", blobs(1)}} {
			r := rand.New(rand.NewPCG(37, uint64(ert)))
			rl := make([]float64, streams)
			var rf *twosample.Reference
			for s := range streams {
				if s%perRef == 0 {
					rf = reference(t, r, pr.g(r, m))
				}
				var st sequential.State
				for w := 1; ; w++ {
					var step sequential.Step
					st, step = d.Update(st, pvalue(t, rf, pr.g(r, n)))
					if step.Alarm || w >= 20*int(ert) {
						rl[s] = float64(w)
						break
					}
				}
			}
			mean, sd := meanSD(rl)
			dist, p := sequential.KSGeometric(rl, ert)
			t.Logf("full pipeline, %d-point references, %s, ERT %.0f: mean run length %.1f ± %.1f (%+.1f%%), KS distance %.3f p %.3f, %d streams",
				m, pr.name, ert, mean, sd/math.Sqrt(float64(streams)), 100*(mean/ert-1), dist, p, streams)
		}
	}
}

// TestStudyAR1: the points' mean follows an AR(1) across windows, x-mean μ_t = φ μ_{t−1} +
// √(1−φ²)·τ·ε_t, and the reference (2000 points, 20 windows of 100 from the same process) has
// it too: no change, yet each window sits at its own mean. Reported: the false-alarm run
// lengths of the detector at ERT 1000 and of the naive test at α = 1/1000.
func TestStudyAR1(t *testing.T) {
	streams := studyEnabled(t)
	const n, ert = 100, 1000
	d, err := sequential.Calibrate(ert, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, tau := range []float64{0.05, 0.1, 0.2} {
		const phi = 0.9
		r := rand.New(rand.NewPCG(549, uint64(1000*tau)))
		mu := 0.0
		window := func() []float64 {
			mu = phi*mu + math.Sqrt(1-phi*phi)*tau*r.NormFloat64()
			return gaussian(mu, 1)(r, n)
		}
		var seqRL, naiveRL []float64
		for s := 0; s < max(streams/10, 5); s++ {
			var ref []float64
			for range 20 {
				ref = append(ref, window()...)
			}
			rf := reference(t, r, ref)
			var st sequential.State
			seqDone, naiveDone := false, false
			for w := 1; w <= 20*ert && !(seqDone && naiveDone); w++ {
				p := pvalue(t, rf, window())
				var step sequential.Step
				st, step = d.Update(st, p)
				if step.Alarm && !seqDone {
					seqRL, seqDone = append(seqRL, float64(w)), true
				}
				if p <= 1.0/ert && !naiveDone {
					naiveRL, naiveDone = append(naiveRL, float64(w)), true
				}
			}
		}
		ms, _ := meanSD(seqRL)
		mn, _ := meanSD(naiveRL)
		t.Logf("AR(1) mean drift φ=%.1f τ=%.2fσ, ERT %d: CUSUM mean run length %.0f (%d streams), naive α=1/ERT %.0f (%d)",
			phi, tau, ert, ms, len(seqRL), mn, len(naiveRL))
	}
}

// TestStudyDelay: detection delay at equal ERT in points (100 000 points: 1000 windows of
// 100 points), a change at window 20 of each stream; a fresh 2000-point reference per
// stream. Delay = points from the change to the alarm (streams that alarm before the change
// are counted and left out). Methods on the same windows: the naive per-window test at
// α = 1/ERT, and the CUSUM at K = 1.5 and 2.5.
func TestStudyDelay(t *testing.T) {
	streams := studyEnabled(t)
	streams = max(streams/4, 10)
	const n, m, ert, change, maxWin = 100, 2000, 1000, 20, 2000
	ks := []float64{sequential.DefaultK, 2.5}
	dets := make([]*sequential.Detector, len(ks))
	for i, k := range ks {
		var err error
		if dets[i], err = sequential.Calibrate(ert, k); err != nil {
			t.Fatal(err)
		}
	}
	var table strings.Builder
	fmt.Fprintf(&table, "| problem | naive p ≤ 1/ERT | CUSUM K = 1.5 | CUSUM K = 2.5 |\n|---|---|---|---|\n")
	for _, pr := range []struct {
		name     string
		ref, alt gen
	}{
		{"mean shift 0.15σ", gaussian(0, 1), gaussian(0.15, 1)},
		{"variance ×1.12² (one axis)", gaussian(0, 1), gaussian(0, 1.12)},
		{"blobs ε = 6 vs 1", blobs(1), blobs(6)},
	} {
		r := rand.New(rand.NewPCG(64, uint64(len(pr.name))))
		delays := make([][]float64, 1+len(ks))
		early, censored := make([]int, 1+len(ks)), make([]int, 1+len(ks))
		for range streams {
			rf := reference(t, r, pr.ref(r, m))
			states := make([]sequential.State, len(ks))
			done := make([]bool, 1+len(ks))
			left := len(done)
			for w := 0; w < maxWin && left > 0; w++ {
				g := pr.ref
				if w >= change {
					g = pr.alt
				}
				p := pvalue(t, rf, g(r, n))
				alarms := make([]bool, len(done))
				alarms[0] = p <= 1.0/ert
				for i, d := range dets {
					var step sequential.Step
					states[i], step = d.Update(states[i], p)
					alarms[i+1] = step.Alarm
				}
				for i, a := range alarms {
					if !a || done[i] {
						continue
					}
					done[i] = true
					left--
					if w < change {
						early[i]++
					} else {
						delays[i] = append(delays[i], float64((w-change+1)*n))
					}
				}
			}
			for i := range done {
				if !done[i] {
					delays[i] = append(delays[i], float64((maxWin-change)*n)) // censored: a lower bound
					censored[i]++
				}
			}
		}
		fmt.Fprintf(&table, "| %s |", pr.name)
		for i := range delays {
			mean, sd := meanSD(delays[i])
			fmt.Fprintf(&table, " %.0f ± %.0f", mean, sd/math.Sqrt(float64(len(delays[i]))))
			if early[i] > 0 || censored[i] > 0 {
				fmt.Fprintf(&table, " (%d early, %d not by %d windows)", early[i], censored[i], maxWin)
			}
			table.WriteString(" |")
		}
		table.WriteString("\n")
	}
	t.Logf("mean detection delay in points (± standard error), ERT 100 000 points = 1000 windows of %d, %d streams per problem:\n%s", n, streams, table.String())
}

func meanSD(x []float64) (mean, sd float64) {
	if len(x) == 0 {
		return math.NaN(), math.NaN()
	}
	for _, v := range x {
		mean += v
	}
	mean /= float64(len(x))
	for _, v := range x {
		sd += (v - mean) * (v - mean)
	}
	if len(x) > 1 {
		sd = math.Sqrt(sd / float64(len(x)-1))
	}
	return mean, sd
}

// TestStudyReferenceSpread: how much one reference's sampling error moves the windows'
// evidence −ln p (Gaussian, 30 references of m points, 200 windows of n points each, for m
// in 2000, 8000, 32000 and n in 100, 400), and what such a level does to the run time: by
// the detector's Markov chain, evidence exponential with mean μ has the run time of the
// chain with K/μ and scale c·μ. The spread of the per-reference mean beyond that of
// independent windows (1/√200) is sequential.EvidenceSpread's data.
func TestStudyReferenceSpread(t *testing.T) {
	studyEnabled(t)
	const refs, windows = 30, 200
	for _, n := range []int{100, 400} {
		for _, m := range []int{2000, 8000, 32000} {
			r := rand.New(rand.NewPCG(5, uint64(m)+uint64(n)<<32))
			g := gaussian(0, 1)
			var es, perRef []float64
			for range refs {
				rf := reference(t, r, g(r, m))
				s := 0.0
				for range windows {
					e := -math.Log(pvalue(t, rf, g(r, n)))
					es = append(es, e)
					s += e
				}
				perRef = append(perRef, s/windows)
			}
			mean, sd := meanSD(es)
			_, rsd := meanSD(perRef)
			indep := sd / math.Sqrt(windows)
			t.Logf("n = %d, m = %d: evidence mean %.3f, sd %.3f over %d windows; per-reference mean: sd %.3f (independent windows: %.3f), spread ±%.3f (model: ±%.3f)",
				n, m, mean, sd, len(es), rsd, indep, math.Sqrt(max(rsd*rsd-indep*indep, 0)), sequential.EvidenceSpread(int64(m)))
		}
	}
	for _, ert := range []float64{100, 1000} {
		d, err := sequential.Calibrate(ert, 0)
		if err != nil {
			t.Fatal(err)
		}
		var b strings.Builder
		for _, mu := range []float64{0.86, 0.93, 1, 1.03, 1.07, 1.14} {
			fmt.Fprintf(&b, " μ=%.2f: %.0f", mu, d.RunTimeAt(mu))
		}
		t.Logf("ERT %.0f, run time with evidence of mean μ:%s", ert, b.String())
	}
}

// TestStudyAR1Between: the between-windows null (two_sample between_windows) on streams
// that wander from window to window as their reference does: windows of 100 points of
// TestStudyAR1's Gaussian whose x-mean (drift "mean", τ its stationary standard deviation in
// σ) or log x-scale (drift "spread", τ in log units) is an AR(1) across windows (φ = 0.9), the
// reference k consecutive windows of the same process (one per reference line). Each stream
// has its own reference and runs STUDY_WINDOWS windows (default 2000). Reported per setting,
// over all streams: the share of windows with p ≤ 0.05 and ≤ 0.01 (windows per flag at
// α = 0.01 are 100 if the null is right), the reference's persistence (mean, and in how many
// streams it exceeded 1 by two standard errors: the start-up warning), and the windows per false alarm (total windows /
// alarms, reset after each) of the CUSUM at ERT 1000 for K = 1.5 and 3, calibrated for
// independent windows' rank p-values (CalibrateRanks) and with the threshold raised by the
// persistence, as the embedding does.
func TestStudyAR1Between(t *testing.T) {
	streams := studyEnabled(t)
	const n, ert, phi = 100, 1000, 0.9
	windows := 2000
	if s := os.Getenv("STUDY_WINDOWS"); s != "" {
		windows, _ = strconv.Atoi(s)
	}
	ks := []int{200, 1000}
	if s := os.Getenv("STUDY_K"); s != "" {
		v, _ := strconv.Atoi(s)
		ks = []int{v}
	}
	drifts := []string{"mean", "spread"}
	if s := os.Getenv("STUDY_DRIFT"); s != "" {
		drifts = []string{s}
	}
	taus := []float64{0, 0.05, 0.1, 0.2}
	if s := os.Getenv("STUDY_TAU"); s != "" {
		v, _ := strconv.ParseFloat(s, 64)
		taus = []float64{v}
	}
	cusumK := []float64{1.5, 3}
	for _, drift := range drifts {
		for _, k := range ks {
			for _, tau := range taus {
				r := rand.New(rand.NewPCG(4242+uint64(len(drift)), uint64(1000*tau)+uint64(k)<<20))
				a := 0.0
				window := func() []float64 {
					a = phi*a + math.Sqrt(1-phi*phi)*tau*r.NormFloat64()
					if drift == "mean" {
						return gaussian(a, 1)(r, n)
					}
					return gaussian(0, math.Exp(a))(r, n)
				}
				var total, at05, at01, raised int
				alarms := make([]int, 2*len(cusumK))
				var pers, streamPers []float64
				for s := 0; s < streams; s++ {
					a = tau * r.NormFloat64() // the stationary law
					var ref []float64
					wins := make([][]float64, k)
					for i := range wins {
						wins[i] = window()
						ref = append(ref, wins[i]...)
					}
					rf := betweenReference(t, r, ref, wins)
					b := rf.Between()
					pers = append(pers, b.Persistence)
					// As the embedding does: the chain for rank p-values, raised by the
					// persistence (the plug-in estimate; none at or below 1).
					dets := make([]*sequential.Detector, 2*len(cusumK))
					for i, K := range cusumK {
						d, err := sequential.CalibrateRanks(ert, K, int(b.Windows))
						if err != nil {
							t.Fatal(err)
						}
						dets[i], dets[len(cusumK)+i] = d, d.Persistent(b.Persistence)
					}
					if b.Persistence > 1+2*b.PersistenceSE {
						raised++
					}
					st := make([]sequential.State, len(dets))
					var evidence []float64
					for range windows {
						p := pvalue(t, rf, window())
						evidence = append(evidence, -math.Log(p))
						total++
						if p <= 0.05 {
							at05++
						}
						if p <= 0.01 {
							at01++
						}
						for i, d := range dets {
							var step sequential.Step
							if st[i], step = d.Update(st[i], p); step.Alarm {
								alarms[i]++
							}
						}
					}
					streamPers = append(streamPers, batchRatio(evidence))
					t.Logf("persistence: reference %.2f, stream %.2f", b.Persistence, batchRatio(evidence))
				}
				mp, _ := meanSD(pers)
				ms, _ := meanSD(streamPers)
				per := func(a int) string {
					if a == 0 {
						return fmt.Sprintf("> %d", total)
					}
					return fmt.Sprintf("%.0f", float64(total)/float64(a))
				}
				var cs []string
				for i, K := range cusumK {
					cs = append(cs, fmt.Sprintf("K=%g %s (%d) → raised %s (%d)", K, per(alarms[i]), alarms[i], per(alarms[len(cusumK)+i]), alarms[len(cusumK)+i]))
				}
				t.Logf("between-windows null, drift %s, k=%d, τ=%.2f: p≤0.05 %.3f, p≤0.01 %.4f; persistence %.2f (beyond noise in %d of %d; the streams' own %.2f); windows per false alarm at ERT %d: CUSUM %s; %d streams × %d windows",
					drift, k, tau, float64(at05)/float64(total), float64(at01)/float64(total), mp, raised, streams, ms, ert, strings.Join(cs, ", "), streams, windows)
			}
		}
	}
}

// batchRatio is twosample's batch-means persistence estimate (b = ⌈√n⌉).
func batchRatio(x []float64) float64 {
	b := int(math.Ceil(math.Sqrt(float64(len(x)))))
	nb := len(x) / b
	var means []float64
	for i := range nb {
		m, _ := meanSD(x[i*b : (i+1)*b])
		means = append(means, m)
	}
	_, sb := meanSD(means)
	_, sx := meanSD(x[:nb*b])
	return float64(b) * sb * sb / (sx * sx)
}

// betweenReference is reference with the between-windows null, wins its windows in order.
func betweenReference(t *testing.T, r *rand.Rand, ref []float64, wins [][]float64) *twosample.Reference {
	t.Helper()
	b := defaultMap(t, r, ref).NewReferenceBuilder()
	b.ByWindows()
	for _, w := range wins {
		b.Add(w)
		b.EndWindow()
	}
	rf, err := b.Build(twosample.Config{BetweenWindows: true}, normals{r})
	if err != nil {
		t.Fatal(err)
	}
	return rf
}
