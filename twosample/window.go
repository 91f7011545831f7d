package twosample

import (
	"errors"
	"fmt"
)

// ErrIncompatible is returned when windows of different feature maps are merged.
var ErrIncompatible = errors.New("twosample: incompatible windows")

// Window is one window's state: its point count and the fixed-point sums of its points'
// features. Its size is fixed (D+1 words, plus the bulk kernel's sums and workspace) and
// Merge is exact, so any split of a window's points across Add calls and merged windows
// gives the same sums, bit for bit. A Window is not safe for concurrent use.
type Window struct {
	fm  *FeatureMap
	n   int64
	sum []int64 // D, the features' order (Eval); the bulk path's points are in acc
	// acc holds the random Fourier sums of the points the bulk kernel (fm.fixed) took:
	// Σ ToFixed(sin θ_f) at acc[f], Σ ToFixed(cos θ_f) at acc[hp+f] (hp = fm.hp; padding
	// never read). nil without the bulk path.
	acc []int64
	th  []float64 // workspace: one point's arguments (hp; the padding stays 0)
}

// NewWindow returns an empty window for the feature map.
func (fm *FeatureMap) NewWindow() *Window {
	w := &Window{fm: fm, sum: make([]int64, fm.Features())}
	if fm.fixed != nil {
		w.acc, w.th = make([]int64, 2*fm.hp), make([]float64, fm.hp)
	}
	return w
}

// Add accumulates the points u (row-major, u ∈ [0,1]^d). It panics if len(u) is not whole
// points or the window would exceed MaxPoints.
func (w *Window) Add(u []float64) {
	fm := w.fm
	d := fm.dim
	if len(u)%d != 0 {
		panic(fmt.Sprintf("twosample: Window.Add: %d values are not whole points of dim %d", len(u), d))
	}
	k := int64(len(u) / d)
	if w.n+k > MaxPoints {
		panic(fmt.Sprintf("twosample: Window.Add: a window may hold at most %d points", int64(MaxPoints)))
	}
	sum := w.sum
	for i := 0; i < len(u); i += d {
		x := u[i : i+d : i+d]
		inCube := true
		for j, v := range x { // the moment features, as Eval computes them
			c := v - fm.center[j]
			sum[j] += toFixed(c)
			sum[d+j] += toFixed(float64(c * c))
			inCube = inCube && v >= 0 && v <= 1
		}
		if fm.fixed != nil && inCube {
			fm.thetas(x, w.th)
			fm.fixed.AddFixed(w.th, w.acc)
			continue
		}
		w.addScalar(x)
	}
	w.n += k
}

// addScalar adds the random Fourier features of one point to sum with the map's Sincos
// (Eval's operations): the reference for the bulk path, and its fallback.
func (w *Window) addScalar(x []float64) {
	fm := w.fm
	d := fm.dim
	out := w.sum[2*d:]
	for f := range len(fm.omega) / d {
		om := fm.omega[f*d : (f+1)*d]
		t := 0.0
		for j, v := range x {
			t += float64(om[j] * v) // rounded: no fused multiply-add (package doc)
		}
		s, c := fm.sincos(t)
		out[2*f] += toFixed(c)
		out[2*f+1] += toFixed(s)
	}
}

// Sums returns the window's fixed-point feature sums Σ_i round(φ(u_i)·2³²) in the
// features' order (Eval's; len D): the state Reference.Test reads.
func (w *Window) Sums() []int64 {
	dst := make([]int64, len(w.sum))
	w.totals(dst)
	return dst
}

// totals writes the window's feature sums in the features' order to dst (len D): sum,
// with the bulk kernel's sums added to the random Fourier features (cos θ_f at 2d+2f,
// sin θ_f at 2d+2f+1).
func (w *Window) totals(dst []int64) {
	copy(dst, w.sum)
	if w.acc == nil {
		return
	}
	hp := w.fm.hp
	out := dst[2*w.fm.dim:]
	for f := range len(out) / 2 {
		out[2*f] += w.acc[hp+f]
		out[2*f+1] += w.acc[f]
	}
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
	for j, v := range other.acc {
		w.acc[j] += v
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
	clear(w.acc)
}

// SizeBytes is the window's memory footprint (fixed for a feature map).
func (w *Window) SizeBytes() int { return 48 + 8*len(w.sum) + 8*len(w.acc) + 8*len(w.th) }
