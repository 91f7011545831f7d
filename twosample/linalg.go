package twosample

import (
	"fmt"
	"math"
)

// Dense linear algebra for the reference summary, written as plain loops so that its
// results are the same bits on every architecture: every product is rounded by an
// explicit float64 conversion before it is added (Go may otherwise fuse x*y+z into one
// multiply-add on arm64 or amd64 v3, which changes the last bit), sums run in a fixed
// order, and only +, −, ×, ÷ and √ (all correctly rounded IEEE operations) are used.

// cholesky factors the symmetric positive definite n×n matrix a (row-major; only the lower
// triangle is read) into L (lower triangular, row-major, a = L·Lᵀ). It fails when a pivot
// is not positive.
func cholesky(a []float64, n int) ([]float64, error) {
	l := make([]float64, n*n)
	for j := 0; j < n; j++ {
		s := a[j*n+j]
		for k := 0; k < j; k++ {
			s -= float64(l[j*n+k] * l[j*n+k])
		}
		if !(s > 0) {
			return nil, fmt.Errorf("matrix not positive definite at pivot %d (%g)", j, s)
		}
		d := math.Sqrt(s)
		l[j*n+j] = d
		for i := j + 1; i < n; i++ {
			s := a[i*n+j]
			for k := 0; k < j; k++ {
				s -= float64(l[i*n+k] * l[j*n+k])
			}
			l[i*n+j] = s / d
		}
	}
	return l, nil
}

// forwardNorm2 returns |L⁻¹x|² for the lower triangular n×n L, using y as workspace
// (len n).
func forwardNorm2(l []float64, n int, x, y []float64) float64 {
	q := 0.0
	for i := 0; i < n; i++ {
		s := x[i]
		row := l[i*n : i*n+i]
		for k, v := range row {
			s -= float64(v * y[k])
		}
		y[i] = s / l[i*n+i]
		q += float64(y[i] * y[i])
	}
	return q
}

// lowerMul writes L·z to out for the lower triangular n×n L.
func lowerMul(l []float64, n int, z, out []float64) {
	for i := 0; i < n; i++ {
		s := 0.0
		for k, v := range l[i*n : i*n+i+1] {
			s += float64(v * z[k])
		}
		out[i] = s
	}
}
