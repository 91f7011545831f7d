package embedding

import (
	"fmt"
	"math"

	"github.com/distfeat/distfeat/internal/numeric"
	"github.com/distfeat/distfeat/internal/parallel"
	"github.com/distfeat/distfeat/spec"
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

// PointMap is a compiled marginal-transfer per-point feature map (a `marginal_transfer`
// family of the spec): its random draws are made once and shared read-only. It is safe for
// concurrent use. An Embedder compiles one per marginal_transfer family of its spec
// (Embedder.PointMaps); NewPointMap compiles a family that is not in the spec (candidates
// of a search).
type PointMap struct {
	fam    spec.Family
	d      int       // point dimension
	dp     int       // length of Ψ (0 with pooling)
	setCol int       // index of Ψ's column in the embedder's output (-1 with pooling)
	half   int       // D/2
	wx     []float64 // ω_X,rj/σ_X at wx[r·d+j]
	wp     []float64 // ω_P,rj/σ_P at wp[r·dp+j]
	emit   *rff      // the sine/cosine stage only (no frequencies): scale √(2/D) and path
	path   numeric.Path
}

// compilePointMap draws the frequencies of family idx of a validated spec: for
// r = 0..D/2−1, for j = 0..dim−1, ω_X,rj = Normal()/σ_X from NewRNG(seed, name); for r, for
// j = 0..len(Ψ)−1, ω_P,rj = Normal()/σ_P from NewRNG(seed, name+"/set"), len(Ψ) the
// features of the set family. The set column is found later (resolve).
func compilePointMap(s *spec.Spec, idx int) *PointMap {
	f := s.Families[idx]
	m := &PointMap{fam: f, d: s.Dim, setCol: -1, half: f.Features / 2, path: numeric.BestPath()}
	m.emit = &rff{out: f.Features, scale: math.Sqrt(2 / float64(f.Features)), path: m.path}
	if !f.Pooling {
		for _, g := range s.Families {
			if g.Name == f.SetFamily {
				m.dp = g.Features // validation: an mmd family without the rbf stage
			}
		}
	}
	m.wx = make([]float64, m.half*m.d)
	rng := NewRNG(s.Seed, f.Name)
	for i := range m.wx {
		m.wx[i] = rng.Normal() / f.SigmaX
	}
	if m.dp > 0 {
		m.wp = make([]float64, m.half*m.dp)
		rng = NewRNG(s.Seed, f.Name+"/set")
		for i := range m.wp {
			m.wp[i] = rng.Normal() / f.SigmaP
		}
	}
	return m
}

// resolve finds the set family's column among the embedder's columns.
func (m *PointMap) resolve(cols []Column) {
	if m.fam.Pooling {
		return
	}
	for i, c := range cols {
		if c.Name == m.fam.SetFamily {
			m.setCol = i
			return
		}
	}
}

// NewPointMap compiles f, a marginal_transfer family, against e's spec as if it were
// appended to the spec's families (its set_family names one of them). Problems are the
// spec's *spec.SpecError, naming families[len(families)].
func NewPointMap(e *Embedder, f spec.Family) (*PointMap, error) {
	s := e.spec.Clone()
	s.Families = append(s.Families, f)
	if f.Kind != spec.KindMarginal {
		return nil, &spec.SpecError{Field: fmt.Sprintf("families[%d].kind", len(s.Families)-1), Msg: fmt.Sprintf("%q: want %q", f.Kind, spec.KindMarginal)}
	}
	if err := s.Validate(); err != nil {
		return nil, err
	}
	m := compilePointMap(s, len(s.Families)-1)
	m.resolve(e.cols)
	return m, nil
}

// pointFamily is a marginal_transfer family in the embedder: no window columns, a sketch
// that keeps nothing; its PointMap is the per-point output.
type pointFamily struct{ m *PointMap }

func compileMarginal(s *spec.Spec, idx int) (family, error) {
	return &pointFamily{m: compilePointMap(s, idx)}, nil
}

func (p *pointFamily) columns() []Column       { return nil }
func (p *pointFamily) newSketch() familySketch { return nopSketch{} }

// nopSketch is the window state of a family without window columns.
type nopSketch struct{}

func (nopSketch) add([]float64, int)          {}
func (nopSketch) merge(familySketch)          {}
func (nopSketch) finalize(int64, [][]float32) {}
func (nopSketch) reset()                      {}
func (nopSketch) sizeBytes() int              { return 0 }
func (nopSketch) addNanos() float64           { return 0 }

// Family returns the map's family.
func (m *PointMap) Family() spec.Family { return m.fam }

// Name is the family's name, the per-point output column.
func (m *PointMap) Name() string { return m.fam.Name }

// Len is D, the length of each point's feature vector.
func (m *PointMap) Len() int { return m.fam.Features }

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
	numeric.RFFDot(m.path, m.wp, m.dp, psi, dst)
	return dst
}

// Points writes the features of the n = len(u)/dim points u (normalised, row-major) of a
// set whose set part is a (from SetPart) into out (n·D values, point i at out[i·D:(i+1)·D]):
// θ_r = a_r + ω_X,r·u_i (the dot in rffDot's summation order, then one rounded addition),
// o[2r] = √(2/D)·sin θ_r and o[2r+1] = √(2/D)·cos θ_r rounded to float32, by the same
// deterministic sine and cosine as every random Fourier stage. The bits of each point's
// features depend only on the spec, a and the point.
func (m *PointMap) Points(a, u []float64, out []float32) {
	d, D := m.d, m.fam.Features
	if len(u)%d != 0 || len(a) < m.half || len(out) < len(u)/d*D {
		panic(fmt.Sprintf("embedding: PointMap.Points: %d values for dim %d, set part %d (want %d), out %d",
			len(u), d, len(a), m.half, len(out)))
	}
	// Blocks of points share the frequency rows (numeric.RFFDotBatch: the tile kernel, each
	// value bit-identical to RFFDot's).
	n, h := len(u)/d, m.half
	block := min(n, pointsBlock)
	theta := make([]float64, (numeric.RFFTilePadded(block)+numeric.RFFTileWindows)*h)
	for i0 := 0; i0 < n; i0 += block {
		nb := min(block, n-i0)
		numeric.RFFDotBatch(m.path, m.wx, d, h, u[i0*d:(i0+nb)*d], nb, theta, h)
		for i := 0; i < nb; i++ {
			th := theta[i*h : (i+1)*h]
			for r, t := range th {
				th[r] = float64(a[r] + t)
			}
			m.emit.emit(th, out[(i0+i)*D:(i0+i+1)*D])
		}
	}
}

// pointsBlock is the number of points whose θ Points computes at once.
const pointsBlock = 32

// PointsParallel is Points with the points spread over up to workers goroutines; the bits
// are those of Points.
func (m *PointMap) PointsParallel(a, u []float64, out []float32, workers int) {
	d, D := m.d, m.fam.Features
	n := len(u) / d
	if workers <= 1 || n < 2*pointsPerWorkerMin {
		m.Points(a, u, out)
		return
	}
	parallel.Share(min(workers, n/pointsPerWorkerMin), n, pointsShareChunk, func(_, lo, hi int) {
		m.Points(a, u[lo*d:hi*d], out[lo*D:hi*D])
	})
}

// pointsPerWorkerMin is the fewest points PointsParallel gives one goroutine (a few µs of
// work each at D = 1024, against ~1 µs to start a goroutine).
const pointsPerWorkerMin = 16

// pointsShareChunk is the number of points PointsParallel's goroutines take at a time: whole
// blocks of θ (pointsBlock), tens of µs of work at D = 1024, against the few ns of taking one.
const pointsShareChunk = 2 * pointsBlock
