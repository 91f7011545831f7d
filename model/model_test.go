package model

import (
	"bytes"
	"encoding/json"
	"math"
	"strconv"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/distfeat/distfeat/internal/numeric"
)

// linearData draws n rows of width d with y = x·beta + 1.5 + noise(); beta is fixed by seed.
func linearData(seed uint64, n, d int, noise func(*numeric.RNG) float64) ([][]float32, []string) {
	rng := numeric.NewRNG(seed, "model/test")
	beta := make([]float64, d)
	for j := range beta {
		beta[j] = rng.Normal()
	}
	x := make([][]float32, n)
	y := make([]string, n)
	for i := range x {
		x[i] = make([]float32, d)
		v := 1.5
		for j := range x[i] {
			x[i][j] = float32(rng.Normal())
			v += beta[j] * float64(x[i][j])
		}
		y[i] = strconv.FormatFloat(v+noise(rng), 'g', -1, 64)
	}
	return x, y
}

func gaussNoise(r *numeric.RNG) float64 { return 0.5 * r.Normal() }

// laplaceNoise is heavy-tailed relative to the Gaussian.
func laplaceNoise(r *numeric.RNG) float64 {
	u := r.Float64() - 0.5
	return -math.Copysign(1, u) * math.Log(1-2*math.Abs(u))
}

// skewNoise is asymmetric: exponential minus its mean.
func skewNoise(r *numeric.RNG) float64 { return -math.Log(1-r.Float64()) - 1 }

// TestRidgeClosedForm: both paths' (primal: eigendecomposition of XcᵀXc; dual: of the centred
// Gram matrix) weights and intercept at every λ equal the closed-form
// ridge solution w = (XcᵀXc + λI)⁻¹ Xcᵀ yc, b = ȳ − x̄·w, solved directly, for tall and wide
// problems; their predictions are the weights' scores.
func TestRidgeClosedForm(t *testing.T) {
	for _, tc := range []struct {
		name string
		n, d int
	}{{"tall", 40, 6}, {"wide", 12, 30}, {"square", 15, 15}} {
		t.Run(tc.name, func(t *testing.T) {
			x, labels := linearData(7, tc.n, tc.d, gaussNoise)
			y := mat.NewDense(tc.n, 1, nil)
			rows := make([]int, tc.n)
			for i := range rows {
				rows[i] = i
				v, _ := strconv.ParseFloat(labels[i], 64)
				y.Set(i, 0, v)
			}
			for _, dual := range []bool{false, true} {
				var gram *mat.SymDense
				if dual {
					gram = gramOf(x)
				}
				rp, err := newPath(x, y, rows, gram)
				if err != nil {
					t.Fatal(err)
				}
				checkClosedForm(t, rp, x, y, dual)
			}
		})
	}
}

// checkClosedForm compares rp's weights, intercept and predictions with the closed form.
func checkClosedForm(t *testing.T, rp path, x [][]float32, y *mat.Dense, dual bool) {
	n, d := len(x), len(x[0])
	lambdas := []float64{1e-3, 0.1, 1, 10, 1000}
	preds := rp.predict([]int{0, n - 1}, lambdas)
	for l, lam := range lambdas {
		w, b := rp.coefficients(lam)
		for r, i := range []int{0, n - 1} {
			want := score(b[0], w[0], x[i])
			if got := preds[l].At(r, 0); math.Abs(got-want) > 1e-9*(1+math.Abs(want)) {
				t.Errorf("dual %v λ=%g: predict row %d %v, weights give %v", dual, lam, i, got, want)
			}
		}
		{
			// closed form
			xm := make([]float64, d)
			ym := 0.0
			for i := range x {
				for j, v := range x[i] {
					xm[j] += float64(v) / float64(n)
				}
				ym += y.At(i, 0) / float64(n)
			}
			xc := mat.NewDense(n, d, nil)
			yc := mat.NewVecDense(n, nil)
			for i := range x {
				for j, v := range x[i] {
					xc.Set(i, j, float64(v)-xm[j])
				}
				yc.SetVec(i, y.At(i, 0)-ym)
			}
			var a mat.Dense
			a.Mul(xc.T(), xc)
			for j := 0; j < d; j++ {
				a.Set(j, j, a.At(j, j)+lam)
			}
			var rhs, want mat.VecDense
			rhs.MulVec(xc.T(), yc)
			if err := want.SolveVec(&a, &rhs); err != nil {
				t.Fatal(err)
			}
			wantB := ym
			for j := 0; j < d; j++ {
				wantB -= want.AtVec(j) * xm[j]
				if d := math.Abs(w[0][j] - want.AtVec(j)); d > 1e-9*(1+math.Abs(want.AtVec(j))) {
					t.Errorf("dual %v λ=%g w[%d] = %v, closed form %v", dual, lam, j, w[0][j], want.AtVec(j))
				}
			}
			if d := math.Abs(b[0] - wantB); d > 1e-9*(1+math.Abs(wantB)) {
				t.Errorf("dual %v λ=%g intercept %v, closed form %v", dual, lam, b[0], wantB)
			}
		}
	}
}

// TestConformalCoverage: on several seeds and noise generators (Gaussian, heavy-tailed
// Laplace, skewed exponential), the 90% split-conformal interval covers fresh sets at 0.90.
// Given the calibration sets the coverage is Beta(k, n+1−k) with n = 400 calibration sets,
// sd ≈ √(0.9·0.1/402) ≈ 0.015, and 4000 test sets add sd 0.005: one run must lie within
// ±0.065 (4 sd) and the mean over the 9 runs (sd ≈ 0.0053) within ±0.021 (4 sd) of 0.90.
// The ⌈(n+1)·0.9⌉-th residual makes the expected coverage 0.9 to 0.9025, inside both.
func TestConformalCoverage(t *testing.T) {
	gens := []struct {
		name  string
		noise func(*numeric.RNG) float64
	}{{"gauss", gaussNoise}, {"laplace", laplaceNoise}, {"skew", skewNoise}}
	sum, runs := 0.0, 0
	for _, g := range gens {
		for _, seed := range []uint64{1, 2, 3} {
			x, y := linearData(seed, 2000, 8, g.noise)
			m, err := Fit(x, y, Options{Kind: Regression, Seed: seed})
			if err != nil {
				t.Fatal(err)
			}
			if m.Conformal.NCalibration != 400 {
				t.Fatalf("n_calibration %d, want 400", m.Conformal.NCalibration)
			}
			xt, yt := testRows(seed, g.noise, 4000)
			in := 0
			for i := range xt {
				p, err := m.Predict(xt[i], 0.9)
				if err != nil {
					t.Fatal(err)
				}
				v, _ := strconv.ParseFloat(yt[i], 64)
				if v >= p.Lo && v <= p.Hi {
					in++
				}
			}
			cov := float64(in) / float64(len(xt))
			t.Logf("%s seed %d: λ=%.3g coverage %.4f half-width %.3f", g.name, seed, m.Lambda, cov, p90(m))
			if math.Abs(cov-0.9) > 0.065 {
				t.Errorf("%s seed %d: 90%% coverage %.4f", g.name, seed, cov)
			}
			sum += cov
			runs++
		}
	}
	if mean := sum / float64(runs); math.Abs(mean-0.9) > 0.021 {
		t.Errorf("mean 90%% coverage %.4f over %d runs", mean, runs)
	}
}

func p90(m *Model) float64 { q, _ := m.Quantile(0.9); return q }

// testRows draws fresh rows from the same linear model as linearData(seed, …): the first n0
// rows of a longer draw are the training rows, so the rows after them are new sets.
func testRows(seed uint64, noise func(*numeric.RNG) float64, n int) ([][]float32, []string) {
	x, y := linearData(seed, 2000+n, 8, noise)
	return x[2000:], y[2000:]
}

// fitted is a small regression model with its identity filled in, as fit writes it.
func fitted(t *testing.T) *Model {
	t.Helper()
	x, y := linearData(4, 200, 5, gaussNoise)
	m, err := Fit(x, y, Options{Kind: Regression})
	if err != nil {
		t.Fatal(err)
	}
	m.SpecID, m.Families, m.Columns, m.Label = "abc123", []string{"f"}, []Column{{Name: "f", Len: 5}}, "y"
	return m
}

// TestFileRoundTrip: Marshal then Parse gives the same model and the same bytes; fitting
// twice gives the same file (deterministic folds and split).
func TestFileRoundTrip(t *testing.T) {
	b1, err := fitted(t).Marshal()
	if err != nil {
		t.Fatal(err)
	}
	b2, _ := fitted(t).Marshal()
	if !bytes.Equal(b1, b2) {
		t.Fatal("two fits of the same data gave different model files")
	}
	m, err := Parse(b1)
	if err != nil {
		t.Fatal(err)
	}
	b3, _ := m.Marshal()
	if !bytes.Equal(b1, b3) {
		t.Fatal("parse/marshal changed the file")
	}
}

// TestParseRefuses: edited, malformed or inconsistent files are refused with the reason.
func TestParseRefuses(t *testing.T) {
	good, err := fitted(t).Marshal()
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, old, new, want string
		rehash               bool
	}{
		{"edited weight", `"lambda": `, `"lambda": 1`, "does not match the content", false},
		{"format", `"format": 1`, `"format": 2`, "format 2", true},
		{"kind", `"kind": "regression"`, `"kind": "svm"`, `kind "svm"`, true},
		{"width", `"width": 5`, `"width": 6`, "width 6", true},
		{"no spec", `"spec_id": "abc123"`, `"spec_id": ""`, "no spec_id", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := strings.Replace(string(good), tc.old, tc.new, 1)
			if s == string(good) {
				t.Fatalf("%q not in the file", tc.old)
			}
			if tc.rehash { // a consistent hash, so the check under test is the one that fires
				var m Model
				if err := json.Unmarshal([]byte(s), &m); err != nil {
					t.Fatal(err)
				}
				v, _ := m.Version()
				m.ModelVersion = v
				b, _ := json.Marshal(&m)
				s = string(b)
			}
			_, err := Parse([]byte(s))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want one containing %q", err, tc.want)
			}
		})
	}
}

// TestCheckSpec: a model is refused under another spec_id or another column width, the error
// naming both.
func TestCheckSpec(t *testing.T) {
	m := fitted(t)
	if _, err := m.Marshal(); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name   string
		specID string
		cols   []Column
		want   []string
	}{
		{"ok", "abc123", []Column{{"g", 3}, {"f", 5}}, nil},
		{"spec", "def456", []Column{{"f", 5}}, []string{"abc123", "def456"}},
		{"width", "abc123", []Column{{"f", 7}}, []string{"width 5", "width 7"}},
		{"missing", "abc123", []Column{{"g", 5}}, []string{`"f"`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := m.CheckSpec(tc.specID, tc.cols)
			if tc.want == nil {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if err == nil {
				t.Fatal("accepted")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not name %s", err, w)
				}
			}
		})
	}
	if _, err := m.Predict(make([]float32, 4), 0); err == nil || !strings.Contains(err.Error(), "width 4") {
		t.Errorf("a row of width 4: %v", err)
	}
	if _, err := m.Predict(make([]float32, 5), 0.93); err == nil {
		t.Error("coverage 0.93 (not stored) accepted")
	}
}

// TestClassifier: one-vs-rest ridge separates three Gaussian clusters (means 4 sd apart in
// 6 dimensions; the Bayes error is below 1%), on several seeds: held-out accuracy ≥ 0.95
// leaves room for 300 test rows' sampling error (sd ≈ 0.006 at 0.99) and the fit's own.
func TestClassifier(t *testing.T) {
	draw := func(rng *numeric.RNG, n int) ([][]float32, []string) {
		x := make([][]float32, n)
		y := make([]string, n)
		for i := range x {
			c := i % 3
			x[i] = make([]float32, 6)
			for j := range x[i] {
				x[i][j] = float32(rng.Normal())
			}
			x[i][c] += 4
			y[i] = []string{"a", "b", "c"}[c]
		}
		return x, y
	}
	for _, seed := range []uint64{1, 2, 3} {
		rng := numeric.NewRNG(seed, "model/classifier")
		x, y := draw(rng, 150)
		m, err := Fit(x, y, Options{Kind: Classification, Seed: seed})
		if err != nil {
			t.Fatal(err)
		}
		if m.Conformal != nil || len(m.Classes) != 3 || m.CV.Metric != "accuracy" {
			t.Fatalf("classifier %+v", m)
		}
		xt, yt := draw(rng, 300)
		ok := 0
		for i := range xt {
			p, err := m.Predict(xt[i], 0)
			if err != nil {
				t.Fatal(err)
			}
			if len(p.Scores) != 3 || p.Value != p.Scores[argmax(p.Scores)] {
				t.Fatalf("prediction %+v", p)
			}
			if p.Class == yt[i] {
				ok++
			}
		}
		if acc := float64(ok) / float64(len(xt)); acc < 0.95 {
			t.Errorf("seed %d: accuracy %.3f", seed, acc)
		}
	}
}

// TestFitRefuses: bad labels and too few sets are errors naming the problem.
func TestFitRefuses(t *testing.T) {
	x, y := linearData(1, 30, 3, gaussNoise)
	for _, tc := range []struct {
		name   string
		labels []string
		o      Options
		want   string
	}{
		{"text label", append([]string{"big"}, y[1:]...), Options{Kind: Regression}, `"big" is not a finite number`},
		{"one class", make([]string, 30), Options{Kind: Classification}, "has no label"},
		{"few sets", y, Options{Kind: Regression, Folds: 20}, "too few"},
		{"kind", y, Options{Kind: "svm"}, `kind "svm"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Fit(x, tc.labels, tc.o)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want %q", err, tc.want)
			}
		})
	}
}

// BenchmarkPredict is the cost of one prediction on a row of 2048 features with a
// regression model and its 90% interval.
func BenchmarkPredict(b *testing.B) {
	const d = 2048
	m := &Model{Format: FormatVersion, Kind: Regression, Width: d, Intercept: []float64{1},
		Weights: [][]float64{make([]float64, d)}, Conformal: &Conformal{Levels: []float64{0.9}, Quantiles: []float64{1}}}
	x := make([]float32, d)
	for i := range x {
		x[i], m.Weights[0][i] = float32(i%7), float64(i%5)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := m.Predict(x, 0.9); err != nil {
			b.Fatal(err)
		}
	}
}
