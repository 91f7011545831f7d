package model

import (
	"errors"
	"fmt"
	"math"
	"slices"

	"gonum.org/v1/gonum/mat"
)

// FitPoints fits a per-point model (Per = PerPoint) to per-point feature rows — the
// marginal-transfer features of every point of labelled sets (domains), Blanchard et al.'s
// domain generalisation: x[i] is point i's row, set[i] the index (0 … sets−1) of its set,
// labels[i] its label. The model is a one-vs-rest ridge classifier on ±1 targets
// (Classification) or ridge regression (Regression, numeric labels), with intercepts, as
// Fit's, with every set weighted equally: point i of a set of n points weighs 1/n in the
// squared loss, as calibrate --point-label weighs them. λ is chosen by k-fold
// cross-validation over whole sets (a set's points are never split between training and
// validation) by the out-of-fold accuracy averaged over sets (each set's accuracy on its own
// points, then their mean) or the RMSE with every set weighing the same (the root of the
// mean over sets of each set's mean squared error). A per-point regression has no
// prediction intervals (split-conformal residuals of points of one set are not
// exchangeable). The caller fills in SpecID, Families, Columns and Label. The same rows,
// sets, labels and options give the same model.
func FitPoints(x [][]float32, set []int, labels []string, o Options) (*Model, error) {
	o.defaults()
	n := len(x)
	if n != len(labels) || n != len(set) {
		return nil, fmt.Errorf("model: %d point rows, %d labels, %d set indices", n, len(labels), len(set))
	}
	if n == 0 {
		return nil, errors.New("model: no points to fit")
	}
	if o.Kind != Classification && o.Kind != Regression {
		return nil, fmt.Errorf("model: kind %q: want %s or %s", o.Kind, Regression, Classification)
	}
	if o.Classifier != "" && o.Classifier != RidgeClassifier {
		return nil, fmt.Errorf("model: a per-point model is a one-vs-rest ridge classifier (classifier %q is not offered per point)", o.Classifier)
	}
	if o.Folds < 2 {
		return nil, fmt.Errorf("model: %d folds, need at least 2", o.Folds)
	}
	width := len(x[0])
	nSets := 0
	for i, r := range x {
		if len(r) != width {
			return nil, fmt.Errorf("model: point row %d has width %d, row 0 has %d", i, len(r), width)
		}
		if set[i] < 0 {
			return nil, fmt.Errorf("model: point row %d has set index %d", i, set[i])
		}
		nSets = max(nSets, set[i]+1)
	}
	size := make([]int, nSets)
	for _, s := range set {
		size[s]++
	}
	if slices.Contains(size, 0) {
		return nil, fmt.Errorf("model: set %d has no points", slices.Index(size, 0))
	}
	if nSets < 2*o.Folds {
		return nil, fmt.Errorf("model: %d sets are too few for %d folds (folds hold out whole sets)", nSets, o.Folds)
	}
	m := &Model{Format: FormatVersion, Kind: o.Kind, Per: PerPoint, Width: width, NSets: nSets}
	y, classes, err := targets(o.Kind, labels, func(i int) string { return fmt.Sprintf("point %d of set %d", i, set[i]) })
	if err != nil {
		return nil, err
	}
	m.Classes = classes
	cls := make([]int, n) // each point's class index (classification)
	for i, l := range labels {
		cls[i] = slices.Index(classes, l)
	}
	foldOf := make([]int, nSets)
	for p, s := range shuffled(nSets, o.Seed) {
		foldOf[s] = p % o.Folds
	}
	sums := make([]*pointSums, o.Folds)
	for f := range sums {
		sums[f] = newPointSums(x, set, y, size, func(s int) bool { return foldOf[s] == f })
	}
	all := sumOf(sums, -1)
	full, err := all.solve()
	if err != nil {
		return nil, err
	}
	lambdas := o.Lambdas
	if lambdas == nil {
		tr := 0.0
		for _, e := range full.e {
			tr += e
		}
		lambdas = defaultGrid(tr / float64(min(n, width)))
	}
	m.CV = CV{Folds: o.Folds, Seed: o.Seed, Metric: map[string]string{Regression: "rmse", Classification: "accuracy"}[o.Kind], Lambdas: lambdas}
	perSet := make([][]float64, len(lambdas)) // [λ][set] out-of-fold accuracy (mean squared error) on the set's points
	for l := range perSet {
		perSet[l] = make([]float64, nSets)
	}
	for f := range sums {
		sol, err := sumOf(sums, f).solve()
		if err != nil {
			return nil, err
		}
		var te []int
		for i, s := range set {
			if foldOf[s] == f {
				te = append(te, i)
			}
		}
		for l, pred := range sol.predict(x, te, lambdas) {
			for r, i := range te {
				switch {
				case o.Kind == Regression:
					d := pred.At(r, 0) - y.At(i, 0)
					perSet[l][set[i]] += d * d / float64(size[set[i]])
				case argmax(pred.RawRowView(r)) == cls[i]:
					perSet[l][set[i]] += 1 / float64(size[set[i]])
				}
			}
		}
	}
	best := -1
	m.CV.Scores = make([]float64, len(lambdas))
	for l := len(lambdas) - 1; l >= 0; l-- { // from the largest λ: ties keep the smoother model
		s := 0.0
		for _, a := range perSet[l] {
			s += a
		}
		m.CV.Scores[l] = s / float64(nSets)
		if o.Kind == Regression {
			m.CV.Scores[l] = math.Sqrt(m.CV.Scores[l])
		}
		if best < 0 || better(o.Kind, m.CV.Scores[l], m.CV.Scores[best]) {
			best = l
		}
	}
	m.Lambda = lambdas[best]
	m.Weights, m.Intercept = full.coefficients(m.Lambda)
	return m, nil
}

// pointSums are the weighted sufficient statistics of some sets' points (each point of a set
// of n weighing 1/n): Σw, Σw·x, Σw·y, Σw·x·xᵀ and Σw·x·yᵀ, y the targets (±1 per class, or
// the regression's label).
type pointSums struct {
	w   float64
	sx  []float64     // width
	sy  []float64     // classes
	sxx *mat.SymDense // width × width
	sxy *mat.Dense    // width × classes
}

// newPointSums sums the points of the sets in; y holds the targets (a row per point).
func newPointSums(x [][]float32, set []int, y *mat.Dense, size []int, in func(set int) bool) *pointSums {
	width, classes := len(x[0]), y.RawMatrix().Cols
	var rows []int
	for i, s := range set {
		if in(s) {
			rows = append(rows, i)
		}
	}
	ps := &pointSums{sx: make([]float64, width), sy: make([]float64, classes), sxx: mat.NewSymDense(width, nil), sxy: mat.NewDense(width, classes, nil)}
	if len(rows) == 0 {
		return ps
	}
	xs := mat.NewDense(len(rows), width, nil) // √w·x
	ys := mat.NewDense(len(rows), classes, nil)
	for r, i := range rows {
		w := 1 / float64(size[set[i]])
		sw := math.Sqrt(w)
		ps.w += w
		row := xs.RawRowView(r)
		for j, v := range x[i] {
			row[j] = sw * float64(v)
			ps.sx[j] += w * float64(v)
		}
		for c := 0; c < classes; c++ {
			t := y.At(i, c)
			ys.Set(r, c, sw*t)
			ps.sy[c] += w * t
		}
	}
	ps.sxx.SymOuterK(1, xs.T())
	ps.sxy.Mul(xs.T(), ys)
	return ps
}

// sumOf adds the sums of every fold but skip (−1: all).
func sumOf(folds []*pointSums, skip int) *pointSums {
	var t *pointSums
	for f, s := range folds {
		if f == skip {
			continue
		}
		if t == nil {
			t = &pointSums{w: s.w, sx: slices.Clone(s.sx), sy: slices.Clone(s.sy), sxx: mat.NewSymDense(s.sxx.SymmetricDim(), nil), sxy: mat.DenseCopyOf(s.sxy)}
			t.sxx.CopySym(s.sxx)
			continue
		}
		t.w += s.w
		for j := range t.sx {
			t.sx[j] += s.sx[j]
		}
		for c := range t.sy {
			t.sy[c] += s.sy[c]
		}
		t.sxx.AddSym(t.sxx, s.sxx)
		t.sxy.Add(t.sxy, s.sxy)
	}
	return t
}

// pointPath is the weighted ridge solution for every λ from one eigendecomposition of the
// weighted centred Gram matrix G = Σw(x−x̄)(x−x̄)ᵀ = V E Vᵀ: W(λ) = V diag(1/(e+λ)) Vᵀ B with
// B = Σw(x−x̄)(y−ȳ)ᵀ, intercept ȳ − x̄ᵀW (x̄, ȳ the weighted means).
type pointPath struct {
	xMean, yMean []float64
	e            []float64
	v            *mat.Dense
	vtb          *mat.Dense // width × classes
}

func (ps *pointSums) solve() (*pointPath, error) {
	width, k := len(ps.sx), len(ps.sy)
	p := &pointPath{xMean: make([]float64, width), yMean: make([]float64, k), v: &mat.Dense{}, vtb: &mat.Dense{}}
	for j := range p.xMean {
		p.xMean[j] = ps.sx[j] / ps.w
	}
	for c := range p.yMean {
		p.yMean[c] = ps.sy[c] / ps.w
	}
	g := mat.NewSymDense(width, nil)
	for a := 0; a < width; a++ {
		for b := a; b < width; b++ {
			g.SetSym(a, b, ps.sxx.At(a, b)-ps.sx[a]*ps.sx[b]/ps.w)
		}
	}
	b := mat.NewDense(width, k, nil)
	for j := 0; j < width; j++ {
		for c := 0; c < k; c++ {
			b.Set(j, c, ps.sxy.At(j, c)-ps.sx[j]*ps.sy[c]/ps.w)
		}
	}
	var eig mat.EigenSym
	if !eig.Factorize(g, true) {
		return nil, errors.New("model: the eigendecomposition of the per-point features' weighted Gram matrix did not converge")
	}
	p.e = eig.Values(nil)
	for i, v := range p.e {
		p.e[i] = max(v, 0) // rounding below zero
	}
	eig.VectorsTo(p.v)
	p.vtb.Mul(p.v.T(), b)
	return p, nil
}

func (p *pointPath) beta(lam float64) *mat.Dense {
	return shrunk(p.vtb, p.e, func(e float64) float64 { return 1 / (e + lam) })
}

// coefficients are the weight rows and intercepts at λ.
func (p *pointPath) coefficients(lam float64) ([][]float64, []float64) {
	var w mat.Dense
	w.Mul(p.v, p.beta(lam))
	c := &centring{xMean: p.xMean, yMean: p.yMean}
	return c.coefficients(&w)
}

// predict is the scores of rows te at each λ (len(te) × classes each).
func (p *pointPath) predict(x [][]float32, te []int, lambdas []float64) []*mat.Dense {
	xc := mat.NewDense(len(te), len(p.xMean), nil)
	for r, i := range te {
		row := xc.RawRowView(r)
		for j, v := range x[i] {
			row[j] = float64(v) - p.xMean[j]
		}
	}
	var xv mat.Dense
	xv.Mul(xc, p.v)
	c := &centring{yMean: p.yMean}
	out := make([]*mat.Dense, len(lambdas))
	for l, lam := range lambdas {
		var pr mat.Dense
		pr.Mul(&xv, p.beta(lam))
		out[l] = c.addMean(&pr)
	}
	return out
}
