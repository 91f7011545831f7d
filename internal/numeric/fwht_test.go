package numeric

import (
	"math"
	"testing"
)

// TestFWHT: fwht equals the product with the Sylvester Hadamard matrix, Ĥ_jk =
// (−1)^popcount(j&k), exactly on small integer inputs (all sums exact), for every length
// and path; on general inputs every path gives the same bits.
func TestFWHT(t *testing.T) {
	rng := NewRNG(1, "numeric.FWHT")
	for p := 1; p <= 256; p <<= 1 {
		x := make([]float64, p)
		for i := range x {
			x[i] = float64(int(rng.Float64()*201) - 100)
		}
		want := make([]float64, p)
		for j := range want {
			for k, v := range x {
				if popcount(j&k)%2 == 1 {
					want[j] -= v
				} else {
					want[j] += v
				}
			}
		}
		for _, path := range dotPaths(t) {
			y := append([]float64(nil), x...)
			FWHT(path, y)
			for j := range y {
				if y[j] != want[j] {
					t.Fatalf("p=%d path %v: FWHT[%d] = %v, want %v", p, path, j, y[j], want[j])
				}
			}
		}
		// Non-integer inputs (rounding in every butterfly): every path gives the same bits.
		for i := range x {
			x[i] = rffDotValue(rng, 1)
		}
		var ref []float64
		for _, path := range dotPaths(t) {
			y := append([]float64(nil), x...)
			FWHT(path, y)
			if ref == nil {
				ref = y
				continue
			}
			for j := range y {
				if math.Float64bits(y[j]) != math.Float64bits(ref[j]) {
					t.Fatalf("p=%d path %v: FWHT[%d] = %v, portable %v", p, path, j, y[j], ref[j])
				}
			}
		}
	}
}

func popcount(x int) int {
	n := 0
	for ; x != 0; x &= x - 1 {
		n++
	}
	return n
}
