package twosample

import (
	"errors"
	"fmt"
)

// ErrIncompatible is returned when windows of different feature maps are merged.
var ErrIncompatible = errors.New("twosample: incompatible windows")

// Window is one window's state: its point count and the fixed-point sums of its points'
// features. Its size is fixed (D+1 words) and Merge is exact, so any split of a window's
// points across Add calls and merged windows gives the same sums, bit for bit. A Window is
// not safe for concurrent use.
type Window struct {
	fm  *FeatureMap
	n   int64
	sum []int64
	phi []float64 // workspace for one point's features
}

// NewWindow returns an empty window for the feature map.
func (fm *FeatureMap) NewWindow() *Window {
	D := fm.Features()
	return &Window{fm: fm, sum: make([]int64, D), phi: make([]float64, D)}
}

// Add accumulates the points u (row-major, u ∈ [0,1]^d). It panics if len(u) is not whole
// points or the window would exceed MaxPoints.
func (w *Window) Add(u []float64) {
	d := w.fm.dim
	if len(u)%d != 0 {
		panic(fmt.Sprintf("twosample: Window.Add: %d values are not whole points of dim %d", len(u), d))
	}
	k := int64(len(u) / d)
	if w.n+k > MaxPoints {
		panic(fmt.Sprintf("twosample: Window.Add: a window may hold at most %d points", int64(MaxPoints)))
	}
	for i := 0; i < len(u); i += d {
		w.fm.Eval(u[i:i+d], w.phi)
		for j, v := range w.phi {
			w.sum[j] += toFixed(v)
		}
	}
	w.n += k
}

// Merge adds other's points to w (other is unchanged). Both must come from the same
// feature map.
func (w *Window) Merge(other *Window) error {
	if other == nil || other.fm != w.fm {
		return fmt.Errorf("merge a window of another feature map: %w", ErrIncompatible)
	}
	if w.n+other.n > MaxPoints {
		return fmt.Errorf("merged window would hold %d points, more than %d", w.n+other.n, int64(MaxPoints))
	}
	for j, v := range other.sum {
		w.sum[j] += v
	}
	w.n += other.n
	return nil
}

// Count is the number of points in the window.
func (w *Window) Count() int64 { return w.n }

// Reset empties the window for reuse.
func (w *Window) Reset() {
	w.n = 0
	clear(w.sum)
}

// SizeBytes is the window's memory footprint (fixed for a feature map).
func (w *Window) SizeBytes() int { return 48 + 16*len(w.sum) }
