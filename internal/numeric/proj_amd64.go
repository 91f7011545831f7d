//go:build amd64 && !purego

package numeric

import "golang.org/x/sys/cpu"

// projLanesAVX512 is the AVX-512F kernel of ProjLanes for 32 lanes (proj_amd64.s).
// Preconditions (checked by ProjLanes): h ≥ 1, rows 0..h−1 of v hold 32 values at
// v + c·ldv bytes, out holds 32.
//
//go:noescape
func projLanesAVX512(th *float64, h int, v *float64, ldv int, out *float64)

// projLanes8AVX512 is projLanesAVX512 for 8 lanes (same preconditions with 8 for 32).
//
//go:noescape
func projLanes8AVX512(th *float64, h int, v *float64, ldv int, out *float64)

// projLanesSIMD runs ProjLanes on groups of 32, then 8, lanes with AVX-512 when the path
// and CPU allow it, and returns how many lanes it did (a multiple of 8).
func projLanesSIMD(path Path, th, v []float64, ld int, out []float64) int {
	if path != PathAVX512 || !cpu.X86.HasAVX512F || len(th) == 0 {
		return 0
	}
	k := 0
	for ; k+32 <= len(out); k += 32 {
		projLanesAVX512(&th[0], len(th), &v[k], 8*ld, &out[k])
	}
	for ; k+8 <= len(out); k += 8 {
		projLanes8AVX512(&th[0], len(th), &v[k], 8*ld, &out[k])
	}
	return k
}

// hddCellsAVX512 is the AVX-512F kernel of HDDCells for n cells, n a multiple of 8
// (cells_amd64.s). Every |lam·lnp[c]| must be ≤ SincosMaxArg (checked by HDDCells).
//
//go:noescape
func hddCellsAVX512(lam, cr, ci float64, sq, lnp, fr, fi *float64, n int)

// hddCellsSIMD runs HDDCells on the first multiple of 8 cells with AVX-512 when the path
// and CPU allow it, and returns how many cells it did.
func hddCellsSIMD(path Path, lam, cr, ci float64, sq, lnp, fr, fi []float64) int {
	n := len(lnp) &^ 7
	if path != PathAVX512 || !cpu.X86.HasAVX512F || n == 0 {
		return 0
	}
	hddCellsAVX512(lam, cr, ci, &sq[0], &lnp[0], &fr[0], &fi[0], n)
	return n
}

// hddLogSqrtAVX512 is the AVX-512F kernel of HDDLogSqrt for n cells, n a multiple of 8
// (cells_amd64.s): it stops before the first block of 8 with a cell that is > 0 but not a
// finite normal number and returns the number of cells done and their largest |ln p|.
//
//go:noescape
func hddLogSqrtAVX512(p, sq, lnp *float64, n int) (done int, maxAbs float64)

// hddLogSqrtSIMD runs HDDLogSqrt's kernel on the first multiple of 8 cells with AVX-512
// when the path and CPU allow it (ran), up to the first block it cannot do; it returns
// the cells done and their largest |ln p|.
func hddLogSqrtSIMD(path Path, p, sq, lnp []float64) (done int, maxAbs float64, ran bool) {
	n := len(p) &^ 7
	if path != PathAVX512 || !cpu.X86.HasAVX512F {
		return 0, 0, false
	}
	if n == 0 {
		return 0, 0, true
	}
	done, maxAbs = hddLogSqrtAVX512(&p[0], &sq[0], &lnp[0], n)
	return done, maxAbs, true
}

// foldLinesAVX512 is the AVX-512F kernel of project2DT's fold (proj_amd64.s).
//
//go:noescape
func foldLinesAVX512(fn *float64, width, pairs int, plus, minus *float64)

// FoldLinesSIMD runs project2DT's fold of the first ⌊G/2⌋ line pairs of fn into plus and
// minus with AVX-512 when the path and CPU allow it, and reports whether it did.
func FoldLinesSIMD(path Path, fn []float64, g int, plus, minus []float64) bool {
	pairs := g / 2
	if path != PathAVX512 || !cpu.X86.HasAVX512F || pairs == 0 {
		return false
	}
	_, _ = fn[g*g-1], plus[pairs*g-1]
	_ = minus[pairs*g-1]
	foldLinesAVX512(&fn[0], g, pairs, &plus[0], &minus[0])
	return true
}

// projLanes8x2AVX512 is projLanes8AVX512 for two tables over the same lanes (proj_amd64.s).
// Preconditions (checked by ProjLanes2SIMD): h ≥ 1, both tables hold h values, rows
// 0..h−1 of v hold 8 values at v + c·ldv bytes, outR and outI hold 8.
//
//go:noescape
func projLanes8x2AVX512(thR, thI *float64, h int, v *float64, ldv int, outR, outI *float64)

// ProjLanes2SIMD runs ProjLanes(path, thR, v, ld, outR) and ProjLanes(path, thI, v, ld,
// outI) together on groups of 8 lanes with AVX-512 when the path and CPU allow it, and
// returns how many lanes it did (a multiple of 8).
func ProjLanes2SIMD(path Path, thR, thI, v []float64, ld int, outR, outI []float64) int {
	h := len(thR)
	if path != PathAVX512 || !cpu.X86.HasAVX512F || h == 0 || len(thI) != h || len(outI) != len(outR) {
		return 0
	}
	n := len(outR) &^ 7
	if n == 0 {
		return 0
	}
	if ld < len(outR) || len(v) < (h-1)*ld+len(outR) {
		panic("numeric: ProjLanes2SIMD: inconsistent dimensions")
	}
	for k := 0; k < n; k += 8 {
		projLanes8x2AVX512(&thR[0], &thI[0], h, &v[k], 8*ld, &outR[k], &outI[k])
	}
	return n
}
