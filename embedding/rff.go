package embedding

import "math"

// rff is a random Fourier feature map for the Gaussian kernel exp(−‖a−b‖²/(2σ²)) on ℝ^in:
// z(a) = √(2/D)·[sin(ω_r·a), cos(ω_r·a)]_{r=1..D/2}, ω_r ~ N(0, σ⁻² I) (sin/cos pairs,
// thesis §3.2). It is applied once per window at finalisation (mmd's second stage, l2's and
// hdd's outer kernel), in float64 with the deterministic sincos of sincos.go and explicitly
// rounded sums, so the output bits do not depend on the architecture or GOAMD64 level.
type rff struct {
	in, out int
	omega   []float64 // row-major (out/2) × in
	scale   float64   // √(2/D)
}

// newRFF draws the frequencies: for r = 0..D/2−1, for j = 0..in−1, ω_rj = rng.Normal()/σ.
func newRFF(rng *RNG, in, features int, sigma float64) *rff {
	half := features / 2
	m := &rff{in: in, out: features, omega: make([]float64, half*in), scale: math.Sqrt(2 / float64(features))}
	for i := range m.omega {
		m.omega[i] = rng.Normal() / sigma
	}
	return m
}

// apply writes z(a) into out (len D).
func (m *rff) apply(a []float64, out []float32) {
	half := m.out / 2
	for r := 0; r < half; r++ {
		row := m.omega[r*m.in : (r+1)*m.in]
		s, c := sincos(dot(row, a))
		out[2*r] = float32(m.scale * s)
		out[2*r+1] = float32(m.scale * c)
	}
}

// dot is a plain inner product with four independent partial sums (a fixed summation
// order). Every product is rounded before it is added (the float64 conversions forbid the
// compiler from fusing them into FMAs, which it does on arm64 and on amd64 with
// GOAMD64=v3), so results are bit-identical on every machine.
func dot(x, y []float64) float64 {
	y = y[:len(x)]
	var s0, s1, s2, s3 float64
	i := 0
	for ; i+4 <= len(x); i += 4 {
		s0 += float64(x[i] * y[i])
		s1 += float64(x[i+1] * y[i+1])
		s2 += float64(x[i+2] * y[i+2])
		s3 += float64(x[i+3] * y[i+3])
	}
	for ; i < len(x); i++ {
		s0 += float64(x[i] * y[i])
	}
	return (s0 + s1) + (s2 + s3)
}
