package twosample

import (
	"errors"
	"fmt"
	"math"
	"slices"
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
// package doc).
type ReferenceBuilder struct {
	fm     *FeatureMap
	next   int64
	parts  [2]part
	phi    []float64
	sample []float64 // the first bootstrapSample points of part B (small-window nulls)
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

// Add accumulates reference points u (row-major, u ∈ [0,1]^d). It panics if len(u) is not
// whole points or a part would exceed MaxPoints.
func (b *ReferenceBuilder) Add(u []float64) {
	d := b.fm.dim
	if len(u)%d != 0 {
		panic(fmt.Sprintf("twosample: ReferenceBuilder.Add: %d values are not whole points of dim %d", len(u), d))
	}
	for i := 0; i < len(u); i += d {
		p := &b.parts[1]
		if b.next%10 < 3 {
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
			p.sum[r] += toFixed(x)
			for _, y := range b.phi[:r+1] {
				p.cross[c] += toFixed(float64(x * y))
				c++
			}
		}
		p.n++
		b.next++
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
	fm     *FeatureMap
	cfg    Config
	m, mB  int64
	meanR  []float64 // full reference mean (MMD²)
	meanB  []float64 // part B mean (the statistics' centre)
	scale  []float64 // part A's standard deviations (floored)
	lMean  []float64 // Cholesky factors of the whitenings: d, 2d and D square
	lMom   []float64
	lRFF   []float64
	nulls  []nullSet // by increasing inv: the Gaussian limit, then bootstrap window sizes
	zBand2 []float64 // |z̄_R|² of the full reference per band (MMD²)
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
	lB, err := factorPSD(covB, D)
	if err != nil {
		return nil, fmt.Errorf("null covariance: %v: %w", err, ErrReference)
	}
	r.simulateNull(lB, src)
	r.bootstrapNulls(b.sample, src)
	r.zBand2 = r.rffNorms(r.meanR)
	return r, nil
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
