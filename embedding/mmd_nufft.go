package embedding

import (
	"fmt"
	"sync"

	"github.com/distfeat/distfeat/internal/nufft"
	"github.com/distfeat/distfeat/internal/numeric"
	"github.com/distfeat/distfeat/spec"
)

// The nufft method of an mmd family (spec field method). The window state is the spread
// grid of internal/nufft: each point adds its kernel weights to w^d int64 fixed-point cells
// (w = 8), so the state is exactly mergeable like the direct sums; window close runs the
// type-3 transform and writes z̄ = √(2/D)·[Σ sin ω_r·u / n, Σ cos ω_r·u / n]_r, within 1e-6
// of the direct method's features times √(2/D) (TestMMDNUFFTMatchesDirect). The draws, the
// feature layout and the optional rbf stage are the direct method's.

// mmdAutoWindow is the `auto` rule's reference window: auto picks nufft when the cost
// model makes it the cheaper method for every window of at least this many points.
const mmdAutoWindow = 500

// mmdDirectNanos is the direct method's cost model per point (ns): one sine and cosine
// per frequency, ≈ 0.6 ns each with AVX-512, more with d (mmdSketch.addNanos). Frozen: it
// decides auto.
func mmdDirectNanos(hp, d int) float64 { return 0.6 * float64(hp) * float64(max(1, d/2)) }

// mmdMethod resolves family idx's method: direct or nufft (auto decided by the cost model,
// given the plan it would use). It returns the plan when the method is nufft.
func mmdMethod(sp *spec.Spec, idx int, m *mmdFamily) (*nufft.Plan, error) {
	f := &sp.Families[idx]
	method := sp.MethodOf(f)
	if method == spec.MethodDirect || m.d > spec.MaxNUFFTDim {
		return nil, nil
	}
	freqs := make([]float64, m.half*m.d)
	for r := 0; r < m.half; r++ {
		for j := 0; j < m.d; j++ {
			freqs[r*m.d+j] = m.omega[j*m.hp+r]
		}
	}
	plan, err := nufft.NewPlan(freqs, m.d, nufft.Options{Sincos: numeric.Sincos})
	switch {
	case err != nil && method == spec.MethodAuto: // a grid beyond the plan's bounds
		return nil, nil
	case err != nil:
		return nil, &spec.SpecError{Field: fmt.Sprintf("families[%d].method", idx),
			Msg: err.Error() + " (8 MiB of window state at most; use direct or a larger bandwidth)"}
	}
	if method == spec.MethodAuto && !mmdNUFFTPays(plan, m.hp, m.d) {
		return nil, nil
	}

	return plan, nil
}

// mmdNUFFTPays is the auto rule: nufft's cost per point plus its window cost spread over
// mmdAutoWindow points is below the direct cost per point, and its window state (the grid)
// is at most mmdAutoStateRatio times the direct method's (2·hp sums).
func mmdNUFFTPays(plan *nufft.Plan, hp, d int) bool {
	perPoint, perWindow := plan.Cost()
	return perPoint+perWindow/mmdAutoWindow < mmdDirectNanos(hp, d) &&
		plan.GridLen() <= mmdAutoStateRatio*2*hp
}

// mmdAutoStateRatio bounds, for auto, the nufft window state against the direct one: small
// bandwidths need fine grids (69 × 69 cells at bandwidth 0.03 in d = 2, 37 KB against 8 KB),
// and open windows multiply the state.
const mmdAutoStateRatio = 4

// mmdGridSketch is an mmd window's state with the nufft method: the spread grid.
type mmdGridSketch struct {
	fam  *mmdFamily
	grid []int64
}

// mmdGridWork is one finalisation's scratch space.
type mmdGridWork struct {
	wk     *nufft.Work
	re, im []float64
}

// nufftState is the nufft method's compiled part of an mmd family.
type nufftState struct {
	plan *nufft.Plan
	work sync.Pool // *mmdGridWork
}

func (m *mmdFamily) newGridSketch() *mmdGridSketch {
	return &mmdGridSketch{fam: m, grid: make([]int64, m.nufft.plan.GridLen())}
}

func (s *mmdGridSketch) add(u []float64, _ int) { s.fam.nufft.plan.Spread(s.grid, u) }

func (s *mmdGridSketch) merge(other familySketch) {
	nufft.Merge(s.grid, other.(*mmdGridSketch).grid)
}

func (s *mmdGridSketch) reset() { clear(s.grid) }

func (s *mmdGridSketch) sizeBytes() int { return 8*len(s.grid) + 64 }

// addNanos is the plan's cost model per point.
func (s *mmdGridSketch) addNanos() float64 {
	perPoint, _ := s.fam.nufft.plan.Cost()
	return perPoint
}

func (s *mmdGridSketch) finalize(n int64, out [][]float32) {
	m := s.fam
	dst := out[0]
	if n == 0 {
		clear(dst)
		return
	}
	if m.rbf == nil {
		s.sums(func(re, im []float64) {
			fn := float64(n)
			for r := 0; r < m.half; r++ {
				dst[2*r] = float32(m.scale * (im[r] / fn))
				dst[2*r+1] = float32(m.scale * (re[r] / fn))
			}
		})
		return
	}
	zbar := make([]float64, m.features)
	s.meanEmbedding(zbar, float64(n))
	m.rbf.apply(zbar, dst)
}

// sums runs the transform and passes the cosine (re) and sine (im) sums to use.
func (s *mmdGridSketch) sums(use func(re, im []float64)) {
	st := s.fam.nufft
	w, _ := st.work.Get().(*mmdGridWork)
	if w == nil {
		w = &mmdGridWork{wk: st.plan.NewWork(), re: make([]float64, s.fam.half), im: make([]float64, s.fam.half)}
	}
	st.plan.Finalize(s.grid, w.re, w.im, w.wk)
	use(w.re, w.im)
	st.work.Put(w)
}

// meanEmbedding writes z̄ (the first stage's output, in float64) for a window of fn points.
func (s *mmdGridSketch) meanEmbedding(zbar []float64, fn float64) {
	m := s.fam
	s.sums(func(re, im []float64) {
		for r := 0; r < m.half; r++ {
			zbar[2*r] = m.scale * (im[r] / fn)
			zbar[2*r+1] = m.scale * (re[r] / fn)
		}
	})
}
