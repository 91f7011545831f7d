package numeric

import (
	"fmt"
	"slices"
	"testing"
)

// l2TestTable returns a block table of rows row blocks of L2Block values (mostly of
// magnitude ≤ 1, like the Chebyshev rows they stand for, with signed zeros and tiny
// values) and, for nb basis functions, d random block offsets each (flat[j][m], a multiple
// of L2Block below len(tab)).
func l2TestTable(rng *RNG, rows, nb, d int) ([]float64, *[3][]int32) {
	tab := make([]float64, rows*L2Block)
	for i := range tab {
		tab[i] = rffDotValue(rng, 0.5)
		if tab[i] > 1 || tab[i] < -1 { // |ψ| ≤ 1 in use: keep the fixed-point sums in range
			tab[i] = 1 / tab[i]
		}
	}
	var flat [3][]int32
	for j := 0; j < d; j++ {
		flat[j] = make([]int32, nb)
		for m := range flat[j] {
			flat[j][m] = int32(rng.Uint64()%uint64(rows)) * L2Block
		}
	}
	return tab, &flat
}

// TestL2ProductsPathsBitIdentical: L2Products on every path adds l2ProductsGo's
// accumulators bit for bit (to a non-zero starting state), for d = 2 and 3 and basis
// counts around the kernels' register widths.
func TestL2ProductsPathsBitIdentical(t *testing.T) {
	rng := NewRNG(15, "l2-products")
	for _, d := range []int{2, 3} {
		for _, nb := range []int{1, 2, 3, 4, 5, 7, 8, 9, 31, 100, 1000} {
			t.Run(fmt.Sprintf("d=%d,nb=%d", d, nb), func(t *testing.T) {
				tab, flat := l2TestTable(rng, 40, nb, d)
				start := make([]int64, nb)
				for m := range start {
					start[m] = int64(rng.Uint64())
				}
				want := slices.Clone(start)
				l2ProductsGo(d, tab, flat, want)
				for _, p := range dotPaths(t) {
					acc := slices.Clone(start)
					L2Products(p, d, tab, flat, acc)
					for i := range acc {
						if acc[i] != want[i] {
							t.Fatalf("path %v: acc[%d] = %d, portable %d", p, i, acc[i], want[i])
						}
					}
				}
			})
		}
	}
}
