package twosample

import (
	"errors"
	"fmt"
	"math"
	"slices"
)

// NormalSource draws standard normal values; distfeat passes its frozen RNG.
type NormalSource interface {
	Normal() float64
}

// Sincos returns sin θ and cos θ; distfeat passes its portable, bit-identical kernel.
type Sincos func(theta float64) (sin, cos float64)

// FixedSincos is an optional bulk kernel for the random Fourier features' window sums
// (WithFixedSincos): distfeat passes its SIMD kernel. It must give, for every argument it
// accepts, exactly the integers of the map's Sincos followed by the package's fixed-point
// rounding (ToFixed(t) = round(t·2³²), ties to even): the window's sums are then the same
// bits whichever computes them.
type FixedSincos interface {
	// Lanes is the padding unit of a row of arguments: AddFixed's rows hold a multiple of
	// Lanes arguments.
	Lanes() int
	// MaxArg bounds the arguments AddFixed reproduces bit for bit: |θ| ≤ MaxArg. Points
	// whose arguments could exceed it are computed with the map's Sincos instead.
	MaxArg() float64
	// AddFixed adds ToFixed(sin θ_r) to acc[r] and ToFixed(cos θ_r) to acc[len(theta)+r]
	// for every argument θ_r of theta (len(acc) = 2·len(theta)).
	AddFixed(theta []float64, acc []int64)
}

// Option configures a FeatureMap.
type Option func(*FeatureMap)

// WithFixedSincos makes the map's windows sum their random Fourier features with k
// (the results are unchanged: see FixedSincos). Points outside [0,1]^d, and every point
// when the frequencies could give arguments beyond k.MaxArg(), use the map's Sincos.
func WithFixedSincos(k FixedSincos) Option {
	return func(fm *FeatureMap) { fm.fixed = k }
}

// ErrConfig is wrapped by every configuration error.
var ErrConfig = errors.New("twosample: invalid configuration")

// FeatureMap maps points of [0,1]^d to the D bounded features of the test (package doc):
// the 2d centred moment features then, band by band, F (cos, sin) pairs of random Fourier
// features. It is read-only after construction and safe for concurrent use.
type FeatureMap struct {
	dim        int
	center     []float64 // c, the moment block's centre
	freqs      int       // F, frequencies per band
	bandwidths []float64 // σ_k
	omega      []float64 // K·F·d, row-major: frequency f of band k at (k·F+f)·d
	sincos     Sincos
	// The bulk path (WithFixedSincos); fixed is nil without it, or when the frequencies
	// could give arguments beyond fixed.MaxArg() for points of [0,1]^d.
	fixed FixedSincos
	hp    int // K·F rounded up to fixed.Lanes()
}

// NewFeatureMap draws F frequencies per bandwidth from src (in band order, each frequency's
// d coordinates N(0, σ_k⁻²) in turn) for points of dimension dim = len(center). center
// (in [0,1]^d, e.g. Center of the reference) centres the moment block: u − c and (u − c)²
// are far less collinear than u and u² when the points occupy a small part of the cube.
func NewFeatureMap(center, bandwidths []float64, freqs int, src NormalSource, sc Sincos, opts ...Option) (*FeatureMap, error) {
	dim := len(center)
	switch {
	case dim < 1:
		return nil, fmt.Errorf("dimension %d: %w", dim, ErrConfig)
	case len(bandwidths) == 0:
		return nil, fmt.Errorf("no bandwidths: %w", ErrConfig)
	case freqs < 1:
		return nil, fmt.Errorf("frequencies %d: need at least 1: %w", freqs, ErrConfig)
	case src == nil || sc == nil:
		return nil, fmt.Errorf("a normal source and a sincos function are required: %w", ErrConfig)
	}
	for j, c := range center {
		if !(c >= 0 && c <= 1) {
			return nil, fmt.Errorf("centre coordinate %d is %v: need a value in [0, 1]: %w", j, c, ErrConfig)
		}
	}
	for i, s := range bandwidths {
		if !(s > 0) || math.IsInf(s, 0) {
			return nil, fmt.Errorf("bandwidth %d is %v: need a positive finite value: %w", i, s, ErrConfig)
		}
	}
	fm := &FeatureMap{dim: dim, center: slices.Clone(center), freqs: freqs, bandwidths: slices.Clone(bandwidths), sincos: sc}
	fm.omega = make([]float64, len(bandwidths)*freqs*dim)
	for k, s := range bandwidths {
		for i := range freqs * dim {
			fm.omega[k*freqs*dim+i] = src.Normal() / s
		}
	}
	for _, o := range opts {
		o(fm)
	}
	if fm.fixed != nil {
		fm.setupFixed()
	}
	return fm, nil
}

// setupFixed sets the bulk path's row length, or disables the path when an argument
// θ = Σ_j float64(ω_j·u_j) of a point of [0,1]^d could exceed fixed.MaxArg(). The bound
// is Σ_j |ω_j| summed in the same order: |float64(ω_j·u_j)| ≤ |ω_j| for |u_j| ≤ 1 and
// rounding is monotone, so each partial sum of θ is at most the bound's in magnitude.
func (fm *FeatureMap) setupFixed() {
	d, nf := fm.dim, len(fm.omega)/fm.dim
	maxTheta := 0.0
	for f := range nf {
		b := 0.0
		for _, w := range fm.omega[f*d : (f+1)*d] {
			b += math.Abs(w)
		}
		maxTheta = max(maxTheta, b)
	}
	lanes := fm.fixed.Lanes()
	if !(maxTheta <= fm.fixed.MaxArg()) || lanes < 1 {
		fm.fixed = nil
		return
	}
	fm.hp = (nf + lanes - 1) / lanes * lanes
}

// Dim is the points' dimension d.
func (fm *FeatureMap) Dim() int { return fm.dim }

// Bands is the number of bandwidths K.
func (fm *FeatureMap) Bands() int { return len(fm.bandwidths) }

// Bandwidths returns a copy of the bandwidths σ_k.
func (fm *FeatureMap) Bandwidths() []float64 { return slices.Clone(fm.bandwidths) }

// Frequencies is the number of frequencies per band F.
func (fm *FeatureMap) Frequencies() int { return fm.freqs }

// Features is D = 2d + 2·K·F.
func (fm *FeatureMap) Features() int { return 2*fm.dim + 2*len(fm.bandwidths)*fm.freqs }

// moments is the size of the moment block, 2d.
func (fm *FeatureMap) moments() int { return 2 * fm.dim }

// Eval writes the features of the point u (len d) to out (len D). Every value is in
// [−1, 1] for u ∈ [0,1]^d.
func (fm *FeatureMap) Eval(u, out []float64) {
	d := fm.dim
	for j, v := range u[:d] {
		x := v - fm.center[j]
		out[j] = x
		out[d+j] = float64(x * x)
	}
	o := 2 * d
	for f := range len(fm.omega) / d {
		w := fm.omega[f*d : (f+1)*d]
		t := 0.0
		for j, v := range u[:d] {
			t += float64(w[j] * v) // rounded: no fused multiply-add (package doc)
		}
		s, c := fm.sincos(t)
		out[o+2*f], out[o+2*f+1] = c, s
	}
}

// thetas writes the arguments θ_f = Σ_j float64(ω_fj·u_j) of the point u to th[:K·F],
// each summed from +0 in increasing j with every product rounded, as Eval computes them
// (th's padding is left alone). Four frequencies per iteration: independent chains the
// processor overlaps (distfeat's two_sample Add at d = 2 measured ~180 ns per point with
// one frequency per iteration, ~155 ns with four).
func (fm *FeatureMap) thetas(u, th []float64) {
	d := fm.dim
	th = th[:len(fm.omega)/d]
	om := fm.omega[:d*len(th)]
	u = u[:d]
	f := 0
	switch d {
	case 1:
		u0 := u[0]
		for ; f+4 <= len(th); f += 4 {
			w, o := om[f:f+4:f+4], th[f:f+4:f+4]
			t0, t1, t2, t3 := 0.0, 0.0, 0.0, 0.0
			t0 += float64(w[0] * u0) // rounded: no fused multiply-add (package doc)
			t1 += float64(w[1] * u0)
			t2 += float64(w[2] * u0)
			t3 += float64(w[3] * u0)
			o[0], o[1], o[2], o[3] = t0, t1, t2, t3
		}
	case 2:
		u0, u1 := u[0], u[1]
		for ; f+4 <= len(th); f += 4 {
			w, o := om[2*f:2*f+8:2*f+8], th[f:f+4:f+4]
			t0, t1, t2, t3 := 0.0, 0.0, 0.0, 0.0
			t0 += float64(w[0] * u0)
			t1 += float64(w[2] * u0)
			t2 += float64(w[4] * u0)
			t3 += float64(w[6] * u0)
			t0 += float64(w[1] * u1)
			t1 += float64(w[3] * u1)
			t2 += float64(w[5] * u1)
			t3 += float64(w[7] * u1)
			o[0], o[1], o[2], o[3] = t0, t1, t2, t3
		}
	default:
		for ; f+4 <= len(th); f += 4 {
			w := om[f*d : (f+4)*d : (f+4)*d]
			w0, w1, w2, w3 := w[:d], w[d:2*d], w[2*d:3*d], w[3*d:4*d]
			t0, t1, t2, t3 := 0.0, 0.0, 0.0, 0.0
			for j, v := range u {
				t0 += float64(w0[j] * v)
				t1 += float64(w1[j] * v)
				t2 += float64(w2[j] * v)
				t3 += float64(w3[j] * v)
			}
			o := th[f : f+4 : f+4]
			o[0], o[1], o[2], o[3] = t0, t1, t2, t3
		}
	}
	for ; f < len(th); f++ { // the last K·F mod 4 frequencies
		w := om[f*d : f*d+d : f*d+d]
		t := 0.0
		for j, v := range u {
			t += float64(w[j] * v)
		}
		th[f] = t
	}
}

// Center is the mean of the first maxPoints points of the sample (row-major, dimension d),
// summed in order.
func Center(points []float64, d, maxPoints int) []float64 {
	n := min(len(points)/d, maxPoints)
	c := make([]float64, d)
	for i := 0; i < n; i++ {
		for j := range c {
			c[j] += points[i*d+j]
		}
	}
	for j := range c {
		c[j] /= float64(max(n, 1))
	}
	return c
}

// MedianBandwidth is the median heuristic: the median Euclidean distance between distinct
// points of the sample (row-major, dimension d), at most the first maxPoints of them (the
// distances are O(maxPoints²)). It returns an error when fewer than two points or all
// points coincide.
func MedianBandwidth(points []float64, d, maxPoints int) (float64, error) {
	n := min(len(points)/d, maxPoints)
	if n < 2 {
		return 0, fmt.Errorf("median bandwidth of %d points: need at least 2: %w", n, ErrConfig)
	}
	ds := make([]float64, 0, n*(n-1)/2)
	for i := 0; i < n; i++ {
		for j := i + 1; j < n; j++ {
			s := 0.0
			for k := 0; k < d; k++ {
				t := points[i*d+k] - points[j*d+k]
				s += float64(t * t)
			}
			ds = append(ds, s)
		}
	}
	slices.Sort(ds)
	med := math.Sqrt(ds[(len(ds)-1)/2])
	if !(med > 0) {
		return 0, fmt.Errorf("median bandwidth: more than half the pairs of the first %d points coincide: %w", n, ErrConfig)
	}
	return med, nil
}

// DyadicBandwidths is the default collection: K bandwidths σ·2⁻ᵏ, k = 0…K−1, from the median
// heuristic σ down to σ/2^(K−1) (1/16 of it for K = 5, the scale of the blobs problem's
// clusters, whose median distance is ten times their width).
func DyadicBandwidths(sigma float64, k int) []float64 {
	out := make([]float64, k)
	for i := range out {
		out[i] = math.Ldexp(sigma, -i)
	}
	return out
}
