package processor

import (
	"github.com/distfeat/distfeat/embedding"
	"github.com/distfeat/distfeat/internal/parallel"
)

// windowSketch is a window's sketch as the Processor's window manager holds it: an
// embedding.Sketch whose Add, during ProcessPrepared, only notes the points (the prepared
// records own them until the call returns). The noted points are added at the end of the
// call, before anything reads the sketches, the sketches of different windows on different
// goroutines (deferredAdds.run); a Merge adds them first. The embedding's accumulators are
// fixed-point integers, so when and on which goroutine points are added never changes a bit,
// while the window bookkeeping — which window a point goes to, what closes when — stays on
// the Processor's goroutine in record order.
type windowSketch struct {
	s       *embedding.Sketch
	adds    *deferredAdds
	pending [][]float64 // noted points, in order
	listed  bool        // in adds.dirty
}

// deferredAdds is the Processor's list of sketches with noted points.
type deferredAdds struct {
	on      bool // Add notes points (during ProcessPrepared) instead of adding them
	dirty   []*windowSketch
	points  int // noted values (points × dim), for the decision to share the work
	workers int // goroutines run may use (Config.AddWorkers)
	minWork int // the least noted values run shares among goroutines (parallelAddMinValues)
	dim     int // point dimension
}

// parallelAddMinValues is the least noted work (values, i.e. points × dim) that run shares
// among goroutines: below it, waking another core costs more than it saves.
const parallelAddMinValues = 2048

// Add adds (or, during ProcessPrepared, notes) normalised points.
func (w *windowSketch) Add(u []float64) {
	if !w.adds.on || len(u) == 0 {
		w.s.Add(u)
		return
	}
	if !w.listed {
		w.listed = true
		w.adds.dirty = append(w.adds.dirty, w)
	}
	w.pending = append(w.pending, u)
	w.adds.points += len(u)
}

// flush adds the noted points.
func (w *windowSketch) flush() {
	for _, u := range w.pending {
		w.s.Add(u)
	}
	clear(w.pending)
	w.pending = w.pending[:0]
}

// Merge adds other's points, noted ones included, to w.
func (w *windowSketch) Merge(other *windowSketch) error {
	w.flush()
	other.flush()
	return w.s.Merge(other.s)
}

// Count is the number of points added, noted ones included.
func (w *windowSketch) Count() int64 {
	n := w.s.Count()
	for _, u := range w.pending {
		n += int64(len(u) / w.adds.dim)
	}
	return n
}

// Reset empties the sketch, dropping noted points (it may stay listed in adds.dirty: run
// then finds nothing to add).
func (w *windowSketch) Reset() {
	clear(w.pending)
	w.pending = w.pending[:0]
	w.s.Reset()
}

// SizeBytes is the sketch's memory.
func (w *windowSketch) SizeBytes() int { return w.s.SizeBytes() }

// run adds every noted point, sharing the sketches among up to workers goroutines when
// there is enough work, and stops noting.
func (a *deferredAdds) run() {
	a.on = false
	if n := min(a.workers, len(a.dirty)); n > 1 && a.points >= a.minWork {
		flushShared(a.dirty, n)
	} else {
		for _, w := range a.dirty {
			w.flush()
		}
	}
	for _, w := range a.dirty {
		w.listed = false
	}
	clear(a.dirty)
	a.dirty, a.points = a.dirty[:0], 0
}

// flushShared flushes dirty on the calling goroutine and up to workers−1 helpers, each
// taking the next sketch not yet taken (parallel.Each).
func flushShared(dirty []*windowSketch, workers int) {
	parallel.Each(workers, len(dirty), func(i int) { dirty[i].flush() })
}
