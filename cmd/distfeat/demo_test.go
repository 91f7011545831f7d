//go:build dev

package main

import (
	"math"
	"testing"
)

// TestRSquared: the squared Pearson correlation, worked by hand.
func TestRSquared(t *testing.T) {
	for _, tc := range []struct {
		x, y []float64
		want float64
	}{
		{[]float64{1, 2, 3, 4}, []float64{2, 4, 6, 8}, 1},
		{[]float64{1, 2, 3, 4}, []float64{8, 6, 4, 2}, 1},
		// mean 2.5 each; Σdxdy = 4, Σdx² = Σdy² = 5: r = 0.8.
		{[]float64{1, 2, 3, 4}, []float64{1, 3, 2, 4}, 0.64},
		{[]float64{1, 2, 3}, []float64{5, 5, 5}, 0},
		{[]float64{1}, []float64{2}, 0},
	} {
		if got := rSquared(tc.x, tc.y); math.Abs(got-tc.want) > 1e-12 {
			t.Errorf("rSquared(%v, %v) = %v, want %v", tc.x, tc.y, got, tc.want)
		}
	}
}
