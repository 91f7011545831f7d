package calibrate

import (
	"context"
	"fmt"
	"math"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/distfeat/distfeat/embedding"
	"github.com/distfeat/distfeat/examples/exampledata"
	"github.com/distfeat/distfeat/spec"
)

// TestAccuracyGain measures what calibrate buys on a labelled task: the example classes
// (ring, Gaussian, uniform square with equal mean and covariance, in their own units),
// classified by ridge regression on the features (one-vs-rest, λ by leave-one-out on the
// training sets), trained on one draw of sets and tested on another. Specs compared: the
// default spec as is (unit-square bounds: these data are clipped to a corner), the default
// families with the bounds a careful user would set by hand (the data's min and max), and
// the calibrated spec (calibrated without labels on a third draw). It logs the table (run
// with -v) and asserts only what must hold: calibrate beats the unusable default by far and
// is not worse than hand-set bounds beyond the test's sampling error.
func TestAccuracyGain(t *testing.T) {
	const perClass, points = 40, 40
	for _, sc := range []struct {
		name string
		// to maps the example data: identity (own units), or into [0.44, 0.56]² (data that
		// sits inside the default unit-square bounds but fills a tenth of them).
		to func([]exampledata.Set) []exampledata.Set
	}{{"own units", func(s []exampledata.Set) []exampledata.Set { return s }}, {"unit square, concentrated", concentrate}} {
		train := sc.to(exampledata.Sets(11, perClass, points))
		test := sc.to(exampledata.Sets(12, perClass, points))
		var calib []Set
		for _, s := range sc.to(exampledata.Sets(13, 16, points)) {
			calib = append(calib, Set{ID: s.ID, Points: s.Points})
		}
		res, err := Calibrate(context.Background(), calib, 2, nil, Options{})
		if err != nil {
			t.Fatal(err)
		}
		hand := spec.DefaultSpec()
		hand.Bounds = minMaxBounds(append(append([]exampledata.Set{}, train...), test...))
		specs := []struct {
			name string
			spec *spec.Spec
		}{{"default", spec.DefaultSpec()}, {"default + min/max bounds", hand}, {"calibrated", res.Spec}}
		acc := map[string]map[string]float64{}
		var lines []string
		for _, sp := range specs {
			acc[sp.name] = map[string]float64{}
			etr, ete := embedSets(t, sp.spec, train), embedSets(t, sp.spec, test)
			for _, col := range []string{"mmd", "hdd_js", "l2", "all"} {
				a := ridgeAccuracy(etr, ete, col, train, test)
				acc[sp.name][col] = a
				lines = append(lines, fmt.Sprintf("%-26s %-7s test accuracy %.3f", sp.name, col, a))
			}
		}
		t.Logf("%s: %d training and %d test sets of %d points, 3 classes (chance 0.333); calibrated spec %s\n%s",
			sc.name, len(train), len(test), points, res.Spec.CanonicalJSON(), strings.Join(lines, "\n"))
		// Sampling error of an accuracy over 120 test sets: sd ≤ √(0.25/120) ≈ 0.046; 0.1 is
		// two of those, the margin by which calibrated may trail another spec before it fails.
		for _, col := range []string{"mmd", "hdd_js", "all"} {
			for _, other := range []string{"default", "default + min/max bounds"} {
				if c, o := acc["calibrated"][col], acc[other][col]; c < o-0.1 {
					t.Errorf("%s, %s: calibrated %.3f vs %s %.3f", sc.name, col, c, other, o)
				}
			}
		}
	}
}

// concentrate maps the example sets (about [44, 56]×[14, 26]) into [0.44, 0.56]².
func concentrate(sets []exampledata.Set) []exampledata.Set {
	out := make([]exampledata.Set, len(sets))
	for k, s := range sets {
		pts := make([]float64, len(s.Points))
		for i, v := range s.Points {
			c := 50.0
			if i%2 == 1 {
				c = 20
			}
			pts[i] = 0.5 + (v-c)/100
		}
		out[k] = exampledata.Set{ID: s.ID, Class: s.Class, Points: pts}
	}
	return out
}

func minMaxBounds(sets []exampledata.Set) spec.Bounds {
	lo, hi := []float64{math.Inf(1), math.Inf(1)}, []float64{math.Inf(-1), math.Inf(-1)}
	for _, s := range sets {
		for i, v := range s.Points {
			lo[i%2], hi[i%2] = math.Min(lo[i%2], v), math.Max(hi[i%2], v)
		}
	}
	return spec.Bounds{Lo: lo, Hi: hi}
}

// embedded is every set's feature vectors under one spec.
type embedded struct {
	cols []embedding.Column
	vecs [][][]float32
}

func embedSets(t *testing.T, spec *spec.Spec, sets []exampledata.Set) embedded {
	t.Helper()
	emb, err := embedding.New(spec)
	if err != nil {
		t.Fatal(err)
	}
	e := embedded{cols: emb.Columns()}
	for _, s := range sets {
		u := make([]float64, len(s.Points))
		if _, err := emb.Normalize(u, s.Points); err != nil {
			t.Fatal(err)
		}
		e.vecs = append(e.vecs, emb.Embed(u))
	}
	return e
}

// featuresOf returns one row per set: the column's vector, or every column concatenated,
// each scaled to unit mean squared norm over the sets ("all").
func featuresOf(e embedded, col string) *mat.Dense {
	cols := e.cols
	var rows [][]float64
	for _, vecs := range e.vecs {
		var row []float64
		for k, c := range cols {
			if col != "all" && c.Name != col {
				continue
			}
			for _, v := range vecs[k] {
				row = append(row, float64(v))
			}
		}
		rows = append(rows, row)
	}
	if col == "all" { // equal weight per family: scale each block to unit mean squared norm
		off := 0
		for _, c := range cols {
			var ss float64
			for _, r := range rows {
				for _, v := range r[off : off+c.Len] {
					ss += v * v
				}
			}
			scale := 1 / math.Sqrt(ss/float64(len(rows))+1e-300)
			for _, r := range rows {
				for k := off; k < off+c.Len; k++ {
					r[k] *= scale
				}
			}
			off += c.Len
		}
	}
	z := mat.NewDense(len(rows), len(rows[0]), nil)
	for i, r := range rows {
		z.SetRow(i, r)
	}
	return z
}

// ridgeAccuracy trains one-vs-rest kernel ridge on K = Z Zᵀ (λ from a grid by
// leave-one-out accuracy on the training sets) and returns the test accuracy.
func ridgeAccuracy(etr, ete embedded, col string, train, test []exampledata.Set) float64 {
	ztr, zte := featuresOf(etr, col), featuresOf(ete, col)
	n := len(train)
	var k, kte mat.Dense
	k.Mul(ztr, ztr.T())
	kte.Mul(zte, ztr.T())
	classes := exampledata.Classes
	y := mat.NewDense(n, len(classes), nil)
	for i, s := range train {
		for c, name := range classes {
			y.Set(i, c, -1)
			if s.Class == name {
				y.Set(i, c, 1)
			}
		}
	}
	trace := mat.Trace(&k) / float64(n)
	bestAcc, bestLam := -1.0, 0.0
	for e := -6; e <= 1; e++ {
		lam := trace * math.Pow(10, float64(e))
		if a := looAccuracy(&k, y, lam, train); a >= bestAcc {
			bestAcc, bestLam = a, lam
		}
	}
	alpha := solveRidge(&k, y, bestLam)
	var pred mat.Dense
	pred.Mul(&kte, alpha)
	correct := 0
	for i, s := range test {
		if classes[argmaxRow(&pred, i)] == s.Class {
			correct++
		}
	}
	return float64(correct) / float64(len(test))
}

func solveRidge(k *mat.Dense, y *mat.Dense, lam float64) *mat.Dense {
	n, _ := k.Dims()
	var a mat.Dense
	a.CloneFrom(k)
	for i := 0; i < n; i++ {
		a.Set(i, i, a.At(i, i)+lam)
	}
	var alpha mat.Dense
	if err := alpha.Solve(&a, y); err != nil {
		return mat.NewDense(n, y.RawMatrix().Cols, nil)
	}
	return &alpha
}

// looAccuracy is the leave-one-out accuracy of kernel ridge: with H = K(K+λI)⁻¹ the LOO
// prediction is y − (y − Hy)/(1 − H_ii).
func looAccuracy(k, y *mat.Dense, lam float64, train []exampledata.Set) float64 {
	n, _ := k.Dims()
	var a, inv, h, fit mat.Dense
	a.CloneFrom(k)
	for i := 0; i < n; i++ {
		a.Set(i, i, a.At(i, i)+lam)
	}
	if err := inv.Inverse(&a); err != nil {
		return 0
	}
	h.Mul(k, &inv)
	fit.Mul(&h, y)
	_, nc := y.Dims()
	correct := 0
	for i := 0; i < n; i++ {
		best, bi := math.Inf(-1), 0
		for c := 0; c < nc; c++ {
			loo := y.At(i, c) - (y.At(i, c)-fit.At(i, c))/(1-h.At(i, i))
			if loo > best {
				best, bi = loo, c
			}
		}
		if exampledata.Classes[bi] == train[i].Class {
			correct++
		}
	}
	return float64(correct) / float64(n)
}

func argmaxRow(m *mat.Dense, i int) int {
	_, nc := m.Dims()
	best, bi := math.Inf(-1), 0
	for c := 0; c < nc; c++ {
		if v := m.At(i, c); v > best {
			best, bi = v, c
		}
	}
	return bi
}
