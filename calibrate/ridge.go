package calibrate

import (
	"math"
	"slices"
	"strconv"

	"gonum.org/v1/gonum/mat"

	"github.com/distfeat/distfeat/embedding"
)

// Cross-validated accuracy of a linear model on the features, for labelled sets (--label):
// one-vs-rest ridge regression on ±1 targets, in its kernel form (K = ZZᵀ, so the cost is
// in the number of sets, not of features), predicting the class with the largest output.
// The ridge λ is chosen per fold from trace(K)/n·10^e, e = −5…0, by the accuracy on that
// fold's own training sets (leave-one-out via the hat matrix), so the reported accuracy is
// an honest held-out estimate.

// cvFolds is the number of cross-validation folds.
const cvFolds = 5

// cvAccuracy is the cross-validated accuracy of ridge on the rows z (one per set) with the
// given labels. Folds are assigned by a seeded shuffle (stream "calibrate/folds").
func cvAccuracy(z [][]float32, labels []string, seed uint64) float64 {
	n := len(z)
	if n < 2*cvFolds {
		return math.NaN()
	}
	classes := slices.Compact(slices.Sorted(slices.Values(labels)))
	if len(classes) < 2 {
		return math.NaN()
	}
	cls := make([]int, n)
	for i, l := range labels {
		cls[i], _ = slices.BinarySearch(classes, l)
	}
	// Gram matrix of the rows, once.
	k := mat.NewSymDense(n, nil)
	parallelFor(n, 2, func(i int) {
		for j := 0; j <= i; j++ {
			k.SetSym(i, j, dot32(z[i], z[j]))
		}
	})
	perm := choose(embedding.NewRNG(seed, "calibrate/folds"), n, n) // sorted: shuffle below
	rng := embedding.NewRNG(seed, "calibrate/folds/"+strconv.Itoa(n))
	for i := n - 1; i > 0; i-- {
		j := intn(rng, i+1)
		perm[i], perm[j] = perm[j], perm[i]
	}
	correct := 0
	for fold := 0; fold < cvFolds; fold++ {
		var tr, te []int
		for p, i := range perm {
			if p%cvFolds == fold {
				te = append(te, i)
			} else {
				tr = append(tr, i)
			}
		}
		correct += ridgeFold(k, cls, len(classes), tr, te)
	}
	return float64(correct) / float64(n)
}

// ridgeFold trains on tr (λ by leave-one-out accuracy on tr) and returns the number of
// correct predictions on te. One eigendecomposition K = VΛVᵀ of the training Gram matrix
// serves every λ: the hat matrix is V·diag(Λ/(Λ+λ))·Vᵀ, the weights V·diag(1/(Λ+λ))·Vᵀy.
func ridgeFold(k *mat.SymDense, cls []int, nc int, tr, te []int) int {
	m := len(tr)
	ktr := mat.NewSymDense(m, nil)
	for a, i := range tr {
		for b := 0; b <= a; b++ {
			ktr.SetSym(a, b, k.At(i, tr[b]))
		}
	}
	var eig mat.EigenSym
	if !eig.Factorize(ktr, true) {
		return 0
	}
	ev := eig.Values(nil)
	var v mat.Dense
	eig.VectorsTo(&v)
	y := mat.NewDense(m, nc, nil)
	for a, i := range tr {
		for c := 0; c < nc; c++ {
			y.Set(a, c, -1)
		}
		y.Set(a, cls[i], 1)
	}
	var vty mat.Dense
	vty.Mul(v.T(), y) // m × nc
	trace := 0.0
	for _, e := range ev {
		trace += math.Max(e, 0)
	}
	trace /= float64(m)
	scaled := func(w []float64) *mat.Dense { // diag(w)·Vᵀy
		out := mat.DenseCopyOf(&vty)
		for r, x := range w {
			for c := 0; c < nc; c++ {
				out.Set(r, c, out.At(r, c)*x)
			}
		}
		return out
	}
	bestAcc, bestLam := -1, 0.0
	for e := -5; e <= 0; e++ {
		lam := trace * math.Pow(10, float64(e))
		w := make([]float64, m)
		for r, x := range ev {
			x = math.Max(x, 0)
			w[r] = x / (x + lam)
		}
		var fit mat.Dense
		fit.Mul(&v, scaled(w))
		acc := 0
		for i := 0; i < m; i++ {
			var hii float64
			for r := 0; r < m; r++ {
				hii += v.At(i, r) * v.At(i, r) * w[r]
			}
			best, bc := math.Inf(-1), 0
			for c := 0; c < nc; c++ {
				loo := y.At(i, c) - (y.At(i, c)-fit.At(i, c))/(1-hii)
				if loo > best {
					best, bc = loo, c
				}
			}
			if bc == cls[tr[i]] {
				acc++
			}
		}
		if acc > bestAcc {
			bestAcc, bestLam = acc, lam
		}
	}
	w := make([]float64, m)
	for r, x := range ev {
		w[r] = 1 / (math.Max(x, 0) + bestLam)
	}
	var alpha mat.Dense
	alpha.Mul(&v, scaled(w))
	correct := 0
	for _, i := range te {
		best, bc := math.Inf(-1), 0
		for c := 0; c < nc; c++ {
			var s float64
			for b, j := range tr {
				s += k.At(i, j) * alpha.At(b, c)
			}
			if s > best {
				best, bc = s, c
			}
		}
		if bc == cls[i] {
			correct++
		}
	}
	return correct
}
