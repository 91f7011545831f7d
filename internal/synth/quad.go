package synth

import (
	"math"

	"github.com/distfeat/distfeat/internal/quadrature"
)

// integrate1D integrates f over [a, b] with `panels` equal panels of the n-point
// Gauss–Legendre rule.
func integrate1D(f func(float64) float64, a, b float64, panels, n int) float64 {
	x, w := quadrature.GaussLegendre(n)
	h := (b - a) / float64(panels)
	var sum float64
	for p := 0; p < panels; p++ {
		lo := a + float64(p)*h
		var s float64
		for i := range x {
			s += w[i] * f(lo+(x[i]+1)*h/2)
		}
		sum += s * h / 2
	}
	return sum
}

// normCDF is the standard normal CDF Φ.
func normCDF(z float64) float64 { return 0.5 * math.Erfc(-z/math.Sqrt2) }

// normMass is Φ(b) − Φ(a) for a ≤ b, computed in whichever tail keeps precision.
func normMass(a, b float64) float64 {
	if a > 0 {
		// Both in the upper tail: Q(a) − Q(b) with Q = 1 − Φ.
		return 0.5 * (math.Erfc(a/math.Sqrt2) - math.Erfc(b/math.Sqrt2))
	}
	if b < 0 {
		return 0.5 * (math.Erfc(-b/math.Sqrt2) - math.Erfc(-a/math.Sqrt2))
	}
	return 1 - 0.5*math.Erfc(-a/math.Sqrt2) - 0.5*math.Erfc(b/math.Sqrt2)
}
