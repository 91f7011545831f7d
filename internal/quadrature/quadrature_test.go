package quadrature

import (
	"math"
	"testing"

	"gonum.org/v1/gonum/integrate/quad"
)

// TestGaussLegendre: the rule is exact for polynomials of degree < 2n (to rounding), its
// nodes are ascending and symmetric, and it agrees with gonum's independent implementation
// to a few ulps (gonum's last bits differ, which is why embedding cannot use it: the nodes
// enter pinned features).
func TestGaussLegendre(t *testing.T) {
	for _, n := range []int{1, 2, 3, 5, 8, 12, 16, 20, 33} {
		x, w := GaussLegendre(n)
		for k := 0; k < 2*n; k++ {
			got := 0.0
			for i := range x {
				got += w[i] * math.Pow(x[i], float64(k))
			}
			want := 0.0 // ∫_{−1}^{1} x^k dx
			if k%2 == 0 {
				want = 2 / float64(k+1)
			}
			// Summing n terms of size ≤ 2 with a few ulps each: 1e-13 is ~500 ulps of 2.
			if math.Abs(got-want) > 1e-13 {
				t.Errorf("n=%d: ∫x^%d = %.17g, want %.17g", n, k, got, want)
			}
		}
		gx, gw := make([]float64, n), make([]float64, n)
		quad.Legendre{}.FixedLocations(gx, gw, -1, 1)
		for i := range x {
			if i > 0 && !(x[i] > x[i-1]) {
				t.Errorf("n=%d: nodes not ascending at %d: %v", n, i, x)
			}
			if x[i] != -x[n-1-i] || w[i] != w[n-1-i] {
				t.Errorf("n=%d: rule not symmetric at %d", n, i)
			}
			// gonum lists the nodes descending. Nodes and weights are O(1); 1e-14 allows
			// gonum's different rounding.
			g := n - 1 - i
			if math.Abs(x[i]-gx[g]) > 1e-14 || math.Abs(w[i]-gw[g]) > 1e-14 {
				t.Errorf("n=%d: node %d (%v, %v) vs gonum (%v, %v)", n, i, x[i], w[i], gx[g], gw[g])
			}
		}
	}
}
