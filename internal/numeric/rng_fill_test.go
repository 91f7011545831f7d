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
