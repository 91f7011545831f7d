package calibrate

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
)

// mmd calibrates an mmd family. Bandwidth: the median heuristic h0 only describes the
// sets (the typical distance inside one); a bandwidth should separate them. On the grid
// h0·2^(k/2), k = −4…4 (extended by half-octaves, at most mmdMaxExtensions times on each
// side, while the best sits at an edge), the criterion is the variance over pairs of
// sampled sets of the true mean-map kernel between their distributions, estimated like the
// self-check does: var K − ¼·var(K_A − K_B), K the exact mean-map kernel of the sub-samples
// and K_A, K_B the same from each set's halves (the halves' difference carries four times
// the noise variance of one full estimate). A linear model on the features can only use
// what differs from pair to pair of sets: as h → 0 every kernel value between distinct sets
// tends to 0, as h → ∞ to 1, and in both limits the Gram matrix is constant; subtracting
// the noise keeps within-set sampling differences from counting as structure. (The thesis'
// two-sample criterion, mean MMD²_u over its sd, measures how detectable each single pair's
// difference is; on a collection of sets it keeps rising towards small h, where every pair —
// also two sets of one class — looks different and the Gram matrix turns diagonal.) With
// labels (labelled.go) the bandwidth, second stage and D are chosen by cross-validated
// accuracy instead. D follows featureCount otherwise; the optional second stage's
// rbf_sigma is the median MMD between the sample's sets.
func (c *calibration) mmd(i int) (FamilyResult, familyTruth, error) {
	f := &c.spec.Families[i]
	S := len(c.smp.sub)
	h0, why := medianHeuristic(c.res.WithinDist)
	if d := c.smp.distinctWithinPairs(); d < len(c.res.WithinDist) {
		why += fmt.Sprintf("; the %d pairs are drawn with repetition from the sets' %d distinct pairs", len(c.res.WithinDist), d)
	}
	if !(h0 > 0) {
		h0 = f.Bandwidth
		why += fmt.Sprintf("; starting from the base bandwidth %g instead", h0)
	}
	bw := &mmdBandwidths{c: c, h0: h0}
	bw.subA, bw.subB = c.smp.subHalves()
	bw.lo, bw.hi = mmdLimits(c.smp.sub, c.smp.dim)
	if err := bw.search(); err != nil {
		return FamilyResult{}, familyTruth{}, err
	}
	best := bw.best
	f.Bandwidth = bw.hs[best]
	fr := FamilyResult{Grid: bw.hs, Spread: sqrtAll(bw.signal), Marks: []Mark{{"median heuristic", h0}, {"bandwidth", f.Bandwidth}}}
	for k, h := range bw.hs {
		c.res.Trials = append(c.res.Trials, Trial{Family: f.Name, Setting: fmt.Sprintf("bandwidth %g", h), Score: math.Sqrt(max(bw.signal[k], 0)),
			What: fmt.Sprintf("est. sd of the true kernel over pairs (MMD²_u/sd %.2f)", bw.ratio[k]), Chosen: k == best && c.lab == nil})
	}
	ft := familyTruth{kernel: "mean-map kernel E k(x, y) between the true distributions, estimated by the exact mean-map kernel of the sub-sampled points with its noise measured by halves", mmd: true}
	if c.lab != nil {
		if err := c.mmdLabelled(i, bw.hs); err != nil {
			return FamilyResult{}, familyTruth{}, err
		}
		best = slices.Index(bw.hs, f.Bandwidth)
		fr.Marks[1].Value = f.Bandwidth
	} else {
		c.note(i, "bandwidth", strconv.FormatFloat(f.Bandwidth, 'g', -1, 64), bw.rule(why, S))
	}
	K, H := bw.grams[best], bw.halves[best]
	off := offDiagonal(K, S)
	fr.Gram = K
	ft.pairs = off
	ft.halfA, ft.halfB, ft.halfAB, ft.halfBA = halfPairs(H, S, 0)
	if c.lab == nil {
		pilot := *f
		pilot.Features, pilot.RBFSigma, pilot.RBFFeatures = PilotFeatures, 0, 0
		mse, pr2, err := c.pilot(pilot, true, off)
		if err != nil {
			return FamilyResult{}, familyTruth{}, err
		}
		var rule string
		f.Features, rule = featureCount(mse, pr2, c.opts)
		c.note(i, "features", strconv.Itoa(f.Features), rule)
	}
	if f.RBFSigma == 0 && f.RBFFeatures == 0 {
		return fr, ft, nil
	}
	if err := c.mmdSecondStage(i, K, H, &fr, &ft); err != nil {
		return FamilyResult{}, familyTruth{}, err
	}
	return fr, ft, nil
}

// mmdSecondStage proposes the optional second stage exp(−MMD²/2σ²) of mmd family i, given
// the exact mean-map kernel K of the sub-samples and H of their halves at the chosen
// bandwidth: rbf_sigma is the median MMD between the sets, rbf_features follows
// featureCount (both kept as they are with labels, which chose them already).
func (c *calibration) mmdSecondStage(i int, K, H []float64, fr *FamilyResult, ft *familyTruth) error {
	f := &c.spec.Families[i]
	S := len(c.smp.sub)
	// MMD²_b = K_ii + K_jj − 2K_ij.
	mmd2 := make([]float64, 0, S*(S-1)/2)
	for a := 0; a < S; a++ {
		for b := a + 1; b < S; b++ {
			mmd2 = append(mmd2, math.Max(0, K[a*S+a]+K[b*S+b]-2*K[a*S+b]))
		}
	}
	if c.lab == nil {
		sigma, srule := medianSigma(mmd2, f.RBFSigma, "MMD")
		f.RBFSigma = sigma
		c.note(i, "rbf_sigma", strconv.FormatFloat(sigma, 'g', -1, 64), srule)
	}
	fr.Between = sqrtAll(mmd2)
	fr.Marks = append(fr.Marks, Mark{"rbf_sigma", f.RBFSigma})
	fr.Gram = outerGram(K, S, f.RBFSigma)
	ft.pairs = offDiagonal(fr.Gram, S)
	ft.halfA, ft.halfB, ft.halfAB, ft.halfBA = halfPairs(H, S, f.RBFSigma)
	ft.kernel = "exp(−MMD²/2σ²) between the true distributions, estimated from the exact mean-map kernel of the sub-sampled points with its noise measured by halves"
	if c.lab != nil {
		return nil
	}
	pilot := *f
	pilot.RBFFeatures = PilotFeatures
	mse, pr2, err := c.pilot(pilot, true, ft.pairs)
	if err != nil {
		return err
	}
	var rule string
	f.RBFFeatures, rule = featureCount(mse, pr2, c.opts)
	c.note(i, "rbf_features", strconv.Itoa(f.RBFFeatures), rule)
	return nil
}

// mmdBandwidths is the unlabelled mmd bandwidth search: the criterion on the grid
// h0·2^(k/2), grown by half-octaves while the best sits at an edge (within lo…hi).
type mmdBandwidths struct {
	c          *calibration
	h0, lo, hi float64
	subA, subB [][]float64
	steps      []int     // k of each grid point, ascending
	hs         []float64 // the bandwidths h0·2^(k/2), rounded
	signal     []float64 // estimated variance of the true kernel over pairs (the criterion)
	ratio      []float64 // mean MMD²_u over its sd (shown, not used)
	// grams: the exact mean-map kernel of the sub-samples; halves: of the 2S half-sets
	// (every set's half A, then every set's half B), for each bandwidth.
	grams, halves [][]float64
	best          int
	extended      []string // how the grid grew, for the rule
}

// search evaluates the starting grid, then extends it while the best is at an edge.
func (bw *mmdBandwidths) search() error {
	S := len(bw.c.smp.sub)
	if err := bw.add(refineSteps[:], false); err != nil {
		return err
	}
	bw.best = len(bw.hs) / 2 // h0 itself when nothing can be compared (one set)
	bw.argmax()
	for round := 0; round < 2*mmdMaxExtensions && S >= 2; round++ {
		if bw.best == 0 && bw.steps[0] > refineSteps[0]-mmdMaxExtensions && bw.hs[0]/math.Sqrt2 >= bw.lo {
			if err := bw.add([]int{bw.steps[0] - 1}, true); err != nil {
				return err
			}
			bw.extended = append(bw.extended, fmt.Sprintf("down to h0·2^(%d/2)", bw.steps[0]))
		} else if last := len(bw.hs) - 1; bw.best == last && bw.steps[last] < refineSteps[len(refineSteps)-1]+mmdMaxExtensions && bw.hs[last]*math.Sqrt2 <= bw.hi {
			if err := bw.add([]int{bw.steps[last] + 1}, false); err != nil {
				return err
			}
			bw.extended = append(bw.extended, fmt.Sprintf("up to h0·2^(%d/2)", bw.steps[len(bw.steps)-1]))
		} else {
			break
		}
		bw.argmax()
	}
	return nil
}

// argmax sets best to the grid point with the largest criterion (h0 with one set).
func (bw *mmdBandwidths) argmax() {
	S := len(bw.c.smp.sub)
	bw.best = slices.Index(bw.steps, 0)
	for k := range bw.hs {
		if S >= 2 && bw.signal[k] > bw.signal[bw.best] {
			bw.best = k
		}
	}
}

// add computes the criterion at the steps ks, prepended (front) or appended to the grid.
func (bw *mmdBandwidths) add(ks []int, front bool) error {
	c, S := bw.c, len(bw.c.smp.sub)
	var nh []float64
	for _, e := range ks {
		nh = append(nh, round3(bw.h0*math.Pow(2, float64(e)/2)))
	}
	g, err := mmkGrams(c.ctx, c.smp.sub, c.smp.dim, nh, c.opts)
	if err != nil {
		return err
	}
	hv, err := mmkGrams(c.ctx, append(slices.Clone(bw.subA), bw.subB...), c.smp.dim, nh, c.opts)
	if err != nil {
		return err
	}
	sg, rt := make([]float64, len(nh)), make([]float64, len(nh))
	for k := range nh {
		sg[k] = variance(offDiagonal(g[k], S)) - halvesNoise(halfPairs(hv[k], S, 0))
		a, b := halvesBlocks(hv[k], S)
		rt[k] = mmdRatio(g[k], a, b, c.smp.sub, bw.subA, bw.subB, c.smp.dim)
	}
	if front {
		bw.steps, bw.hs, bw.signal, bw.ratio = append(slices.Clone(ks), bw.steps...), append(nh, bw.hs...), append(sg, bw.signal...), append(rt, bw.ratio...)
		bw.grams, bw.halves = append(g, bw.grams...), append(hv, bw.halves...)
	} else {
		bw.steps, bw.hs, bw.signal, bw.ratio = append(bw.steps, ks...), append(bw.hs, nh...), append(bw.signal, sg...), append(bw.ratio, rt...)
		bw.grams, bw.halves = append(bw.grams, g...), append(bw.halves, hv...)
	}
	return nil
}

// rule is the printed reason for the chosen bandwidth.
func (bw *mmdBandwidths) rule(why string, S int) string {
	ext := ""
	if len(bw.extended) > 0 {
		ext = fmt.Sprintf(" (the grid extended %s: the best sat at its edge; limits %.3g…%.3g)", strings.Join(bw.extended, ", "), bw.lo, bw.hi)
	}
	h0k := slices.Index(bw.steps, 0)
	return fmt.Sprintf(
		"median heuristic h0 = %.4g (%s, normalised units); refined on h0·2^(k/2), k = %d…%d%s, to the h maximising the estimated variance over %d sampled sets' pairs of the true mean-map kernel (var K less the noise variance measured by halves): its square root %.4g at h0, %.4g at the chosen h = h0·2^(%d/2), where the noise is %.0f%% of the variance of K",
		bw.h0, why, bw.steps[0], bw.steps[len(bw.steps)-1], ext, S, math.Sqrt(max(bw.signal[h0k], 0)), math.Sqrt(max(bw.signal[bw.best], 0)), bw.steps[bw.best],
		100*halvesNoise(halfPairs(bw.halves[bw.best], S, 0))/variance(offDiagonal(bw.grams[bw.best], S)))
}

// mmdMaxExtensions is how many half-octaves the mmd bandwidth grid may grow on each side
// (within mmdLimits).
const mmdMaxExtensions = 12

// mmdLimits are the bounds of the grid's extension: below, twice the median distance from
// a sub-sampled point to its nearest neighbour in its set (at smaller bandwidths a set's
// mean embedding is a sum of isolated bumps: nothing but the points' own noise); above, the
// diagonal of the unit cube (beyond it the kernel is quadratic over the data: only means and
// covariances are compared).
func mmdLimits(sub [][]float64, d int) (lo, hi float64) {
	var nn []float64
	for _, u := range sub {
		n := len(u) / d
		for a := 0; a < n; a++ {
			m := math.Inf(1)
			for b := 0; b < n; b++ {
				if b != a {
					m = math.Min(m, sqDist(u[a*d:(a+1)*d], u[b*d:(b+1)*d]))
				}
			}
			if !math.IsInf(m, 1) {
				nn = append(nn, math.Sqrt(m))
			}
		}
	}
	if len(nn) > 0 {
		lo = 2 * median(nn)
	}
	return lo, math.Sqrt(float64(d))
}

// halvesBlocks returns the S×S blocks of a 2S×2S halves Gram matrix: half A against half
// A, half B against half B.
func halvesBlocks(G []float64, S int) (KA, KB []float64) {
	KA, KB = make([]float64, S*S), make([]float64, S*S)
	for i := 0; i < S; i++ {
		for j := 0; j < S; j++ {
			KA[i*S+j], KB[i*S+j] = G[i*2*S+j], G[(S+i)*2*S+S+j]
		}
	}
	return KA, KB
}

// halfPairs returns, over the pairs i < j, the kernel between set i's half X and set j's
// half Y for XY = AA, BB, AB, BA, from a 2S×2S halves Gram matrix: the mean-map kernel
// itself (sigma 0) or exp(−MMD²/2σ²) of it.
func halfPairs(G []float64, S int, sigma float64) (aa, bb, ab, ba []float64) {
	n := 2 * S
	k := func(x, y int) float64 {
		if sigma == 0 {
			return G[x*n+y]
		}
		return math.Exp(-math.Max(0, G[x*n+x]+G[y*n+y]-2*G[x*n+y]) / (2 * sigma * sigma))
	}
	for i := 0; i < S; i++ {
		for j := i + 1; j < S; j++ {
			aa, bb = append(aa, k(i, j)), append(bb, k(S+i, S+j))
			ab, ba = append(ab, k(i, S+j)), append(ba, k(S+i, j))
		}
	}
	return aa, bb, ab, ba
}

// halvesNoise is the sampling-noise variance of one full-set kernel value K_ij (i ≠ j),
// averaged over the pairs, from the half-set values. To first order K_ij is linear in each
// set's points and a half-set's noise has twice the variance: ¼·var(AA − BB) carries the
// first-order noise v₁; but the second-order term ⟨δ_i, δ_j⟩ (v₂, the product of both
// sets' noises) enters AA − BB with eight times its full-set variance, so ¼·var(AA − BB) =
// v₁ + 2v₂, while AA − AB − BA + BB = ⟨δ_iA − δ_iB, δ_jA − δ_jB⟩ is that term alone, with 16
// times its variance. The full set's noise v₁ + v₂ is then ¼·var(AA − BB) − v₂.
func halvesNoise(aa, bb, ab, ba []float64) float64 {
	v, v2 := halvesNoiseParts(aa, bb, ab, ba)
	return v - v2
}

// halvesNoiseParts returns ¼·var(AA − BB) (= v₁ + 2v₂) and v₂ = var(AA − AB − BA + BB)/16.
func halvesNoiseParts(aa, bb, ab, ba []float64) (quarter, v2 float64) {
	d, dd := make([]float64, len(aa)), make([]float64, len(aa))
	for k := range aa {
		d[k] = aa[k] - bb[k]
		dd[k] = aa[k] - ab[k] - ba[k] + bb[k]
	}
	return variance(d) / 4, variance(dd) / 16
}

// mmdRatio is the thesis' two-sample criterion, reported beside the chosen one: mean over pairs i < j of the unbiased MMD²_u from
// the sub-samples (K_ii without its diagonal: (m·K_ii − 1)/(m − 1)) over the pooled sd of
// one estimate, √(mean (MMD²_A − MMD²_B)²/4) from the halves.
func mmdRatio(K, KA, KB []float64, sub, subA, subB [][]float64, d int) float64 {
	S := len(sub)
	unb := func(G []float64, sets [][]float64, i int) float64 {
		m := float64(len(sets[i]) / d)
		if m < 2 {
			return G[i*S+i]
		}
		return (m*G[i*S+i] - 1) / (m - 1)
	}
	var sum, dev float64
	n := 0
	for i := 0; i < S; i++ {
		for j := i + 1; j < S; j++ {
			sum += unb(K, sub, i) + unb(K, sub, j) - 2*K[i*S+j]
			a := unb(KA, subA, i) + unb(KA, subA, j) - 2*KA[i*S+j]
			b := unb(KB, subB, i) + unb(KB, subB, j) - 2*KB[i*S+j]
			dev += (a - b) * (a - b)
			n++
		}
	}
	if n == 0 || !(dev > 0) {
		return 0
	}
	return (sum / float64(n)) / math.Sqrt(dev/float64(n)/4)
}

// medianSigma is an outer RBF width: the median of the set-to-set distances (square roots
// of sq), rounded to three digits, so that the kernel exp(−ρ²/2σ²) has its median pair at
// exp(−½) ≈ 0.61 and its values spread over (0, 1). A zero median keeps the fallback.
func medianSigma(sq []float64, fallback float64, what string) (float64, string) {
	if len(sq) == 0 {
		return fallback, fmt.Sprintf("fewer than two sets: kept %g", fallback)
	}
	m := median(sqrtAll(sq))
	if !(m > 0) {
		return fallback, fmt.Sprintf("median %s between sets is 0: kept %g", what, fallback)
	}
	return round3(m), fmt.Sprintf("median %s between %d pairs of sampled sets = %.4g", what, len(sq), m)
}

func sqrtAll(x []float64) []float64 {
	out := make([]float64, len(x))
	for i, v := range x {
		out[i] = math.Sqrt(max(v, 0))
	}
	return out
}

// outerGram is exp(−MMD²/2σ²) for every pair of an S×S mean-map Gram matrix.
func outerGram(K []float64, S int, sigma float64) []float64 {
	out := make([]float64, S*S)
	for a := 0; a < S; a++ {
		for b := 0; b < S; b++ {
			m2 := math.Max(0, K[a*S+a]+K[b*S+b]-2*K[a*S+b])
			out[a*S+b] = math.Exp(-m2 / (2 * sigma * sigma))
		}
	}
	return out
}
