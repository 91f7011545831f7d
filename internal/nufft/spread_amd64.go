//go:build amd64 && !purego

package nufft

import "golang.org/x/sys/cpu"

// spread2w8AVX2 is Spread for d = 2 and w = 8 over n ≥ 1 points (spread_amd64.s): the same
// operations as position, values8 and spread2w8, four lanes at a time (the same fused
// multiply-adds). par holds 1/Δ₀, 1/Δ₁, L₀, L₁. The caller checked the points.
//
//go:noescape
func spread2w8AVX2(grid *int64, n1 int, pts *float64, n int, coef *float64, par *[4]float64)

// spread1w8AVX2 is Spread for d = 1 and w = 8 over n ≥ 1 points (spread_amd64.s); par
// holds 1/Δ₀ and, at index 2, L₀.
//
//go:noescape
func spread1w8AVX2(grid *int64, pts *float64, n int, coef *float64, par *[4]float64)

// haveSIMD reports whether the assembly kernels can run on this machine.
func haveSIMD() bool { return cpu.X86.HasAVX2 && cpu.X86.HasFMA && cpu.X86.HasSSE41 }

// spreadSIMD spreads pts with an assembly kernel (d ≤ 2, w = 8) when the plan and CPU allow it, and
// reports whether it did.
func (p *Plan) spreadSIMD(grid []int64, pts []float64) bool {
	if !p.simd || p.d > 2 || p.w != 8 || len(pts) < p.d {
		return false
	}
	par := [4]float64{p.inv[0], p.inv[1], float64(p.lhalf[0]), float64(p.lhalf[1])}
	if p.d == 1 {
		spread1w8AVX2(&grid[0], &pts[0], len(pts), &p.ker.coef[0], &par)
		return true
	}
	spread2w8AVX2(&grid[0], p.nf[1], &pts[0], len(pts)/2, &p.ker.coef[0], &par)
	return true
}

// rowUpdatesAVX2 is rowUpdatesGo (finalize_amd64.s); n ≥ 1, m0 ≥ 1, e holds 2·m0 values,
// ar and ai m0·n.
//
//go:noescape
func rowUpdatesAVX2(src *float64, n int, e *float64, m0 int, ar, ai *float64)

// dotColumnsAVX2 is dotColumnsGo (finalize_amd64.s); n ≥ 1, m1p a positive multiple of 4,
// e1t holds n·2·m1p values, br and bi m1p.
//
//go:noescape
func dotColumnsAVX2(xr, xi *float64, n int, e1t *float64, m1p int, br, bi *float64)

// rowUpdates runs rowUpdatesGo, on the assembly kernel when the plan may use it.
func (p *Plan) rowUpdates(src, e, ar, ai []float64) {
	m0, n := len(e)/2, len(src)
	if !p.simd || n == 0 || m0 == 0 {
		rowUpdatesGo(src, e, ar, ai)
		return
	}
	_, _ = ar[m0*n-1], ai[m0*n-1]
	rowUpdatesAVX2(&src[0], n, &e[0], m0, &ar[0], &ai[0])
}

// dotColumns runs dotColumnsGo, on the assembly kernel when the plan may use it.
func (p *Plan) dotColumns(xr, xi, br, bi []float64) {
	n := len(xr)
	if !p.simd || n == 0 {
		dotColumnsGo(xr, xi, p.e1t, p.m1p, br, bi)
		return
	}
	_, _, _ = xi[n-1], br[p.m1p-1], bi[p.m1p-1]
	dotColumnsAVX2(&xr[0], &xi[0], n, &p.e1t[0], p.m1p, &br[0], &bi[0])
}

// interp2AVX2 is interp2Go (finalize_amd64.s) for f ≥ 1 targets.
//
//go:noescape
func interp2AVX2(gr, gi *float64, stride int, start *int32, wts *float64, f int, fr, fi *float64)

// interp2Raw interpolates the targets' f (before emit): interp2Go for w = 8 (on the
// assembly kernel when the plan may use it), interp2Any otherwise.
func (p *Plan) interp2Raw(gr, gi, fr, fi []float64) {
	switch {
	case p.w != 8:
		p.interp2Any(gr, gi, fr, fi)
	case p.simd && len(fr) > 0:
		interp2AVX2(&gr[0], &gi[0], p.m1p, &p.start[0], &p.wts[0], len(fr), &fr[0], &fi[0])
	default:
		interp2Go(gr, gi, p.m1p, p.start, p.wts, fr, fi)
	}
}
