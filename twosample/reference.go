package twosample

import (
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/distfeat/distfeat/internal/numeric"
)

// Config holds the test's calibration settings; the zero value means the defaults.
type Config struct {
	// Ridge is λ of T_rff, relative to the features' correlation matrix (default 0.05).
	Ridge float64
	// NullDraws is the number of simulated null vectors (default 4000): the p-values'
	// resolution is 1/(NullDraws+1).
	NullDraws int
	// Weights are the aggregation weights of T_mean, T_mom and T_rff (default
	// DefaultWeights); they are normalised to sum to 1.
	Weights [3]float64
	// BetweenWindows ranks a window against the reference's own windows (ByWindows,
	// EndWindow) instead of simulating its null from the pooled points: for a stream whose
	// distribution wanders from window to window as its reference did (the package doc,
	// Between windows). It needs MinReferenceWindows windows.
	BetweenWindows bool
}

// Defaults of Config.
const (
	DefaultRidge     = 0.05
	DefaultNullDraws = 4000
)

// DefaultWeights are the default aggregation weights of T_mean, T_mom and T_rff: a mean
// shift is the commonest drift and T_mean its most powerful test, so it gets slightly
// more weight than T_rff (the omnibus statistic, which carries the blobs' and the
// spread's power); T_mom, whose spread information T_rff also sees, gets little. In an
// earlier 100-window power study (ridge 0.01), equal weights gave mean-shift power 0.55 and
// (0.45, 0.1, 0.45) 0.57 against the median-heuristic oracle's 0.58, with blobs at 0.97
// both times; docs/drift.md has the table of the defaults.
var DefaultWeights = [3]float64{0.5, 0.05, 0.45}

// MomentWeights are the aggregation weights (0.5, w, 0.5 − w) of T_mean, T_mom and T_rff:
// T_mom at w, taken from T_rff's share (the spec's moment_weight; DefaultWeights are
// w = 0.05). w = 0 gives the zero value, which means DefaultWeights.
func MomentWeights(w float64) [3]float64 {
	if w == 0 {
		return [3]float64{}
	}
	return [3]float64{0.5, w, 0.5 - w}
}

// ProposedMomentWeight is the moment weight calibrate proposes (issue #38). DefaultWeights
// give T_mom 0.05, so a change of spread, which T_mom tests best, must reach p_mom ≤ 0.0025
// to be flagged at α = 0.05. Against 2000-point references, 200 windows of 400 points per
// problem (TWOSAMPLE_STUDY=1 STUDY_GRID=1 STUDY_SEED=99 STUDY_WINDOWS=200 go test -run
// TestWeightsStudy ./twosample/), weights 0.05 → 0.25 moved the rejection rate from 0.47
// to 0.60 on a variance change ×1.12² along x, 0.71 to 0.84 on ×1.15² along y and 0.90 to
// 0.94 on a correlated Gaussian's diagonal, with the mean shift 0.59 → 0.60, the blobs
// 0.96 → 0.95 and the level 0.04 → 0.05; (0.35, 0.3, 0.35) lost the mean shift (0.59 →
// 0.57, and 0.66 → 0.61 on another seed), (0.5, 0.3, 0.2) the blobs (0.94).
const ProposedMomentWeight = 0.25

// MinReferencePoints is the fewest reference points Build accepts.
const MinReferencePoints = 50

// MinReferenceWindows is the fewest reference windows Build accepts with BetweenWindows: 7 of
// every 10 are ranked against (and many correlation times of the stream's wandering are
// needed for the ranks to describe it; docs/drift.md).
const MinReferenceWindows = 20

// ErrReference is wrapped by Build's errors about the reference sample.
var ErrReference = errors.New("twosample: unusable reference")

func (c Config) withDefaults() (Config, error) {
	if c.Ridge == 0 {
		c.Ridge = DefaultRidge
	}
	if c.NullDraws == 0 {
		c.NullDraws = DefaultNullDraws
	}
	if c.Weights == [3]float64{} {
		c.Weights = DefaultWeights
	}
	switch {
	case !(c.Ridge > 0) || math.IsInf(c.Ridge, 0):
		return c, fmt.Errorf("ridge %v: need a positive finite value: %w", c.Ridge, ErrConfig)
	case c.NullDraws < 100:
		return c, fmt.Errorf("null draws %d: need at least 100: %w", c.NullDraws, ErrConfig)
	}
	total := 0.0
	for i, w := range c.Weights {
		if !(w >= 0) || math.IsInf(w, 0) {
			return c, fmt.Errorf("weight %d is %v: need a non-negative finite value: %w", i, w, ErrConfig)
		}
		total += w
	}
	if !(total > 0) {
		return c, fmt.Errorf("weights are all zero: %w", ErrConfig)
	}
	for i := range c.Weights {
		c.Weights[i] /= total
	}
	return c, nil
}

// part is the fixed-point sums of one part of the reference: Σφ and the lower triangle
// of Σφφᵀ (row i holds i+1 entries).
type part struct {
	n     int64
	sum   []int64
	cross []int64
}

// ReferenceBuilder summarises a reference sample point by point, in O(D²) memory
// whatever its size (points 0, 1, 2 of every 10 go to part A, the others to part B;
// package doc), or window by window (ByWindows).
type ReferenceBuilder struct {
	fm     *FeatureMap
	next   int64
	parts  [2]part
	phi    []float64
	sample []float64 // the first bootstrapSample points of part B (small-window nulls)
	win    refWindows
}

// bootstrapSample is how many of part B's points are kept to simulate the null of small
// windows by resampling (Reference.Test).
const bootstrapSample = 4096

// NewReferenceBuilder returns an empty builder for the feature map.
func (fm *FeatureMap) NewReferenceBuilder() *ReferenceBuilder {
	D := fm.Features()
	b := &ReferenceBuilder{fm: fm, phi: make([]float64, D)}
	for i := range b.parts {
		b.parts[i] = part{sum: make([]int64, D), cross: make([]int64, D*(D+1)/2)}
	}
	return b
}

// refWindows is a reference that comes in windows (ByWindows): the number closed, part B's
// windows' point counts and fixed-point feature sums (the between-windows null's sample),
// and the open window's.
type refWindows struct {
	on      bool
	k       int64
	n       []int64
	sum     []int64 // len(n)×D
	dropped int64   // part B windows beyond MaxReferenceWindows
	open    []int64
	openN   int64
}

// MaxReferenceWindows is the most part B windows a reference keeps for the between-windows
// null (8·D bytes each); Build refuses that null for a reference with more.
const MaxReferenceWindows = 1 << 16

// ByWindows declares that the reference comes in windows, each closed by EndWindow, and
// splits it into parts A and B by whole windows (windows 0, 1, 2 of every 10 to part A)
// rather than by points. It must be called before the first Add. The between-windows null
// (Config.BetweenWindows) needs it: part B's windows are that null's sample, and none of
// their points is in part A's whitening — as none of a new window's is.
func (b *ReferenceBuilder) ByWindows() {
	if b.next > 0 {
		panic("twosample: ReferenceBuilder.ByWindows after Add")
	}
	b.win.on = true
	b.win.open = make([]int64, b.fm.Features())
}

// EndWindow closes the reference's current window: the points added since the last
// EndWindow (none: nothing happens). It panics without ByWindows.
func (b *ReferenceBuilder) EndWindow() {
	w := &b.win
	if !w.on {
		panic("twosample: ReferenceBuilder.EndWindow without ByWindows")
	}
	if w.openN == 0 {
		return
	}
	if w.k%10 >= 3 { // a part B window
		if len(w.n) < MaxReferenceWindows {
			w.n, w.sum = append(w.n, w.openN), append(w.sum, w.open...)
		} else {
			w.dropped++
		}
	}
	w.k++
	clear(w.open)
	w.openN = 0
}

// Windows is the number of windows closed by EndWindow.
func (b *ReferenceBuilder) Windows() int64 { return b.win.k }

// Add accumulates reference points u (row-major, u ∈ [0,1]^d). It panics if len(u) is not
// whole points or a part would exceed MaxPoints.
func (b *ReferenceBuilder) Add(u []float64) {
	d := b.fm.dim
	if len(u)%d != 0 {
		panic(fmt.Sprintf("twosample: ReferenceBuilder.Add: %d values are not whole points of dim %d", len(u), d))
	}
	for i := 0; i < len(u); i += d {
		inA := b.next%10 < 3
		if b.win.on {
			inA = b.win.k%10 < 3
		}
		p := &b.parts[1]
		if inA {
			p = &b.parts[0]
		} else if p.n < bootstrapSample {
			b.sample = append(b.sample, u[i:i+d]...)
		}
		if p.n == MaxPoints {
			panic(fmt.Sprintf("twosample: ReferenceBuilder.Add: a reference may hold at most about %d points", int64(MaxPoints)))
		}
		b.fm.Eval(u[i:i+d], b.phi)
		c := 0
		for r, x := range b.phi {
			f := toFixed(x)
			p.sum[r] += f
			if b.win.on {
				b.win.open[r] += f
			}
			for _, y := range b.phi[:r+1] {
				p.cross[c] += toFixed(float64(x * y))
				c++
			}
		}
		p.n++
		b.next++
		if b.win.on {
			b.win.openN++
		}
	}
}

// Count is the number of points added.
func (b *ReferenceBuilder) Count() int64 { return b.next }

// moments returns the part's mean and covariance (D×D, row-major, both triangles).
func (p *part) moments(D int) (mean, cov []float64) {
	n := float64(p.n)
	mean = make([]float64, D)
	for i, s := range p.sum {
		mean[i] = fromFixed(s) / n
	}
	cov = make([]float64, D*D)
	c := 0
	for i := 0; i < D; i++ {
		for j := 0; j <= i; j++ {
			v := (fromFixed(p.cross[c]) - float64(n*float64(mean[i]*mean[j]))) / (n - 1)
			cov[i*D+j], cov[j*D+i] = v, v
			c++
		}
	}
	return mean, cov
}

// Reference is a summarised reference sample with its simulated null distributions; it is
// read-only and safe for concurrent use.
type Reference struct {
	fm      *FeatureMap
	cfg     Config
	m, mB   int64
	meanR   []float64 // full reference mean (MMD²)
	meanB   []float64 // part B mean (the statistics' centre)
	scale   []float64 // part A's standard deviations (floored)
	lMean   []float64 // Cholesky factors of the whitenings: d, 2d and D square
	lMom    []float64
	lRFF    []float64
	nulls   []nullSet // by increasing inv: the Gaussian limit, then bootstrap window sizes
	zBand2  []float64 // |z̄_R|² of the full reference per band (MMD²)
	between Between
	// windows is the between-windows null's sample (Config.BetweenWindows): part B's
	// windows' statistics.
	windows windowNull
}

// nullSet is the simulated null distribution of the statistics for windows of one size.
type nullSet struct {
	inv     float64      // 1/n of the windows it describes (0: the Gaussian limit n → ∞)
	t       [3][]float64 // ascending simulated T_mean, T_mom, T_rff
	q       []float64    // ascending simulated min_k p_k/w_k
	mean    [3]float64   // mean of the simulated statistics
	stretch [3]float64   // √(V_sim/V_true): the covariance-estimation correction (Reference.Test)
}

// bootstrapSizes are the window sizes whose null is simulated by resampling part B (the
// package doc); each is a whole number of bootstrapBlock-point blocks.
var bootstrapSizes = [...]int{400, 200, 100, 50}

// bootstrapBlock is the size of the resampled blocks the bootstrap windows are made of.
const bootstrapBlock = 50

// scaleFloor is the smallest standard deviation a feature is given when standardised. The
// covariance comes from fixed-point sums, exact to about 2⁻³³ ≈ 1.2e-10 per entry; divided by
// s_i·s_j, that error must stay far below the ridge for the whitening to be positive
// definite: with D ≤ 1024 features and s ≥ 2e-3 a row's errors sum to at most
// 1024·1.2e-10/4e-6 ≈ 0.031, below the default ridge 0.05 (Gershgorin). A feature that is
// (nearly) constant in the reference is compared with weight 1/floor² = 2.5e5, so a window in
// which it moves by more than a few floors is flagged.
const scaleFloor = 2e-3

// momentRidge regularises the small whitenings of T_mean and T_mom (correlation scale):
// they are well conditioned unless coordinates are collinear.
const momentRidge = 1e-3

// Build finalises the summary: the whitenings from part A and the null distribution from
// part B with NullDraws draws of src (the frozen RNG). The builder is unchanged.
func (b *ReferenceBuilder) Build(cfg Config, src NormalSource) (*Reference, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	if b.next < MinReferencePoints {
		return nil, fmt.Errorf("%d points: need at least %d: %w", b.next, MinReferencePoints, ErrReference)
	}
	fm := b.fm
	D, d := fm.Features(), fm.dim
	_, covA := b.parts[0].moments(D)
	meanB, covB := b.parts[1].moments(D)
	r := &Reference{fm: fm, cfg: cfg, m: b.next, mB: b.parts[1].n, meanB: meanB}
	r.meanR = make([]float64, D)
	for i := range r.meanR {
		r.meanR[i] = fromFixed(b.parts[0].sum[i]+b.parts[1].sum[i]) / float64(r.m)
	}
	r.scale = make([]float64, D)
	for i := range r.scale {
		r.scale[i] = max(math.Sqrt(max(covA[i*D+i], 0)), scaleFloor)
	}
	corr := func(k int, ridge float64) []float64 {
		c := make([]float64, k*k)
		for i := 0; i < k; i++ {
			for j := 0; j < k; j++ {
				c[i*k+j] = covA[i*D+j] / float64(r.scale[i]*r.scale[j])
			}
			c[i*k+i] += ridge
		}
		return c
	}
	// A whitening that is not positive definite (rounding in a nearly singular correlation
	// matrix) is retried with ten times the ridge, up to 10⁴ times it.
	whiten := func(k int, ridge float64) ([]float64, error) {
		var err error
		for range 5 {
			var l []float64
			if l, err = cholesky(corr(k, ridge), k); err == nil {
				return l, nil
			}
			ridge *= 10
		}
		return nil, err
	}
	if r.lMean, err = whiten(d, momentRidge); err != nil {
		return nil, fmt.Errorf("mean whitening: %v: %w", err, ErrReference)
	}
	if r.lMom, err = whiten(2*d, momentRidge); err != nil {
		return nil, fmt.Errorf("moment whitening: %v: %w", err, ErrReference)
	}
	if r.lRFF, err = whiten(D, cfg.Ridge); err != nil {
		return nil, fmt.Errorf("feature whitening: %v: %w", err, ErrReference)
	}
	if cfg.BetweenWindows {
		if err := r.betweenNull(&b.win, b.parts[1].sum); err != nil {
			return nil, err
		}
	} else {
		lB, err := factorPSD(covB, D)
		if err != nil {
			return nil, fmt.Errorf("null covariance: %v: %w", err, ErrReference)
		}
		r.simulateNull(lB, src)
		r.bootstrapNulls(b.sample, src)
	}
	r.zBand2 = r.rffNorms(r.meanR)
	return r, nil
}

// Between describes the null of Config.BetweenWindows; it is zero for the pooled-points null.
type Between struct {
	// Windows is the number of reference windows a window is ranked against (part B's:
	// 7 of every 10).
	Windows int64
	// Size is the reference windows' mean size in points.
	Size float64
	// Persistence is the long-run variance over the variance of the evidence −ln p of the
	// ranked windows' second half, tested in order against their first half: 1 + 2Σ_h ρ_h,
	// about 1 for independent windows, larger when the stream's wandering makes evidence
	// persist from window to window — which shortens a CUSUM's run time (docs/drift.md).
	Persistence float64
	// PersistenceSE is its standard error for independent windows, √(2/(B−1)) for B
	// batches (a batch-means variance is then about χ²_{B−1}/(B−1) times its mean): a
	// persistence more than two of them above 1 is more than noise.
	PersistenceSE float64
}

// Between is the between-windows null's description (zero without BetweenWindows).
func (r *Reference) Between() Between { return r.between }

// betweenNull makes the null of Config.BetweenWindows from part B's windows (ByWindows):
// each is tested as Test would test a new window, against part B without the window's own
// points (so that it is not compared with itself; sumB is part B's sums), and their
// statistics are the null sample (windowNull.pvalues). None of their points is in part A's
// whitening, so a new window exchangeable with them gets an exactly valid p-value whatever
// the stream's wandering from window to window, at a resolution of 1/(k+1); nothing is
// simulated. It also measures the persistence (Between.Persistence).
func (r *Reference) betweenNull(w *refWindows, sumB []int64) error {
	k := int64(len(w.n))
	switch {
	case !w.on:
		return fmt.Errorf("the between-windows null needs a reference built window by window (ByWindows): %w", ErrReference)
	case w.dropped > 0:
		return fmt.Errorf("%d reference windows: the between-windows null keeps at most %d of part B's %d: %w",
			w.k, MaxReferenceWindows, k+w.dropped, ErrReference)
	case w.k < MinReferenceWindows:
		return fmt.Errorf("%d reference windows: the between-windows null needs at least %d (one per line of the reference file): %w",
			w.k, MinReferenceWindows, ErrReference)
	}
	D := r.fm.Features()
	g, y, sc := make([]float64, D), make([]float64, D), make([]float64, D)
	// stats is the statistics of windows lo…hi−1 of part B against the centre of windows
	// clo…chi−1 (each without its own points when it is one of them).
	stats := func(lo, hi, clo, chi int64) [][3]float64 {
		csum, cn := sumB, r.mB // all of part B, with points after the last window
		if clo != 0 || chi != k {
			csum, cn = make([]int64, D), 0
			for j := clo; j < chi; j++ {
				cn += w.n[j]
				for i, v := range w.sum[j*int64(D) : (j+1)*int64(D)] {
					csum[i] += v
				}
			}
		}
		ts := make([][3]float64, hi-lo)
		for j := lo; j < hi; j++ {
			n, own := float64(w.n[j]), j >= clo && j < chi
			sum := w.sum[j*int64(D) : (j+1)*int64(D)]
			m := float64(cn)
			if own {
				m = float64(cn - w.n[j])
			}
			f := math.Sqrt(1 / (1/n + 1/m))
			for i := range g {
				c := csum[i]
				if own {
					c -= sum[i]
				}
				g[i] = float64((fromFixed(sum[i])/n - fromFixed(c)/m)) * f
			}
			ts[j-lo] = r.statistics(g, y, sc)
		}
		return ts
	}
	r.windows = newWindowNull(stats(0, k, 0, k))
	// The persistence a stream will show: the windows of part B's second half tested, in
	// order, as a stream against its first half as the reference. (The reference's windows
	// tested against each other show less of it: a stream's windows also share the error of
	// the reference's centre, which wanders with the stream.)
	h := k / 2
	first := newWindowNull(stats(0, h, 0, h))
	e := make([]float64, 0, k-h)
	for _, t := range stats(h, k, 0, h) {
		_, p := first.pvalues(r, t)
		e = append(e, -numeric.Log(p))
	}
	ratio, batches := batchVarianceRatio(e)
	r.between = Between{Windows: k, Size: float64(r.m) / float64(w.k), Persistence: ratio,
		PersistenceSE: math.Sqrt(2 / float64(batches-1))}
	return nil
}

// windowNull is a sample of windows' statistics that a window is ranked against (the
// between-windows null).
type windowNull struct {
	stats  [][3]float64
	above  [][3]int     // per statistic, how many of the other windows' are at least as large
	sorted [3][]float64 // each statistic, ascending
}

func newWindowNull(ts [][3]float64) windowNull {
	w := windowNull{stats: ts, above: make([][3]int, len(ts))}
	for kk := range w.sorted {
		w.sorted[kk] = make([]float64, len(ts))
		for j, t := range ts {
			w.sorted[kk][j] = t[kk]
		}
		slices.Sort(w.sorted[kk])
	}
	for j, t := range ts {
		for kk := range t {
			i, _ := slices.BinarySearch(w.sorted[kk], t[kk]) // the first at least t
			w.above[j][kk] = len(ts) - i - 1
		}
	}
	return w
}

// pvalues is the p-values of the statistics t against the sample: per statistic its rank
// among the k windows', (1 + #{at least t})/(k + 1), and for the aggregate min_k p_k/w_k a
// full conformal rank: each sample window's aggregate is recomputed with the new window among
// its others, as the new window's is with all of them, so the k + 1 windows are scored alike
// and, if exchangeable, the p-value (1 + #{sample aggregates ≤ the window's, ties broken by
// T_rff})/(k + 1) is exactly valid. O(k) per window.
func (w *windowNull) pvalues(r *Reference, t [3]float64) (p [3]float64, agg float64) {
	inv := 1 / float64(len(w.stats)+1)
	for kk := range p {
		p[kk] = pk(w.sorted[kk], t[kk])
	}
	q := r.minQ(p)
	count := 0
	for j, tj := range w.stats {
		var pj [3]float64
		for kk := range pj {
			a := w.above[j][kk]
			if t[kk] >= tj[kk] {
				a++
			}
			pj[kk] = float64(1+a) * inv
		}
		// Aggregates are discrete (multiples of 1/((k+1)·w_k)) and tie often: ties are
		// broken by T_rff, the same way for every window, so exchangeability holds.
		if qj := r.minQ(pj); qj < q || qj == q && tj[2] >= t[2] {
			count++
		}
	}
	return p, float64(1+count) * inv
}

// batchVarianceRatio is the batch-means estimate of x's long-run variance over its variance,
// 1 + 2Σ_h ρ_h (1 for independent values): b·Var(means of batches of b)/Var(x), b = ⌈√n⌉,
// and the number of batches (at least 2 for n ≥ 3; betweenNull's n is at least 7).
func batchVarianceRatio(x []float64) (ratio float64, batches int) {
	n := len(x)
	b := int(math.Ceil(math.Sqrt(float64(n))))
	batches = n / b
	mean := 0.0
	for _, v := range x[:batches*b] {
		mean += v
	}
	mean /= float64(batches * b)
	vx, vb := 0.0, 0.0
	for i := range batches {
		m := 0.0
		for _, v := range x[i*b : (i+1)*b] {
			m += v
			vx += float64((v - mean) * (v - mean))
		}
		m /= float64(b)
		vb += float64((m - mean) * (m - mean))
	}
	vx /= float64(batches*b - 1)
	vb /= float64(batches - 1)
	if vx == 0 {
		return 1, batches
	}
	return float64(float64(b)*vb) / vx, batches
}

// factorPSD factors the covariance a + εI, with ε = 10⁻¹⁰ of its mean diagonal grown ten
// times at a time until the factorisation succeeds: a covariance of bounded features may
// be singular (collinear features), and a jitter far below the features' variance changes
// the simulated null imperceptibly.
func factorPSD(a []float64, n int) ([]float64, error) {
	tr := 0.0
	for i := 0; i < n; i++ {
		tr += a[i*n+i]
	}
	eps := max(tr/float64(n), 1e-300) * 1e-10
	j := slices.Clone(a)
	for range 12 {
		for i := 0; i < n; i++ {
			j[i*n+i] = a[i*n+i] + eps
		}
		l, err := cholesky(j, n)
		if err == nil {
			return l, nil
		}
		eps *= 10
	}
	return nil, errors.New("covariance is not positive semidefinite")
}

// statistics computes T_mean, T_mom and T_rff of the scaled difference g, using y and s
// (len D) as workspace.
func (r *Reference) statistics(g, y, s []float64) [3]float64 {
	d, D := r.fm.dim, r.fm.Features()
	for i, v := range g {
		s[i] = v / r.scale[i]
	}
	return [3]float64{
		forwardNorm2(r.lMean, d, s, y),
		forwardNorm2(r.lMom, 2*d, s, y),
		forwardNorm2(r.lRFF, D, s, y),
	}
}

// pk is the p-value of the statistic t against the ascending null sample: (1 + #{null ≥
// t})/(B + 1).
func pk(null []float64, t float64) float64 {
	i, _ := slices.BinarySearch(null, t)
	return float64(1+len(null)-i) / float64(len(null)+1)
}

// minQ is min_k p_k/w_k over the statistics with positive weight.
func (r *Reference) minQ(p [3]float64) float64 {
	q := math.Inf(1)
	for k, w := range r.cfg.Weights {
		if w > 0 {
			q = min(q, p[k]/w)
		}
	}
	return q
}

// simulateNull draws the large-window null: g = L_B·z, z ~ N(0, I).
func (r *Reference) simulateNull(lB []float64, src NormalSource) {
	D, B := r.fm.Features(), r.cfg.NullDraws
	z, g, y, s := make([]float64, D), make([]float64, D), make([]float64, D), make([]float64, D)
	ts := make([][3]float64, B)
	for b := range B {
		for i := range z {
			z[i] = src.Normal()
		}
		lowerMul(lB, D, z, g)
		ts[b] = r.statistics(g, y, s)
	}
	r.nulls = append(r.nulls, r.nullSet(0, ts, float64(r.mB)))
}

// bootstrapNulls simulates the null of windows of bootstrapSizes points by resampling the
// sample (part B's first points, not used by the whitenings): NullDraws blocks of
// bootstrapBlock points drawn with replacement, then for each size NullDraws windows made
// of size/bootstrapBlock blocks drawn with replacement, each window's
// g = √n·(mean − sample mean). These nulls carry the features' real skewness and kurtosis
// at small windows, which the Gaussian draws do not. The whitenings are linear, so each
// block is whitened once and a window's whitened g is the mean of its blocks' times √n:
// O(D) per simulated window. Indices come from the bits of src's draws (index below).
func (r *Reference) bootstrapNulls(sample []float64, src NormalSource) {
	d, D, B := r.fm.dim, r.fm.Features(), r.cfg.NullDraws
	ns := len(sample) / d
	if ns < 2 {
		return
	}
	// The sample's features, in fixed point (sums of them are exact and order-free).
	feat := make([]int64, ns*D)
	phi := make([]float64, D)
	total := make([]int64, D)
	for i := range ns {
		r.fm.Eval(sample[i*d:(i+1)*d], phi)
		for j, v := range phi {
			f := toFixed(v)
			feat[i*D+j] = f
			total[j] += f
		}
	}
	mu := make([]float64, D)
	for j, s := range total {
		mu[j] = fromFixed(s) / float64(ns)
	}
	// index draws a uniform integer in [0, k) from 32 mantissa bits of a normal draw
	// (their distribution is uniform to far better than the bootstrap's own noise).
	index := func(k int) int {
		bits := math.Float64bits(src.Normal()) >> 12 & (1<<32 - 1)
		return int(bits * uint64(k) >> 32)
	}
	// Each block's whitened standardised mean deviation, [mean d | mom 2d | rff D].
	W := 3*d + D
	white := make([]float64, B*W)
	sum, x := make([]int64, D), make([]float64, D)
	for b := range B {
		clear(sum)
		for range bootstrapBlock {
			i := index(ns)
			for j, f := range feat[i*D : (i+1)*D] {
				sum[j] += f
			}
		}
		for j, v := range sum {
			x[j] = float64(fromFixed(v)/bootstrapBlock-mu[j]) / r.scale[j]
		}
		y := white[b*W : (b+1)*W]
		forwardNorm2(r.lMean, d, x, y[:d])
		forwardNorm2(r.lMom, 2*d, x, y[d:3*d])
		forwardNorm2(r.lRFF, D, x, y[3*d:])
	}
	acc := make([]float64, W)
	ts := make([][3]float64, B)
	for _, size := range bootstrapSizes {
		J := size / bootstrapBlock
		// T = n·|mean of the J blocks' whitened vectors|² = (n/J²)·|Σ|².
		f := float64(size) / float64(J*J)
		for b := range B {
			clear(acc)
			for range J {
				i := index(B)
				for j, v := range white[i*W : (i+1)*W] {
					acc[j] += v
				}
			}
			var t [3]float64
			for j, v := range acc {
				k := 2
				if j < d {
					k = 0
				} else if j < 3*d {
					k = 1
				}
				t[k] += float64(v * v)
			}
			for k := range t {
				t[k] = float64(t[k] * f)
			}
			ts[b] = t
		}
		r.nulls = append(r.nulls, r.nullSet(1/float64(size), ts, float64(ns)))
	}
}

// nullSet makes the null of windows of 1/inv points from the statistics ts of the
// simulated draws, whose covariance was estimated from est points.
func (r *Reference) nullSet(inv float64, ts [][3]float64, est float64) nullSet {
	B := len(ts)
	ns := nullSet{inv: inv}
	for k := range ns.t {
		ns.t[k] = make([]float64, B)
		mean, v := 0.0, 0.0
		for b, t := range ts {
			ns.t[k][b] = t[k]
			mean += t[k]
		}
		mean /= float64(B)
		for _, t := range ts {
			v += float64((t[k] - mean) * (t[k] - mean))
		}
		v /= float64(B - 1)
		// The draws use a covariance estimated from est points: E[2tr((MΣ̂)²)] =
		// 2tr((MΣ)²)(1 + 1/est) + 2tr(MΣ)²/est (Wishart moments), so the simulated
		// variance exceeds the statistic's by about the effective degrees of freedom over
		// est; the true variance is estimated by inverting that, and Reference.Test stretches
		// the window's statistic about the mean to match (by at most a factor 2).
		ns.mean[k] = mean
		ns.stretch[k] = 1
		if v > 0 {
			tv := max((v-float64(2*float64(mean*mean))/est)/(1+1/est), v/4)
			ns.stretch[k] = math.Sqrt(v / tv)
		}
		slices.Sort(ns.t[k])
	}
	ns.q = make([]float64, B)
	for b, t := range ts {
		var p [3]float64
		for k := range p {
			// #{null ≥ t}/(B+1) counts the draw itself: the draw's p-value against the others.
			p[k] = pk(ns.t[k], t[k]) - 1/float64(B+1)
		}
		ns.q[b] = r.minQ(p)
	}
	slices.Sort(ns.q)
	return ns
}

// rffNorms returns, for the feature means mu, the squared norms |z̄|² of the normalised
// random Fourier features (z = φ/√F per band, so |z(u)| = 1) per band (the kernel of the
// MMD² is the average of the bands' Gaussian kernels).
func (r *Reference) rffNorms(mu []float64) (band []float64) {
	K, F, o := r.fm.Bands(), r.fm.freqs, r.fm.moments()
	band = make([]float64, K)
	for k := range K {
		s := 0.0
		for _, v := range mu[o+2*F*k : o+2*F*(k+1)] {
			s += float64(v * v)
		}
		band[k] = s / float64(F)
	}
	return band
}

// Points is the number of reference points.
func (r *Reference) Points() int64 { return r.m }

// FeatureMap is the reference's feature map (windows must come from it).
func (r *Reference) FeatureMap() *FeatureMap { return r.fm }
