// Package quadrature holds the numerical integration rules shared by embedding (bit-exact:
// they enter features) and internal/synth (reference densities for tests and the demo).
package quadrature

import "math"

// GaussLegendre returns the nodes (ascending) and weights of the n-point Gauss–Legendre
// rule on [−1, 1], exact for polynomials of degree < 2n. The nodes are found by Newton's
// method on the Legendre recurrence from Tricomi's initial guesses; the result is
// deterministic to the bit (it feeds embedding's js λ quantiles, which golden tests pin)
// and accurate to a few ulps.
func GaussLegendre(n int) (x, w []float64) {
	x, w = make([]float64, n), make([]float64, n)
	for i := 0; i < (n+1)/2; i++ {
		// Tricomi's initial guess for the i-th largest root.
		z := math.Cos(math.Pi * (float64(i) + 0.75) / (float64(n) + 0.5))
		var dp float64
		for iter := 0; iter < 100; iter++ {
			p0, p1 := 1.0, z
			for k := 2; k <= n; k++ {
				p0, p1 = p1, ((2*float64(k)-1)*z*p1-(float64(k)-1)*p0)/float64(k)
			}
			if n == 1 {
				p0, p1 = 1, z
			}
			dp = float64(n) * (z*p1 - p0) / (z*z - 1)
			dz := p1 / dp
			z -= dz
			if math.Abs(dz) < 1e-16 {
				break
			}
		}
		// Recompute the derivative at the converged root for the weight.
		p0, p1 := 1.0, z
		for k := 2; k <= n; k++ {
			p0, p1 = p1, ((2*float64(k)-1)*z*p1-(float64(k)-1)*p0)/float64(k)
		}
		if n == 1 {
			p0 = 1
		}
		dp = float64(n) * (z*p1 - p0) / (z*z - 1)
		wt := 2 / ((1 - z*z) * dp * dp)
		x[i], x[n-1-i] = -z, z
		w[i], w[n-1-i] = wt, wt
	}
	if n%2 == 1 {
		x[n/2] = 0
	}
	return x, w
}
