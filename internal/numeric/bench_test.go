package numeric

import (
	"fmt"
	"math"
	"testing"
)

// The benchmarks here time each SIMD kernel against its portable twin on shapes the
// families use (`make bench`); a kernel path this machine or build cannot run is skipped
// with the reason. The twins give the same bits (the tests beside each kernel).

// allPaths is every Path, fastest first.
var allPaths = []Path{PathAVX512, PathAVX2, PathPortable}

// benchPath runs f as the sub-benchmark of path p, or skips it when p cannot run here.
func benchPath(b *testing.B, p Path, f func(b *testing.B)) {
	b.Run(p.String(), func(b *testing.B) {
		if !PathSupported(p) {
			b.Skipf("path %v is not supported on this machine or build", p)
		}
		f(b)
	})
}

// benchValues returns n normal values of the given scale.
func benchValues(stream string, n int, scale float64) []float64 {
	rng := NewRNG(1, stream)
	x := make([]float64, n)
	for i := range x {
		x[i] = rng.Normal() * scale
	}
	return x
}

// BenchmarkRFFDot: the hdd stage's shape (1000 inputs), 64 rows per call (ns per row).
func BenchmarkRFFDot(b *testing.B) {
	const n, rows = 1000, 64
	omega, a, theta := benchValues("bench-omega", rows*n, 1), benchValues("bench-a", n, 0.1), make([]float64, rows)
	for _, p := range allPaths {
		benchPath(b, p, func(b *testing.B) {
			for b.Loop() {
				RFFDot(p, omega, n, a, theta)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*rows), "ns/row")
		})
	}
}

// BenchmarkRFFDotBatch: RFFDotBatch for 12 windows of 1000 inputs and 64 rows (the tile
// kernel on AVX-512; RFFDot per window on the other paths), ns per row and window.
func BenchmarkRFFDotBatch(b *testing.B) {
	const n, rows, nw = 1000, 64, 12
	omega, a, theta := benchValues("bench-omega", rows*n, 1), benchValues("bench-a", nw*n, 0.1), make([]float64, nw*rows)
	for _, p := range allPaths {
		benchPath(b, p, func(b *testing.B) {
			for b.Loop() {
				RFFDotBatch(p, omega, n, rows, a, nw, theta, rows)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*rows*nw), "ns/row")
		})
	}
}

// BenchmarkRFFEmit: the features of 2048 frequencies (D = 4096), RFFEmitSIMD against
// rffEmitGo.
func BenchmarkRFFEmit(b *testing.B) {
	theta := benchValues("bench-theta", 2048, 30)
	out := make([]float32, 2*len(theta))
	scale := math.Sqrt(2 / float64(len(out)))
	benchPath(b, PathAVX512, func(b *testing.B) {
		for b.Loop() {
			RFFEmitSIMD(PathAVX512, theta, scale, out)
		}
	})
	benchPath(b, PathPortable, func(b *testing.B) {
		for b.Loop() {
			rffEmitGo(theta, scale, out)
		}
	})
}

// BenchmarkFWHT: one transform of 1024 values (the structured projection's block).
func BenchmarkFWHT(b *testing.B) {
	x := benchValues("bench-fwht", 1024, 1)
	y := make([]float64, len(x))
	for _, p := range []Path{PathAVX512, PathPortable} {
		benchPath(b, p, func(b *testing.B) {
			for b.Loop() {
				copy(y, x)
				FWHT(p, y)
			}
		})
	}
}

// BenchmarkL2Products: one block of L2Block points for |V| = 1000 basis functions, d = 2
// and 3 (ns per basis function).
func BenchmarkL2Products(b *testing.B) {
	const nb = 1000
	for _, d := range []int{2, 3} {
		tab, flat := l2TestTable(NewRNG(1, "bench-l2"), 40, nb, d)
		acc := make([]int64, nb)
		b.Run(fmt.Sprintf("d=%d", d), func(b *testing.B) {
			for _, p := range allPaths {
				benchPath(b, p, func(b *testing.B) {
					for b.Loop() {
						L2Products(p, d, tab, flat, acc)
					}
					b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*nb), "ns/basis")
				})
			}
		})
	}
}

// BenchmarkMMDAccumulate: 1000 points of d = 2 into D = 1024 features (ns per point).
func BenchmarkMMDAccumulate(b *testing.B) {
	const d, hp, n = 2, 512, 1000
	omega := benchValues("bench-mmd-omega", d*hp, 10)
	u := benchValues("bench-mmd-u", n*d, 0.3)
	acc := make([]int64, 2*hp)
	for _, p := range []MMDPath{MMDPathAVX512, MMDPathAVX2, MMDPathPortable} {
		b.Run(p.String(), func(b *testing.B) {
			if !MMDPathSupported(p) {
				b.Skipf("path %v is not supported on this machine or build", p)
			}
			for b.Loop() {
				MMDAccumulate(p, omega, u, d, hp, acc)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/point")
		})
	}
}

// BenchmarkProjLanes: a 33-term table over 64 lanes (hdd's second contraction, G = 64).
func BenchmarkProjLanes(b *testing.B) {
	const h, lanes = 33, 64
	th, v, out := benchValues("bench-th", h, 1), benchValues("bench-v", h*lanes, 1), make([]float64, lanes)
	for _, p := range []Path{PathAVX512, PathPortable} {
		benchPath(b, p, func(b *testing.B) {
			for b.Loop() {
				ProjLanes(p, th, v, lanes, out)
			}
		})
	}
}

// BenchmarkProjLanes2: ProjLanes2SIMD against two portable ProjLanes calls, same shape.
func BenchmarkProjLanes2(b *testing.B) {
	const h, lanes = 33, 64
	thR, thI := benchValues("bench-thr", h, 1), benchValues("bench-thi", h, 1)
	v, outR, outI := benchValues("bench-v", h*lanes, 1), make([]float64, lanes), make([]float64, lanes)
	benchPath(b, PathAVX512, func(b *testing.B) {
		for b.Loop() {
			ProjLanes2SIMD(PathAVX512, thR, thI, v, lanes, outR, outI)
		}
	})
	benchPath(b, PathPortable, func(b *testing.B) {
		for b.Loop() {
			ProjLanes(PathPortable, thR, v, lanes, outR)
			ProjLanes(PathPortable, thI, v, lanes, outI)
		}
	})
}

// BenchmarkDotLanes: DotLanes (KDEDotLanes' kernel on AVX-512) with 20 taps over 64 lanes
// (the first pass of the d = 2 KDE, G = 64).
func BenchmarkDotLanes(b *testing.B) {
	const h, lanes = 20, 64
	th, v, out := benchValues("bench-th", h, 1), benchValues("bench-v", h*lanes, 1), make([]float64, lanes)
	for _, p := range []Path{PathAVX512, PathPortable} {
		benchPath(b, p, func(b *testing.B) {
			if !KDELanesSupported(p) && p != PathPortable {
				b.Skipf("no AVX-512F/DQ on this machine or build")
			}
			for b.Loop() {
				DotLanes(p, th, v, lanes, out)
			}
		})
	}
}

// benchKDE runs the AVX-512 sub-benchmark of a KDE kernel (skipped without AVX-512F/DQ)
// and the portable twin's.
func benchKDE(b *testing.B, kernel, twin func()) {
	b.Run(PathAVX512.String(), func(b *testing.B) {
		if !KDELanesSupported(PathAVX512) {
			b.Skip("no AVX-512F/DQ on this machine or build")
		}
		for b.Loop() {
			kernel()
		}
	})
	b.Run(PathPortable.String(), func(b *testing.B) {
		for b.Loop() {
			twin()
		}
	})
}

// BenchmarkKDESeqLanes: the second pass of the d = 2 KDE for G = 64: 64 rows of 8 lanes,
// 20 steps, against kdeSeqLanesGo.
func BenchmarkKDESeqLanes(b *testing.B) {
	const steps, rows, ldx = 20, 64, 32
	w, x, out := benchValues("bench-w", 8*steps, 1), benchValues("bench-x", rows*ldx, 1), make([]float64, rows*8)
	benchKDE(b, func() { KDESeqLanes(w, x, ldx, out, 8, rows, 8) },
		func() { kdeSeqLanesGo(w, x, ldx, out, 8, rows, 8) })
}

// BenchmarkKDECountsT: the transposed conversion of a 66 × 66 grid of counts (G = 64).
func BenchmarkKDECountsT(b *testing.B) {
	const n, ldc = 66, 72
	counts, cur := make([]int64, n*n), make([]float64, n*ldc)
	for i := range counts {
		counts[i] = int64(i % 7)
	}
	benchKDE(b, func() { KDECountsT(counts, n, cur, ldc) }, func() { kdeCountsTGo(counts, n, cur, ldc) })
}

// BenchmarkScaleFloor: the scaling of a 64 × 64 density grid, against scaleFloorGo.
func BenchmarkScaleFloor(b *testing.B) {
	x := benchValues("bench-dens", 64*64, 1)
	for i := range x {
		x[i] = math.Abs(x[i])
	}
	benchKDE(b, func() { ScaleFloorSIMD(x, 1, 1e-6) }, func() { scaleFloorGo(x, 1, 1e-6) })
}

// BenchmarkFoldLines: the fold of a 64 × 64 grid, against foldLinesGo.
func BenchmarkFoldLines(b *testing.B) {
	const g = 64
	fn, plus, minus := benchValues("bench-fold", g*g, 1), make([]float64, g*g/2), make([]float64, g*g/2)
	benchPath(b, PathAVX512, func(b *testing.B) {
		for b.Loop() {
			FoldLinesSIMD(PathAVX512, fn, g, plus, minus)
		}
	})
	benchPath(b, PathPortable, func(b *testing.B) {
		for b.Loop() {
			foldLinesGo(fn, g, plus, minus)
		}
	})
}

// benchDensities returns n densities like a normalised hdd grid's: log-normal, a fifth
// at the default floor.
func benchDensities(n int) []float64 {
	rng := NewRNG(1, "bench-densities")
	p := make([]float64, n)
	for c := range p {
		p[c] = 1e-6
		if rng.Float64() > 0.2 {
			p[c] = math.Exp(rng.Normal() * 3)
		}
	}
	return p
}

// BenchmarkHDDLogSqrt: √p and ln p of a 64 × 64 grid.
func BenchmarkHDDLogSqrt(b *testing.B) {
	p := benchDensities(64 * 64)
	sq, lnp := make([]float64, len(p)), make([]float64, len(p))
	for _, path := range []Path{PathAVX512, PathPortable} {
		benchPath(b, path, func(b *testing.B) {
			for b.Loop() {
				HDDLogSqrt(path, p, sq, lnp)
			}
		})
	}
}

// BenchmarkHDDCells: g_λ at the cells of a 64 × 64 grid for one λ.
func BenchmarkHDDCells(b *testing.B) {
	p := benchDensities(64 * 64)
	sq, lnp, fr, fi := make([]float64, len(p)), make([]float64, len(p)), make([]float64, len(p)), make([]float64, len(p))
	maxAbsL := hddLogSqrtGo(p, sq, lnp)
	for _, path := range []Path{PathAVX512, PathPortable} {
		benchPath(b, path, func(b *testing.B) {
			for b.Loop() {
				HDDCells(path, 0.7, 0.3, -0.4, sq, lnp, fr, fi, maxAbsL)
			}
		})
	}
}

// BenchmarkBoxMuller: the Box–Muller transform of NormalFill's block of pairs, the AVX2
// kernel against the Go loop it replaces (ns per pair).
func BenchmarkBoxMuller(b *testing.B) {
	rng := NewRNG(1, "bench-box-muller")
	var u1, u2, c, s [normalBlock]float64
	for i := range u1 {
		u1[i] = float64((rng.Uint64()>>11)+1) * 0x1p-53
		u2[i] = rng.Float64()
	}
	b.Run(PathAVX2.String(), func(b *testing.B) {
		if boxMullerSIMD(u1[:], u2[:], c[:], s[:]) == 0 {
			b.Skip("no AVX2 Box–Muller kernel on this machine or build")
		}
		for b.Loop() {
			boxMullerSIMD(u1[:], u2[:], c[:], s[:])
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*normalBlock), "ns/pair")
	})
	b.Run(PathPortable.String(), func(b *testing.B) {
		for b.Loop() {
			for i := range u1 {
				rad := math.Sqrt(-2 * logUnit(u1[i]))
				sn, co := sincosPortable(2 * math.Pi * u2[i])
				c[i], s[i] = rad*co, rad*sn
			}
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*normalBlock), "ns/pair")
	})
}
