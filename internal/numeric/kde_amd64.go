//go:build amd64 && !purego

package numeric

import "golang.org/x/sys/cpu"

// kdeDotLanesAVX512 is the AVX-512F kernel of kdeMass2T's first pass (kde_amd64.s).
// Preconditions (checked by KDEDotLanes): ntap ≥ 1, nblk ≥ 1, rows 0..ntap−1 of x hold
// 8·nblk values at x + t·ldx bytes, out holds 8·nblk.
//
//go:noescape
func kdeDotLanesAVX512(w *float64, ntap int, x *float64, ldx int, out *float64, nblk int)

// kdeSeqLanesAVX512 is the AVX-512F kernel of kdeMass2T's second pass (kde_amd64.s).
// Preconditions (checked by KDESeqLanes): steps ≥ 1, w holds 8·steps values, row r of x
// holds steps+7 values at x + r·ldx bytes, row r of out the lanes in mask at
// out + r·ldout bytes.
//
//go:noescape
func kdeSeqLanesAVX512(w *float64, steps int, x *float64, ldx int, out *float64, ldout, rows, mask int)

// kdeCountsTAVX512 is the AVX-512F/DQ transposed conversion of kdeMass2T (kde_amd64.s).
// Preconditions (checked by KDECountsT): n ≥ 1, counts holds n·n values, cur rows of ldc
// ≥ n values.
//
//go:noescape
func kdeCountsTAVX512(counts *int64, n int, cur *float64, ldc int)

// kdeScaleFloorAVX512 is the AVX-512F kernel of normalizeDensityT's scaling (kde_amd64.s)
// for n values, n a multiple of 8.
//
//go:noescape
func kdeScaleFloorAVX512(x *float64, n int, scale, floor float64)

// KDELanesSupported reports whether kdeMass2T's kernels run on this machine with path.
func KDELanesSupported(path Path) bool {
	return path == PathAVX512 && cpu.X86.HasAVX512F && cpu.X86.HasAVX512DQ
}

// KDECountsT sets cur[p1·ldc + p0] = float64(counts[p0·n + p1]) for p0, p1 < n.
func KDECountsT(counts []int64, n int, cur []float64, ldc int) {
	if n < 1 || ldc < n || len(counts) < n*n || len(cur) < (n-1)*ldc+n {
		panic("numeric: KDECountsT: inconsistent dimensions")
	}
	kdeCountsTAVX512(&counts[0], n, &cur[0], ldc)
}

// ScaleFloorSIMD runs x[i] = max-by-comparison(x[i]·scale, floor) (normalizeDensity's
// last loop) on the first multiple of 8 values with AVX-512 when the CPU allows it, and
// returns how many it did.
func ScaleFloorSIMD(x []float64, scale, floor float64) int {
	n := len(x) &^ 7
	if !cpu.X86.HasAVX512F || n == 0 {
		return 0
	}
	kdeScaleFloorAVX512(&x[0], n, scale, floor)
	return n
}

// KDEDotLanes runs kdeDotLanesAVX512 on slices: x[t·ldx + k] for t < len(w), k < len(out),
// len(out) a positive multiple of 8.
func KDEDotLanes(w, x []float64, ldx int, out []float64) {
	if len(w) == 0 || len(out) == 0 || len(out)%8 != 0 || len(x) < (len(w)-1)*ldx+len(out) {
		panic("numeric: KDEDotLanes: inconsistent dimensions")
	}
	kdeDotLanesAVX512(&w[0], len(w), &x[0], 8*ldx, &out[0], len(out)/8)
}

// KDESeqLanes runs kdeSeqLanesAVX512 on slices: rows r < rows of x (stride ldx) and out
// (stride ldout), lanes < nl ≤ 8 stored.
func KDESeqLanes(w, x []float64, ldx int, out []float64, ldout, rows, nl int) {
	steps := len(w) / 8
	if steps == 0 || rows == 0 || nl < 1 || nl > 8 || len(x) < (rows-1)*ldx+steps+7 || len(out) < (rows-1)*ldout+nl {
		panic("numeric: KDESeqLanes: inconsistent dimensions")
	}
	kdeSeqLanesAVX512(&w[0], steps, &x[0], 8*ldx, &out[0], 8*ldout, rows, 1<<nl-1)
}
