//go:build amd64 && !purego

package numeric

import "golang.org/x/sys/cpu"

// rffDotAVX512 is the AVX-512F kernel of RFFDot (dot_amd64.s): 8 rows per pass over a, the
// 8 lanes of each row in one ZMM register. Preconditions (checked by RFFDot): n ≥ 1,
// rows ≥ 1, omega holds rows·n elements, a holds n, theta holds rows.
//
//go:noescape
func rffDotAVX512(omega, a *float64, n, rows int, theta *float64)

// rffDotAVX2 is the AVX2+FMA kernel of RFFDot (dot_amd64.s): 6 rows per pass, the 8 lanes
// of each row in two YMM registers. Same preconditions as rffDotAVX512.
//
//go:noescape
func rffDotAVX2(omega, a *float64, n, rows int, theta *float64)

// PathSupported reports whether path can run on this machine.
func PathSupported(p Path) bool {
	switch p {
	case PathAVX512:
		return cpu.X86.HasAVX512F
	case PathAVX2:
		return cpu.X86.HasAVX2 && cpu.X86.HasFMA
	case PathPortable:
		return true
	}
	return false
}

// rffDotSIMD runs RFFDot on an assembly kernel (the portable one if the CPU lacks it).
func rffDotSIMD(path Path, omega []float64, n int, a, theta []float64) {
	switch {
	case path == PathAVX512 && cpu.X86.HasAVX512F:
		rffDotAVX512(&omega[0], &a[0], n, len(theta), &theta[0])
	case path == PathAVX2 && cpu.X86.HasAVX2 && cpu.X86.HasFMA:
		rffDotAVX2(&omega[0], &a[0], n, len(theta), &theta[0])
	default:
		rffDotGo(omega, n, a, theta)
	}
}

// rffDotTile4x6AVX512 is the AVX-512F batch kernel of RFFDotBatch (dot_tile_amd64.s): θ of
// 4 consecutive rows of omega (stride n) for 6 consecutive vectors of a (stride n),
// written to theta[w·ldt + r]. Preconditions (checked by RFFDotBatch): n ≥ 1, omega holds
// 4·n elements, a 6·n, theta 5·ldt + 4.
//
//go:noescape
func rffDotTile4x6AVX512(omega, a *float64, n int, theta *float64, ldt int)

// rffDotTile4x4AVX512 is rffDotTile4x6AVX512 for 4 vectors of a (a holds 4·n elements,
// theta 3·ldt + 4).
//
//go:noescape
func rffDotTile4x4AVX512(omega, a *float64, n int, theta *float64, ldt int)

// RFFTileSupported reports whether path has a batch tile kernel on this machine.
func RFFTileSupported(p Path) bool { return p == PathAVX512 && cpu.X86.HasAVX512F }

// rffDotTile runs the batch tile kernel for 4 rows and windows = RFFTileWindows or
// rffTileSmall windows; the caller checked RFFTileSupported.
func rffDotTile(omega, a []float64, n, windows int, theta []float64, ldt int) {
	if windows == rffTileSmall {
		rffDotTile4x4AVX512(&omega[0], &a[0], n, &theta[0], ldt)
		return
	}
	rffDotTile4x6AVX512(&omega[0], &a[0], n, &theta[0], ldt)
}

// rffEmitAVX512 is the AVX-512F kernel of rff.emit for n frequencies, n a multiple of 8
// (cells_amd64.s). Every |θ| must be ≤ SincosMaxArg (checked by emit).
//
//go:noescape
func rffEmitAVX512(theta *float64, n int, scale float64, out *float32)

// RFFEmitSIMD runs rff.emit on the first multiple of 8 frequencies with AVX-512 when the
// path and CPU allow it, and returns how many it did.
func RFFEmitSIMD(path Path, theta []float64, scale float64, out []float32) int {
	n := len(theta) &^ 7
	if path != PathAVX512 || !cpu.X86.HasAVX512F || n == 0 {
		return 0
	}
	rffEmitAVX512(&theta[0], n, scale, &out[0])
	return n
}

// fwhtWideAVX512 is the AVX-512F kernel of fwht's stages h ≥ 8 (fwht_amd64.s); n is a
// power of two ≥ 16.
//
//go:noescape
func fwhtWideAVX512(y *float64, n int)

// fwhtWideSIMD runs fwht's stages h ≥ 8 with AVX-512 when the path and CPU allow it and
// reports whether it did.
func fwhtWideSIMD(path Path, y []float64) bool {
	if path != PathAVX512 || !cpu.X86.HasAVX512F || len(y) < 16 {
		return false
	}
	fwhtWideAVX512(&y[0], len(y))
	return true
}
