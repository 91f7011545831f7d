package stats

import (
	"math"
	"testing"
)

func TestRSquared(t *testing.T) {
	for _, tc := range []struct {
		name string
		x, y []float64
		want float64
	}{
		{"exact line", []float64{1, 2, 3, 4}, []float64{3, 5, 7, 9}, 1},
		{"falling line", []float64{1, 2, 3}, []float64{2, 0, -2}, 1},
		// x = (0, 1, 2), y = (0, 2, 1): sxy = 1, sxx = 2, syy = 2, R² = 1/4.
		{"quarter", []float64{0, 1, 2}, []float64{0, 2, 1}, 0.25},
		{"uncorrelated", []float64{-1, 0, 1}, []float64{1, -2, 1}, 0},
		{"constant x", []float64{2, 2, 2}, []float64{1, 2, 3}, 0},
		{"constant y", []float64{1, 2, 3}, []float64{5, 5, 5}, 0},
		{"one pair", []float64{1}, []float64{2}, 0},
		{"empty", nil, nil, 0},
		{"lengths differ", []float64{1, 2, 3}, []float64{1, 2}, 0},
	} {
		if got := RSquared(tc.x, tc.y); math.Abs(got-tc.want) > 1e-15 {
			t.Errorf("%s: RSquared = %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestDot32(t *testing.T) {
	for _, tc := range []struct {
		a, b []float32
		want float64
	}{
		{nil, nil, 0},
		{[]float32{1, 2, 3}, []float32{4, -5, 6}, 12},
		// 2⁻²⁴ products survive: the sum is in float64, not float32.
		{[]float32{1, 0x1p-12}, []float32{1, 0x1p-12}, 1 + 0x1p-24},
	} {
		if got := Dot32(tc.a, tc.b); got != tc.want {
			t.Errorf("Dot32(%v, %v) = %v, want %v", tc.a, tc.b, got, tc.want)
		}
	}
}

// TestMeanSE: the mean and the standard error sd/√n against values worked by hand.
func TestMeanSE(t *testing.T) {
	for _, tc := range []struct {
		x        []float64
		mean, se float64
	}{
		{[]float64{3}, 3, 0},
		{[]float64{1, 3}, 2, 1},                        // sd √2, / √2
		{[]float64{2, 4, 4, 4, 5, 5, 7, 9}, 5, 0.7559}, // sd √(32/7), / √8
	} {
		m, se := MeanSE(tc.x)
		if math.Abs(m-tc.mean) > 1e-12 || math.Abs(se-tc.se) > 1e-4 {
			t.Errorf("MeanSE(%v) = %v, %v; want %v, %v", tc.x, m, se, tc.mean, tc.se)
		}
	}
}
