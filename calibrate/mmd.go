package calibrate

import (
	"fmt"
	"math"
	"strconv"
)

// mmd calibrates an mmd family: the bandwidth by the median heuristic refined on a log grid
// by the spread of the set-to-set kernel values, D by featureCount, and the optional second
// stage's rbf_sigma as the median MMD between the sample's sets.
//
// Refinement criterion: the variance of the off-diagonal exact mean-map kernel values
// K(P_i, P_j), i < j. As h → 0 every pair of distinct continuous sets gives K ≈ 0, as
// h → ∞ every pair gives K ≈ 1: in both limits the Gram matrix is constant and a linear
// model on the features can tell no sets apart. The variance of its entries measures how
// much the kernel distinguishes the sets at scale h; it needs no labels, and it is also the
// quantity that sets the approximation's R² for a given D (featureCount). The median
// heuristic alone only looks inside sets and ignores how far apart the sets are.
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
	spread := make([]float64, len(hs))
	best := len(hs) / 2 // h0 itself when nothing can be compared (one set)
	for k := range hs {
		spread[k] = variance(offDiagonal(grams[k], S))
		if S >= 2 && spread[k] > spread[best] {
			best = k
		}
	}
	f.Bandwidth = hs[best]
	c.note(i, "bandwidth", strconv.FormatFloat(f.Bandwidth, 'g', -1, 64), fmt.Sprintf(
		"median heuristic h0 = %.4g (%s, normalised units); refined on h0·2^(k/2), k = −4…4, to the h maximising the variance of the exact mean-map kernel between %d sampled sets (%.3g at h0, %.3g at the chosen h = h0·2^(%d/2))",
		h0, why, S, spread[len(hs)/2], spread[best], refineSteps[best]))
	K := grams[best]
	off := offDiagonal(K, S)
	fr := FamilyResult{Gram: K, Grid: hs, Spread: spread, Marks: []Mark{{"median heuristic", h0}, {"bandwidth", f.Bandwidth}}}
	ft := familyTruth{kernel: "exact mean-map kernel (1/nm)ΣΣ exp(−‖u−v‖²/2h²) on the sub-sampled normalised points", pairs: off, onSub: true}
	pilot := *f
	pilot.Features, pilot.RBFSigma, pilot.RBFFeatures = PilotFeatures, 0, 0
	mse, pr2, err := c.pilot(pilot, true, off)
	if err != nil {
		return FamilyResult{}, familyTruth{}, err
	}
	var rule string
	f.Features, rule = featureCount(mse, pr2, c.opts)
	c.note(i, "features", strconv.Itoa(f.Features), rule)
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
	sigma, srule := medianSigma(mmd2, f.RBFSigma, "MMD")
	f.RBFSigma = sigma
	c.note(i, "rbf_sigma", strconv.FormatFloat(sigma, 'g', -1, 64), srule)
	fr.Between = sqrtAll(mmd2)
	fr.Marks = append(fr.Marks, Mark{"rbf_sigma", sigma})
	fr.Gram = outerGram(K, S, sigma)
	ft.pairs = offDiagonal(fr.Gram, S)
	ft.kernel = "exp(−MMD²_b/2σ²), MMD²_b from the exact mean-map kernel on the sub-sampled points"
	pilot = *f
	pilot.RBFFeatures = PilotFeatures
	if mse, pr2, err = c.pilot(pilot, true, ft.pairs); err != nil {
		return FamilyResult{}, familyTruth{}, err
	}
	f.RBFFeatures, rule = featureCount(mse, pr2, c.opts)
	c.note(i, "rbf_features", strconv.Itoa(f.RBFFeatures), rule)
	return fr, ft, nil
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
