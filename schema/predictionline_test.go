package schema

import (
	"encoding/json"
	"testing"
)

// TestLineFromPrediction: the JSON form of each kind of prediction row, as embed --model
// writes the "prediction" object (docs/fitting.md).
func TestLineFromPrediction(t *testing.T) {
	window := PredictionRecord{Set: "s", WindowStart: 1, WindowEnd: 2, Seq: 3, N: 4, SpecID: "id", ModelVersion: "v"}
	with := func(f func(*PredictionRecord)) PredictionRecord { r := window; f(&r); return r }
	for _, tc := range []struct {
		name string
		rec  PredictionRecord
		want string
	}{
		{"regression with interval", with(func(r *PredictionRecord) {
			r.ModelKind, r.Prediction, r.Interval, r.Coverage = "regression", 5.5, &[2]float32{1, 9}, 0.9
		}), `{"model_version":"v","value":5.5,"interval":[1,9],"coverage":0.9}`},
		{"regression without interval", with(func(r *PredictionRecord) { r.ModelKind, r.Prediction = "regression", -1.25 }),
			`{"model_version":"v","value":-1.25}`},
		{"logistic, three classes", with(func(r *PredictionRecord) {
			r.ModelKind, r.Class, r.Classes = "classification", "b", []string{"a", "b", "c"}
			r.Scores, r.Probabilities = []float32{-1, 2, 0.5}, []float32{0.25, 0.5, 0.25}
		}), `{"model_version":"v","class":"b","scores":{"a":-1,"b":2,"c":0.5},"probabilities":{"a":0.25,"b":0.5,"c":0.25}}`},
		{"binary, one score: the second class's", with(func(r *PredictionRecord) {
			r.ModelKind, r.Class, r.Classes, r.Scores = "classification", "no", []string{"no", "yes"}, []float32{-0.75}
		}), `{"model_version":"v","class":"no","scores":{"yes":-0.75}}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b, err := json.Marshal(LineFromPrediction(tc.rec))
			if err != nil {
				t.Fatal(err)
			}
			want := `{"set":"s","seq":3,"n":4,"window_start":1,"window_end":2,"spec_id":"id","prediction":` + tc.want + `}`
			if string(b) != want {
				t.Errorf("got  %s\nwant %s", b, want)
			}
		})
	}
}
