// Package synth generates distfeat's synthetic data: seeded mixtures of truncated Gaussians on
// [0,1]^d, their exact densities, sample sets, and the exact mean-map kernel between samples,
// for the demo, the producer CLI and the statistical tests.
//
// All randomness comes from numeric.RNG (ChaCha8 + Box–Muller, frozen), so the same seed
// gives the same mixtures and points on every platform and Go release.
package synth

import (
	"errors"
	"fmt"
	"math"

	"github.com/distfeat/distfeat/internal/numeric"
)

// MinMass is the smallest truncation mass a component may have (the probability its
// untruncated Gaussian gives to [0,1]^d; for diagonal components, per coordinate). Rejection
// sampling needs 1/mass draws per point on average, so a component that barely touches the
// unit cube is refused rather than sampled forever.
const MinMass = 1e-4

// Component is one Gaussian of a mixture, before truncation to [0,1]^d.
type Component struct {
	// Weight is the mixing weight (> 0); a mixture's weights are normalised to sum to 1.
	Weight float64
	// Mean has Dim entries.
	Mean []float64
	// Var is the diagonal covariance (Dim positive variances); used when Cov is nil.
	Var []float64
	// Cov is a full covariance matrix, row-major Dim×Dim, symmetric positive definite.
	// Supported for Dim == 2 only; leave nil (and set Var) otherwise.
	Cov []float64
}

// component is a validated Component with what sampling and the density need.
type component struct {
	w       float64    // normalised weight
	mean    []float64  // len d
	sd      []float64  // diagonal: standard deviations
	full    bool       // Dim == 2 with a full covariance
	l       [3]float64 // full: Cholesky factor L = [[l0, 0], [l1, l2]] of Cov
	inv     [3]float64 // full: Cov⁻¹ = [[inv0, inv1], [inv1, inv2]]
	logNorm float64    // log of the density's constant factor, including 1/Z (truncation mass)
	mass    float64    // Z: mass of the untruncated Gaussian in [0,1]^d
}

// Mixture is an immutable mixture of Gaussians each truncated to [0,1]^d and renormalised:
//
//	p(u) = Σ_k w_k · N(u; μ_k, Σ_k) / Z_k   for u ∈ [0,1]^d, 0 outside,
//
// with Z_k = P(N(μ_k, Σ_k) ∈ [0,1]^d). This is the construction of the AAAI 2016 paper's
// Gram experiment (a mixture of truncated Gaussians, each component truncated on its own),
// and differs from truncating the mixture as a whole when the Z_k differ.
// It is safe for concurrent use.
type Mixture struct {
	dim   int
	comps []component
	cum   []float64 // cumulative normalised weights
	src   []Component
}

// NewMixture validates the components and precomputes their truncation masses: for diagonal
// covariances the product of 1-D normal CDF differences, for a full 2×2 covariance a
// Gauss–Legendre quadrature of the conditional normal mass, accurate to ~1e-12.
func NewMixture(dim int, comps []Component) (*Mixture, error) {
	if dim <= 0 {
		return nil, fmt.Errorf("synth: dim must be > 0, got %d", dim)
	}
	if len(comps) == 0 {
		return nil, errors.New("synth: a mixture needs at least one component")
	}
	var total float64
	for k, c := range comps {
		if !(c.Weight > 0) || math.IsInf(c.Weight, 0) {
			return nil, fmt.Errorf("synth: component %d: weight must be finite and > 0, got %v", k, c.Weight)
		}
		total += c.Weight
	}
	m := &Mixture{dim: dim, comps: make([]component, len(comps)), cum: make([]float64, len(comps)), src: make([]Component, len(comps))}
	var acc float64
	for k, c := range comps {
		pc, err := prepare(dim, c)
		if err != nil {
			return nil, fmt.Errorf("synth: component %d: %w", k, err)
		}
		pc.w = c.Weight / total
		m.comps[k] = pc
		acc += pc.w
		m.cum[k] = acc
		m.src[k] = Component{Weight: pc.w, Mean: clone(c.Mean), Var: clone(c.Var), Cov: clone(c.Cov)}
	}
	m.cum[len(m.cum)-1] = 1 // guard against rounding so selection always finds a component
	return m, nil
}

func clone(x []float64) []float64 {
	if x == nil {
		return nil
	}
	return append([]float64(nil), x...)
}

func finite(xs []float64) bool {
	for _, x := range xs {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return false
		}
	}
	return true
}

func prepare(dim int, c Component) (component, error) {
	if len(c.Mean) != dim || !finite(c.Mean) {
		return component{}, fmt.Errorf("mean must have %d finite entries, got %v", dim, c.Mean)
	}
	pc := component{mean: clone(c.Mean)}
	if c.Cov != nil {
		if dim != 2 {
			return component{}, fmt.Errorf("full covariance is supported for dim 2 only (dim is %d); use Var", dim)
		}
		if c.Var != nil {
			return component{}, errors.New("set Var or Cov, not both")
		}
		if len(c.Cov) != 4 || !finite(c.Cov) || c.Cov[1] != c.Cov[2] {
			return component{}, fmt.Errorf("cov must be a finite symmetric 2×2 matrix (row-major), got %v", c.Cov)
		}
		a, b, d := c.Cov[0], c.Cov[1], c.Cov[3]
		det := a*d - b*b
		if !(a > 0) || !(det > 0) {
			return component{}, fmt.Errorf("cov %v is not positive definite", c.Cov)
		}
		pc.full = true
		pc.l[0] = math.Sqrt(a)
		pc.l[1] = b / pc.l[0]
		pc.l[2] = math.Sqrt(d - pc.l[1]*pc.l[1])
		pc.inv = [3]float64{d / det, -b / det, a / det}
		pc.mass = fullMass2(c.Mean, a, b, d)
		pc.logNorm = -math.Log(2*math.Pi) - 0.5*math.Log(det) - math.Log(pc.mass)
	} else {
		if len(c.Var) != dim || !finite(c.Var) {
			return component{}, fmt.Errorf("var must have %d finite entries, got %v", dim, c.Var)
		}
		pc.sd = make([]float64, dim)
		pc.mass = 1
		pc.logNorm = 0
		for j, v := range c.Var {
			if !(v > 0) {
				return component{}, fmt.Errorf("var[%d] must be > 0, got %v", j, v)
			}
			sd := math.Sqrt(v)
			pc.sd[j] = sd
			mj := normMass((0-c.Mean[j])/sd, (1-c.Mean[j])/sd)
			if !(mj >= MinMass) {
				return component{}, fmt.Errorf("coordinate %d has truncation mass %.3g in [0,1] (minimum %g)", j, mj, MinMass)
			}
			pc.mass *= mj
			pc.logNorm += -0.5*math.Log(2*math.Pi) - math.Log(sd) - math.Log(mj)
		}
		return pc, nil
	}
	if !(pc.mass >= MinMass) {
		return component{}, fmt.Errorf("truncation mass %.3g in [0,1]^2 (minimum %g)", pc.mass, MinMass)
	}
	return pc, nil
}

// fullMass2 is P(X ∈ [0,1]²) for X ~ N(mean, [[a, b], [b, d]]): the integral over x1 ∈ [0,1]
// of φ(x1; μ1, σ1) · P(X2 ∈ [0,1] | X1 = x1), by composite Gauss–Legendre quadrature with
// panels no wider than σ1/2 (the integrand is smooth; 16 nodes per panel make the error
// negligible next to float64 rounding).
func fullMass2(mean []float64, a, b, d float64) float64 {
	s1 := math.Sqrt(a)
	slope := b / a                   // E[X2 | X1 = x] = μ2 + slope·(x − μ1)
	sc := math.Sqrt(d - b*b/a)       // conditional standard deviation of X2
	panels := int(math.Ceil(2 / s1)) // width ≤ σ1/2
	panels = max(16, min(panels, 4096))
	f := func(x float64) float64 {
		z := (x - mean[0]) / s1
		pdf := math.Exp(-0.5*z*z) / (s1 * math.Sqrt(2*math.Pi))
		mc := mean[1] + slope*(x-mean[0])
		return pdf * normMass((0-mc)/sc, (1-mc)/sc)
	}
	return integrate1D(f, 0, 1, panels, 16)
}

// Dim is the dimension of the mixture's points.
func (m *Mixture) Dim() int { return m.dim }

// Components returns a copy of the components, with weights normalised to sum to 1.
func (m *Mixture) Components() []Component {
	out := make([]Component, len(m.src))
	for k, c := range m.src {
		out[k] = Component{Weight: c.Weight, Mean: clone(c.Mean), Var: clone(c.Var), Cov: clone(c.Cov)}
	}
	return out
}

// Masses returns each component's truncation mass Z_k (its untruncated probability of
// [0,1]^d), in component order.
func (m *Mixture) Masses() []float64 {
	out := make([]float64, len(m.comps))
	for k, c := range m.comps {
		out[k] = c.mass
	}
	return out
}

// Sample draws n points from the mixture, row-major (len n·Dim), all in [0,1]^d.
//
// Algorithm (part of the determinism contract of the synthetic data): per point, one uniform
// (rng.Float64) picks the component by cumulative weight; then a diagonal component draws
// each coordinate as μ_j + σ_j·rng.Normal(), redrawing that coordinate until it lies in
// [0,1] (the coordinates of a truncated diagonal Gaussian are independent truncated
// normals); a full-covariance component draws μ + L·(rng.Normal(), rng.Normal()), L the
// Cholesky factor, redrawing the pair until it lies in [0,1]².
func (m *Mixture) Sample(rng *numeric.RNG, n int) []float64 {
	out := make([]float64, n*m.dim)
	for i := 0; i < n; i++ {
		c := &m.comps[m.pick(rng.Float64())]
		x := out[i*m.dim : (i+1)*m.dim]
		if c.full {
			for {
				z1, z2 := rng.Normal(), rng.Normal()
				x0 := c.mean[0] + c.l[0]*z1
				x1 := c.mean[1] + c.l[1]*z1 + c.l[2]*z2
				if x0 >= 0 && x0 <= 1 && x1 >= 0 && x1 <= 1 {
					x[0], x[1] = x0, x1
					break
				}
			}
			continue
		}
		for j := range x {
			for {
				v := c.mean[j] + c.sd[j]*rng.Normal()
				if v >= 0 && v <= 1 {
					x[j] = v
					break
				}
			}
		}
	}
	return out
}

// pick returns the component whose cumulative-weight interval holds u ∈ [0, 1).
func (m *Mixture) pick(u float64) int {
	for k, c := range m.cum {
		if u < c {
			return k
		}
	}
	return len(m.cum) - 1
}

// Density is the exact truncated-mixture density at u (len Dim); 0 outside [0,1]^d.
func (m *Mixture) Density(u []float64) float64 {
	if len(u) != m.dim {
		panic(fmt.Sprintf("synth: Density of a %d-dim point for a %d-dim mixture", len(u), m.dim))
	}
	for _, v := range u {
		if !(v >= 0 && v <= 1) {
			return 0
		}
	}
	var p float64
	for k := range m.comps {
		c := &m.comps[k]
		var q float64 // −½ Mahalanobis²
		if c.full {
			d0, d1 := u[0]-c.mean[0], u[1]-c.mean[1]
			q = -0.5 * (c.inv[0]*d0*d0 + 2*c.inv[1]*d0*d1 + c.inv[2]*d1*d1)
		} else {
			for j, v := range u {
				z := (v - c.mean[j]) / c.sd[j]
				q -= 0.5 * z * z
			}
		}
		p += c.w * math.Exp(c.logNorm+q)
	}
	return p
}

// RandomMixture draws the mixtures of the AAAI 2016 paper's Gram experiment, generalised to
// d dimensions: 5 equally weighted components, means uniform on [0,1]^d, diagonal standard
// deviations uniform on [0.05, 0.15] per coordinate. Draw order: for each component, its d
// mean coordinates, then its d standard deviations (rng.Float64 each).
func RandomMixture(rng *numeric.RNG, d int) *Mixture {
	const k = 5
	comps := make([]Component, k)
	for i := range comps {
		c := Component{Weight: 1, Mean: make([]float64, d), Var: make([]float64, d)}
		for j := range c.Mean {
			c.Mean[j] = rng.Float64()
		}
		for j := range c.Var {
			sd := 0.05 + 0.1*rng.Float64()
			c.Var[j] = sd * sd
		}
		comps[i] = c
	}
	m, err := NewMixture(d, comps)
	if err != nil {
		// Means in [0,1] keep every coordinate's mass ≥ ½: NewMixture cannot refuse these.
		panic("synth: RandomMixture: " + err.Error())
	}
	return m
}
