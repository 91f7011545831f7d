package embedding

import (
	"fmt"
	"math"
)

// Marginal transfer (Blanchard, Deshmukh, Dogan, Lee & Scott, "Domain Generalization by
// Marginal Transfer Learning", JMLR 2021, §6.2): per-point features conditioned on the
// distribution of the point's set.
//
// The kernel on (set, point) pairs is the product
//
//	k((P, x), (P′, x′)) = exp(−‖Ψ(P) − Ψ(P′)‖²/2σ_P²) · exp(−‖u − u′‖²/2σ_X²),
//
// Ψ(P) the set's mean embedding (the window's output of an `mmd` family, as float32) and u
// the point normalised to the unit cube like every other family's input. The product of two
// Gaussians is one Gaussian on the concatenation [Ψ/σ_P, u/σ_X], so one random Fourier map
// of that concatenation approximates it:
//
//	z(P, x) = √(2/D)·[sin θ_r, cos θ_r]_r,  θ_r = ω_P,r·Ψ(P)/σ_P + ω_X,r·u/σ_X,
//
// (ω_P,r, ω_X,r) ~ N(0, I). The set's part a_r = ω_P,r·Ψ/σ_P is computed once per window
// (PointMap.SetPart); each point then costs D/2 dot products of length dim and D/2 sines and
// cosines (PointMap.Points).
//
// Pooling (σ_P = ∞, the constant set kernel) is `pooling: true`: a_r = 0, and z is the plain
// random Fourier feature of the point, the same for every set. Because ω_X is drawn from its
// own stream, a pooled map and a marginal-transfer map of the same name and σ_X share their
// ω_X exactly: pooling is the σ_P → ∞ limit of the same features.

// PointSpec configures a marginal-transfer per-point feature map (see NewPointMap).
type PointSpec struct {
	// Name is the output column of the per-point features, [a-z0-9_]+, and the RNG stream
	// of the draws: ω_X from stream Name, ω_P from stream Name+"/set".
	Name string `json:"name"`
	// SetFamily names the `mmd` family (without the rbf stage) whose window features are
	// Ψ(P). Not allowed with Pooling.
	SetFamily string `json:"set_family,omitempty"`
	// SigmaP is the set kernel's bandwidth, in the units of Ψ (‖Ψ‖ ≤ 1). Not allowed with
	// Pooling.
	SigmaP float64 `json:"sigma_p,omitempty"`
	// SigmaX is the point kernel's bandwidth in normalised units (like mmd's bandwidth).
	SigmaX float64 `json:"sigma_x"`
	// Features is D, the length of each point's feature vector (even).
	Features int `json:"features"`
	// Pooling selects the constant set kernel (σ_P = ∞): features of the point alone.
	Pooling bool `json:"pooling,omitempty"`
}

// PointMap is a compiled marginal-transfer per-point feature map: its random draws are made
// once, in NewPointMap, and shared read-only. It is safe for concurrent use.
type PointMap struct {
	spec   PointSpec
	d      int       // point dimension
	dp     int       // length of Ψ (0 with pooling)
	setCol int       // index of Ψ's column in the embedder's output (-1 with pooling)
	half   int       // D/2
	wx     []float64 // ω_X,rj/σ_X at wx[r·d+j]
	wp     []float64 // ω_P,rj/σ_P at wp[r·dp+j]
	emit   *rff      // the sine/cosine stage only (no frequencies): scale √(2/D) and path
	path   dotPath
}

// NewPointMap compiles ps against the embedder whose window features supply Ψ(P). The draws
// use the embedder's spec seed: for r = 0..D/2−1, for j = 0..dim−1, ω_X,rj = Normal()/σ_X
// from NewRNG(seed, Name); for r, for j = 0..len(Ψ)−1, ω_P,rj = Normal()/σ_P from
// NewRNG(seed, Name+"/set"). Problems are *SpecError naming the field.
func NewPointMap(e *Embedder, ps PointSpec) (*PointMap, error) {
	bad := func(field, format string, args ...any) error {
		return &SpecError{Field: field, Msg: fmt.Sprintf(format, args...)}
	}
	if ps.Name == "" || len(ps.Name) > maxSpecFamilyNameLen {
		return nil, bad("name", "required: 1 to %d characters of [a-z0-9_]", maxSpecFamilyNameLen)
	}
	for _, c := range ps.Name {
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_') {
			return nil, bad("name", "%q: only [a-z0-9_]", ps.Name)
		}
	}
	if ps.Features < 2 || ps.Features%2 != 0 || ps.Features > maxSpecFeatures {
		return nil, bad("features", "%d: want an even number in [2, %d]", ps.Features, maxSpecFeatures)
	}
	if !(ps.SigmaX > 0) || math.IsInf(ps.SigmaX, 0) {
		return nil, bad("sigma_x", "%v: want a finite number > 0", ps.SigmaX)
	}
	m := &PointMap{spec: ps, d: e.dim, setCol: -1, half: ps.Features / 2, path: dotBestPath()}
	m.emit = &rff{out: ps.Features, scale: math.Sqrt(2 / float64(ps.Features)), path: m.path}
	if ps.Pooling {
		if ps.SetFamily != "" {
			return nil, bad("set_family", "not allowed with pooling: true (pooling has no set part)")
		}
		if ps.SigmaP != 0 {
			return nil, bad("sigma_p", "not allowed with pooling: true (pooling is sigma_p = ∞)")
		}
	} else {
		if !(ps.SigmaP > 0) || math.IsInf(ps.SigmaP, 0) {
			return nil, bad("sigma_p", "%v: want a finite number > 0 (or pooling: true for the constant set kernel)", ps.SigmaP)
		}
		if err := m.findSetFamily(e); err != nil {
			return nil, err
		}
	}
	if (m.half*m.d) > maxSpecStageWeights || (m.half*m.dp) > maxSpecStageWeights {
		return nil, bad("features", "%d: the frequency matrices would exceed %d weights", ps.Features, maxSpecStageWeights)
	}
	m.wx = make([]float64, m.half*m.d)
	rng := NewRNG(e.spec.Seed, ps.Name)
	for i := range m.wx {
		m.wx[i] = rng.Normal() / ps.SigmaX
	}
	if m.dp > 0 {
		m.wp = make([]float64, m.half*m.dp)
		rng = NewRNG(e.spec.Seed, ps.Name+"/set")
		for i := range m.wp {
			m.wp[i] = rng.Normal() / ps.SigmaP
		}
	}
	return m, nil
}

// findSetFamily locates the column of the set family (an mmd family without its rbf stage).
func (m *PointMap) findSetFamily(e *Embedder) error {
	name := m.spec.SetFamily
	for i, f := range e.spec.Families {
		if f.Name != name {
			continue
		}
		if f.Kind != kindMMD || f.RBFFeatures > 0 {
			return &SpecError{Field: "set_family", Msg: fmt.Sprintf("%q is a %s family%s: Ψ(P) must be the mean embedding of an mmd family without rbf_sigma/rbf_features",
				name, f.Kind, map[bool]string{true: " with the rbf stage"}[f.RBFFeatures > 0])}
		}
		m.setCol = e.colsOf[i][0]
		m.dp = e.cols[m.setCol].Len
		return nil
	}
	return &SpecError{Field: "set_family", Msg: fmt.Sprintf("%q: no such family in the spec (want the name of an mmd family)", name)}
}

// Spec returns the map's configuration.
func (m *PointMap) Spec() PointSpec { return m.spec }

// Len is D, the length of each point's feature vector.
func (m *PointMap) Len() int { return m.spec.Features }

// SetLen is the length of the set part SetPart returns: D/2.
func (m *PointMap) SetLen() int { return m.half }

// SetPart computes the set's part a_r = ω_P,r·Ψ/σ_P, r < D/2, from a window's feature
// vectors (what Sketch.Finalize returns for the embedder NewPointMap was given: Ψ is the set
// family's column, read as float64). It writes dst (len ≥ D/2, allocated when nil) and
// returns dst[:D/2]. With pooling the set part is zero. The dot products use rffDot's fixed
// summation order, so a_r has the same bits on every path and machine.
func (m *PointMap) SetPart(window [][]float32, dst []float64) []float64 {
	if cap(dst) < m.half {
		dst = make([]float64, m.half)
	}
	dst = dst[:m.half]
	if m.setCol < 0 {
		clear(dst)
		return dst
	}
	src := window[m.setCol]
	if len(src) != m.dp {
		panic(fmt.Sprintf("embedding: PointMap.SetPart: the set column has %d values, want %d", len(src), m.dp))
	}
	psi := make([]float64, m.dp)
	for j, v := range src {
		psi[j] = float64(v)
	}
	rffDot(m.path, m.wp, m.dp, psi, dst)
	return dst
}

// Points writes the features of the n = len(u)/dim points u (normalised, row-major) of a
// set whose set part is a (from SetPart) into out (n·D values, point i at out[i·D:(i+1)·D]):
// θ_r = a_r + ω_X,r·u_i (the dot in rffDot's summation order, then one rounded addition),
// o[2r] = √(2/D)·sin θ_r and o[2r+1] = √(2/D)·cos θ_r rounded to float32, by the same
// deterministic sine and cosine as every random Fourier stage. The bits of each point's
// features depend only on the spec, a and the point.
func (m *PointMap) Points(a, u []float64, out []float32) {
	d, D := m.d, m.spec.Features
	if len(u)%d != 0 || len(a) < m.half || len(out) < len(u)/d*D {
		panic(fmt.Sprintf("embedding: PointMap.Points: %d values for dim %d, set part %d (want %d), out %d",
			len(u), d, len(a), m.half, len(out)))
	}
	theta := make([]float64, m.half)
	for i := 0; i < len(u)/d; i++ {
		rffDot(m.path, m.wx, d, u[i*d:(i+1)*d], theta)
		for r, t := range theta {
			theta[r] = float64(a[r] + t)
		}
		m.emit.emit(theta, out[i*D:(i+1)*D])
	}
}

// PointsParallel is Points with the points spread over up to workers goroutines; the bits
// are those of Points.
func (m *PointMap) PointsParallel(a, u []float64, out []float32, workers int) {
	d, D := m.d, m.spec.Features
	n := len(u) / d
	if workers <= 1 || n < 2*pointsPerWorkerMin {
		m.Points(a, u, out)
		return
	}
	parallelRanges(min(workers, n/pointsPerWorkerMin), n, func(_, lo, hi int) {
		m.Points(a, u[lo*d:hi*d], out[lo*D:hi*D])
	})
}

// pointsPerWorkerMin is the fewest points PointsParallel gives one goroutine (a few µs of
// work each at D = 1024, against ~1 µs to start a goroutine).
const pointsPerWorkerMin = 16
