package embedding

import (
	"fmt"
	"sync/atomic"
)

// Point retention, for the worker's per-point output (marginal_transfer families): a
// sketch keeps its window's normalised points, in the order they were added (merged
// sketches: s's points, then other's), so that the per-point features can be computed when
// the window closes, against the window's own features. The bytes held are bounded by a
// PointBudget shared by every sketch of the embedder: a window whose points do not fit
// drops all of them (Points then reports false) rather than emitting a part.

// PointBudget bounds the bytes of points that sketches retain, across every sketch that
// shares it. It is safe for concurrent use.
type PointBudget struct {
	limit   int64
	used    atomic.Int64
	dropped atomic.Int64
}

// NewPointBudget returns a budget of limit bytes (at least one point of 64 dimensions).
func NewPointBudget(limit int64) *PointBudget {
	return &PointBudget{limit: max(limit, 8*64)}
}

// Limit is the budget in bytes.
func (b *PointBudget) Limit() int64 { return b.limit }

// Used is the bytes of points retained now (the capacity of the sketches' buffers).
func (b *PointBudget) Used() int64 { return b.used.Load() }

// Dropped counts the windows whose points did not fit and were dropped.
func (b *PointBudget) Dropped() int64 { return b.dropped.Load() }

// reserve takes n bytes if they fit.
func (b *PointBudget) reserve(n int64) bool {
	for {
		u := b.used.Load()
		if u+n > b.limit {
			return false
		}
		if b.used.CompareAndSwap(u, u+n) {
			return true
		}
	}
}

func (b *PointBudget) release(n int64) { b.used.Add(-n) }

// WithPointRetention makes the embedder's sketches retain their windows' normalised points
// within budget (see Sketch.Points). Without a marginal_transfer family it has no effect.
func WithPointRetention(budget *PointBudget) Option {
	return func(e *Embedder) {
		if len(e.points) > 0 {
			e.retain = budget
		}
	}
}

// RetainsPoints reports whether the embedder's sketches retain their points
// (WithPointRetention, with a marginal_transfer family in the spec).
func (e *Embedder) RetainsPoints() bool { return e.retain != nil }

// retainPoints appends u to the sketch's retained points, growing the buffer within the
// budget, or drops the window's points when they do not fit.
func (s *Sketch) retainPoints(u []float64) {
	b := s.e.retain
	if b == nil || s.lost || len(u) == 0 {
		return
	}
	need := len(s.points) + len(u)
	if need > cap(s.points) {
		newCap := max(need, 2*cap(s.points), 256)
		if !b.reserve(int64(8 * (newCap - cap(s.points)))) {
			if newCap = need; !b.reserve(int64(8 * (newCap - cap(s.points)))) {
				s.dropPoints()
				return
			}
		}
		grown := make([]float64, len(s.points), newCap)
		copy(grown, s.points)
		s.points = grown
	}
	s.points = append(s.points, u...)
}

// dropPoints gives the retained points back to the budget and marks the window as having
// lost them.
func (s *Sketch) dropPoints() {
	if !s.lost {
		s.e.retain.dropped.Add(1)
	}
	s.releasePoints()
	s.lost = true
}

// releasePoints frees the retained points.
func (s *Sketch) releasePoints() {
	if s.e.retain != nil && cap(s.points) > 0 {
		s.e.retain.release(int64(8 * cap(s.points)))
	}
	s.points = nil
}

// Points returns the window's retained normalised points (row-major, in the order they
// were added; not to be modified) and true, or false when the embedder does not retain
// points (WithPointRetention) or this window's points did not fit the budget.
func (s *Sketch) Points() ([]float64, bool) {
	if s.e.retain == nil || s.lost {
		return nil, false
	}
	if int64(len(s.points)/s.e.dim) != s.n {
		panic(fmt.Sprintf("embedding: Sketch.Points: %d retained points for a window of %d", len(s.points)/s.e.dim, s.n))
	}
	return s.points, true
}
