package nufft

//go:generate go run ./genkernel

import "math"

// The spreading kernel is FINUFFT's "exponential of semicircle" φ(z) = exp(β(√(1−z²)−1))
// on z ∈ [−1, 1] with β = 2.30·w (FINUFFT's choice for an upsampling factor of 2), replaced
// by a piecewise polynomial: the support is cut into w equal pieces, one per grid point the
// kernel touches, and piece a is a polynomial P_a(t) of degree nc−1 in a local variable
// t ∈ [−1, 1], z = (t + 1 + 2a − w)/w. The coefficients are committed literals
// (kernel_coef.go, from genkernel: go generate), so the kernel is defined by them, not by the
// exponential: every architecture evaluates the same Horner scheme with explicit fused
// multiply-adds and gets the same bits. The Fourier transform used for deconvolution is the
// transform of this polynomial kernel (quadrature of the pieces), so the approximation of
// the exponential only has to keep the kernel's spectrum concentrated, not be exact.

// kernelTable is one width's piecewise-polynomial kernel.
type kernelTable struct {
	w, nc int
	beta  float64
	// coef[j*w+a] is the coefficient of t^(nc−1−j) on piece a.
	coef []float64
}

// values writes out[a] = P_a(t) for a = 0..w−1: the kernel at the w grid points around a
// point whose local coordinate is t (see position).
func (k *kernelTable) values(t float64, out []float64) {
	w := k.w
	out = out[:w]
	copy(out, k.coef[:w])
	for j := 1; j < k.nc; j++ {
		row := k.coef[j*w : j*w+w]
		row = row[:len(out)]
		for a := range out {
			out[a] = math.FMA(out[a], t, row[a])
		}
	}
}

// position maps a point at grid coordinate p (in cells) to the first grid index i0 of the
// w cells its kernel touches, i0 = ⌈p − w/2⌉, and the local coordinate
// t = 2(i0 − p) + w − 1 ∈ [−1, 1] of the pieces. Every step is one rounded operation.
func (k *kernelTable) position(p float64) (i0 int, t float64) {
	fl := math.Ceil(p - float64(0.5*float64(k.w)))
	x1 := fl - p
	return int(fl), float64(2*x1) + float64(k.w-1)
}

// at is the kernel at z ∈ [−1, 1] (0 outside), through the same pieces: the value a point at
// distance z·w/2 cells gives a grid point.
func (k *kernelTable) at(z float64) float64 {
	if !(math.Abs(z) < 1) {
		return 0
	}
	// z = (t + 1 + 2a − w)/w with t ∈ [−1, 1): a = ⌊(z·w + w)/2⌋.
	u := float64(z*float64(k.w)) + float64(k.w)
	a := int(math.Floor(0.5 * u))
	if a >= k.w {
		a = k.w - 1
	}
	t := u - float64(2*a) - 1
	v := k.coef[a]
	for j := 1; j < k.nc; j++ {
		v = math.FMA(v, t, k.coef[j*k.w+a])
	}
	return v
}

// transform is Φ(ξ) = ∫_{−1}^{1} φ(z) cos(ξz) dz for the polynomial kernel, by an nq-point
// Gauss–Legendre rule on every piece (nodes x, weights wt on [−1, 1]).
func (k *kernelTable) transform(xi float64, x, wt []float64, cos func(float64) float64) float64 {
	sum := 0.0
	vals := make([]float64, k.w)
	for q := range x {
		k.values(x[q], vals)
		for a, v := range vals {
			z := (x[q] + 1 + float64(2*a-k.w)) / float64(k.w)
			sum = math.FMA(float64(wt[q]*v), cos(float64(xi*z)), sum)
		}
	}
	return sum / float64(k.w)
}

// values8 is values for w = 8 (the default width) with the eight pieces in registers.
func values8(coef []float64, t float64, out *[maxWidth]float64) {
	c := coef[:64]
	v0, v1, v2, v3, v4, v5, v6, v7 := c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7]
	for j := 8; j+8 <= len(c); j += 8 {
		r := c[j : j+8 : j+8]
		v0 = math.FMA(v0, t, r[0])
		v1 = math.FMA(v1, t, r[1])
		v2 = math.FMA(v2, t, r[2])
		v3 = math.FMA(v3, t, r[3])
		v4 = math.FMA(v4, t, r[4])
		v5 = math.FMA(v5, t, r[5])
		v6 = math.FMA(v6, t, r[6])
		v7 = math.FMA(v7, t, r[7])
	}
	out[0], out[1], out[2], out[3], out[4], out[5], out[6], out[7] = v0, v1, v2, v3, v4, v5, v6, v7
}
