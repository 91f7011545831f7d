package embedding

import (
	"math"

	"github.com/distfeat/distfeat/internal/numeric"
)

// cosineFactor returns c(k)·cos(π k u), one axis of a basis function. It uses the
// deterministic cosine of sincos.go, so its bits do not depend on the platform.
func cosineFactor(k int, u float64) float64 {
	if k == 0 {
		return 1
	}
	_, c := numeric.Sincos(float64(math.Pi*float64(k)) * u)
	return math.Sqrt2 * c
}
