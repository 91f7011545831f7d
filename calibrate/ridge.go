package calibrate

import (
	"math"
	"slices"
	"strconv"

	"gonum.org/v1/gonum/mat"

	"github.com/distfeat/distfeat/embedding"
	"github.com/distfeat/distfeat/internal/stats"
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
			k.SetSym(i, j, stats.Dot32(z[i], z[j]))
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
	r, ok := newRidgeEigen(k, cls, nc, tr)
	if !ok {
		return 0
	}
	alpha := r.dualWeights(r.looBestLambda(cls, tr))
	correct := 0
	for _, i := range te {
		scores := make([]float64, nc)
		for c := range scores {
			for b, j := range tr {
				scores[c] += k.At(i, j) * alpha.At(b, c)
			}
		}
		if ridgeArgmax(scores) == cls[i] {
			correct++
		}
	}
	return correct
}

// ridgeEigen is the eigendecomposition K = VΛVᵀ of the training Gram matrix with the ±1
// class targets y and Vᵀy.
type ridgeEigen struct {
	ev     []float64 // Λ
	v      mat.Dense // V
	y, vty mat.Dense // m × nc
	m, nc  int
	trace  float64 // mean of max(Λ, 0): the λ grid's scale
}

// newRidgeEigen decomposes the Gram matrix of the training sets tr (false when the
// decomposition fails).
func newRidgeEigen(k *mat.SymDense, cls []int, nc int, tr []int) (*ridgeEigen, bool) {
	m := len(tr)
	ktr := mat.NewSymDense(m, nil)
	for a, i := range tr {
		for b := 0; b <= a; b++ {
			ktr.SetSym(a, b, k.At(i, tr[b]))
		}
	}
	var eig mat.EigenSym
	if !eig.Factorize(ktr, true) {
		return nil, false
	}
	r := &ridgeEigen{ev: eig.Values(nil), m: m, nc: nc}
	eig.VectorsTo(&r.v)
	r.y.ReuseAs(m, nc)
	for a, i := range tr {
		for c := 0; c < nc; c++ {
			r.y.Set(a, c, -1)
		}
		r.y.Set(a, cls[i], 1)
	}
	r.vty.Mul(r.v.T(), &r.y) // m × nc
	for _, e := range r.ev {
		r.trace += math.Max(e, 0)
	}
	r.trace /= float64(m)
	return r, true
}

// scaled is V·diag(w)·Vᵀy.
func (r *ridgeEigen) scaled(w []float64) *mat.Dense {
	out := mat.DenseCopyOf(&r.vty)
	for row, x := range w {
		for c := 0; c < r.nc; c++ {
			out.Set(row, c, out.At(row, c)*x)
		}
	}
	var res mat.Dense
	res.Mul(&r.v, out)
	return &res
}

// looBestLambda is the λ among trace·10^e, e = −5…0, with the most correct leave-one-out
// predictions on the training sets (the first of equals).
func (r *ridgeEigen) looBestLambda(cls, tr []int) float64 {
	bestAcc, bestLam := -1, 0.0
	for e := -5; e <= 0; e++ {
		lam := r.trace * math.Pow(10, float64(e))
		if acc := r.looCorrect(lam, cls, tr); acc > bestAcc {
			bestAcc, bestLam = acc, lam
		}
	}
	return bestLam
}

// looCorrect counts the training sets whose leave-one-out prediction at penalty lam,
// y_i − (y_i − ŷ_i)/(1 − H_ii), is at their class.
func (r *ridgeEigen) looCorrect(lam float64, cls, tr []int) int {
	w := make([]float64, r.m)
	for row, x := range r.ev {
		x = math.Max(x, 0)
		w[row] = x / (x + lam)
	}
	fit := r.scaled(w)
	acc := 0
	loo := make([]float64, r.nc)
	for i := 0; i < r.m; i++ {
		var hii float64
		for row := 0; row < r.m; row++ {
			hii += r.v.At(i, row) * r.v.At(i, row) * w[row]
		}
		for c := range loo {
			loo[c] = r.y.At(i, c) - (r.y.At(i, c)-fit.At(i, c))/(1-hii)
		}
		if ridgeArgmax(loo) == cls[tr[i]] {
			acc++
		}
	}
	return acc
}

// dualWeights is α = V·diag(1/(Λ+λ))·Vᵀy.
func (r *ridgeEigen) dualWeights(lam float64) *mat.Dense {
	w := make([]float64, r.m)
	for row, x := range r.ev {
		w[row] = 1 / (math.Max(x, 0) + lam)
	}
	return r.scaled(w)
}

// ridgeArgmax is the index of the first largest score (0 when none exceeds −∞).
func ridgeArgmax(scores []float64) int {
	best, bc := math.Inf(-1), 0
	for c, s := range scores {
		if s > best {
			best, bc = s, c
		}
	}
	return bc
}
