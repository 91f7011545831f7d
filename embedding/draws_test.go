package embedding

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestAdviseHuge: the advice leaves every value as it was, for slices too small to hold a
// huge page and for large ones at any alignment (sub-slices starting at odd offsets).
func TestAdviseHuge(t *testing.T) {
	big := make([]float64, 3<<20) // 24 MiB
	for i := range big {
		big[i] = float64(i)
	}
	for _, tc := range []struct {
		name string
		x    []float64
	}{
		{"empty", nil},
		{"small", big[:1000]},
		{"just below two huge pages", big[:(4<<20)/8-1]},
		{"large aligned as allocated", big},
		{"large at an odd offset", big[12345:]},
		{"large at an odd offset and length", big[777 : len(big)-4321]},
	} {
		t.Run(tc.name, func(t *testing.T) {
			first := 0.0 // the value (= index in big) x starts with
			if len(tc.x) > 0 {
				first = tc.x[0]
			}
			adviseHuge(tc.x)
			for i, v := range tc.x {
				if want := first + float64(i); v != want {
					t.Fatalf("x[%d] = %v after adviseHuge, want %v", i, v, want)
				}
			}
		})
	}
}

// TestDivideByPowerOfTwo: divideBy gives the bits of x/d for every divisor, powers of two
// (the multiplication path) and others, over normal, subnormal, huge, signed-zero and
// infinite x.
func TestDivideByPowerOfTwo(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 9))
	xs := []float64{0, math.Copysign(0, -1), 1, -1, math.MaxFloat64, -math.MaxFloat64, math.SmallestNonzeroFloat64,
		0x1p-1022, 0x1.fffffffffffffp-1022, math.Inf(1), math.Inf(-1), math.NaN()}
	for i := 0; i < 100000; i++ {
		xs = append(xs, math.Float64frombits(rng.Uint64()), rng.NormFloat64())
	}
	for _, d := range []float64{0.5, 1, 2, 0.25, 4, 0x1p-1022, 0x1p-1023, 0x1p1023, 0x1p-1074, -0.5, 0.3, 3, 0.1, 1.5} {
		x := append([]float64(nil), xs...)
		divideBy(x, d)
		for i, v := range xs {
			if want := v / d; math.Float64bits(x[i]) != math.Float64bits(want) && !(math.IsNaN(want) && math.IsNaN(x[i])) {
				t.Fatalf("divideBy: %v/%v = %v, want %v", v, d, x[i], want)
			}
		}
	}
}
