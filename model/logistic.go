package model

import (
	"errors"
	"fmt"
	"math"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/optimize"
)

// logisticTolerance is the largest gradient entry (of the objective divided by the number
// of sets, so it does not grow with them) at which the final logistic fit has converged.
const logisticTolerance = 1e-9

// cvTolerance is the same for the cross-validation fits, whose out-of-fold log-loss only
// ranks the λs: at 1e-6 the log-loss is within ~1e-6 of the converged one (the gradient
// times the step to the optimum), far below the differences between half-decade λs.
const cvTolerance = 1e-6

// logisticMaxIterations bounds L-BFGS; a fit that needs more is an error, not a model.
const logisticMaxIterations = 20000

// logisticProblem is L2-penalised logistic regression on the training rows:
//
//	minimise Σ_i ℓ(b + W·x_i, y_i) + (λ/2)·‖W‖²   (the intercepts b unpenalised)
//
// with ℓ the binary log-loss (one score: P(classes[1]) = σ(s)) for two classes and the
// multinomial one (softmax over one score per class) for more — the objective of
// scikit-learn's LogisticRegression with C = 1/λ. It is solved in centred coordinates
// (x − x̄; the intercept unpenalised, so the same minimum) for L-BFGS's conditioning.
type logisticProblem struct {
	xc     *mat.Dense // n × width, centred
	xMean  []float64
	y      []int // class index per row
	scores int   // 1 (binary) or the number of classes
	width  int
}

// newLogisticProblem collects rows (indices into x) with their class indices.
func newLogisticProblem(x [][]float32, classOf []int, rows []int, classes int) *logisticProblem {
	width := len(x[0])
	p := &logisticProblem{xc: mat.NewDense(len(rows), width, nil), xMean: make([]float64, width), y: make([]int, len(rows)), width: width, scores: classes}
	if classes == 2 {
		p.scores = 1
	}
	for _, i := range rows {
		for j, v := range x[i] {
			p.xMean[j] += float64(v)
		}
	}
	for j := range p.xMean {
		p.xMean[j] /= float64(len(rows))
	}
	for r, i := range rows {
		row := p.xc.RawRowView(r)
		for j, v := range x[i] {
			row[j] = float64(v) - p.xMean[j]
		}
		p.y[r] = classOf[i]
	}
	return p
}

// params is the parameter vector's length: per score, width weights then the intercept.
func (p *logisticProblem) params() int { return p.scores * (p.width + 1) }

// objective is the penalised loss divided by n, and its gradient into grad (when not nil).
func (p *logisticProblem) objective(theta, grad []float64, lam float64) float64 {
	n, k, d := len(p.y), p.scores, p.width
	w := mat.NewDense(k, d+1, theta) // row t: weights, intercept
	var s mat.Dense                  // n × k scores
	s.Mul(p.xc, w.Slice(0, k, 0, d).T())
	ds := mat.NewDense(n, k, nil) // ∂loss/∂score
	loss := 0.0
	for i := 0; i < n; i++ {
		si, g := s.RawRowView(i), ds.RawRowView(i)
		for t := range si {
			si[t] += w.At(t, d)
		}
		if k == 1 {
			z := si[0]
			y := float64(p.y[i])
			loss += softplus(z) - y*z
			g[0] = sigmoid(z) - y
			continue
		}
		mx := floats.Max(si)
		sum := 0.0
		for t, v := range si {
			g[t] = math.Exp(v - mx)
			sum += g[t]
		}
		loss += mx + math.Log(sum) - si[p.y[i]]
		for t := range g {
			g[t] /= sum
		}
		g[p.y[i]]--
	}
	pen := 0.0
	for t := 0; t < k; t++ {
		for j := 0; j < d; j++ {
			v := w.At(t, j)
			pen += v * v
		}
	}
	if grad != nil {
		gw := mat.NewDense(k, d+1, grad)
		var gx mat.Dense
		gx.Mul(ds.T(), p.xc) // k × d
		for t := 0; t < k; t++ {
			b := 0.0
			for i := 0; i < n; i++ {
				b += ds.At(i, t)
			}
			for j := 0; j < d; j++ {
				gw.Set(t, j, (gx.At(t, j)+lam*w.At(t, j))/float64(n))
			}
			gw.Set(t, d, b/float64(n))
		}
	}
	return (loss + lam/2*pen) / float64(n)
}

func sigmoid(z float64) float64 {
	if z >= 0 {
		return 1 / (1 + math.Exp(-z))
	}
	e := math.Exp(z)
	return e / (1 + e)
}

// softplus is log(1 + e^z) without overflow.
func softplus(z float64) float64 {
	if z > 0 {
		return z + math.Log1p(math.Exp(-z))
	}
	return math.Log1p(math.Exp(z))
}

// solve minimises the objective at λ from theta (a warm start, updated in place) with
// L-BFGS until the gradient's largest entry is below tol.
func (p *logisticProblem) solve(theta []float64, lam, tol float64) error {
	prob := optimize.Problem{
		Func: func(t []float64) float64 { return p.objective(t, nil, lam) },
		Grad: func(g, t []float64) { p.objective(t, g, lam) },
	}
	set := &optimize.Settings{GradientThreshold: tol, MajorIterations: logisticMaxIterations, Converger: optimize.NeverTerminate{}}
	res, err := optimize.Minimize(prob, theta, set, &optimize.LBFGS{})
	if res == nil {
		return fmt.Errorf("model: logistic regression at λ=%.4g: %w", lam, err)
	}
	g := make([]float64, len(theta))
	p.objective(res.X, g, lam)
	gmax := floats.Norm(g, math.Inf(1))
	// A line search that can no longer decrease the objective in float64 ends the run
	// with an error; the point it reached is the answer when its gradient is small.
	if res.Status != optimize.GradientThreshold && gmax > 100*tol {
		if err == nil {
			err = errors.New(res.Status.String())
		}
		return fmt.Errorf("model: logistic regression at λ=%.4g did not converge after %d iterations (largest gradient entry %.3g): %w", lam, res.Stats.MajorIterations, gmax, err)
	}
	copy(theta, res.X)
	return nil
}

// coefficients are the weight rows and intercepts in the features' own (uncentred)
// coordinates: b = b_c − w·x̄.
func (p *logisticProblem) coefficients(theta []float64) ([][]float64, []float64) {
	d := p.width
	w := make([][]float64, p.scores)
	b := make([]float64, p.scores)
	for t := range w {
		w[t] = append([]float64(nil), theta[t*(d+1):t*(d+1)+d]...)
		b[t] = theta[t*(d+1)+d]
		for j, v := range w[t] {
			b[t] -= v * p.xMean[j]
		}
	}
	return w, b
}

// predictRows are the scores of rows te of x, len(te) × scores, from centred coordinates.
func (p *logisticProblem) predictRows(x [][]float32, te []int, theta []float64) [][]float64 {
	d := p.width
	out := make([][]float64, len(te))
	for r, i := range te {
		out[r] = make([]float64, p.scores)
		for t := range out[r] {
			s := theta[t*(d+1)+d]
			for j, v := range x[i] {
				s += theta[t*(d+1)+j] * (float64(v) - p.xMean[j])
			}
			out[r][t] = s
		}
	}
	return out
}

// logLoss is the log-loss of one row's scores for class y (binary: one score).
func logLoss(s []float64, y int) float64 {
	if len(s) == 1 {
		return softplus(s[0]) - float64(y)*s[0]
	}
	mx := floats.Max(s)
	sum := 0.0
	for _, v := range s {
		sum += math.Exp(v - mx)
	}
	return mx + math.Log(sum) - s[y]
}

// fitLogistic fits the logistic classifier of Fit: λ on the grid by the out-of-fold mean
// log-loss (warm-started from the largest λ down, per fold), then all rows at that λ.
func fitLogistic(m *Model, x [][]float32, classOf []int, order []int, o Options) error {
	nc := len(m.Classes)
	full := newLogisticProblem(x, classOf, order, nc)
	lambdas := o.Lambdas
	if lambdas == nil {
		lambdas = logisticGrid(meanSquaredSingular(full.xc))
	}
	m.CV = CV{Folds: o.Folds, Seed: o.Seed, Metric: "log_loss", Lambdas: lambdas, Scores: make([]float64, len(lambdas))}
	for f := 0; f < o.Folds; f++ {
		var tr, te []int
		for p, i := range order {
			if p%o.Folds == f {
				te = append(te, i)
			} else {
				tr = append(tr, i)
			}
		}
		prob := newLogisticProblem(x, classOf, tr, nc)
		theta := make([]float64, prob.params())
		for l := len(lambdas) - 1; l >= 0; l-- {
			if err := prob.solve(theta, lambdas[l], cvTolerance); err != nil {
				return fmt.Errorf("%w (fold %d of %d)", err, f+1, o.Folds)
			}
			for r, s := range prob.predictRows(x, te, theta) {
				m.CV.Scores[l] += logLoss(s, classOf[te[r]])
			}
		}
	}
	best := len(lambdas) - 1
	for l := len(lambdas) - 1; l >= 0; l-- {
		m.CV.Scores[l] /= float64(len(order))
		if m.CV.Scores[l] < m.CV.Scores[best] { // ties keep the larger λ
			best = l
		}
	}
	m.Lambda = lambdas[best]
	theta := make([]float64, full.params())
	for l := len(lambdas) - 1; l >= best; l-- { // the same warm-started path to λ
		tol := cvTolerance
		if l == best {
			tol = logisticTolerance
		}
		if err := full.solve(theta, lambdas[l], tol); err != nil {
			return err
		}
	}
	m.Weights, m.Intercept = full.coefficients(theta)
	m.Link, m.Estimator = Logistic, LogisticClassifier
	return nil
}

// meanSquaredSingular is trace(XcᵀXc) / min(n, width) of centred rows.
func meanSquaredSingular(xc *mat.Dense) float64 {
	n, d := xc.Dims()
	t := 0.0
	for i := 0; i < n; i++ {
		r := xc.RawRowView(i)
		t += floats.Dot(r, r)
	}
	return t / float64(max(min(n, d), 1))
}

// logisticGrid is 10^-6 … 10^1 (half decades) times ms, the mean squared singular value of
// the centred features: below 10^-6 the penalty barely acts on separable classes (and
// L-BFGS slows as the weights grow), above 10 the scores shrink to the class frequencies.
func logisticGrid(ms float64) []float64 {
	if ms == 0 {
		ms = 1
	}
	var g []float64
	for e := -12; e <= 2; e++ {
		g = append(g, ms*math.Pow(10, float64(e)/2))
	}
	return g
}
