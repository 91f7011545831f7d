//go:build amd64 && !purego

package nufft

import "golang.org/x/sys/cpu"

// spread2w8AVX2 is Spread for d = 2 and w = 8 over n ≥ 1 points (spread_amd64.s): the same
// operations as position, values8 and spread2w8, four lanes at a time (multiplies and adds,
// no fused multiply-add). par holds 1/Δ₀, 1/Δ₁, L₀, L₁. The caller checked the points.
//
//go:noescape
func spread2w8AVX2(grid *int64, n1 int, pts *float64, n int, coef *float64, par *[4]float64)

// haveSIMD reports whether the assembly kernels can run on this machine.
func haveSIMD() bool { return cpu.X86.HasAVX2 && cpu.X86.HasSSE41 }

// spreadSIMD spreads pts with an assembly kernel when the plan and CPU allow it, and
// reports whether it did.
func (p *Plan) spreadSIMD(grid []int64, pts []float64) bool {
	if !p.simd || p.d != 2 || p.w != 8 || len(pts) < 2 {
		return false
	}
	par := [4]float64{p.inv[0], p.inv[1], float64(p.lhalf[0]), float64(p.lhalf[1])}
	spread2w8AVX2(&grid[0], p.nf[1], &pts[0], len(pts)/2, &p.ker.coef[0], &par)
	return true
}
