package calibrate

import (
	"fmt"
	"math"
)

// featureCount is the feature-count rule. A random Fourier estimate of one kernel value has
// an error of standard deviation ≈ 1/√D (each of the D/2 frequencies contributes a bounded
// term of variance ≤ 1/2·2 = 1 to the mean, scaled by 2/D), so
//
//	D = even(⌈max(1/ε², (R²/(1−R²)) / var K)⌉), capped at MaxFeatures,
//
// where ε is the target error and var K the variance of the exact kernel values between
// the sample's sets: the first term bounds the error of every kernel value, the second
// makes the error variance at most (1−R²)/R² of the kernel's own variance, so that the
// approximate Gram matrix explains at least the target R² of the exact one.
func featureCount(varK float64, o Options) (int, string) {
	byErr := 1 / (o.Error * o.Error)
	ratio := o.TargetR2 / (1 - o.TargetR2)
	need := byErr
	why := fmt.Sprintf("1/ε² = %.0f (ε = %g)", byErr, o.Error)
	if varK > 0 {
		byR2 := ratio / varK
		why += fmt.Sprintf(", (R²/(1−R²))/var K = %.0f (R² = %g, var K = %.3g over the sample's set pairs)", byR2, o.TargetR2, varK)
		need = math.Max(need, byR2)
	} else {
		why += " (the exact kernel does not vary over the sample's set pairs)"
	}
	d := int(math.Ceil(need))
	if d%2 == 1 {
		d++
	}
	rule := "D = even(⌈max(" + why + ")⌉)"
	if d > o.MaxFeatures {
		d = o.MaxFeatures
		rule += fmt.Sprintf(", capped at %d", o.MaxFeatures)
	}
	return d, rule
}
