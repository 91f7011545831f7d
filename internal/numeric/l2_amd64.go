//go:build amd64 && !purego

package numeric

import "golang.org/x/sys/cpu"

// l2Products2AVX512 and l2Products3AVX512 are the AVX-512F kernels of L2Products
// (l2_amd64.s), the L2Block = 8 points of a block in one ZMM register; l2Products2AVX2 and
// l2Products3AVX2 the AVX2+FMA ones, in two YMM registers. Preconditions (checked by
// L2Products): nb ≥ 1; i0, i1 (and i2) hold nb offsets each, every offset + 8 within tab;
// acc holds nb.
//
//go:noescape
func l2Products2AVX512(tab *float64, i0, i1 *int32, nb int, acc *int64)

//go:noescape
func l2Products3AVX512(tab *float64, i0, i1, i2 *int32, nb int, acc *int64)

//go:noescape
func l2Products2AVX2(tab *float64, i0, i1 *int32, nb int, acc *int64)

//go:noescape
func l2Products3AVX2(tab *float64, i0, i1, i2 *int32, nb int, acc *int64)

// L2Products adds to acc[m], for every basis function m of a d = 2 or 3 family, the
// fixed-point sum over the current block of ψ_m: l2ProductsGo's arithmetic, on the
// kernel of path. The kernels do not bounds-check the table reads: the flat offsets are
// built by specialise from the same kmax as the sketch's block tables (tab), so every
// offset + L2Block ≤ len(tab) by construction (TestL2AddPathsBitIdentical runs them all).
func L2Products(path Path, d int, tab []float64, flat *[3][]int32, acc []int64) {
	nb := len(flat[0])
	if nb == 0 || len(acc) < nb || len(flat[1]) < nb || d == 3 && len(flat[2]) < nb || d != 2 && d != 3 {
		l2ProductsGo(d, tab, flat, acc)
		return
	}
	switch {
	case path == PathAVX512 && cpu.X86.HasAVX512F:
		if d == 2 {
			l2Products2AVX512(&tab[0], &flat[0][0], &flat[1][0], nb, &acc[0])
		} else {
			l2Products3AVX512(&tab[0], &flat[0][0], &flat[1][0], &flat[2][0], nb, &acc[0])
		}
	case path == PathAVX2 && cpu.X86.HasAVX2 && cpu.X86.HasFMA:
		if d == 2 {
			l2Products2AVX2(&tab[0], &flat[0][0], &flat[1][0], nb, &acc[0])
		} else {
			l2Products3AVX2(&tab[0], &flat[0][0], &flat[1][0], &flat[2][0], nb, &acc[0])
		}
	default:
		l2ProductsGo(d, tab, flat, acc)
	}
}
