package calibrate

import (
	"errors"
	"fmt"
	"html"
	"io"
	"math"
	"strings"

	"github.com/distfeat/distfeat/internal/numeric"
	"github.com/distfeat/distfeat/twosample"
)

// Kernel choice for the two_sample family (thesis §6.3): from the reference alone, the median
// heuristic and the default collection; given a sample of the change that matters, the
// bandwidth that maximises the estimated power of detecting it (the t-statistic criterion),
// estimated on one half of the data and checked on the other.

// TwoSampleOptions tune TwoSample; the zero value means the defaults.
type TwoSampleOptions struct {
	// Window is the window size n the power is estimated for (default 400).
	Window int
	// Alpha is the test level (default 0.05).
	Alpha float64
	// Seed of the random frequencies (default 42).
	Seed uint64
}

// BandwidthPower is one point of the power curve.
type BandwidthPower struct {
	// Bandwidth is σ in normalised units; Ratio is σ over the median heuristic.
	Bandwidth, Ratio float64
	// MMD2 is the unbiased MMD² between the reference's and the alternative's training
	// halves; SD the standard deviation of the window test's MMD² under the alternative
	// (n window points against m reference points); T = MMD2/SD (the criterion, t_U).
	MMD2, SD, T float64
	// Power is the asymptotic power Φ((MMD² − c_α)/SD), c_α the null's 1−α quantile
	// (Gaussian approximation), on the training half; TestPower the same on the test half.
	Power, TestPower float64
}

// TwoSampleResult is the proposal for a two_sample family.
type TwoSampleResult struct {
	// Median is the median heuristic of the reference (normalised units).
	Median float64
	// Bandwidth, Bands and Frequencies are the proposed family fields.
	Bandwidth   float64
	Bands       int
	Frequencies int
	// MomentWeight is the proposed moment_weight (twosample.ProposedMomentWeight).
	MomentWeight float64
	// Curve is the power curve over bandwidths (nil without an alternative); Best its index.
	Curve []BandwidthPower
	Best  int
	// Window and Alpha are the options used.
	Window int
	Alpha  float64
}

// twoSampleCurveFreqs is the number of random frequencies per bandwidth of the criterion.
const twoSampleCurveFreqs = 64

// TwoSample proposes a two_sample family for the reference points ref (normalised to
// [0,1]^dim, row-major) and, when alt is not empty, the alternative's points: the bandwidth
// of largest estimated power, on a grid σ_med·2ʲ, j = −6…2, with the dyadic collection
// extended to reach it.
func TwoSample(ref, alt []float64, dim int, opt TwoSampleOptions) (*TwoSampleResult, error) {
	if opt.Window == 0 {
		opt.Window = 400
	}
	if opt.Alpha == 0 {
		opt.Alpha = 0.05
	}
	if opt.Seed == 0 {
		opt.Seed = 42
	}
	if opt.Window < 2 || !(opt.Alpha > 0 && opt.Alpha < 1) {
		return nil, errors.New("two-sample calibration: window must be ≥ 2 and alpha in (0, 1)")
	}
	med, err := twosample.MedianBandwidth(ref, dim, 1000)
	if err != nil {
		return nil, fmt.Errorf("reference: %w", err)
	}
	res := &TwoSampleResult{Median: med, Bandwidth: med, Bands: 5, Frequencies: 20, MomentWeight: twosample.ProposedMomentWeight, Window: opt.Window, Alpha: opt.Alpha}
	if len(alt) == 0 {
		return res, nil
	}
	if len(alt)/dim < 4 || len(ref)/dim < 4 {
		return nil, errors.New("two-sample calibration: need at least 4 points in the reference and the alternative")
	}
	refTrain, refTest := halves(ref, dim)
	altTrain, altTest := halves(alt, dim)
	m := float64(len(ref) / dim)
	for j := -6; j <= 2; j++ {
		s := math.Ldexp(med, j)
		fm, err := twosample.NewFeatureMap(make([]float64, dim), []float64{s}, twoSampleCurveFreqs,
			numeric.NewRNG(opt.Seed, fmt.Sprintf("calibrate/two_sample/%d", j)), numeric.Sincos)
		if err != nil {
			return nil, err
		}
		bp := BandwidthPower{Bandwidth: s, Ratio: math.Ldexp(1, j)}
		bp.MMD2, bp.SD, bp.Power = powerOf(fm, refTrain, altTrain, dim, m, float64(opt.Window), opt.Alpha)
		_, _, bp.TestPower = powerOf(fm, refTest, altTest, dim, m, float64(opt.Window), opt.Alpha)
		if bp.SD > 0 {
			bp.T = bp.MMD2 / bp.SD
		}
		res.Curve = append(res.Curve, bp)
	}
	for i, bp := range res.Curve {
		if bp.Power > res.Curve[res.Best].Power || bp.Power == res.Curve[res.Best].Power && bp.T > res.Curve[res.Best].T {
			res.Best = i
		}
	}
	best := res.Curve[res.Best].Bandwidth
	// The collection σ·2⁻ᵏ, k < K, must reach the best bandwidth: start at the larger of it
	// and the median heuristic, and take enough bands (at least the default 5).
	res.Bandwidth = max(best, med)
	res.Bands = max(5, int(math.Round(math.Log2(res.Bandwidth/best)))+2)
	return res, nil
}

// halves splits points into even- and odd-indexed ones.
func halves(points []float64, dim int) (even, odd []float64) {
	for i := 0; i < len(points)/dim; i++ {
		if i%2 == 0 {
			even = append(even, points[i*dim:(i+1)*dim]...)
		} else {
			odd = append(odd, points[i*dim:(i+1)*dim]...)
		}
	}
	return even, odd
}

// powerOf estimates, with the random features z (unit norm: the 2F cos/sin pairs over √F)
// of the samples p (reference) and q (alternative), MMD² = |μ_p − μ_q|² (unbiased), the
// standard deviation of a window test's MMD² under the alternative,
// SD = 2√(wᵀΣ_p w/m + wᵀΣ_q w/n) with w = μ_p − μ_q, and the asymptotic power
// Φ((MMD² − c_α)/SD), c_α = z_{1−α}·√(2 tr Σ_p²)·(1/n + 1/m) (the null's quantile for
// Gaussian features).
func powerOf(fm *twosample.FeatureMap, p, q []float64, dim int, m, n, alpha float64) (mmd2, sd, power float64) {
	o, D := 2*dim, fm.Features()
	F := float64(fm.Frequencies())
	feats := func(pts []float64) [][]float64 {
		out := make([][]float64, len(pts)/dim)
		phi := make([]float64, D)
		for i := range out {
			fm.Eval(pts[i*dim:(i+1)*dim], phi)
			z := make([]float64, D-o)
			for k := range z {
				z[k] = phi[o+k] / math.Sqrt(F)
			}
			out[i] = z
		}
		return out
	}
	zp, zq := feats(p), feats(q)
	mp, cp := meanCov(zp)
	mq, cq := meanCov(zq)
	w := make([]float64, len(mp))
	for k := range w {
		w[k] = mp[k] - mq[k]
	}
	np, nq := float64(len(zp)), float64(len(zq))
	// Unbiased |μ_p − μ_q|²: the squared difference minus the means' variances.
	for k := range w {
		mmd2 += w[k]*w[k] - cp[k][k]/np - cq[k][k]/nq
	}
	quad := func(c [][]float64) float64 {
		s := 0.0
		for i := range w {
			for j := range w {
				s += w[i] * c[i][j] * w[j]
			}
		}
		return max(s, 0)
	}
	sd = 2 * math.Sqrt(quad(cp)/m+quad(cq)/n)
	tr2 := 0.0
	for i := range cp {
		for j := range cp {
			tr2 += cp[i][j] * cp[j][i]
		}
	}
	c := normalQuantile(1-alpha) * math.Sqrt(2*tr2) * (1/n + 1/m)
	if sd > 0 {
		power = normalCDF((mmd2 - c) / sd)
	} else if mmd2 > c {
		power = 1
	}
	return mmd2, sd, power
}

func meanCov(z [][]float64) ([]float64, [][]float64) {
	k := len(z[0])
	mean := make([]float64, k)
	for _, v := range z {
		for i, x := range v {
			mean[i] += x / float64(len(z))
		}
	}
	cov := make([][]float64, k)
	for i := range cov {
		cov[i] = make([]float64, k)
	}
	for _, v := range z {
		for i := range k {
			di := v[i] - mean[i]
			for j := range k {
				cov[i][j] += di * (v[j] - mean[j]) / float64(len(z)-1)
			}
		}
	}
	return mean, cov
}

func normalCDF(x float64) float64 { return 0.5 * math.Erfc(-x/math.Sqrt2) }

// normalQuantile inverts normalCDF by bisection (ample for a calibration report).
func normalQuantile(p float64) float64 {
	lo, hi := -40.0, 40.0
	for range 200 {
		mid := (lo + hi) / 2
		if normalCDF(mid) < p {
			lo = mid
		} else {
			hi = mid
		}
	}
	return (lo + hi) / 2
}

// WriteSummary writes the proposal and the power curve as text.
func (r *TwoSampleResult) WriteSummary(w io.Writer) error {
	fmt.Fprintf(w, "two_sample: median heuristic %.4g; proposed bandwidth %.4g, bands %d, frequencies %d, moment_weight %g (T_mean, T_mom, T_rff weighted 0.5, %g, %g: power on a change of spread)\n",
		r.Median, r.Bandwidth, r.Bands, r.Frequencies, r.MomentWeight, r.MomentWeight, 0.5-r.MomentWeight)
	if r.Curve == nil {
		_, err := fmt.Fprintln(w, "  (no --alternative: the median heuristic and the default collection, 1 … 1/16 of it)")
		return err
	}
	fmt.Fprintf(w, "  power curve (windows of %d points, α = %g; t-statistic criterion on one half, checked on the other):\n", r.Window, r.Alpha)
	fmt.Fprintf(w, "  %10s %8s %12s %8s %8s %8s\n", "bandwidth", "×median", "MMD²", "t", "power", "check")
	for i, bp := range r.Curve {
		mark := ""
		if m := r.curveMark(i); m != "" {
			mark = "  ← " + m
		}
		fmt.Fprintf(w, "  %10.4g %8.4g %12.4g %8.3g %8.3f %8.3f%s\n", bp.Bandwidth, bp.Ratio, bp.MMD2, bp.T, bp.Power, bp.TestPower, mark)
	}
	_, err := fmt.Fprintf(w, "  the spec's bandwidth %.4g starts its collection of %d bands (%.4g … %.4g), which reaches the best power's %.4g\n",
		r.Bandwidth, r.Bands, r.Bandwidth, math.Ldexp(r.Bandwidth, 1-r.Bands), r.Curve[r.Best].Bandwidth)
	return err
}

// curveMark says what curve point i is to the proposal: the bandwidth of best power, the
// spec's bandwidth (the first of its dyadic collection σ·2⁻ᵏ, k < bands), another band
// of the collection, or nothing.
func (r *TwoSampleResult) curveMark(i int) string {
	var marks []string
	if i == r.Best {
		marks = append(marks, "best power")
	}
	bw := r.Curve[i].Bandwidth
	for k := 0; k < r.Bands; k++ {
		if math.Abs(bw-math.Ldexp(r.Bandwidth, -k)) <= 1e-9*bw {
			if k == 0 {
				marks = append(marks, "the spec's bandwidth")
			} else {
				marks = append(marks, fmt.Sprintf("band %d of the spec's collection", k))
			}
		}
	}
	return strings.Join(marks, "; ")
}

// WriteReport writes a self-contained HTML page with the proposal and the power curve.
func (r *TwoSampleResult) WriteReport(w io.Writer) error {
	fmt.Fprintf(w, "<!doctype html><meta charset=utf-8><title>distfeat two_sample calibration</title>\n<h1>two_sample calibration</h1>\n")
	fmt.Fprintf(w, "<p>Median heuristic %.4g; proposed bandwidth %.4g, bands %d, frequencies %d.</p>\n", r.Median, r.Bandwidth, r.Bands, r.Frequencies)
	if r.Curve == nil {
		_, err := fmt.Fprintf(w, "<p>No alternative sample: the median heuristic and the default collection.</p>\n")
		return err
	}
	fmt.Fprintf(w, "<p>Power curve over bandwidths for windows of %d points at α = %g (t-statistic criterion, thesis §6.3.7–6.3.8), estimated on one half of the data and checked on the other.</p>\n", r.Window, r.Alpha)
	fmt.Fprintf(w, "<table border=1 cellpadding=4><tr><th>bandwidth</th><th>×median</th><th>MMD²</th><th>t</th><th>power</th><th>check</th><th></th><th>in the spec</th></tr>\n")
	maxP := 0.0
	for _, bp := range r.Curve {
		maxP = max(maxP, bp.Power)
	}
	for i, bp := range r.Curve {
		bar := ""
		if maxP > 0 {
			bar = fmt.Sprintf("<div style=\"background:#47a;height:10px;width:%dpx\"></div>", int(200*bp.Power))
		}
		style := ""
		if bp.Bandwidth == r.Bandwidth {
			style = " style=\"font-weight:bold\""
		}
		fmt.Fprintf(w, "<tr%s><td>%.4g</td><td>%.4g</td><td>%.4g</td><td>%.3g</td><td>%.3f</td><td>%.3f</td><td>%s</td><td>%s</td></tr>\n",
			style, bp.Bandwidth, bp.Ratio, bp.MMD2, bp.T, bp.Power, bp.TestPower, bar, html.EscapeString(r.curveMark(i)))
	}
	_, err := fmt.Fprintf(w, "</table>\n<p>%s</p>\n", html.EscapeString(fmt.Sprintf(
		"Bold: the spec's bandwidth, %.4g, the larger of the best power's bandwidth (%.4g) and the median heuristic (%.4g); the family's dyadic collection of %d bands starts there and reaches the best power's bandwidth.",
		r.Bandwidth, r.Curve[r.Best].Bandwidth, r.Median, r.Bands)))
	return err
}
