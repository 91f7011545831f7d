package model

import (
	"bytes"
	"encoding/json"
	"math"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/distfeat/distfeat/internal/numeric"
)

// clusters draws n rows of width d in k Gaussian clusters (class c's mean: sep on
// coordinate c) with class names "c0", "c1", ….
func clusters(rng *numeric.RNG, n, d, k int, sep float64) ([][]float32, []string) {
	x := make([][]float32, n)
	y := make([]string, n)
	for i := range x {
		c := i % k
		x[i] = make([]float32, d)
		for j := range x[i] {
			x[i][j] = float32(rng.Normal())
		}
		x[i][c%d] += float32(sep)
		y[i] = "c" + string(rune('0'+c))
	}
	return x, y
}

// TestLogisticGradient: the objective's analytic gradient equals central finite differences
// (step 1e-6: truncation error O(h²) ≈ 1e-12 and rounding ≈ 1e-16/1e-6 = 1e-10, so 1e-6
// relative is loose by orders of magnitude yet fails on a wrong term), binary and
// multinomial, at a random point.
func TestLogisticGradient(t *testing.T) {
	for _, k := range []int{2, 3} {
		rng := numeric.NewRNG(uint64(k), "model/logistic-grad")
		x, y := clusters(rng, 25, 4, k, 1)
		classOf := make([]int, len(y))
		rows := make([]int, len(y))
		for i := range y {
			classOf[i], rows[i] = int(y[i][1]-'0'), i
		}
		p := newLogisticProblem(x, classOf, rows, k)
		theta := make([]float64, p.params())
		for i := range theta {
			theta[i] = rng.Normal()
		}
		g := make([]float64, len(theta))
		p.objective(theta, g, 0.7)
		for i := range theta {
			h := 1e-6
			tp := slices.Clone(theta)
			tp[i] += h
			tm := slices.Clone(theta)
			tm[i] -= h
			fd := (p.objective(tp, nil, 0.7) - p.objective(tm, nil, 0.7)) / (2 * h)
			if math.Abs(fd-g[i]) > 1e-6*(1+math.Abs(fd)) {
				t.Errorf("k=%d θ[%d]: gradient %v, finite difference %v", k, i, g[i], fd)
			}
		}
	}
}

// TestLogisticOptimality: at the fitted λ, the model file's weights satisfy the optimality
// conditions of Σ_i ℓ_i + (λ/2)‖W‖², computed independently of the fitting code from the
// probabilities Predict gives: Σ_i (p_i − y_i) x_i + λ w = 0 for every score's weights and
// Σ_i (p_i − y_i) = 0 for its intercept (binary: the one score of classes[1]; multinomial:
// one per class). The fit stops at a largest gradient entry of 1e-9 per set in centred
// coordinates; in the features' own coordinates a weight's condition adds x̄_j times the
// intercept's (|x̄_j| ≲ 1 here), so 1e-8 per set is 10× that and fails a fit stopped early
// (at 1e-4 the residual is 7e-5). Also: 2 classes give one weight row, 3 give three; probabilities sum
// to 1; the class is the most probable one.
func TestLogisticOptimality(t *testing.T) {
	for _, tc := range []struct {
		k, d, n int
		seed    uint64
	}{{2, 5, 60, 1}, {3, 5, 90, 2}, {4, 8, 80, 3}, {2, 30, 20, 4}} {
		rng := numeric.NewRNG(tc.seed, "model/logistic-opt")
		x, y := clusters(rng, tc.n, tc.d, tc.k, 1.5)
		m, err := Fit(x, y, Options{Kind: Classification, Classifier: LogisticClassifier, Folds: 4})
		if err != nil {
			t.Fatal(err)
		}
		wantRows := tc.k
		if tc.k == 2 {
			wantRows = 1
		}
		if len(m.Weights) != wantRows || m.Link != Logistic || m.CV.Metric != "log_loss" {
			t.Fatalf("k=%d: %d weight rows, link %q, metric %q", tc.k, len(m.Weights), m.Link, m.CV.Metric)
		}
		grad := make([][]float64, len(m.Weights))
		gb := make([]float64, len(m.Weights))
		for r := range grad {
			grad[r] = make([]float64, tc.d)
			for j := range grad[r] {
				grad[r][j] = m.Lambda * m.Weights[r][j]
			}
		}
		for i := range x {
			p, err := m.Predict(x[i], 0)
			if err != nil {
				t.Fatal(err)
			}
			sum := 0.0
			for _, v := range p.Probabilities {
				sum += v
			}
			if math.Abs(sum-1) > 1e-12 || m.Classes[argmax(p.Probabilities)] != p.Class {
				t.Fatalf("probabilities %v (sum %v), class %s", p.Probabilities, sum, p.Class)
			}
			for r := range grad {
				cls := r
				if len(grad) == 1 {
					cls = 1
				}
				res := p.Probabilities[cls]
				if y[i] == m.Classes[cls] {
					res--
				}
				gb[r] += res
				for j, v := range x[i] {
					grad[r][j] += res * float64(v)
				}
			}
		}
		for r := range grad {
			worst := math.Abs(gb[r])
			for _, g := range grad[r] {
				worst = max(worst, math.Abs(g))
			}
			if worst/float64(tc.n) > 1e-8 {
				t.Errorf("k=%d d=%d: score %d: largest optimality residual per set %.3g", tc.k, tc.d, r, worst/float64(tc.n))
			}
		}
		t.Logf("k=%d d=%d n=%d: λ=%.4g, CV log-loss %.4f", tc.k, tc.d, tc.n, m.Lambda, m.CV.Scores[slices.Index(m.CV.Lambdas, m.Lambda)])
	}
}

// TestLogisticAccuracy: on three Gaussian clusters 4 sd apart in 6 dimensions (Bayes error
// below 1%), on several seeds, logistic regression classifies 300 held-out rows as well as
// TestClassifier asks of ridge (≥ 0.95), and its probabilities are calibrated enough that
// the mean probability given to the predicted class is within 0.05 of the held-out
// accuracy (300 rows: the accuracy's sd is ≈ 0.006 at 0.99).
func TestLogisticAccuracy(t *testing.T) {
	for _, seed := range []uint64{1, 2, 3} {
		rng := numeric.NewRNG(seed, "model/logistic-acc")
		x, y := clusters(rng, 150, 6, 3, 4)
		m, err := Fit(x, y, Options{Kind: Classification, Classifier: LogisticClassifier, Seed: seed})
		if err != nil {
			t.Fatal(err)
		}
		xt, yt := clusters(rng, 300, 6, 3, 4)
		ok, conf := 0, 0.0
		for i := range xt {
			p, err := m.Predict(xt[i], 0)
			if err != nil {
				t.Fatal(err)
			}
			if p.Class == yt[i] {
				ok++
			}
			conf += slices.Max(p.Probabilities)
		}
		acc, conf := float64(ok)/float64(len(xt)), conf/float64(len(xt))
		t.Logf("seed %d: λ=%.3g accuracy %.3f, mean top probability %.3f", seed, m.Lambda, acc, conf)
		if acc < 0.95 || math.Abs(conf-acc) > 0.05 {
			t.Errorf("seed %d: accuracy %.3f, mean top probability %.3f", seed, acc, conf)
		}
	}
}

// TestBinaryOneScore: a binary model with one weight row (as scikit-learn stores one)
// predicts classes[1] for a positive score and classes[0] otherwise (0 included, as
// scikit-learn's `score > 0`); with the logistic link, P = [1−σ(s), σ(s)]; without, no
// probabilities. ScoreClasses names the one score's class.
func TestBinaryOneScore(t *testing.T) {
	for _, link := range []string{"", Logistic} {
		m := &Model{Format: FormatVersion, Kind: Classification, SpecID: "s", Families: []string{"f"},
			Columns: []Column{{"f", 2}}, Width: 2, Classes: []string{"no", "yes"}, Link: link,
			Intercept: []float64{0.5}, Weights: [][]float64{{1, -2}}}
		if _, b, err := Seal(mustJSON(t, m)); err != nil {
			t.Fatal(err)
		} else if _, err := Parse(b); err != nil {
			t.Fatal(err)
		}
		if got := m.ScoreClasses(); !slices.Equal(got, []string{"yes"}) {
			t.Fatalf("score classes %v", got)
		}
		for _, tc := range []struct {
			x    []float32
			s    float64
			want string
		}{{[]float32{1, 0}, 1.5, "yes"}, {[]float32{0, 1}, -1.5, "no"}, {[]float32{1.5, 1}, 0, "no"}} {
			p, err := m.Predict(tc.x, 0)
			if err != nil {
				t.Fatal(err)
			}
			if p.Value != tc.s || p.Class != tc.want || len(p.Scores) != 1 {
				t.Errorf("link %q x=%v: %+v, want score %v class %s", link, tc.x, p, tc.s, tc.want)
			}
			if link == "" && p.Probabilities != nil {
				t.Errorf("link none: probabilities %v", p.Probabilities)
			}
			if link == Logistic {
				q := 1 / (1 + math.Exp(-tc.s))
				if math.Abs(p.Probabilities[1]-q) > 1e-15 || math.Abs(p.Probabilities[0]-(1-q)) > 1e-15 {
					t.Errorf("x=%v: probabilities %v, σ(%v) = %v", tc.x, p.Probabilities, tc.s, q)
				}
			}
		}
	}
}

// TestSoftmaxLargeScores: the multinomial probabilities of huge scores are finite (the
// maximum is subtracted first) and those of equal scores uniform.
func TestSoftmaxLargeScores(t *testing.T) {
	p := probabilities([]float64{1000, 999, -1000})
	e := math.Exp(-1)
	if math.Abs(p[0]-1/(1+e)) > 1e-15 || math.Abs(p[1]-e/(1+e)) > 1e-15 || p[2] != 0 {
		t.Errorf("softmax %v", p)
	}
	if p := probabilities([]float64{3, 3, 3, 3}); p[2] != 0.25 {
		t.Errorf("softmax of equal scores %v", p)
	}
}

// TestFormat1FilesStillLoad: model files written before the estimator, link and binary
// one-score fields existed (model/testdata, written by that code) load with their
// model_version and marshal to the same bytes.
func TestFormat1FilesStillLoad(t *testing.T) {
	for _, f := range []string{"testdata/regression-format1.json", "testdata/classification-format1.json"} {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		m, err := Parse(b)
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		again, err := m.Marshal()
		if err != nil || !bytes.Equal(again, b) {
			t.Errorf("%s: marshals to other bytes (%v)", f, err)
		}
	}
}

// TestSealRefuses: Seal (the exporters' entry) refuses unknown fields, a link on a
// regression, an unknown link, duplicate classes and a binary model with a wrong number of
// rows, naming what is wrong; it replaces a stale model_version.
func TestSealRefuses(t *testing.T) {
	base := func() *Model {
		return &Model{Format: FormatVersion, Kind: Classification, SpecID: "s", Families: []string{"f"},
			Columns: []Column{{"f", 2}}, Width: 2, Classes: []string{"a", "b", "c"}, Link: Logistic,
			Intercept: []float64{0, 0, 0}, Weights: [][]float64{{1, 0}, {0, 1}, {1, 1}}}
	}
	m := base()
	m.ModelVersion = "stale"
	sealed, b, err := Seal(mustJSON(t, m))
	if err != nil || sealed.ModelVersion == "stale" {
		t.Fatalf("seal: %v, version %q", err, sealed.ModelVersion)
	}
	if _, err := Parse(b); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		edit func(*Model)
		raw  string
		want string
	}{
		{name: "unknown field", raw: `{"format":1,"kind":"classification","wieghts":[]}`, want: `unknown field "wieghts"`},
		{name: "regression link", edit: func(m *Model) {
			m.Kind, m.Classes, m.Intercept, m.Weights = Regression, nil, []float64{0}, m.Weights[:1]
		}, want: "a regression model's score is its prediction"},
		{name: "link", edit: func(m *Model) { m.Link = "probit" }, want: `link "probit"`},
		{name: "duplicate class", edit: func(m *Model) { m.Classes[2] = "a" }, want: `class "a" appears twice`},
		{name: "rows", edit: func(m *Model) { m.Classes = m.Classes[:2] }, want: "3 intercepts and 3 weight rows for 2 scores"},
		{name: "lambda", edit: func(m *Model) { m.Lambda = -1 }, want: "lambda -1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			doc := []byte(tc.raw)
			if tc.edit != nil {
				m := base()
				tc.edit(m)
				doc = mustJSON(t, m)
			}
			if _, _, err := Seal(doc); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want %q", err, tc.want)
			}
		})
	}
}

// TestFitRefusesClassifier: logistic is a classifier only; an unknown classifier is named.
func TestFitRefusesClassifier(t *testing.T) {
	x, y := linearData(1, 30, 3, gaussNoise)
	if _, err := Fit(x, y, Options{Kind: Regression, Classifier: LogisticClassifier}); err == nil || !strings.Contains(err.Error(), "is for classification") {
		t.Errorf("logistic regression task: %v", err)
	}
	if _, err := Fit(x, y, Options{Kind: Classification, Classifier: "svm"}); err == nil || !strings.Contains(err.Error(), `classifier "svm"`) {
		t.Errorf("classifier svm: %v", err)
	}
}

func mustJSON(t *testing.T, m *Model) []byte {
	t.Helper()
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
