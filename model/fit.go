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

// Fit fits a ridge model to the feature rows x (one per set, all of one width) and their
// labels: λ by cross-validation over folds of whole sets; for regression, split-conformal
// interval quantiles from a held-out calibration share; for classification, one-vs-rest
// ridge on ±1 targets. The caller fills in SpecID, Families, Columns and Label. The same
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
	m := &Model{Format: FormatVersion, Kind: o.Kind, Width: width, NSets: n}
	var y *mat.Dense // n × scores targets
	switch o.Kind {
	case Regression:
		y = mat.NewDense(n, 1, nil)
		for i, l := range labels {
			v, err := strconv.ParseFloat(l, 64)
			if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
				return nil, fmt.Errorf("model: set %d: label %q is not a finite number (a regression needs numeric labels)", i, l)
			}
			y.Set(i, 0, v)
		}
	case Classification:
		for i, l := range labels {
			if l == "" {
				return nil, fmt.Errorf("model: set %d has no label", i)
			}
			if !slices.Contains(m.Classes, l) {
				m.Classes = append(m.Classes, l)
			}
		}
		sort.Strings(m.Classes)
		if len(m.Classes) < 2 {
			return nil, fmt.Errorf("model: one class (%q): a classifier needs at least 2", m.Classes[0])
		}
		y = mat.NewDense(n, len(m.Classes), nil)
		for i, l := range labels {
			for k, c := range m.Classes {
				y.Set(i, k, -1)
				if c == l {
					y.Set(i, k, 1)
				}
			}
		}
	default:
		return nil, fmt.Errorf("model: kind %q: want %s or %s", o.Kind, Regression, Classification)
	}

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

	full, err := newRidgePath(x, y, train)
	if err != nil {
		return nil, err
	}
	lambdas := o.Lambdas
	if lambdas == nil {
		lambdas = full.defaultGrid()
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
		rp, err := newRidgePath(x, y, tr)
		if err != nil {
			return nil, err
		}
		for l, lam := range lambdas {
			pred := rp.predict(x, te, lam)
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
		m.conformal(x, y, cal, full.yMean[0], o.Levels)
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

// ridgePath is the thin SVD of the centred training rows, Xc = U S Vᵀ, from which the ridge
// solution at any λ, W(λ) = V diag(s/(s²+λ)) Uᵀ Yc, costs one small product: the whole λ
// grid for one factorisation.
type ridgePath struct {
	xMean []float64
	yMean []float64
	s     []float64
	v     *mat.Dense // width × r
	uty   *mat.Dense // r × scores
}

func newRidgePath(x [][]float32, y *mat.Dense, rows []int) (*ridgePath, error) {
	n, width, k := len(rows), len(x[0]), y.RawMatrix().Cols
	rp := &ridgePath{xMean: make([]float64, width), yMean: make([]float64, k)}
	for _, i := range rows {
		for j, v := range x[i] {
			rp.xMean[j] += float64(v)
		}
		for c := 0; c < k; c++ {
			rp.yMean[c] += y.At(i, c)
		}
	}
	for j := range rp.xMean {
		rp.xMean[j] /= float64(n)
	}
	for c := range rp.yMean {
		rp.yMean[c] /= float64(n)
	}
	xc := mat.NewDense(n, width, nil)
	yc := mat.NewDense(n, k, nil)
	for r, i := range rows {
		row := xc.RawRowView(r)
		for j, v := range x[i] {
			row[j] = float64(v) - rp.xMean[j]
		}
		for c := 0; c < k; c++ {
			yc.Set(r, c, y.At(i, c)-rp.yMean[c])
		}
	}
	var svd mat.SVD
	if !svd.Factorize(xc, mat.SVDThin) {
		return nil, errors.New("model: the SVD of the training features did not converge")
	}
	rp.s = svd.Values(nil)
	var u mat.Dense
	rp.v = &mat.Dense{}
	svd.UTo(&u)
	svd.VTo(rp.v)
	rp.uty = &mat.Dense{}
	rp.uty.Mul(u.T(), yc)
	return rp, nil
}

// defaultGrid is 10^-7 … 10^2 (half decades) times the mean squared singular value.
func (rp *ridgePath) defaultGrid() []float64 {
	ms := 0.0
	for _, s := range rp.s {
		ms += s * s
	}
	ms /= float64(max(len(rp.s), 1))
	if ms == 0 {
		ms = 1
	}
	var g []float64
	for e := -14; e <= 4; e++ {
		g = append(g, ms*math.Pow(10, float64(e)/2))
	}
	return g
}

// beta is W(λ) = V diag(s/(s²+λ)) Uᵀ Yc, width × scores.
func (rp *ridgePath) beta(lam float64) *mat.Dense {
	r, k := rp.uty.Dims()
	c := mat.NewDense(r, k, nil)
	for i := 0; i < r; i++ {
		f := 0.0
		if rp.s[i] > 0 {
			f = rp.s[i] / (rp.s[i]*rp.s[i] + lam)
		}
		for j := 0; j < k; j++ {
			c.Set(i, j, f*rp.uty.At(i, j))
		}
	}
	var w mat.Dense
	w.Mul(rp.v, c)
	return &w
}

// coefficients are the model's weight rows and intercepts at λ.
func (rp *ridgePath) coefficients(lam float64) ([][]float64, []float64) {
	w := rp.beta(lam)
	width, k := w.Dims()
	rows := make([][]float64, k)
	b := make([]float64, k)
	for c := 0; c < k; c++ {
		rows[c] = make([]float64, width)
		b[c] = rp.yMean[c]
		for j := 0; j < width; j++ {
			rows[c][j] = w.At(j, c)
			b[c] -= rows[c][j] * rp.xMean[j]
		}
	}
	return rows, b
}

// predict is the ridge prediction at λ for rows te, len(te) × scores.
func (rp *ridgePath) predict(x [][]float32, te []int, lam float64) *mat.Dense {
	w := rp.beta(lam)
	width, k := w.Dims()
	xt := mat.NewDense(len(te), width, nil)
	for r, i := range te {
		row := xt.RawRowView(r)
		for j, v := range x[i] {
			row[j] = float64(v) - rp.xMean[j]
		}
	}
	var p mat.Dense
	p.Mul(xt, w)
	for r := range te {
		for c := 0; c < k; c++ {
			p.Set(r, c, p.At(r, c)+rp.yMean[c])
		}
	}
	return &p
}
