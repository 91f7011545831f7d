package calibrate

import (
	"fmt"
	"math"
	"slices"
	"strconv"
)

// mmd calibrates an mmd family. Bandwidth: the median heuristic h0 only describes the
// sets (the typical distance inside one); a bandwidth should separate them. On the grid
// h0·2^(k/2), k = −4…4, the criterion is the one the thesis develops for two-sample tests
// (§6.3–6.4): the ratio of the estimated MMD² between sets to its sampling standard
// deviation, here mean over sampled pairs of the unbiased MMD²_u over the pooled standard
// deviation of one estimate, measured from each sub-sampled set split in halves (the
// difference of two half-set estimates has four times the variance of a full one). With
// labels (labelled.go) the bandwidth, second stage and D are chosen by cross-validated
// accuracy instead. D follows featureCount otherwise; the optional second stage's
// rbf_sigma is the median MMD between the sample's sets.
func (c *calibration) mmd(i int) (FamilyResult, familyTruth, error) {
	f := &c.spec.Families[i]
	S := len(c.smp.sub)
	h0, why := medianHeuristic(c.res.WithinDist)
	if !(h0 > 0) {
		h0 = f.Bandwidth
		why += fmt.Sprintf("; starting from the base bandwidth %g instead", h0)
	}
	hs := make([]float64, len(refineSteps))
	for k, e := range refineSteps {
		hs[k] = round3(h0 * math.Pow(2, float64(e)/2))
	}
	grams, err := mmkGrams(c.ctx, c.smp.sub, c.smp.dim, hs, c.opts)
	if err != nil {
		return FamilyResult{}, familyTruth{}, err
	}
	subA, subB := c.smp.subHalves()
	gA, err := mmkGrams(c.ctx, subA, c.smp.dim, hs, c.opts)
	if err != nil {
		return FamilyResult{}, familyTruth{}, err
	}
	gB, err := mmkGrams(c.ctx, subB, c.smp.dim, hs, c.opts)
	if err != nil {
		return FamilyResult{}, familyTruth{}, err
	}
	ratio := make([]float64, len(hs))
	best := len(hs) / 2 // h0 itself when nothing can be compared (one set)
	for k := range hs {
		ratio[k] = mmdRatio(grams[k], gA[k], gB[k], c.smp.sub, subA, subB, c.smp.dim)
		if S >= 2 && ratio[k] > ratio[best] {
			best = k
		}
	}
	f.Bandwidth = hs[best]
	fr := FamilyResult{Grid: hs, Spread: ratio, Marks: []Mark{{"median heuristic", h0}, {"bandwidth", f.Bandwidth}}}
	for k, h := range hs {
		c.res.Trials = append(c.res.Trials, Trial{Family: f.Name, Setting: fmt.Sprintf("bandwidth %g", h), Score: ratio[k], What: "mean MMD²_u / its sampling sd", Chosen: k == best && c.lab == nil})
	}
	ft := familyTruth{kernel: "mean-map kernel E k(x, y) between the true distributions, estimated by the exact mean-map kernel of the sub-sampled points with its noise measured by halves", mmd: true}
	if c.lab != nil {
		if err := c.mmdLabelled(i, hs); err != nil {
			return FamilyResult{}, familyTruth{}, err
		}
		best = slices.Index(hs, f.Bandwidth)
		fr.Marks[1].Value = f.Bandwidth
	} else {
		c.note(i, "bandwidth", strconv.FormatFloat(f.Bandwidth, 'g', -1, 64), fmt.Sprintf(
			"median heuristic h0 = %.4g (%s, normalised units); refined on h0·2^(k/2), k = −4…4, to the h maximising the mean over %d sampled sets' pairs of MMD²_u over its sampling sd (from halves): %.3g at h0, %.3g at the chosen h = h0·2^(%d/2)",
			h0, why, S, ratio[len(hs)/2], ratio[best], refineSteps[best]))
	}
	K, KA, KB := grams[best], gA[best], gB[best]
	off := offDiagonal(K, S)
	fr.Gram = K
	ft.pairs, ft.halfA, ft.halfB = off, offDiagonal(KA, S), offDiagonal(KB, S)
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
	// Second stage: exp(−MMD²/2σ²) with MMD²_b = K_ii + K_jj − 2K_ij.
	mmd2 := make([]float64, 0, len(off))
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
	ft.halfA, ft.halfB = offDiagonal(outerGram(KA, S, f.RBFSigma), S), offDiagonal(outerGram(KB, S, f.RBFSigma), S)
	ft.kernel = "exp(−MMD²/2σ²) between the true distributions, estimated from the exact mean-map kernel of the sub-sampled points with its noise measured by halves"
	if c.lab == nil {
		pilot := *f
		pilot.RBFFeatures = PilotFeatures
		mse, pr2, err := c.pilot(pilot, true, ft.pairs)
		if err != nil {
			return FamilyResult{}, familyTruth{}, err
		}
		var rule string
		f.RBFFeatures, rule = featureCount(mse, pr2, c.opts)
		c.note(i, "rbf_features", strconv.Itoa(f.RBFFeatures), rule)
	}
	return fr, ft, nil
}

// mmdRatio is the bandwidth criterion: mean over pairs i < j of the unbiased MMD²_u from
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
