package model

import (
	"math"
	"slices"
	"strconv"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/distfeat/distfeat/internal/numeric"
)

// pointData is sets of points of width d (set k has 5+3k points) with three classes by the
// sign pattern of a noisy linear score.
func pointData(seed uint64, sets, d int) (x [][]float32, set []int, labels []string) {
	rng := numeric.NewRNG(seed, "model/fitpoints-test")
	for s := 0; s < sets; s++ {
		for i := 0; i < 5+3*s; i++ {
			r := make([]float32, d)
			for j := range r {
				r[j] = float32(rng.Normal() + 0.3*float64(s%3))
			}
			v := float64(r[0]) - 0.5*float64(r[1]) + 0.3*rng.Normal()
			l := "b"
			if v > 0.7 {
				l = "c"
			} else if v < -0.7 {
				l = "a"
			}
			x, set, labels = append(x, r), append(set, s), append(labels, l)
		}
	}
	return x, set, labels
}

// TestFitPointsClosedForm: at one λ, FitPoints' weights and intercepts are the minimiser of
// Σ_i w_i‖y_i − b − W·x_i‖² + λ‖W‖² with w_i = 1/(points of i's set) and ±1 targets, solved
// directly from the normal equations of the augmented system [x, 1] (the intercept
// unpenalised).
func TestFitPointsClosedForm(t *testing.T) {
	const d, sets, lam = 4, 8, 0.7
	x, set, labels := pointData(1, sets, d)
	m, err := FitPoints(x, set, labels, Options{Kind: Classification, Folds: 2, Lambdas: []float64{lam}})
	if err != nil {
		t.Fatal(err)
	}
	if m.Per != PerPoint || m.NSets != sets || !slices.Equal(m.Classes, []string{"a", "b", "c"}) {
		t.Fatalf("per %q, %d sets, classes %v", m.Per, m.NSets, m.Classes)
	}
	size := make([]float64, sets)
	for _, s := range set {
		size[s]++
	}
	a := mat.NewSymDense(d+1, nil)
	rhs := mat.NewDense(d+1, 3, nil)
	for i, r := range x {
		w := 1 / size[set[i]]
		xa := make([]float64, 0, d+1) // [x, 1]
		for _, v := range r {
			xa = append(xa, float64(v))
		}
		xa = append(xa, 1)
		for p := 0; p <= d; p++ {
			for q := p; q <= d; q++ {
				a.SetSym(p, q, a.At(p, q)+w*xa[p]*xa[q])
			}
			for k, c := range m.Classes {
				y := -1.0
				if c == labels[i] {
					y = 1
				}
				rhs.Set(p, k, rhs.At(p, k)+w*xa[p]*y)
			}
		}
	}
	for p := 0; p < d; p++ {
		a.SetSym(p, p, a.At(p, p)+lam)
	}
	var theta mat.Dense
	if err := theta.Solve(a, rhs); err != nil {
		t.Fatal(err)
	}
	for k := range m.Classes {
		for j := 0; j < d; j++ {
			if got, want := m.Weights[k][j], theta.At(j, k); math.Abs(got-want) > 1e-9*(1+math.Abs(want)) {
				t.Errorf("class %d weight %d: %v, direct solve %v", k, j, got, want)
			}
		}
		if got, want := m.Intercept[k], theta.At(d, k); math.Abs(got-want) > 1e-9*(1+math.Abs(want)) {
			t.Errorf("class %d intercept: %v, direct solve %v", k, got, want)
		}
	}
}

// TestFitPointsRegression: a per-point ridge regression's weights and intercept at one λ are
// the direct weighted solve's, its CV metric is the RMSE with every set weighing the same,
// and it applies without an interval whatever the coverage asked.
func TestFitPointsRegression(t *testing.T) {
	const d, sets, lam = 3, 8, 0.4
	x, set, _ := pointData(4, sets, d)
	labels := make([]string, len(x))
	for i, r := range x {
		labels[i] = strconv.FormatFloat(2*float64(r[0])-float64(r[2])+0.5*float64(set[i]%2), 'g', -1, 64)
	}
	m, err := FitPoints(x, set, labels, Options{Kind: Regression, Folds: 2, Lambdas: []float64{lam}})
	if err != nil {
		t.Fatal(err)
	}
	if m.Kind != Regression || m.CV.Metric != "rmse" || m.Conformal != nil || len(m.Weights) != 1 {
		t.Fatalf("kind %s metric %s conformal %v, %d weight rows", m.Kind, m.CV.Metric, m.Conformal, len(m.Weights))
	}
	size := make([]float64, sets)
	for _, s := range set {
		size[s]++
	}
	a := mat.NewSymDense(d+1, nil)
	rhs := mat.NewVecDense(d+1, nil)
	for i, r := range x {
		w := 1 / size[set[i]]
		xa := make([]float64, 0, d+1)
		for _, v := range r {
			xa = append(xa, float64(v))
		}
		xa = append(xa, 1)
		y, _ := strconv.ParseFloat(labels[i], 64)
		for p := 0; p <= d; p++ {
			for q := p; q <= d; q++ {
				a.SetSym(p, q, a.At(p, q)+w*xa[p]*xa[q])
			}
			rhs.SetVec(p, rhs.AtVec(p)+w*xa[p]*y)
		}
	}
	for p := 0; p < d; p++ {
		a.SetSym(p, p, a.At(p, p)+lam)
	}
	var theta mat.VecDense
	if err := theta.SolveVec(a, rhs); err != nil {
		t.Fatal(err)
	}
	for j := 0; j < d; j++ {
		if got, want := m.Weights[0][j], theta.AtVec(j); math.Abs(got-want) > 1e-9*(1+math.Abs(want)) {
			t.Errorf("weight %d: %v, direct solve %v", j, got, want)
		}
	}
	if got, want := m.Intercept[0], theta.AtVec(d); math.Abs(got-want) > 1e-9*(1+math.Abs(want)) {
		t.Errorf("intercept: %v, direct solve %v", got, want)
	}
	m.SpecID, m.Columns = "s", []Column{{Name: "mt", Len: d}}
	if _, err := m.Marshal(); err != nil {
		t.Fatal(err)
	}
	ap, err := NewPointApplier(m, "s", m.Columns, 0.9)
	if err != nil {
		t.Fatal(err)
	}
	out, err := ap.Apply([][]float32{x[0]})
	if err != nil || out.Interval != nil || ap.Coverage() != 0 {
		t.Fatalf("a per-point regression's output %+v (coverage %v): %v; want no interval", out, ap.Coverage(), err)
	}
}

// TestFitPointsSetsWeighEqually: repeating every point of one set four times changes
// nothing — a set weighs 1 whatever its number of points, in the fit and in the
// cross-validated accuracy (the mean over sets of each set's accuracy) — while Fit-style
// pooling of points would weigh that set four times as much.
func TestFitPointsSetsWeighEqually(t *testing.T) {
	x, set, labels := pointData(2, 10, 3)
	o := Options{Kind: Classification, Folds: 5}
	m1, err := FitPoints(x, set, labels, o)
	if err != nil {
		t.Fatal(err)
	}
	var x4 [][]float32
	var set4 []int
	var labels4 []string
	for i := range x {
		rep := 1
		if set[i] == 3 {
			rep = 4
		}
		for r := 0; r < rep; r++ {
			x4, set4, labels4 = append(x4, x[i]), append(set4, set[i]), append(labels4, labels[i])
		}
	}
	m4, err := FitPoints(x4, set4, labels4, o)
	if err != nil {
		t.Fatal(err)
	}
	if m1.Lambda != m4.Lambda && math.Abs(m1.Lambda-m4.Lambda) > 1e-9*m1.Lambda {
		t.Fatalf("λ %v, with set 3 repeated %v", m1.Lambda, m4.Lambda)
	}
	for l := range m1.CV.Scores {
		if math.Abs(m1.CV.Scores[l]-m4.CV.Scores[l]) > 1e-12 {
			t.Fatalf("CV accuracy at λ %d: %v, with set 3 repeated %v", l, m1.CV.Scores[l], m4.CV.Scores[l])
		}
	}
	for k := range m1.Weights {
		for j, w := range m1.Weights[k] {
			if math.Abs(w-m4.Weights[k][j]) > 1e-9*(1+math.Abs(w)) {
				t.Fatalf("weight %d,%d: %v, with set 3 repeated %v", k, j, w, m4.Weights[k][j])
			}
		}
	}
}

// TestFitPointsRefuses: what a per-point fit refuses, by name.
func TestFitPointsRefuses(t *testing.T) {
	x, set, labels := pointData(3, 6, 2)
	for _, c := range []struct {
		name string
		o    Options
		set  []int
		want string
	}{
		{"numbers for a regression", Options{Kind: Regression, Folds: 2}, set, `label "b" is not a finite number`},
		{"logistic", Options{Kind: Classification, Classifier: LogisticClassifier}, set, "not offered per point"},
		{"too few sets", Options{Kind: Classification, Folds: 4}, set, "6 sets are too few for 4 folds"},
		{"a set without points", Options{Kind: Classification, Folds: 2}, func() []int {
			s := slices.Clone(set)
			for i := range s {
				if s[i] == 2 {
					s[i] = 1
				}
			}
			return s
		}(), "set 2 has no points"},
	} {
		_, err := FitPoints(x, c.set, labels, c.o)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.name, err, c.want)
		}
	}
}
