// Package stats holds the small statistics that calibrate's checks and the accuracy tests
// share: the R² of an estimate against the truth, the inner product of two float32
// feature vectors, and a mean with its standard error.
package stats

import "math"

// MeanSE is the mean of x and its standard error (sample standard deviation / √n; 0 for
// fewer than two values).
func MeanSE(x []float64) (mean, se float64) {
	for _, v := range x {
		mean += v
	}
	mean /= float64(len(x))
	if len(x) < 2 {
		return mean, 0
	}
	ss := 0.0
	for _, v := range x {
		ss += (v - mean) * (v - mean)
	}
	return mean, math.Sqrt(ss / float64(len(x)-1) / float64(len(x)))
}

// RSquared is the squared Pearson correlation of x and y (0 when either is constant, when
// their lengths differ or when there are fewer than two pairs). With the exact kernel as one
// variable it is the R² of the estimate's best linear fit, the quantity the papers report
// for their Gram experiments.
func RSquared(x, y []float64) float64 {
	n := float64(len(x))
	if n < 2 || len(y) != len(x) {
		return 0
	}
	var mx, my float64
	for i := range x {
		mx += x[i]
		my += y[i]
	}
	mx, my = mx/n, my/n
	var sxy, sxx, syy float64
	for i := range x {
		sxy += (x[i] - mx) * (y[i] - my)
		sxx += (x[i] - mx) * (x[i] - mx)
		syy += (y[i] - my) * (y[i] - my)
	}
	if sxx == 0 || syy == 0 {
		return 0
	}
	return sxy * sxy / (sxx * syy)
}

// Dot32 is the inner product of two float32 vectors of equal length (the estimate of a
// kernel from two feature vectors), accumulated in float64 in index order.
func Dot32(a, b []float32) float64 {
	var s float64
	for i := range a {
		s += float64(a[i]) * float64(b[i])
	}
	return s
}
