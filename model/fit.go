package model

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"

	"gonum.org/v1/gonum/mat"

	"github.com/distfeat/distfeat/internal/numeric"
)

// Options tune Fit. The zero value of a field means its default.
type Options struct {
	// Kind is Regression (labels are numbers) or Classification (labels are class names).
	Kind string
	// Classifier is RidgeClassifier (the default) or LogisticClassifier (classification).
	Classifier string
	// Folds is the number of cross-validation folds over whole sets (default 5).
	Folds int
	// Seed fixes the shuffle of the sets into folds and the calibration split (default 1).
	Seed uint64
	// CalibrationFraction is the share of the sets a regression model is not fitted on, from
	// whose residuals the split-conformal intervals come (default 0.2).
	CalibrationFraction float64
	// Levels are the interval coverages stored (default 0.5, 0.8, 0.9, 0.95).
	Levels []float64
	// Lambdas is the λ grid (default: 10^-7 … 10^2 in half decades, times the mean squared
	// singular value of the centred training features, so the grid follows their scale).
	Lambdas []float64
}

func (o *Options) defaults() {
	if o.Folds == 0 {
		o.Folds = 5
	}
	if o.Seed == 0 {
		o.Seed = 1
	}
	if o.CalibrationFraction == 0 {
		o.CalibrationFraction = 0.2
	}
	if o.Levels == nil {
		o.Levels = []float64{0.5, 0.8, 0.9, 0.95}
	}
}

// Fit fits a linear model to the feature rows x (one per set, all of one width) and their
// labels: λ by cross-validation over folds of whole sets; for regression, ridge with
// split-conformal interval quantiles from a held-out calibration share; for
// classification, one-vs-rest ridge on ±1 targets or (Options.Classifier) logistic
// regression with class probabilities. The caller fills in SpecID, Families, Columns and Label. The same
// rows, labels and options give the same model.
func Fit(x [][]float32, labels []string, o Options) (*Model, error) {
	o.defaults()
	n := len(x)
	if n != len(labels) {
		return nil, fmt.Errorf("model: %d feature rows, %d labels", n, len(labels))
	}
	if n == 0 {
		return nil, errors.New("model: no sets to fit")
	}
	width := len(x[0])
	for i, r := range x {
		if len(r) != width {
			return nil, fmt.Errorf("model: row %d has width %d, row 0 has %d", i, len(r), width)
		}
	}
	if o.Folds < 2 {
		return nil, fmt.Errorf("model: %d folds, need at least 2", o.Folds)
	}
	switch {
	case o.Classifier == "" || o.Classifier == RidgeClassifier:
	case o.Classifier == LogisticClassifier && o.Kind == Classification:
	case o.Classifier == LogisticClassifier:
		return nil, fmt.Errorf("model: classifier %q is for classification, the task is %s", o.Classifier, o.Kind)
	default:
		return nil, fmt.Errorf("model: classifier %q: want %s or %s", o.Classifier, RidgeClassifier, LogisticClassifier)
	}
	m := &Model{Format: FormatVersion, Kind: o.Kind, Width: width, NSets: n}
	if o.Kind != Regression && o.Kind != Classification {
		return nil, fmt.Errorf("model: kind %q: want %s or %s", o.Kind, Regression, Classification)
	}
	y, classes, err := targets(o.Kind, labels, func(i int) string { return fmt.Sprintf("set %d", i) })
	if err != nil {
		return nil, err
	}
	m.Classes = classes

	order := shuffled(n, o.Seed)
	train, cal := order, []int(nil)
	if o.Kind == Regression {
		nCal := int(math.Round(o.CalibrationFraction * float64(n)))
		if nCal < 1 || n-nCal < 2*o.Folds {
			return nil, fmt.Errorf("model: %d sets are too few for %d folds and a calibration share of %v", n, o.Folds, o.CalibrationFraction)
		}
		cal, train = order[:nCal], order[nCal:]
	} else if n < 2*o.Folds {
		return nil, fmt.Errorf("model: %d sets are too few for %d folds", n, o.Folds)
	}
	if o.Classifier == LogisticClassifier {
		classOf := make([]int, n)
		for i, l := range labels {
			classOf[i] = slices.Index(m.Classes, l)
		}
		if err := fitLogistic(m, x, classOf, order, o); err != nil {
			return nil, err
		}
		return m, nil
	}

	var gram *mat.SymDense
	if width > len(train) { // more features than sets: solve in the sets' (dual) space
		gram = gramOf(x)
	}
	full, err := newPath(x, y, train, gram)
	if err != nil {
		return nil, err
	}
	lambdas := o.Lambdas
	if lambdas == nil {
		lambdas = defaultGrid(full.meanSquaredSingular())
	}
	m.CV = CV{Folds: o.Folds, Seed: o.Seed, Lambdas: lambdas}
	// out-of-fold predictions at every λ
	oof := make([]*mat.Dense, len(lambdas))
	for l := range oof {
		oof[l] = mat.NewDense(len(train), y.RawMatrix().Cols, nil)
	}
	for f := 0; f < o.Folds; f++ {
		var tr, te, at []int
		for p, i := range train {
			if p%o.Folds == f {
				te, at = append(te, i), append(at, p)
			} else {
				tr = append(tr, i)
			}
		}
		rp, err := newPath(x, y, tr, gram)
		if err != nil {
			return nil, err
		}
		for l, pred := range rp.predict(te, lambdas) {
			for r, p := range at {
				oof[l].SetRow(p, pred.RawRowView(r))
			}
		}
	}
	best := -1
	m.CV.Scores = make([]float64, len(lambdas))
	for l := len(lambdas) - 1; l >= 0; l-- { // from the largest λ: ties keep the smoother model
		m.CV.Scores[l] = cvScore(o.Kind, oof[l], y, train)
		if best < 0 || better(o.Kind, m.CV.Scores[l], m.CV.Scores[best]) {
			best = l
		}
	}
	m.CV.Metric = map[string]string{Regression: "rmse", Classification: "accuracy"}[o.Kind]
	m.Lambda = lambdas[best]
	w, b := full.coefficients(m.Lambda)
	m.Weights, m.Intercept = w, b
	if o.Kind == Regression {
		m.conformal(x, y, cal, full.targetMean()[0], o.Levels)
	}
	return m, nil
}

// better reports whether CV score a beats b (strictly).
func better(kind string, a, b float64) bool {
	if kind == Regression {
		return a < b
	}
	return a > b
}

// cvScore is the out-of-fold RMSE (regression) or accuracy (classification).
func cvScore(kind string, pred, y *mat.Dense, rows []int) float64 {
	if kind == Regression {
		s := 0.0
		for p, i := range rows {
			d := pred.At(p, 0) - y.At(i, 0)
			s += d * d
		}
		return math.Sqrt(s / float64(len(rows)))
	}
	ok := 0
	for p, i := range rows {
		if argmax(pred.RawRowView(p)) == argmax(y.RawRowView(i)) {
			ok++
		}
	}
	return float64(ok) / float64(len(rows))
}

func argmax(v []float64) int {
	best := 0
	for k := range v {
		if v[k] > v[best] {
			best = k
		}
	}
	return best
}

// conformal sets the split-conformal quantiles and the hold-out metrics from the
// calibration sets: at coverage L the half-width is the ⌈(n+1)L⌉-th smallest absolute
// residual, which covers a new exchangeable set with probability ≥ L (Lei et al. 2018).
func (m *Model) conformal(x [][]float32, y *mat.Dense, cal []int, trainMean float64, levels []float64) {
	res := make([]float64, len(cal))
	se, seMean := 0.0, 0.0
	for r, i := range cal {
		p := score(m.Intercept[0], m.Weights[0], x[i])
		d := p - y.At(i, 0)
		res[r] = math.Abs(d)
		se += d * d
		dm := trainMean - y.At(i, 0)
		seMean += dm * dm
	}
	sort.Float64s(res)
	nc := len(cal)
	m.Holdout = Holdout{N: nc, RMSE: math.Sqrt(se / float64(nc)), RMSEMean: math.Sqrt(seMean / float64(nc))}
	m.Conformal = &Conformal{NCalibration: nc, Levels: []float64{}, Quantiles: []float64{}}
	for _, l := range levels {
		k := int(math.Ceil(float64(nc+1) * l))
		if k > nc {
			continue // too few calibration sets for this coverage
		}
		m.Conformal.Levels = append(m.Conformal.Levels, l)
		m.Conformal.Quantiles = append(m.Conformal.Quantiles, res[k-1])
	}
}

// shuffled is 0..n-1 in a seeded Fisher–Yates order.
func shuffled(n int, seed uint64) []int {
	rng := numeric.NewRNG(seed, "model/folds")
	p := make([]int, n)
	for i := range p {
		p[i] = i
	}
	for i := n - 1; i > 0; i-- {
		j := int(rng.Uint64() % uint64(i+1))
		p[i], p[j] = p[j], p[i]
	}
	return p
}

// path is the ridge solution for every λ from one factorisation of the centred training
// rows: ridge weights W(λ) = (XcᵀXc + λI)⁻¹ Xcᵀ Yc, intercept ȳ − x̄ᵀW.
type path interface {
	// predict is the prediction for rows te at each λ (len(te) × scores each).
	predict(te []int, lambdas []float64) []*mat.Dense
	// coefficients are the weight rows and intercepts at λ.
	coefficients(lam float64) ([][]float64, []float64)
	// meanSquaredSingular is trace(XcᵀXc) / min(n, width), the scale of the λ grid.
	meanSquaredSingular() float64
	targetMean() []float64
}

// newPath is the primal path (an eigendecomposition of XcᵀXc) or, given the Gram matrix of all rows, the dual
// one (an eigendecomposition of the centred Gram matrix of the training rows).
func newPath(x [][]float32, y *mat.Dense, rows []int, gram *mat.SymDense) (path, error) {
	c := newCentring(x, y, rows)
	if gram != nil {
		return newDualPath(c, gram)
	}
	return newPrimalPath(c)
}

// centring holds the training rows' means and the centred targets.
type centring struct {
	x     [][]float32
	rows  []int
	xMean []float64
	yMean []float64
	yc    *mat.Dense // len(rows) × scores
}

func newCentring(x [][]float32, y *mat.Dense, rows []int) *centring {
	n, width, k := len(rows), len(x[0]), y.RawMatrix().Cols
	c := &centring{x: x, rows: rows, xMean: make([]float64, width), yMean: make([]float64, k), yc: mat.NewDense(n, k, nil)}
	for _, i := range rows {
		for j, v := range x[i] {
			c.xMean[j] += float64(v)
		}
		for t := 0; t < k; t++ {
			c.yMean[t] += y.At(i, t)
		}
	}
	for j := range c.xMean {
		c.xMean[j] /= float64(n)
	}
	for t := range c.yMean {
		c.yMean[t] /= float64(n)
	}
	for r, i := range rows {
		for t := 0; t < k; t++ {
			c.yc.Set(r, t, y.At(i, t)-c.yMean[t])
		}
	}
	return c
}

func (c *centring) targetMean() []float64 { return c.yMean }

// centred is the rows idx of x minus the training mean, len(idx) × width.
func (c *centring) centred(idx []int) *mat.Dense {
	xc := mat.NewDense(len(idx), len(c.xMean), nil)
	for r, i := range idx {
		row := xc.RawRowView(r)
		for j, v := range c.x[i] {
			row[j] = float64(v) - c.xMean[j]
		}
	}
	return xc
}

// coefficients turns W (width × scores) into weight rows and intercepts ȳ − x̄ᵀW.
func (c *centring) coefficients(w *mat.Dense) ([][]float64, []float64) {
	width, k := w.Dims()
	rows := make([][]float64, k)
	b := make([]float64, k)
	for t := 0; t < k; t++ {
		rows[t] = make([]float64, width)
		b[t] = c.yMean[t]
		for j := 0; j < width; j++ {
			rows[t][j] = w.At(j, t)
			b[t] -= rows[t][j] * c.xMean[j]
		}
	}
	return rows, b
}

// shrunk is diag(f(e_i, λ)) · m, row i scaled by f(e[i]).
func shrunk(m *mat.Dense, e []float64, f func(e float64) float64) *mat.Dense {
	r, k := m.Dims()
	out := mat.NewDense(r, k, nil)
	for i := 0; i < r; i++ {
		g := f(e[i])
		for j := 0; j < k; j++ {
			out.Set(i, j, g*m.At(i, j))
		}
	}
	return out
}

// addMean adds the target means to every row of p.
func (c *centring) addMean(p *mat.Dense) *mat.Dense {
	r, k := p.Dims()
	for i := 0; i < r; i++ {
		for t := 0; t < k; t++ {
			p.Set(i, t, p.At(i, t)+c.yMean[t])
		}
	}
	return p
}

// primalPath is the eigendecomposition XcᵀXc = V E Vᵀ: W(λ) = V diag(1/(e+λ)) Vᵀ Xcᵀ Yc. Its
// cost is n·width² + width³ per fold, for fewer features than sets.
type primalPath struct {
	*centring
	e    []float64
	v    *mat.Dense // width × width
	vtxy *mat.Dense // width × scores: Vᵀ Xcᵀ Yc
}

func newPrimalPath(c *centring) (*primalPath, error) {
	xc := c.centred(c.rows)
	var g mat.SymDense
	g.SymOuterK(1, xc.T())
	var eig mat.EigenSym
	if !eig.Factorize(&g, true) {
		return nil, errors.New("model: the eigendecomposition of the training features' Gram matrix did not converge")
	}
	p := &primalPath{centring: c, e: eig.Values(nil), v: &mat.Dense{}, vtxy: &mat.Dense{}}
	for i, v := range p.e {
		p.e[i] = max(v, 0) // rounding below zero
	}
	eig.VectorsTo(p.v)
	var xy mat.Dense
	xy.Mul(xc.T(), c.yc)
	p.vtxy.Mul(p.v.T(), &xy)
	return p, nil
}

func (p *primalPath) meanSquaredSingular() float64 {
	t := 0.0
	for _, e := range p.e {
		t += e
	}
	return t / float64(max(min(len(p.rows), len(p.xMean)), 1))
}

func (p *primalPath) beta(lam float64) *mat.Dense {
	return shrunk(p.vtxy, p.e, func(e float64) float64 { return 1 / (e + lam) })
}

func (p *primalPath) coefficients(lam float64) ([][]float64, []float64) {
	var w mat.Dense
	w.Mul(p.v, p.beta(lam))
	return p.centring.coefficients(&w)
}

func (p *primalPath) predict(te []int, lambdas []float64) []*mat.Dense {
	var xv mat.Dense
	xv.Mul(p.centred(te), p.v)
	out := make([]*mat.Dense, len(lambdas))
	for l, lam := range lambdas {
		var pr mat.Dense
		pr.Mul(&xv, p.beta(lam))
		out[l] = p.addMean(&pr)
	}
	return out
}

// dualPath is the eigendecomposition of the centred Gram matrix of the training rows,
// Kc = Xc Xcᵀ = U E Uᵀ: the dual weights are α(λ) = U diag(1/(e+λ)) Uᵀ Yc, W = Xcᵀ α, and a
// new row's prediction is its centred inner products with the training rows times α. Its
// cost is O(n²) per fold once the Gram matrix of all rows is known, whatever the width.
type dualPath struct {
	*centring
	gram  *mat.SymDense // all rows
	rMean map[int]float64
	cMean float64
	e     []float64
	u     *mat.Dense
	uty   *mat.Dense
}

// gramOf is X Xᵀ of all rows.
func gramOf(x [][]float32) *mat.SymDense {
	xd := mat.NewDense(len(x), len(x[0]), nil)
	for i, r := range x {
		row := xd.RawRowView(i)
		for j, v := range r {
			row[j] = float64(v)
		}
	}
	var g mat.SymDense
	g.SymOuterK(1, xd)
	return &g
}

func newDualPath(c *centring, gram *mat.SymDense) (*dualPath, error) {
	d := &dualPath{centring: c, gram: gram, rMean: map[int]float64{}}
	n := len(c.rows)
	for _, a := range c.rows {
		d.cMean += d.rowMean(a) / float64(n)
	}
	kc := mat.NewSymDense(n, nil)
	for a := 0; a < n; a++ {
		for b := a; b < n; b++ {
			kc.SetSym(a, b, d.centredDot(c.rows[a], c.rows[b]))
		}
	}
	var eig mat.EigenSym
	if !eig.Factorize(kc, true) {
		return nil, errors.New("model: the eigendecomposition of the training Gram matrix did not converge")
	}
	d.e = eig.Values(nil)
	for i, v := range d.e {
		d.e[i] = max(v, 0) // rounding below zero
	}
	d.u = &mat.Dense{}
	eig.VectorsTo(d.u)
	d.uty = &mat.Dense{}
	d.uty.Mul(d.u.T(), c.yc)
	return d, nil
}

// rowMean is the mean inner product of row i with the training rows, x_i·x̄.
func (d *dualPath) rowMean(i int) float64 {
	if v, ok := d.rMean[i]; ok {
		return v
	}
	s := 0.0
	for _, b := range d.rows {
		s += d.gram.At(i, b)
	}
	s /= float64(len(d.rows))
	d.rMean[i] = s
	return s
}

// centredDot is (x_i − x̄)·(x_j − x̄).
func (d *dualPath) centredDot(i, j int) float64 {
	return d.gram.At(i, j) - d.rowMean(i) - d.rowMean(j) + d.cMean
}

func (d *dualPath) meanSquaredSingular() float64 {
	t := 0.0
	for _, e := range d.e {
		t += e
	}
	return t / float64(max(min(len(d.rows), len(d.xMean)), 1))
}

func (d *dualPath) alpha(lam float64) *mat.Dense {
	var a mat.Dense
	a.Mul(d.u, shrunk(d.uty, d.e, func(e float64) float64 { return 1 / (e + lam) }))
	return &a
}

func (d *dualPath) coefficients(lam float64) ([][]float64, []float64) {
	var w mat.Dense
	w.Mul(d.centred(d.rows).T(), d.alpha(lam))
	return d.centring.coefficients(&w)
}

func (d *dualPath) predict(te []int, lambdas []float64) []*mat.Dense {
	kt := mat.NewDense(len(te), len(d.rows), nil)
	for r, i := range te {
		for b, j := range d.rows {
			kt.Set(r, b, d.centredDot(i, j))
		}
	}
	var ku mat.Dense
	ku.Mul(kt, d.u)
	out := make([]*mat.Dense, len(lambdas))
	for l, lam := range lambdas {
		var pr mat.Dense
		pr.Mul(&ku, shrunk(d.uty, d.e, func(e float64) float64 { return 1 / (e + lam) }))
		out[l] = d.addMean(&pr)
	}
	return out
}

// defaultGrid is 10^-7 … 10^2 (half decades) times ms, the mean squared singular value.
func defaultGrid(ms float64) []float64 {
	if ms == 0 {
		ms = 1
	}
	var g []float64
	for e := -14; e <= 4; e++ {
		g = append(g, ms*math.Pow(10, float64(e)/2))
	}
	return g
}

// targets are the ridge targets of labels: the numbers (regression; n × 1), or ±1 for each
// class of the sorted classes (classification; n × classes), and the classes. where names
// label i in the errors.
func targets(kind string, labels []string, where func(i int) string) (*mat.Dense, []string, error) {
	if kind == Regression {
		y := mat.NewDense(len(labels), 1, nil)
		for i, l := range labels {
			v, err := strconv.ParseFloat(l, 64)
			if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
				return nil, nil, fmt.Errorf("model: %s: label %q is not a finite number (a regression needs numeric labels)", where(i), l)
			}
			y.Set(i, 0, v)
		}
		return y, nil, nil
	}
	var classes []string
	for i, l := range labels {
		if l == "" {
			return nil, nil, fmt.Errorf("model: %s has no label", where(i))
		}
		if !slices.Contains(classes, l) {
			classes = append(classes, l)
		}
	}
	sort.Strings(classes)
	if len(classes) < 2 {
		return nil, nil, fmt.Errorf("model: one class (%q): a classifier needs at least 2", classes[0])
	}
	y := mat.NewDense(len(labels), len(classes), nil)
	for i, l := range labels {
		for k, c := range classes {
			y.Set(i, k, -1)
			if c == l {
				y.Set(i, k, 1)
			}
		}
	}
	return y, classes, nil
}
