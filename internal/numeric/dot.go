package numeric

import (
	"fmt"
	"math"
)

// RFFTileWindows and rffTileSmall are the numbers of windows of the tile kernels
// (rffDotTile): groups of 6, and one group of 4 for what is left.
const (
	RFFTileWindows = 6
	rffTileSmall   = 4
)

// RFFTilePadded is the number of windows applyBatch computes for nw with the tile kernels:
// nw, with 3 left over from the groups of 6 padded to 4 and 5 padded to 6.
func RFFTilePadded(nw int) int {
	if r := nw % RFFTileWindows; r == 3 || r == 5 {
		return nw + 1
	}
	return nw
}

// RFFDotBatch sets theta[w·ldt + r] = ω_r·a_w for r < rows and w < nw, with ω_r =
// omega[r·n : (r+1)·n] and a_w = a[w·n : (w+1)·n], each by RFFDot's summation order, so
// every value is bit-identical to RFFDot on that row and vector. With a tile kernel
// (AVX-512) tiles of 4 rows × 6 windows, then one of 4 rows × 4 windows, share their loads;
// the rows and windows left over, and the other paths, run RFFDot per window on the same
// (cache-resident) rows.
func RFFDotBatch(path Path, omega []float64, n, rows int, a []float64, nw int, theta []float64, ldt int) {
	if rows == 0 || nw == 0 {
		return
	}
	if n < 0 || len(omega) < rows*n || len(a) < nw*n || ldt < rows || len(theta) < (nw-1)*ldt+rows {
		panic("numeric: RFFDotBatch: inconsistent dimensions")
	}
	w0 := 0
	if n > 0 && RFFTileSupported(path) {
		r4 := rows &^ 3
		for w0 < nw {
			tw := RFFTileWindows
			if nw-w0 < RFFTileWindows {
				if nw-w0 < rffTileSmall {
					break
				}
				tw = rffTileSmall
			}
			aw := a[w0*n : (w0+tw)*n]
			for r := 0; r < r4; r += 4 {
				rffDotTile(omega[r*n:(r+4)*n], aw, n, tw, theta[w0*ldt+r:], ldt)
			}
			for w := w0; w < w0+tw && r4 < rows; w++ {
				RFFDot(path, omega[r4*n:rows*n], n, a[w*n:(w+1)*n], theta[w*ldt+r4:w*ldt+rows])
			}
			w0 += tw
		}
	}
	for w := w0; w < nw; w++ {
		RFFDot(path, omega[:rows*n], n, a[w*n:(w+1)*n], theta[w*ldt:w*ldt+rows])
	}
}

// Path selects an implementation of RFFDot. All paths produce bit-identical results.
type Path int

// String names the path (portable, avx2, avx512).
func (p Path) String() string {
	switch p {
	case PathPortable:
		return "portable"
	case PathAVX2:
		return "avx2"
	case PathAVX512:
		return "avx512"
	}
	return fmt.Sprintf("Path(%d)", int(p))
}

// BestPath is the fastest RFFDot kernel this machine supports.
func BestPath() Path {
	for _, p := range []Path{PathAVX512, PathAVX2} {
		if PathSupported(p) {
			return p
		}
	}
	return PathPortable
}

// RFFDot sets theta[r] = ω_r·a for the len(theta) rows ω_r = omega[r·n : (r+1)·n].
//
// The summation order is part of the features' definition, identical on every path: eight
// lanes, lane k accumulating the terms j ≡ k (mod 8) in increasing j with one fused
// multiply-add each (lane_k = fma(ω_j, a_j, lane_k), starting from +0; a lane whose last
// block is incomplete is simply not updated there), then the fixed tree
// ((l0+l4) + (l2+l6)) + ((l1+l5) + (l3+l7)). The AVX-512 kernel holds the eight lanes in
// one ZMM register, the AVX2 kernel in two YMM registers (lanes 0–3 and 4–7), and rffDotGo
// in eight scalars; TestRFFDotPathsBitIdentical checks that they agree bit for bit.
func RFFDot(path Path, omega []float64, n int, a, theta []float64) {
	rows := len(theta)
	if rows == 0 {
		return
	}
	if n == 0 {
		clear(theta)
		return
	}
	if n < 0 || len(omega) < rows*n || len(a) < n {
		panic("numeric: RFFDot: inconsistent dimensions")
	}
	switch path {
	case PathAVX512, PathAVX2:
		rffDotSIMD(path, omega, n, a, theta)
	default:
		rffDotGo(omega, n, a, theta)
	}
}

// rffDotGo is the portable kernel: the exact operation sequence of the SIMD paths, with
// math.FMA where they use VFMADD and plain (separately rounded) additions in the final tree.
func rffDotGo(omega []float64, n int, a, theta []float64) {
	a = a[:n]
	n8 := n &^ 7
	for r := range theta {
		row := omega[r*n : r*n+n]
		var l0, l1, l2, l3, l4, l5, l6, l7 float64
		for j := 0; j < n8; j += 8 {
			w := row[j : j+8 : j+8]
			x := a[j : j+8 : j+8]
			l0 = math.FMA(w[0], x[0], l0)
			l1 = math.FMA(w[1], x[1], l1)
			l2 = math.FMA(w[2], x[2], l2)
			l3 = math.FMA(w[3], x[3], l3)
			l4 = math.FMA(w[4], x[4], l4)
			l5 = math.FMA(w[5], x[5], l5)
			l6 = math.FMA(w[6], x[6], l6)
			l7 = math.FMA(w[7], x[7], l7)
		}
		if t := n - n8; t > 0 {
			w := row[n8:n]
			x := a[n8:n]
			l0 = math.FMA(w[0], x[0], l0)
			if t > 1 {
				l1 = math.FMA(w[1], x[1], l1)
			}
			if t > 2 {
				l2 = math.FMA(w[2], x[2], l2)
			}
			if t > 3 {
				l3 = math.FMA(w[3], x[3], l3)
			}
			if t > 4 {
				l4 = math.FMA(w[4], x[4], l4)
			}
			if t > 5 {
				l5 = math.FMA(w[5], x[5], l5)
			}
			if t > 6 {
				l6 = math.FMA(w[6], x[6], l6)
			}
		}
		theta[r] = ((l0 + l4) + (l2 + l6)) + ((l1 + l5) + (l3 + l7))
	}
}

// dot is a plain inner product with four independent partial sums (a fixed summation
// order), used by hdd's density and projection stages. Every product is rounded before it
// is added (the float64 conversions forbid the compiler from fusing them into FMAs, which
// it does on arm64 and on amd64 with GOAMD64=v3), so results are bit-identical on every
// machine. (The RFF stages use RFFDot, whose order is different.)
func Dot(x, y []float64) float64 {
	y = y[:len(x)]
	var s0, s1, s2, s3 float64
	i := 0
	for ; i+4 <= len(x); i += 4 {
		s0 += float64(x[i] * y[i])
		s1 += float64(x[i+1] * y[i+1])
		s2 += float64(x[i+2] * y[i+2])
		s3 += float64(x[i+3] * y[i+3])
	}
	for ; i < len(x); i++ {
		s0 += float64(x[i] * y[i])
	}
	return (s0 + s1) + (s2 + s3)
}

const (
	PathPortable Path = iota // pure Go (rffDotGo)
	PathAVX2                 // amd64 AVX2+FMA: 6 rows per pass, 8 lanes as two YMM registers
	PathAVX512               // amd64 AVX-512F: 8 rows per pass, one ZMM register per row
)
