package synth

import "math"

// gaussLegendre returns the nodes and weights of the n-point Gauss–Legendre rule on [-1, 1]
// (Newton iteration on the Legendre recurrence; exact for polynomials of degree < 2n).
func gaussLegendre(n int) (x, w []float64) {
	x, w = make([]float64, n), make([]float64, n)
	for i := 0; i < (n+1)/2; i++ {
		z := math.Cos(math.Pi * (float64(i) + 0.75) / (float64(n) + 0.5))
		var dp float64
		for iter := 0; iter < 100; iter++ {
			p1, p2 := 1.0, 0.0
			for j := 1; j <= n; j++ {
				p1, p2 = ((2*float64(j)-1)*z*p1-(float64(j)-1)*p2)/float64(j), p1
			}
			dp = float64(n) * (z*p1 - p2) / (z*z - 1)
			dz := p1 / dp
			z -= dz
			if math.Abs(dz) < 1e-15 {
				break
			}
		}
		// Recompute the derivative at the converged node.
		p1, p2 := 1.0, 0.0
		for j := 1; j <= n; j++ {
			p1, p2 = ((2*float64(j)-1)*z*p1-(float64(j)-1)*p2)/float64(j), p1
		}
		dp = float64(n) * (z*p1 - p2) / (z*z - 1)
		x[i], x[n-1-i] = -z, z
		w[i] = 2 / ((1 - z*z) * dp * dp)
		w[n-1-i] = w[i]
	}
	return x, w
}

// integrate1D integrates f over [a, b] with `panels` equal panels of the n-point
// Gauss–Legendre rule.
func integrate1D(f func(float64) float64, a, b float64, panels, n int) float64 {
	x, w := gaussLegendre(n)
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
