package embedding

import (
	"fmt"
	"time"
)

// Sketch is one window's state: a fixed-size, mergeable accumulator per family plus the
// point count (DESIGN §3.4). Its memory does not depend on how many points it holds.
// Accumulators are fixed-point integers, so any split of a window's points across Add
// calls and merged sketches finalises to the same bits. A Sketch is not safe for
// concurrent use.
type Sketch struct {
	e     *Embedder
	n     int64
	parts []familySketch
}

// FinalizeHook observes the time each family took to finalise (e.g. for a histogram).
type FinalizeHook func(family string, elapsed time.Duration)

// Add accumulates normalised points u (row-major, u ∈ [0,1]^dim as produced by
// Embedder.Normalize; len(u) a multiple of Dim). It does not allocate. It panics if len(u)
// is not whole points or if the window would exceed MaxWindowPoints.
func (s *Sketch) Add(u []float64) {
	d := s.e.dim
	if len(u)%d != 0 {
		panic(fmt.Sprintf("embedding: Sketch.Add: %d values are not whole points of dim %d", len(u), d))
	}
	k := int64(len(u) / d)
	if k == 0 {
		return
	}
	if s.n+k > MaxWindowPoints {
		panic(fmt.Sprintf("embedding: Sketch.Add: a window may hold at most %d points", int64(MaxWindowPoints)))
	}
	for _, p := range s.parts {
		p.add(u, d)
	}
	s.n += k
}

// Merge adds other's points to s (other is unchanged). Sketches merge when their embedders
// were compiled from the same spec (same spec_id); otherwise Merge returns an error
// wrapping ErrIncompatible and s is unchanged.
func (s *Sketch) Merge(other *Sketch) error {
	if other == nil {
		return fmt.Errorf("merge a nil sketch: %w", ErrIncompatible)
	}
	if other.e != s.e && other.e.id != s.e.id {
		return fmt.Errorf("merge a sketch of spec %s into one of spec %s: %w", other.e.id, s.e.id, ErrIncompatible)
	}
	if s.n+other.n > MaxWindowPoints {
		return fmt.Errorf("merged window would hold %d points, more than %d", s.n+other.n, int64(MaxWindowPoints))
	}
	for i, p := range s.parts {
		p.merge(other.parts[i])
	}
	s.n += other.n
	return nil
}

// Count is the number of points in the sketch.
func (s *Sketch) Count() int64 { return s.n }

// Reset empties the sketch for reuse by another window.
func (s *Sketch) Reset() {
	s.n = 0
	for _, p := range s.parts {
		p.reset()
	}
}

// SizeBytes is the sketch's memory footprint (fixed for a given spec).
func (s *Sketch) SizeBytes() int {
	size := 64 + 16*len(s.parts)
	for _, p := range s.parts {
		size += p.sizeBytes()
	}
	return size
}

// Finalize computes the window's feature vectors, one freshly allocated slice per Column
// (in Embedder.Columns order). It does not change the sketch. hook, if not nil, is called
// once per family with the time its finalisation took. An empty sketch gives zero vectors
// for mmd and l2 families (hdd documents its own convention).
func (s *Sketch) Finalize(hook FinalizeHook) [][]float32 {
	e := s.e
	total := 0
	for _, l := range e.colLens {
		total += l
	}
	backing := make([]float32, total)
	out := make([][]float32, len(e.colLens))
	for i, l := range e.colLens {
		out[i], backing = backing[:l:l], backing[l:]
	}
	for i, p := range s.parts {
		start := time.Now()
		r := e.colsOf[i]
		p.finalize(s.n, out[r[0]:r[1]])
		if hook != nil {
			hook(e.names[i], time.Since(start))
		}
	}
	return out
}
