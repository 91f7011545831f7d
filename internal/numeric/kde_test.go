package numeric

import (
	"math"
	"testing"
)

// kdeSeqLanesGo is the definition of KDESeqLanes (the order of embedding's kdeAxis.apply):
// for rows r < rows and lanes l < nl, out[r·ldout + l] = Σ_u w[8u+l]·x[r·ldx + u + l] over
// u < len(w)/8 in increasing u from +0, every product rounded before it is added.
func kdeSeqLanesGo(w, x []float64, ldx int, out []float64, ldout, rows, nl int) {
	steps := len(w) / 8
	for r := 0; r < rows; r++ {
		for l := 0; l < nl; l++ {
			acc := 0.0
			for u := 0; u < steps; u++ {
				acc += float64(w[8*u+l] * x[r*ldx+u+l])
			}
			out[r*ldout+l] = acc
		}
	}
}

// kdeCountsTGo is the definition of KDECountsT: cur[p1·ldc + p0] = float64(counts[p0·n + p1]).
func kdeCountsTGo(counts []int64, n int, cur []float64, ldc int) {
	for p0 := 0; p0 < n; p0++ {
		for p1 := 0; p1 < n; p1++ {
			cur[p1*ldc+p0] = float64(counts[p0*n+p1])
		}
	}
}

// scaleFloorGo is the portable twin of ScaleFloorSIMD (embedding's normalizeDensity's last
// loop): x·scale, rounded, raised to floor where below it.
func scaleFloorGo(x []float64, scale, floor float64) {
	for i, v := range x {
		v *= scale
		if v < floor {
			v = floor
		}
		x[i] = v
	}
}

// dotLanesDefinition is DotLanes per lane: Dot of th and column k of v.
func dotLanesDefinition(th, v []float64, ld int, out []float64) {
	col := make([]float64, len(th))
	for k := range out {
		for c := range th {
			col[c] = v[c*ld+k]
		}
		out[k] = Dot(th, col)
	}
}

// TestDotLanesPaths: DotLanes (KDEDotLanes' kernel on the AVX-512 path) equals Dot per
// lane bit for bit, for lane counts around the kernel's 8 and 16, tap counts around its 4,
// with signed zeros, tiny and huge values.
func TestDotLanesPaths(t *testing.T) {
	rng := NewRNG(16, "dot-lanes")
	for _, h := range []int{1, 3, 4, 5, 8, 13, 40} {
		for _, lanes := range []int{1, 7, 8, 9, 16, 17, 24, 64, 70} {
			ld := lanes + int(rng.Uint64()%9)
			th, v := make([]float64, h), make([]float64, (h-1)*ld+lanes)
			for i := range th {
				th[i] = rffDotValue(rng, 1)
			}
			for i := range v {
				v[i] = rffDotValue(rng, 1)
			}
			want := make([]float64, lanes)
			dotLanesDefinition(th, v, ld, want)
			for _, p := range dotPaths(t) {
				got := make([]float64, lanes)
				DotLanes(p, th, v, ld, got)
				for k := range got {
					if math.Float64bits(got[k]) != math.Float64bits(want[k]) {
						t.Fatalf("h=%d lanes=%d path %v lane %d: %v, Dot %v", h, lanes, p, k, got[k], want[k])
					}
				}
			}
		}
	}
}

// TestKDEKernelsBitIdentical: the AVX-512 kernels of embedding's kdeMass2T and
// normalizeDensityT each equal their definition bit for bit — KDESeqLanes (steps, rows
// and stored lanes around the kernel's 8 lanes and 4 rows), KDECountsT (n around 8,
// counts up to 2⁵³ and beyond, which round) and ScaleFloorSIMD (values below, at and above
// the floor, ±0, subnormal and huge).
func TestKDEKernelsBitIdentical(t *testing.T) {
	if !KDELanesSupported(PathAVX512) {
		t.Skip("no AVX-512F/DQ on this machine or build: kdeMass2T's kernels are never called (KDELanesSupported)")
	}
	rng := NewRNG(17, "kde-kernels")
	for _, steps := range []int{1, 2, 5, 17} {
		for _, rows := range []int{1, 3, 4, 5, 9} {
			for nl := 1; nl <= 8; nl++ {
				ldx, ldout := steps+7+int(rng.Uint64()%5), nl+int(rng.Uint64()%5)
				w, x := make([]float64, 8*steps), make([]float64, (rows-1)*ldx+steps+7)
				for i := range w {
					w[i] = rffDotValue(rng, 1)
				}
				for i := range x {
					x[i] = rffDotValue(rng, 1)
				}
				want := make([]float64, (rows-1)*ldout+nl)
				for i := range want {
					want[i] = math.Float64frombits(uint64(i)) // what a row does not store stays
				}
				got := append(append([]float64(nil), want...), 777) // sentinel: nothing is written past out
				kdeSeqLanesGo(w, x, ldx, want, ldout, rows, nl)
				KDESeqLanes(w, x, ldx, got[:len(want)], ldout, rows, nl)
				if got[len(got)-1] != 777 {
					t.Fatalf("steps=%d rows=%d nl=%d: KDESeqLanes wrote past out", steps, rows, nl)
				}
				for i := range want {
					if math.Float64bits(got[i]) != math.Float64bits(want[i]) {
						t.Fatalf("steps=%d rows=%d nl=%d: out[%d] = %v, definition %v", steps, rows, nl, i, got[i], want[i])
					}
				}
			}
		}
	}
	for _, n := range []int{1, 2, 7, 8, 9, 16, 17, 66} {
		ldc := (n + 7) &^ 7
		counts := make([]int64, n*n)
		for i := range counts {
			counts[i] = int64(rng.Uint64() >> (1 + rng.Uint64()%63))
		}
		want, got := make([]float64, n*ldc), make([]float64, n*ldc)
		kdeCountsTGo(counts, n, want, ldc)
		KDECountsT(counts, n, got, ldc)
		for i := range want {
			if math.Float64bits(got[i]) != math.Float64bits(want[i]) {
				t.Fatalf("n=%d: cur[%d] = %v, definition %v", n, i, got[i], want[i])
			}
		}
	}
	special := []float64{0, math.Copysign(0, -1), 1e-6, 1e-7, 5e-324, 1e300, 3}
	for _, n := range []int{1, 7, 8, 9, 64, 100} {
		x := make([]float64, n)
		for i := range x {
			if rng.Float64() < 0.2 {
				x[i] = special[rng.Uint64()%uint64(len(special))]
			} else {
				x[i] = math.Exp(rng.Normal() * 5)
			}
		}
		for _, floor := range []float64{0, 1e-6, 0.5} {
			scale := 1 + rng.Float64()
			want, got := append([]float64(nil), x...), append([]float64(nil), x...)
			scaleFloorGo(want, scale, floor)
			k := ScaleFloorSIMD(got, scale, floor)
			if k != n&^7 {
				t.Fatalf("n=%d: ScaleFloorSIMD did %d values, want %d", n, k, n&^7)
			}
			for i := range got[:k] {
				if math.Float64bits(got[i]) != math.Float64bits(want[i]) {
					t.Fatalf("n=%d floor %g: x[%d] = %v, definition %v (from %v)", n, floor, i, got[i], want[i], x[i])
				}
			}
		}
	}
}
