// Package offline is distfeat's offline engine: the features of whole sets with the
// worker's code path, for `distfeat embed`, `fit` and `calibrate` and for the Python package
// (python/native). Each set's points are normalised (embedding.Embedder.Normalize), added to
// one sketch as one closed window, and the sketches are finalised together
// (processor.Finalize → embedding.FinalizeBatchParallel), so a set's features are the bytes a
// worker emits for the same spec and points.
//
// Sets come either from memory — one row-major buffer of raw points and the offsets of each
// set's first point (Sets: offsets[i] … offsets[i+1]), so a caller passes a batch of ragged
// sets without a copy per set — or from a set file, JSON lines of one set each (ReadSets;
// EmbedLines with its sinks: JSON lines, Arrow, per-point features, a model's predictions).
package offline

import (
	"errors"
	"fmt"
	"sync"

	"github.com/distfeat/distfeat/embedding"
	"github.com/distfeat/distfeat/processor"
	"github.com/distfeat/distfeat/window"
)

// finalizeBatch is the number of sets finalised together: each random Fourier stage then
// streams its matrix once per batch (as embed does for its batches of lines), while the
// sketches held at once stay few.
const finalizeBatch = 64

// ErrNoPoints reports a set without points: the worker opens no window for it (it counts
// end_without_window) and embed skips it, so there are no features to return.
var ErrNoPoints = errors.New("no points")

// Sets is a batch of ragged sets: Points holds every set's raw points row-major (dim values
// each), set i being points Offsets[i] to Offsets[i+1]−1.
type Sets struct {
	Points  []float64
	Offsets []int64
	Dim     int
}

// Len is the number of sets.
func (s Sets) Len() int { return len(s.Offsets) - 1 }

// Set returns set i's raw points.
func (s Sets) Set(i int) []float64 {
	return s.Points[s.Offsets[i]*int64(s.Dim) : s.Offsets[i+1]*int64(s.Dim)]
}

// Check validates the layout against the embedder's dimension: offsets start at 0, never
// decrease and end at the number of points.
func (s Sets) Check(dim int) error {
	if s.Dim != dim {
		return fmt.Errorf("points have dimension %d, the spec's dim is %d", s.Dim, dim)
	}
	if len(s.Offsets) < 1 || s.Offsets[0] != 0 {
		return errors.New("offsets must start with 0")
	}
	for i := 1; i < len(s.Offsets); i++ {
		if s.Offsets[i] < s.Offsets[i-1] {
			return fmt.Errorf("offsets[%d] = %d < offsets[%d] = %d", i, s.Offsets[i], i-1, s.Offsets[i-1])
		}
	}
	if last := s.Offsets[len(s.Offsets)-1]; last*int64(s.Dim) != int64(len(s.Points)) {
		return fmt.Errorf("offsets end at point %d, the buffer holds %d values (%d points of dim %d)",
			last, len(s.Points), len(s.Points)/max(s.Dim, 1), s.Dim)
	}
	return nil
}

// SetError is the failure of one set: its index in the batch and the cause (wrapping
// embedding.ErrNonFinite, embedding.ErrOutOfBounds or ErrNoPoints).
type SetError struct {
	Index int
	Err   error
}

func (e *SetError) Error() string { return fmt.Sprintf("set %d: %v", e.Index, e.Err) }
func (e *SetError) Unwrap() error { return e.Err }

// Embed writes the features of every set into out, set i's Dim values (all columns of
// emb.Columns() in order, concatenated) at out[i·D:(i+1)·D], D = the sum of the columns'
// lengths. workers goroutines sketch sets and finalise (same bits for any workers). The
// first bad set stops the call with a *SetError; out is then partly written.
func Embed(emb *embedding.Embedder, sets Sets, out []float32, workers int) error {
	if err := sets.Check(emb.Dim()); err != nil {
		return err
	}
	d := Width(emb)
	if len(out) != sets.Len()*d {
		return fmt.Errorf("output buffer holds %d values, want %d sets × %d", len(out), sets.Len(), d)
	}
	workers = max(workers, 1)
	specID := emb.Spec().ID()
	for first := 0; first < sets.Len(); first += finalizeBatch {
		n := min(finalizeBatch, sets.Len()-first)
		closed := make([]window.Closed[*embedding.Sketch], n)
		errs := make([]error, n)
		share(workers, n, func(k int) {
			i := first + k
			x := sets.Set(i)
			if len(x) == 0 {
				errs[k] = ErrNoPoints
				return
			}
			closed[k], errs[k] = sketchSet(emb, "", x)
		})
		for k, err := range errs {
			if err != nil {
				return &SetError{Index: first + k, Err: err}
			}
		}
		for k, rec := range processor.Finalize(specID, closed, workers, nil) {
			o := out[(first+k)*d : (first+k+1)*d]
			for _, v := range rec.Vectors {
				o = o[copy(o, v):]
			}
		}
	}
	return nil
}

// Width is the length of a set's concatenated feature vector: the sum of the columns'
// lengths.
func Width(emb *embedding.Embedder) int {
	d := 0
	for _, c := range emb.Columns() {
		d += c.Len
	}
	return d
}

// share runs f(0) … f(n−1) over up to workers goroutines.
func share(workers, n int, f func(k int)) {
	if workers <= 1 || n <= 1 {
		for k := 0; k < n; k++ {
			f(k)
		}
		return
	}
	var wg sync.WaitGroup
	next := make(chan int)
	for w := 0; w < min(workers, n); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := range next {
				f(k)
			}
		}()
	}
	for k := 0; k < n; k++ {
		next <- k
	}
	close(next)
	wg.Wait()
}
