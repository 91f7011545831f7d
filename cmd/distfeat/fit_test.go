package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/distfeat/distfeat/examples/exampledata"
	"github.com/distfeat/distfeat/model"
	"github.com/distfeat/distfeat/schema"
	"github.com/distfeat/distfeat/spec"
)

const shapesSpec = "../../examples/spec.json"

// labelShapes writes the example sets (examples/sets.jsonl) with a label field: "shape" (the
// class name) or, with numeric, "shape" as the class's index.
func labelShapes(t *testing.T, numeric bool) string {
	t.Helper()
	f, err := os.Open("../../examples/sets.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out bytes.Buffer
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<24)
	for sc.Scan() {
		var rec map[string]json.RawMessage
		if err := json.Unmarshal(sc.Bytes(), &rec); err != nil {
			t.Fatal(err)
		}
		var id string
		_ = json.Unmarshal(rec["set"], &id)
		class := exampledata.ClassOf(id)
		label, _ := json.Marshal(class)
		if numeric {
			label = []byte(strconv.Itoa(strings.Index("ring gauss square", class)))
		}
		rec["shape"] = label
		b, _ := json.Marshal(rec)
		out.Write(append(b, '\n'))
	}
	path := filepath.Join(t.TempDir(), "labelled.jsonl")
	if err := os.WriteFile(path, out.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// runOK runs a distfeat command in process and fails the test on a non-zero exit.
func runOK(t *testing.T, args ...string) string {
	t.Helper()
	code, stdout, stderr := runArgs(t, args...)
	if code != 0 {
		t.Fatalf("distfeat %s: exit %d: %s", strings.Join(args, " "), code, stderr)
	}
	return stdout
}

// TestFitClassifierEmbedModel: fit a classifier (one-vs-rest ridge; logistic regression) on
// the example sets' three shapes, then embed --model predicts 30 fresh sets (another seed
// of the generator) in both formats. The shapes are told apart at 200 points per set
// (cross-validated accuracy 1 on mmd or hdd_js alone), so ≥ 27 of 30 right leaves room for
// a few hard sets. The two formats carry the same classes, scores and (logistic)
// probabilities, those model.Predict gives on the output's own features, and the same
// input gives the same bytes.
func TestFitClassifierEmbedModel(t *testing.T) {
	for _, classifier := range []string{model.RidgeClassifier, model.LogisticClassifier} {
		t.Run(classifier, func(t *testing.T) { testFitClassifierEmbedModel(t, classifier) })
	}
}

func testFitClassifierEmbedModel(t *testing.T, classifier string) {
	dir := t.TempDir()
	modelPath := filepath.Join(dir, "model.json")
	code, _, stderr := runArgs(t, "fit", "--in", labelShapes(t, false), "--label", "shape", "--task", "classification",
		"--classifier", classifier, "--spec", shapesSpec, "--families", "mmd,hdd_js", "--folds", "4", "--out", modelPath)
	if code != 0 {
		t.Fatalf("fit: exit %d: %s", code, stderr)
	}
	m, err := model.Load(modelPath)
	if err != nil {
		t.Fatal(err)
	}
	if m.Kind != model.Classification || strings.Join(m.Classes, ",") != "gauss,ring,square" ||
		strings.Join(m.Families, ",") != "mmd,hdd_js" || m.NSets != 36 || !strings.Contains(stderr, m.ModelVersion) {
		t.Fatalf("model %s %v %v on %d sets; stderr %q", m.Kind, m.Classes, m.Families, m.NSets, stderr)
	}
	var fresh bytes.Buffer
	if err := exampledata.WriteJSONL(&fresh, exampledata.Sets(7, 10, 200)); err != nil {
		t.Fatal(err)
	}
	in := filepath.Join(dir, "fresh.jsonl")
	if err := os.WriteFile(in, fresh.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	args := []string{"embed", "--spec", shapesSpec, "--model", modelPath, "--in", in}
	jsonl := runOK(t, args...)
	if again := runOK(t, args...); again != jsonl {
		t.Fatal("embed --model: two runs gave different JSON lines")
	}
	arrowOut := runOK(t, append(args, "--format", "arrow")...)
	if again := runOK(t, append(args, "--format", "arrow")...); again != arrowOut {
		t.Fatal("embed --model --format arrow: two runs gave different bytes")
	}
	recs, cols, err := schema.DecodeFeatures([]byte(arrowOut))
	if err != nil {
		t.Fatal(err)
	}
	wantCols := "mmd,hdd_js,l2,model.prediction,model.scores"
	if classifier == model.LogisticClassifier {
		wantCols += ",model.probabilities"
		if m.Link != model.Logistic || m.CV.Metric != "log_loss" {
			t.Fatalf("logistic model: link %q, CV metric %q", m.Link, m.CV.Metric)
		}
	}
	if strings.Join(cols, ",") != wantCols {
		t.Fatalf("arrow columns %v", cols)
	}
	right := 0
	for i, line := range strings.Split(strings.TrimSpace(jsonl), "\n") {
		var rec struct {
			Set        string               `json:"set"`
			Features   map[string][]float32 `json:"features"`
			Prediction struct {
				ModelVersion string             `json:"model_version"`
				Class        string             `json:"class"`
				Scores       map[string]float32 `json:"scores"`
				Probs        map[string]float32 `json:"probabilities"`
			} `json:"prediction"`
		}
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatal(err)
		}
		p := rec.Prediction
		if p.ModelVersion != m.ModelVersion || len(rec.Features) != 3 || len(p.Scores) != 3 ||
			(classifier == model.LogisticClassifier) != (len(p.Probs) == 3) {
			t.Fatalf("line %d: %s", i+1, line)
		}
		// the Arrow record carries the same class (its index) and scores
		a := recs[i]
		if a.Set != rec.Set || m.Classes[int(a.Vectors[3][0])] != p.Class {
			t.Fatalf("set %s: arrow class %v, JSON %s", rec.Set, a.Vectors[3], p.Class)
		}
		for k, c := range m.Classes {
			if a.Vectors[4][k] != p.Scores[c] {
				t.Fatalf("set %s: arrow score %v, JSON %v", rec.Set, a.Vectors[4], p.Scores)
			}
		}
		// and what the model package predicts from the record's own features
		var row []float32
		for _, c := range m.Columns {
			row = append(row, rec.Features[c.Name]...)
		}
		want, err := m.Predict(row, 0)
		if err != nil {
			t.Fatal(err)
		}
		for k, c := range m.Classes {
			if float32(want.Scores[k]) != p.Scores[c] || want.Class != p.Class {
				t.Fatalf("set %s: embed --model %v %s, model.Predict on its features %v %s", rec.Set, p.Scores, p.Class, want.Scores, want.Class)
			}
			if want.Probabilities != nil && (float32(want.Probabilities[k]) != p.Probs[c] || a.Vectors[5][k] != p.Probs[c]) {
				t.Fatalf("set %s: probabilities: JSON %v, arrow %v, model.Predict %v", rec.Set, p.Probs, a.Vectors[5], want.Probabilities)
			}
		}
		if p.Class == exampledata.ClassOf(rec.Set) {
			right++
		}
	}
	t.Logf("%s: λ=%.4g, %d of %d fresh sets classified right", classifier, m.Lambda, right, len(recs))
	if len(recs) != 30 || right < 27 {
		t.Errorf("%d of %d fresh sets classified right", right, len(recs))
	}
}

// TestFitRegressionAndRefusals: a regression model on the shapes' numeric labels predicts
// with intervals only at the coverages its 7 calibration sets support (0.5, 0.8; 0.9 needs
// ⌈8·0.9⌉ = 8 > 7), and embed --model refuses a model fitted under another spec, naming
// both spec_ids; fit refuses a non-numeric label for a regression, an unknown family and a
// classifier for a regression or of an unknown name.
func TestFitRegressionAndRefusals(t *testing.T) {
	dir := t.TempDir()
	modelPath := filepath.Join(dir, "model.json")
	runOK(t, "fit", "--in", labelShapes(t, true), "--label", "shape", "--spec", shapesSpec, "--families", "l2", "--out", modelPath)
	m, err := model.Load(modelPath)
	if err != nil {
		t.Fatal(err)
	}
	if m.Kind != model.Regression || m.Conformal == nil || m.Conformal.NCalibration != 7 || len(m.Conformal.Levels) != 2 {
		t.Fatalf("model %+v", m)
	}
	args := []string{"embed", "--spec", shapesSpec, "--model", modelPath, "--in", "../../examples/sets.jsonl"}
	if code, _, stderr := runArgs(t, args...); code == 0 || !strings.Contains(stderr, "not 0.9") {
		t.Errorf("--coverage 0.9 with levels %v: exit %d, %s", m.Conformal.Levels, code, stderr)
	}
	out := runOK(t, append(args, "--coverage", "0.8")...)
	var rec struct {
		Prediction struct {
			Value    float32    `json:"value"`
			Interval [2]float32 `json:"interval"`
			Coverage float64    `json:"coverage"`
		} `json:"prediction"`
	}
	if err := json.Unmarshal([]byte(strings.SplitN(out, "\n", 2)[0]), &rec); err != nil {
		t.Fatal(err)
	}
	q, _ := m.Quantile(0.8)
	// float32 values: the bounds are value ∓ q to float32 precision
	if p := rec.Prediction; p.Coverage != 0.8 || math.Abs(float64(p.Interval[0])-(float64(p.Value)-q)) > 1e-5 ||
		math.Abs(float64(p.Interval[1])-(float64(p.Value)+q)) > 1e-5 {
		t.Errorf("prediction %+v (half-width %v)", p, q)
	}

	// the same spec with another seed has another spec_id
	b, err := os.ReadFile(shapesSpec)
	if err != nil {
		t.Fatal(err)
	}
	other := filepath.Join(dir, "other.json")
	if err := os.WriteFile(other, bytes.Replace(b, []byte(`"seed": 42`), []byte(`"seed": 43`), 1), 0o644); err != nil {
		t.Fatal(err)
	}
	sp, err := spec.LoadSpec(other)
	if err != nil {
		t.Fatal(err)
	}
	code, _, stderr := runArgs(t, "embed", "--spec", other, "--model", modelPath, "--in", "../../examples/sets.jsonl")
	if code == 0 || !strings.Contains(stderr, m.SpecID) || !strings.Contains(stderr, sp.ID()) {
		t.Errorf("model under another spec: exit %d, %s", code, stderr)
	}

	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--in", labelShapes(t, false), "--label", "shape"}, `"ring" is not a finite number`},
		{[]string{"--in", labelShapes(t, true), "--label", "shape", "--families", "nope"}, `no family "nope"`},
		{[]string{"--in", labelShapes(t, true)}, "--label FIELD is required"},
		{[]string{"--in", labelShapes(t, true), "--label", "shape", "--classifier", "logistic"}, "--classifier logistic is for --task classification"},
		{[]string{"--in", labelShapes(t, false), "--label", "shape", "--task", "classification", "--classifier", "svm"}, `--classifier "svm"`},
		{[]string{"--in", "../../examples/sets.jsonl", "--label", "colour"}, `no field "colour"`},
	} {
		code, _, stderr := runArgs(t, append([]string{"fit", "--spec", shapesSpec, "--out", filepath.Join(dir, "x.json")}, tc.args...)...)
		if code == 0 || !strings.Contains(stderr, tc.want) {
			t.Errorf("fit %v: exit %d, %s; want %q", tc.args, code, stderr, tc.want)
		}
	}
}
