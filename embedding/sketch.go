package embedding

import (
	"fmt"
	"time"

	"github.com/distfeat/distfeat/internal/parallel"
)

// Sketch is one window's state: a fixed-size, mergeable accumulator per family plus the
// point count (docs/math.md, Sketches). Its memory does not depend on how many points it holds.
// Accumulators are fixed-point integers, so any split of a window's points across Add
// calls and merged sketches finalises to the same bits. A Sketch is not safe for
// concurrent use.
type Sketch struct {
	e      *Embedder
	n      int64
	parts  []familySketch
	points []float64 // the window's normalised points, with WithPointRetention (retain.go)
	lost   bool      // the points did not fit the PointBudget and were dropped
}

// FinalizeHook observes the time each family took to finalise (e.g. for a histogram).
type FinalizeHook func(family string, elapsed time.Duration)

// Add accumulates normalised points u (row-major, u ∈ [0,1]^dim as produced by
// Embedder.Normalize; len(u) a multiple of Dim). It does not allocate, unless the embedder
// was built WithAddWorkers and the call is large enough to be shared among goroutines (the
// result is the same bits either way). It panics if len(u) is not whole points or if the
// window would exceed MaxWindowPoints.
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
	s.retainPoints(u)
	if s.e.addWorkers > 1 && s.addShared(u, d, int(k)) {
		s.n += k
		return
	}
	for _, p := range s.parts {
		p.add(u, d)
	}
	s.n += k
}

// Sharing a large Add among goroutines (WithAddWorkers). A goroutine takes a contiguous
// share of the points for each family whose add is worth splitting: its share's work must
// outweigh merging the share's state into the window and clearing it (mergeNanosPerWord per
// accumulator word, mergeRatio times over), and the whole split must outweigh waking another
// core (parallelAddMinNanos: on the 2-vCPU reference VM, waking an idle vCPU costs tens of
// µs, so a 500-point Add of the default spec, ≈ 180 µs, was no faster shared; a 2500-point
// one was 1.7× faster, BenchmarkAddWorkers). The other families are added whole by the
// caller.
const (
	mergeNanosPerWord   = 0.5
	mergeRatio          = 4
	parallelAddMinNanos = 300_000
)

// addShared adds the n points u for Add over up to e.addWorkers goroutines and reports
// true, or reports false (nothing added) when no family's add is worth splitting. The
// last share goes into s itself, the others into empty helper sketches that are merged into
// s (integer additions: exact, so any split gives the bits of one goroutine) and go back to
// the pool empty.
func (s *Sketch) addShared(u []float64, d, n int) bool {
	parts := min(s.e.addWorkers, n)
	split := make([]bool, len(s.parts))
	work := 0.0
	for f, p := range s.parts {
		share := float64(n/parts) * p.addNanos()
		if share >= mergeRatio*mergeNanosPerWord*float64(p.sizeBytes()/8) {
			split[f] = true
			work += float64(float64(n) * p.addNanos()) // rounded: no fused multiply-add in this package (TestNoImplicitFusion)
		}
	}
	if work < parallelAddMinNanos {
		return false
	}
	helpers := make([]*Sketch, parts-1)
	for i := range helpers {
		h, _ := s.e.helpers.Get().(*Sketch)
		if h == nil {
			h = s.e.NewSketch()
		}
		helpers[i] = h
	}
	parallel.Ranges(parts, n, func(part, lo, hi int) {
		last := part == parts-1
		for f, p := range s.parts {
			switch {
			case !split[f] && last:
				p.add(u, d)
			case split[f] && last:
				p.add(u[lo*d:hi*d], d)
			case split[f]:
				helpers[part].parts[f].add(u[lo*d:hi*d], d)
			}
		}
	})
	for _, h := range helpers {
		for f, p := range s.parts {
			if split[f] {
				p.merge(h.parts[f])
				h.parts[f].reset()
			}
		}
		s.e.helpers.Put(h)
	}
	return true
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
	if s.e.retain != nil {
		if other.lost {
			s.dropPoints()
		} else {
			s.retainPoints(other.points)
		}
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
	s.releasePoints()
	s.lost = false
}

// SizeBytes is the sketch's memory footprint: fixed for a given spec, plus the retained
// points with WithPointRetention.
func (s *Sketch) SizeBytes() int {
	size := 64 + 16*len(s.parts) + 8*cap(s.points)
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
	out := e.newOutput()
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

// newOutput allocates one window's output: one slice per Column, sharing one backing array.
func (e *Embedder) newOutput() [][]float32 {
	total := 0
	for _, l := range e.colLens {
		total += l
	}
	backing := make([]float32, total)
	out := make([][]float32, len(e.colLens))
	for i, l := range e.colLens {
		out[i], backing = backing[:l:l], backing[l:]
	}
	return out
}

// finalizeBatchMax bounds the windows one family finalises together in FinalizeBatch: the
// workspace grows with the batch (8 KB of RFF input per window for the default hdd family)
// while the saving, one pass over the RFF matrix per batch, flattens out beyond a few
// dozen windows.
const finalizeBatchMax = 64

// FinalizeBatch finalises many windows at once: out[i] is exactly what
// sketches[i].Finalize(hook) returns, bit for bit, but families with a random Fourier
// stage (hdd, mmd with rbf_features, l2 with features) multiply the whole batch by their
// random matrix in one pass, so that matrix is streamed from memory once per batch of up
// to 64 windows instead of once per window. Sketches may come from different embedders
// (each embedder's sketches are batched together); none may be nil, and none may be used
// concurrently with the call. The sketches are not changed.
//
// hook, if not nil, is called once per family and sketch, with the family's batch time
// divided evenly among the windows of its batch.
func FinalizeBatch(sketches []*Sketch, hook FinalizeHook) [][][]float32 {
	return FinalizeBatchParallel(sketches, 1, hook)
}

// FinalizeBatchParallel is FinalizeBatch with each family's work spread over up to workers
// goroutines: the windows' own stages (hdd's density and coefficients) split by window,
// the random Fourier product split by blocks of frequencies, each goroutine streaming its
// own rows of the matrix once for the whole batch. The result is FinalizeBatch's, bit for
// bit, for any workers (≤ 1: the calling goroutine only). The worker uses it so that a
// partition's finalisation can use every core even when a worker owns fewer partitions
// than it has cores.
func FinalizeBatchParallel(sketches []*Sketch, workers int, hook FinalizeHook) [][][]float32 {
	out := make([][][]float32, len(sketches))
	var order []*Embedder
	groups := map[*Embedder][]int{}
	for i, s := range sketches {
		if s == nil {
			panic(fmt.Sprintf("embedding: FinalizeBatch: sketch %d is nil", i))
		}
		out[i] = s.e.newOutput()
		if _, ok := groups[s.e]; !ok {
			order = append(order, s.e)
		}
		groups[s.e] = append(groups[s.e], i)
	}
	for _, e := range order {
		idx := groups[e]
		for c0 := 0; c0 < len(idx); c0 += finalizeBatchMax {
			e.finalizeChunk(sketches, idx[c0:min(c0+finalizeBatchMax, len(idx))], out, workers, hook)
		}
	}
	return out
}

// finalizeChunk finalises the sketches sketches[idx[k]] (all of embedder e) into
// out[idx[k]], family by family, with up to workers goroutines.
func (e *Embedder) finalizeChunk(sketches []*Sketch, idx []int, out [][][]float32, workers int, hook FinalizeHook) {
	ns := make([]int64, len(idx))
	parts := make([]familySketch, len(idx))
	outs := make([][][]float32, len(idx))
	for k, i := range idx {
		ns[k] = sketches[i].n
	}
	for f, fam := range e.fams {
		start := time.Now()
		r := e.colsOf[f]
		for k, i := range idx {
			parts[k] = sketches[i].parts[f]
			outs[k] = out[i][r[0]:r[1]]
		}
		if bf, ok := fam.(batchFamily); ok {
			bf.finalizeBatch(ns, parts, outs, workers)
		} else {
			for k, p := range parts {
				p.finalize(ns[k], outs[k])
			}
		}
		if hook != nil {
			per := time.Since(start) / time.Duration(len(idx))
			for range idx {
				hook(e.names[f], per)
			}
		}
	}
}
