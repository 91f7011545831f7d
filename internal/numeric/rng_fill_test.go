package numeric

import (
	"math"
	"testing"

	"github.com/distfeat/distfeat/internal/benchclock"
)

// TestNormalFillBitIdentical: NormalFill continues the exact sequence of Normal, whatever
// the fill sizes (odd ones leave the second value of a pair cached; it comes first next
// time) and however fills and single draws are interleaved; logUnit is Log on every u1
// Box–Muller can produce at the ends of its range and on random ones.
func TestNormalFillBitIdentical(t *testing.T) {
	ref, fill := NewRNG(5, "fill"), NewRNG(5, "fill")
	for i, n := range []int{0, 1, 2, 3, 127, 128, 129, 1, 5000, 64, 63, 2, 1000} {
		got := make([]float64, n)
		fill.NormalFill(got)
		for j := range got {
			if want := ref.Normal(); math.Float64bits(got[j]) != math.Float64bits(want) {
				t.Fatalf("fill %d (size %d), draw %d: %v, Normal gives %v", i, n, j, got[j], want)
			}
		}
		if i%3 == 0 { // a single draw between fills
			if a, b := fill.Normal(), ref.Normal(); math.Float64bits(a) != math.Float64bits(b) {
				t.Fatalf("after fill %d: Normal %v vs %v", i, a, b)
			}
		}
	}
	r := NewRNG(6, "log")
	for i := 0; i < 200000; i++ {
		u := float64((r.Uint64()>>11)+1) * 0x1p-53
		switch i {
		case 0:
			u = 0x1p-53
		case 1:
			u = 1
		case 2:
			u = math.Sqrt2 / 2
		case 3:
			u = math.Nextafter(math.Sqrt2/2, 0)
		}
		if a, b := logUnit(u), Log(u); math.Float64bits(a) != math.Float64bits(b) {
			t.Fatalf("logUnit(%v) = %v, Log = %v", u, a, b)
		}
	}
}

// BenchmarkNormal: one draw by Normal against NormalFill (cpu-ns per draw).
func BenchmarkNormal(b *testing.B) {
	b.Run("Normal", func(b *testing.B) {
		r := NewRNG(1, "bench")
		clk := benchclock.Start(b)
		for range b.N {
			_ = r.Normal()
		}
		clk.Stop(0, "")
	})
	b.Run("NormalFill", func(b *testing.B) {
		r := NewRNG(1, "bench")
		buf := make([]float64, 4096)
		clk := benchclock.Start(b)
		for i := 0; i < b.N; i += len(buf) {
			r.NormalFill(buf[:min(len(buf), b.N-i)])
		}
		clk.Stop(0, "")
	})
}

// TestBoxMullerSIMDBitIdentical: the vector Box–Muller kernel gives the Go code's bits on
// the edges of its branches — u1 at 2⁻⁵³, 1 and either side of √2/2 (the f1 < √2/2 step),
// u2 at 0, just below 1 and either side of every octant boundary of 2πu2 (x·4/π near an
// integer: the odd-octant step and the j = 8 wrap) — and on a million random pairs.
func TestBoxMullerSIMDBitIdentical(t *testing.T) {
	var u1s, u2s []float64
	edges1 := []float64{0x1p-53, 1, math.Sqrt2 / 2, math.Nextafter(math.Sqrt2/2, 0), math.Nextafter(math.Sqrt2/2, 2), 0.5, 0.25}
	edges2 := []float64{0, 0x1p-53, math.Nextafter(1, 0), 0.5}
	for j := 1; j < 8; j++ { // 2πu2·4/π = 8u2 = j
		b := float64(j) / 8
		edges2 = append(edges2, b, math.Nextafter(b, 0), math.Nextafter(b, 1))
	}
	for _, a := range edges1 {
		for _, b := range edges2 {
			u1s, u2s = append(u1s, a), append(u2s, b)
		}
	}
	r := NewRNG(8, "box-muller")
	for len(u1s) < 1<<20 {
		u1s = append(u1s, float64((r.Uint64()>>11)+1)*0x1p-53)
		u2s = append(u2s, r.Float64())
	}
	n := len(u1s)
	c, s := make([]float64, n), make([]float64, n)
	done := boxMullerSIMD(u1s, u2s, c, s)
	if done == 0 {
		t.Skip("skipping: no vector kernel on this machine/build (purego, non-amd64 or no AVX2); NormalFill runs the Go code")
	}
	for i := 0; i < done; i++ {
		rad := math.Sqrt(-2 * logUnit(u1s[i]))
		ws, wc := sincosPortable(2 * math.Pi * u2s[i])
		if math.Float64bits(c[i]) != math.Float64bits(rad*wc) || math.Float64bits(s[i]) != math.Float64bits(rad*ws) {
			t.Fatalf("u1 = %v, u2 = %v: kernel (%v, %v), Go (%v, %v)", u1s[i], u2s[i], c[i], s[i], rad*wc, rad*ws)
		}
	}
}
