package calibrate

import (
	"bufio"
	"compress/gzip"
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/distfeat/distfeat/embedding"
	"github.com/distfeat/distfeat/spec"
)

// digitPoints is the number of points drawn from each digit image.
const digitPoints = 100

// loadDigits reads testdata/digits.csv.gz (see testdata/README.md) and turns each 8×8 image
// into a labelled point set in [0, 8]²: digitPoints pixels drawn with probability
// proportional to their intensity (stream "test/digits/<i>"), each point uniform inside
// its pixel (x = column, y = 7 − row, so the digit stands upright).
func loadDigits(t *testing.T) []Set {
	t.Helper()
	fh, err := os.Open("testdata/digits.csv.gz")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { fh.Close() })
	zr, err := gzip.NewReader(fh)
	if err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(zr)
	var sets []Set
	for i := 0; sc.Scan(); i++ {
		f := strings.Split(strings.TrimSpace(sc.Text()), ",")
		if len(f) != 65 {
			t.Fatalf("digits line %d: %d fields", i+1, len(f))
		}
		var cum [64]float64
		total := 0.0
		for p := 0; p < 64; p++ {
			v, err := strconv.ParseFloat(f[p], 64)
			if err != nil {
				t.Fatal(err)
			}
			total += v
			cum[p] = total
		}
		rng := embedding.NewRNG(20, "test/digits/"+strconv.Itoa(i))
		pts := make([]float64, 0, 2*digitPoints)
		for k := 0; k < digitPoints; k++ {
			u := rng.Float64() * total
			p := 0
			for p < 63 && cum[p] <= u {
				p++
			}
			row, col := p/8, p%8
			pts = append(pts, float64(col)+rng.Float64(), float64(7-row)+rng.Float64())
		}
		sets = append(sets, Set{ID: fmt.Sprintf("digit-%04d", i), Points: pts, Label: f[64]})
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return sets
}

// digitHandSpecs are careful hand specs for the digit point sets (bounds [0, 8]², version
// 2): mmd at bandwidth 0.1 (of the unit square: 0.8 pixel) with 2048 features and an RBF
// second stage, and hdd_js at the default grid, basis and λ with D 4096.
func digitHandSpecs() map[string]*spec.Spec {
	bounds := spec.Bounds{Lo: []float64{0, 0}, Hi: []float64{8, 8}}
	out := map[string]*spec.Spec{}
	for _, rs := range []float64{0.2, 0.4} {
		out[fmt.Sprintf("mmd h 0.1, D 2048, rbf_sigma %g", rs)] = &spec.Spec{Version: 2, Seed: 42, Dim: 2, Bounds: bounds, OutOfBounds: "clip",
			Families: []spec.Family{{Name: "mmd", Kind: "mmd", Bandwidth: 0.1, Features: 2048, RBFSigma: rs, RBFFeatures: 2048}}}
	}
	out["mmd h 0.1, D 2048"] = &spec.Spec{Version: 2, Seed: 42, Dim: 2, Bounds: bounds, OutOfBounds: "clip",
		Families: []spec.Family{{Name: "mmd", Kind: "mmd", Bandwidth: 0.1, Features: 2048}}}
	for _, h := range []float64{0.02, 0.05} {
		out[fmt.Sprintf("hdd_js h %g, D 4096", h)] = &spec.Spec{Version: 2, Seed: 42, Dim: 2, Bounds: bounds, OutOfBounds: "clip",
			Families: []spec.Family{{Name: "hdd_js", Kind: "hdd", Divergence: "js", Features: 4096, Sigma: 0.5, Lambdas: 5, LambdaSampling: "stratified",
				Basis: 100, Grid: 64, KDEBandwidth: h, Boundary: "reflect", DensityFloor: 1e-6, Mode: "joint"}}}
	}
	return out
}

// specAccuracy is the cross-validated accuracy of ridge on column col of spec's features
// of the sets.
func specAccuracy(t *testing.T, spec *spec.Spec, col string, sets []Set) float64 {
	t.Helper()
	emb, err := embedding.New(spec)
	if err != nil {
		t.Fatal(err)
	}
	idx := columnIndex(emb, col)
	z := make([][]float32, len(sets))
	labels := make([]string, len(sets))
	parallelFor(len(sets), 2, func(i int) {
		u := make([]float64, len(sets[i].Points))
		if _, err := emb.Normalize(u, sets[i].Points); err != nil {
			panic(err)
		}
		z[i] = emb.Embed(u)[idx]
		labels[i] = sets[i].Label
	})
	return cvAccuracy(z, labels, 7)
}

// TestDigitsLabelled: the digits as point sets, calibrated with labels on the first 900
// images, evaluated on the next 500 (5-fold cross-validated ridge, the same folds for
// every spec): the calibrated mmd and hdd_js families classify at least as well as the
// best of the hand specs, within 0.015 (the CV accuracy over 500 sets has a standard error
// of ≈ 0.013 near 0.9; the specs are compared on the same sets and folds, so their
// difference is less noisy than that).
func TestDigitsLabelled(t *testing.T) {
	sets := loadDigits(t)
	calib, eval := sets[:900], sets[900:1400]
	res, err := Calibrate(context.Background(), calib, 2, nil, Options{Families: []string{"mmd", "hdd_js"}, MaxLabelled: 250})
	if err != nil {
		t.Fatal(err)
	}
	var sum strings.Builder
	if err := res.WriteSummary(&sum); err != nil {
		t.Fatal(err)
	}
	t.Log(sum.String())
	best := map[string]float64{}
	for name, spec := range digitHandSpecs() {
		col := spec.Families[0].Name
		acc := specAccuracy(t, spec, col, eval)
		t.Logf("hand %-32s accuracy %.3f", name, acc)
		best[col] = max(best[col], acc)
	}
	for _, col := range []string{"mmd", "hdd_js"} {
		acc := specAccuracy(t, res.Spec, col, eval)
		t.Logf("calibrated %-8s accuracy %.3f (best hand %.3f)", col, acc, best[col])
		if acc < best[col]-0.015 {
			t.Errorf("%s: calibrated accuracy %.3f < best hand spec's %.3f − 0.015", col, acc, best[col])
		}
	}
}
