// Package embedding turns sets of points into fixed-length feature vectors whose inner
// products approximate kernels between the underlying distributions (docs/math.md).
//
// A spec.Spec (spec.ParseSpec, spec.LoadSpec, spec.DefaultSpec) is compiled by New into an
// Embedder, which holds every family's random draws (made from the frozen RNG, so features
// are a pure function of the spec and the points). Raw points are mapped into the unit cube by
// Embedder.Normalize and accumulated in a Sketch: a fixed-size, mergeable, fixed-point
// per-window state whose Finalize gives one float32 vector per Column. Because the
// accumulators are integers, a window's features are bit-identical however its points
// were split across Add calls and merged sketches, on every machine.
//
// Families: mmd (mean embedding with random Fourier features, mmd.go), l2 (orthonormal
// cosine projection, l2.go) and hdd (homogeneous density distances, hdd.go); and
// marginal_transfer (marginal.go), which adds no window column but a per-point map
// (Embedder.PointMaps) from a window's points and features to per-point features. Each
// kind of the spec is compiled through the registry in kinds.go (docs/adding-a-kind.md).
// The numeric kernels the families run on are in internal/numeric.
package embedding

import (
	"errors"
	"fmt"
	"math"
	"sync"

	"github.com/distfeat/distfeat/spec"
)

// Column is one output vector: a family's features, or an hdd family's `<name>_coef`
// (spec.Column, which the wire formats use without importing this package).
type Column = spec.Column

// Errors returned by the embedding package; match them with errors.Is.
var (
	// ErrOutOfBounds reports a point outside the spec's bounds when out_of_bounds is "reject".
	ErrOutOfBounds = errors.New("point out of bounds")
	// ErrNonFinite reports a NaN or infinite coordinate.
	ErrNonFinite = errors.New("non-finite coordinate")
	// ErrIncompatible reports a merge of sketches from embedders of different specs.
	ErrIncompatible = errors.New("incompatible sketches")
)

// Embedder is a compiled spec: every family's random draws are made once, in New, and are
// shared read-only by all sketches. It is safe for concurrent use; its sketches are not.
type Embedder struct {
	spec    *spec.Spec
	id      string
	dim     int
	lo      []float64
	width   []float64 // hi − lo
	reject  bool
	fams    []family
	names   []string     // family names, parallel to fams
	colsOf  [][2]int     // column range of each family
	cols    []Column     // all columns in output order
	colLens []int        // cols[i].Len
	points  []*PointMap  // the marginal_transfer families' per-point maps, in spec order
	retain  *PointBudget // WithPointRetention: sketches keep their points within it (nil: not)

	addWorkers int       // WithAddWorkers: goroutines a large Sketch.Add may use (≤ 1: none)
	helpers    sync.Pool // *Sketch: empty sketches the parallel Add accumulates into
}

// Option configures an Embedder (New).
type Option func(*Embedder)

// WithAddWorkers lets Sketch.Add spread a call with enough points (see addShared) over up
// to n goroutines: each accumulates a contiguous share of the points into an empty sketch
// of its own, and the shares are merged in. The
// accumulators are fixed-point integers, so the result is bit for bit that of one goroutine.
// The worker uses it so that a worker owning fewer busy partitions than it has cores uses
// them all; embed, which runs sets in parallel already, does not.
func WithAddWorkers(n int) Option {
	return func(e *Embedder) { e.addWorkers = n }
}

// New validates spec and compiles it, configured by opts. The spec is copied: later changes
// to it have no effect.
func New(sp *spec.Spec, opts ...Option) (*Embedder, error) {
	if sp == nil {
		return nil, &spec.SpecError{Msg: "nil spec"}
	}
	s := sp.Clone()
	if err := s.Validate(); err != nil {
		return nil, err
	}
	e := &Embedder{
		spec:   s,
		id:     s.ID(),
		dim:    s.Dim,
		lo:     append([]float64(nil), s.Bounds.Lo...),
		width:  make([]float64, s.Dim),
		reject: s.OutOfBounds == "reject",
	}
	for j := range e.width {
		e.width[j] = s.Bounds.Hi[j] - s.Bounds.Lo[j]
	}
	for i := range s.Families {
		f, err := compileFamily(s, i)
		if err != nil {
			return nil, err
		}
		first := len(e.cols)
		e.cols = append(e.cols, f.columns()...)
		e.fams = append(e.fams, f)
		e.names = append(e.names, s.Families[i].Name)
		e.colsOf = append(e.colsOf, [2]int{first, len(e.cols)})
	}
	for _, c := range e.cols {
		e.colLens = append(e.colLens, c.Len)
	}
	for _, f := range e.fams {
		if p, ok := f.(*pointFamily); ok {
			p.m.resolve(e.cols)
			e.points = append(e.points, p.m)
		}
	}
	for _, o := range opts {
		o(e)
	}
	return e, nil
}

// PointMaps lists the per-point maps of the spec's marginal_transfer families, in spec
// order (nil without such families). The slice is a copy; the maps are shared.
func (e *Embedder) PointMaps() []*PointMap { return append([]*PointMap(nil), e.points...) }

// Spec returns a copy of the resolved spec the embedder was compiled from.
func (e *Embedder) Spec() *spec.Spec { return e.spec.Clone() }

// Dim is the dimension of the points.
func (e *Embedder) Dim() int { return e.dim }

// Columns lists the output vectors in order: each family's vector, and an hdd family's
// "<name>_coef" right after it when coefficients is true. The slice is a copy.
func (e *Embedder) Columns() []Column { return append([]Column(nil), e.cols...) }

// Normalize maps raw points x (n·dim values, row-major) into the unit cube:
// dst[i] = (x[i] − lo_j)/(hi_j − lo_j). dst and x may be the same slice.
//
// A NaN or infinite coordinate returns an error wrapping ErrNonFinite. A point outside the
// bounds is clamped to [0, 1] and counted in clipped (points, not coordinates) when
// out_of_bounds is "clip"; with "reject" Normalize returns an error wrapping ErrOutOfBounds.
// Both errors name the point's index; dst is then only partly written. Normalize panics if
// len(x) is not a multiple of Dim or dst is shorter than x.
func (e *Embedder) Normalize(dst, x []float64) (clipped int, err error) {
	d := e.dim
	if len(x)%d != 0 {
		panic(fmt.Sprintf("embedding: Normalize: %d values are not whole points of dim %d", len(x), d))
	}
	if len(dst) < len(x) {
		panic(fmt.Sprintf("embedding: Normalize: dst has %d values, need %d", len(dst), len(x)))
	}
	dst = dst[:len(x)]
	for i := 0; i < len(x); i += d {
		out := false
		for j := 0; j < d; j++ {
			v := x[i+j]
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return clipped, fmt.Errorf("point %d, coordinate %d: %v: %w", i/d, j, v, ErrNonFinite)
			}
			u := (v - e.lo[j]) / e.width[j]
			if u < 0 || u > 1 {
				if e.reject {
					return clipped, fmt.Errorf("point %d, coordinate %d: %v outside [%v, %v]: %w",
						i/d, j, v, e.lo[j], e.lo[j]+e.width[j], ErrOutOfBounds)
				}
				out = true
				u = min(max(u, 0), 1)
			}
			dst[i+j] = u
		}
		if out {
			clipped++
		}
	}
	return clipped, nil
}

// NewSketch returns an empty sketch for this embedder's windows.
func (e *Embedder) NewSketch() *Sketch {
	s := &Sketch{e: e, parts: make([]familySketch, len(e.fams))}
	for i, f := range e.fams {
		s.parts[i] = f.newSketch()
	}
	return s
}

// Embed is the one-shot path: the features of the window holding the normalised points u
// (row-major, len(u) a multiple of Dim), one vector per Column.
func (e *Embedder) Embed(u []float64) [][]float32 {
	s := e.NewSketch()
	s.Add(u)
	return s.Finalize(nil)
}
