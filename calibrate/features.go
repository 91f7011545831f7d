package calibrate

import (
	"fmt"
	"math"

	"github.com/distfeat/distfeat/internal/stats"
	"github.com/distfeat/distfeat/spec"
)

// Feature-count rule constants.
const (
	// PilotFeatures is D₀, the feature count at which the approximation error is measured.
	PilotFeatures = 1024
	// MinFeatures floors every proposed D: below it one draw of frequencies is a noisy
	// description of the kernel however small the measured error.
	MinFeatures = 256
)

// featureCount is the feature-count rule. The error of a random Fourier estimate of a
// kernel value is an average over D/2 independent frequencies, so its variance falls like
// 1/D (the embedding tests measure D^−0.98); it is at most ≈ 1/D, but for smooth sets often
// far smaller. So the error is measured on the sample at D₀ = PilotFeatures instead of
// bounded: ê² is the mean squared error of the approximate kernel values over the sample's
// set pairs, and n₀ = (1−R₀²)/R₀² the noise-to-signal ratio of their fit to the exact ones
// (a frequency shared by all pairs shifts every value alike: that counts in ê², not in R²).
// Both scale like D₀/D, so
//
//	D = even(⌈D₀·max(ê²/ε², n₀·R²/(1−R²))⌉), within [MinFeatures, MaxFeatures],
//
// makes the predicted RMS error of one kernel value ε and the predicted R² of the
// approximate against the exact Gram matrix the target R².
func featureCount(mse, r2 float64, o Options) (int, string) {
	byErr := PilotFeatures * mse / (o.Error * o.Error)
	need := byErr
	why := fmt.Sprintf("at D₀ = %d the RMS error ê = %.3g gives D₀ê²/ε² = %.0f (ε = %g)", PilotFeatures, math.Sqrt(mse), byErr, o.Error)
	if r2 > 0 {
		byR2 := PilotFeatures * (1 - r2) / r2 * o.TargetR2 / (1 - o.TargetR2)
		why += fmt.Sprintf(", and R₀² = %.4f gives D₀n₀R²/(1−R²) = %.0f (R² = %g)", r2, byR2, o.TargetR2)
		need = math.Max(need, byR2)
	} else {
		why += " (the exact kernel does not vary over the sample's set pairs)"
	}
	d := int(math.Ceil(need))
	if d%2 == 1 {
		d++
	}
	rule := "D = even(⌈D₀·max(ê²/ε², n₀R²/(1−R²))⌉), n₀ = (1−R₀²)/R₀²: " + why
	switch {
	case d > o.MaxFeatures:
		d = o.MaxFeatures
		rule += fmt.Sprintf("; capped at %d", o.MaxFeatures)
	case d < MinFeatures:
		d = MinFeatures
		rule += fmt.Sprintf("; raised to the floor %d", MinFeatures)
	}
	return d, rule
}

// pilotMSE embeds the sample (sub-sampled points when sub) with family f, whose last stage
// has PilotFeatures features, and
// returns the mean squared error and the R² of the column's inner products against truth
// (pairs i < j, row-major).
func (c *calibration) pilot(f spec.Family, sub bool, truth []float64) (mse, r2 float64, err error) {
	vecs, err := c.embedColumn(f, f.Name, sub)
	if err != nil {
		return 0, 0, err
	}
	var approx []float64
	for a := range vecs {
		for b := a + 1; b < len(vecs); b++ {
			approx = append(approx, stats.Dot32(vecs[a], vecs[b]))
		}
	}
	if len(approx) == 0 {
		return 0, 0, nil
	}
	for k, v := range approx {
		mse += (v - truth[k]) * (v - truth[k])
	}
	return mse / float64(len(approx)), stats.RSquared(approx, truth), nil
}
