package schema

import (
	"bytes"
	"reflect"
	"testing"
)

// TestPredictionRoundTrip: regression (with and without an interval) and classification
// records decode to what was encoded, and encoding is deterministic.
func TestPredictionRoundTrip(t *testing.T) {
	o := NewPredictionOutput()
	base := PredictionRecord{Set: "a", WindowStart: 1000, WindowEnd: 2000, Seq: 3, N: 200, SpecID: "0123456789abcdef", ModelVersion: "fedcba9876543210"}
	reg := base
	reg.ModelKind, reg.Prediction, reg.Interval, reg.Coverage = "regression", 5.25, &[2]float32{2.5, 8}, 0.9
	noInterval := base
	noInterval.ModelKind, noInterval.Prediction = "regression", -1.5
	cls := base
	cls.ModelKind, cls.Prediction, cls.Class = "classification", 0.75, "ring"
	cls.Classes, cls.Scores = []string{"gauss", "ring", "square"}, []float32{-0.5, 0.75, -0.25}
	logistic := cls
	logistic.Probabilities = []float32{0.2, 0.5, 0.3}
	binary := base // a binary logistic model's one score (classes[1]'s) and both probabilities
	binary.ModelKind, binary.Prediction, binary.Class = "classification", 1.25, "yes"
	binary.Classes, binary.Scores, binary.Probabilities = []string{"no", "yes"}, []float32{1.25}, []float32{0.22, 0.78}
	for _, r := range []PredictionRecord{reg, noInterval, cls, logistic, binary} {
		v, err := o.Encode(r)
		if err != nil {
			t.Fatal(err)
		}
		v2, _ := o.Encode(r)
		if !bytes.Equal(v, v2) {
			t.Errorf("%s: two encodings differ", r.ModelKind)
		}
		got, err := DecodePredictions(v)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 1 || !reflect.DeepEqual(got[0], r) {
			t.Errorf("round trip:\n got %+v\nwant %+v", got, r)
		}
		// Corrupted values are errors or other rows, never a panic.
		for i := range v {
			bad := bytes.Clone(v)
			bad[i] ^= 0xa5
			_, _ = DecodePredictions(bad)
			_, _ = DecodePredictions(v[:i])
		}
	}
	if _, err := o.Encode(PredictionRecord{Set: "a", Classes: []string{"x"}}); err == nil {
		t.Error("scores and classes of different lengths encoded")
	}
	if _, err := o.Encode(PredictionRecord{Set: "a", Classes: []string{"x", "y", "z"}, Scores: []float32{1}}); err == nil {
		t.Error("one score for three classes encoded")
	}
	if _, err := o.Encode(PredictionRecord{Set: "a", Classes: []string{"x", "y"}, Scores: []float32{1}, Probabilities: []float32{1}}); err == nil {
		t.Error("one probability for two classes encoded")
	}
	feat, err := NewOutput(testSpec(), nil).Encode(FeatureRecord{Set: "a"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := DecodePredictions(feat); err == nil {
		t.Error("a feature record decoded as a prediction")
	}
}
