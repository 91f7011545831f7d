package numeric

import (
	"math"
	"testing"
)

// TestProjLanesPaths: ProjLanes on every path equals the per-lane definition (two
// alternating partial sums of rounded products) bit for bit, for lane counts around the
// kernels' 32 and 8 and odd and even table lengths, with signed zeros and extreme values.
func TestProjLanesPaths(t *testing.T) {
	rng := NewRNG(12, "proj-lanes")
	for _, h := range []int{1, 2, 3, 7, 32, 33, 64} {
		for _, lanes := range []int{1, 7, 8, 9, 31, 32, 33, 40, 64, 100} {
			ld := lanes + int(rng.Float64()*3)
			th := make([]float64, h)
			for i := range th {
				th[i] = rffDotValue(rng, 1)
			}
			v := make([]float64, (h-1)*ld+lanes)
			for i := range v {
				v[i] = rffDotValue(rng, 1)
			}
			want := make([]float64, lanes)
			for k := range want {
				var a0, a1 float64
				for c := 0; c < h; c++ {
					if c%2 == 0 {
						a0 += float64(th[c] * v[c*ld+k])
					} else {
						a1 += float64(th[c] * v[c*ld+k])
					}
				}
				want[k] = a0 + a1
			}
			for _, p := range dotPaths(t) {
				got := make([]float64, lanes)
				ProjLanes(p, th, v, ld, got)
				for k := range got {
					if math.Float64bits(got[k]) != math.Float64bits(want[k]) {
						t.Fatalf("h=%d lanes=%d path %v lane %d: %v, definition %v", h, lanes, p, k, got[k], want[k])
					}
				}
			}
		}
	}
}

// foldLinesGo is the portable twin of FoldLinesSIMD (the loop of embedding's project2DT):
// for c < ⌊G/2⌋, with a = line c and b = line G−1−c of fn, plus = a + b and minus = a − b.
func foldLinesGo(fn []float64, g int, plus, minus []float64) {
	for c := 0; c < g/2; c++ {
		a, b := fn[c*g:(c+1)*g], fn[(g-1-c)*g:(g-c)*g]
		pl, mi := plus[c*g:(c+1)*g], minus[c*g:(c+1)*g]
		for o, x := range a {
			y := b[o]
			pl[o], mi[o] = x+y, x-y
		}
	}
}

// TestFoldLinesSIMDBitIdentical: FoldLinesSIMD, when it runs (AVX-512, G ≥ 2), gives
// foldLinesGo's bits and writes nothing past the folded lines, for G odd and even around
// the kernel's 8.
func TestFoldLinesSIMDBitIdentical(t *testing.T) {
	rng := NewRNG(18, "fold-lines")
	for _, g := range []int{1, 2, 3, 7, 8, 9, 16, 17, 33, 64} {
		fn := make([]float64, g*g)
		for i := range fn {
			fn[i] = rffDotValue(rng, 1)
		}
		pairs := g / 2
		wantP, wantM := make([]float64, pairs*g+1), make([]float64, pairs*g+1)
		wantP[pairs*g], wantM[pairs*g] = 777, 777 // sentinels
		foldLinesGo(fn, g, wantP, wantM)
		for _, p := range dotPaths(t) {
			gotP, gotM := make([]float64, pairs*g+1), make([]float64, pairs*g+1)
			gotP[pairs*g], gotM[pairs*g] = 777, 777
			ran := FoldLinesSIMD(p, fn, g, gotP[:pairs*g], gotM[:pairs*g])
			if ran != (p == PathAVX512 && pairs > 0) {
				t.Fatalf("G=%d path %v: FoldLinesSIMD ran = %v", g, p, ran)
			}
			if !ran {
				continue
			}
			for i := range wantP {
				if math.Float64bits(gotP[i]) != math.Float64bits(wantP[i]) || math.Float64bits(gotM[i]) != math.Float64bits(wantM[i]) {
					t.Fatalf("G=%d path %v [%d]: (%v, %v), portable (%v, %v)", g, p, i, gotP[i], gotM[i], wantP[i], wantM[i])
				}
			}
		}
	}
}

// TestProjLanes2SIMDBitIdentical: ProjLanes2SIMD's lanes (a multiple of 8, on the AVX-512
// path) equal two portable ProjLanes calls bit for bit, for table lengths odd and even and
// lane counts around 8.
func TestProjLanes2SIMDBitIdentical(t *testing.T) {
	rng := NewRNG(19, "proj-lanes2")
	for _, h := range []int{1, 2, 3, 7, 32, 33} {
		for _, lanes := range []int{1, 7, 8, 9, 16, 31, 40} {
			ld := lanes + int(rng.Uint64()%3)
			thR, thI, v := make([]float64, h), make([]float64, h), make([]float64, (h-1)*ld+lanes)
			for i := range thR {
				thR[i], thI[i] = rffDotValue(rng, 1), rffDotValue(rng, 1)
			}
			for i := range v {
				v[i] = rffDotValue(rng, 1)
			}
			wantR, wantI := make([]float64, lanes), make([]float64, lanes)
			ProjLanes(PathPortable, thR, v, ld, wantR)
			ProjLanes(PathPortable, thI, v, ld, wantI)
			for _, p := range dotPaths(t) {
				gotR, gotI := make([]float64, lanes), make([]float64, lanes)
				k := ProjLanes2SIMD(p, thR, thI, v, ld, gotR, gotI)
				if want := map[bool]int{true: lanes &^ 7}[p == PathAVX512]; k != want {
					t.Fatalf("h=%d lanes=%d path %v: ProjLanes2SIMD did %d lanes, want %d", h, lanes, p, k, want)
				}
				for l := 0; l < k; l++ {
					if math.Float64bits(gotR[l]) != math.Float64bits(wantR[l]) || math.Float64bits(gotI[l]) != math.Float64bits(wantI[l]) {
						t.Fatalf("h=%d lanes=%d path %v lane %d: (%v, %v), ProjLanes (%v, %v)", h, lanes, p, l, gotR[l], gotI[l], wantR[l], wantI[l])
					}
				}
			}
		}
	}
}
