//go:build amd64 && !purego

package embedding

import "golang.org/x/sys/cpu"

// projLanesAVX512 is the AVX-512F kernel of projLanes for 32 lanes (proj_amd64.s).
// Preconditions (checked by projLanes): h ≥ 1, rows 0..h−1 of v hold 32 values at
// v + c·ldv bytes, out holds 32.
//
//go:noescape
func projLanesAVX512(th *float64, h int, v *float64, ldv int, out *float64)

// projLanes8AVX512 is projLanesAVX512 for 8 lanes (same preconditions with 8 for 32).
//
//go:noescape
func projLanes8AVX512(th *float64, h int, v *float64, ldv int, out *float64)

// projLanesSIMD runs projLanes on groups of 32, then 8, lanes with AVX-512 when the path
// and CPU allow it, and returns how many lanes it did (a multiple of 8).
func projLanesSIMD(path dotPath, th, v []float64, ld int, out []float64) int {
	if path != dotPathAVX512 || !cpu.X86.HasAVX512F || len(th) == 0 {
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

// hddCellsAVX512 is the AVX-512F kernel of hddCells for n cells, n a multiple of 8
// (cells_amd64.s). Every |lam·lnp[c]| must be ≤ sincosMaxArg (checked by hddCells).
//
//go:noescape
func hddCellsAVX512(lam, cr, ci float64, sq, lnp, fr, fi *float64, n int)

// hddCellsSIMD runs hddCells on the first multiple of 8 cells with AVX-512 when the path
// and CPU allow it, and returns how many cells it did.
func hddCellsSIMD(path dotPath, lam, cr, ci float64, sq, lnp, fr, fi []float64) int {
	n := len(lnp) &^ 7
	if path != dotPathAVX512 || !cpu.X86.HasAVX512F || n == 0 {
		return 0
	}
	hddCellsAVX512(lam, cr, ci, &sq[0], &lnp[0], &fr[0], &fi[0], n)
	return n
}
