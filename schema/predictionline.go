package schema

// RegressionJSON and ClassificationJSON are the JSON-lines "prediction" object
// (docs/fitting.md), written next to a window's features by `embed --model` and with its
// window fields by `tail` on a predictions topic. Values are float32, as in the Arrow
// columns, so both formats carry the same numbers.
type RegressionJSON struct {
	ModelVersion string      `json:"model_version"`
	Value        float32     `json:"value"`
	Interval     *[2]float32 `json:"interval,omitempty"`
	Coverage     float64     `json:"coverage,omitempty"`
}

// ClassificationJSON is a classifier's "prediction" object: the class, the scores by class
// (a binary model with one score has one entry, the second class's) and, for a logistic
// model, the probabilities by class.
type ClassificationJSON struct {
	ModelVersion  string             `json:"model_version"`
	Class         string             `json:"class"`
	Scores        map[string]float32 `json:"scores"`
	Probabilities map[string]float32 `json:"probabilities,omitempty"`
}

// PredictionLine is the JSON-lines form of a PredictionRecord, written by `tail`: the
// window's fields as in a FeatureLine and the "prediction" object of `embed --model`.
type PredictionLine struct {
	WindowLine
	Prediction any `json:"prediction"`
}

// LineFromPrediction converts r to its JSON-lines form.
func LineFromPrediction(r PredictionRecord) PredictionLine {
	line := PredictionLine{WindowLine: WindowLine{Set: r.Set, Seq: r.Seq, N: r.N, WindowStart: r.WindowStart, WindowEnd: r.WindowEnd, SpecID: r.SpecID}}
	if r.Classes == nil {
		p := RegressionJSON{ModelVersion: r.ModelVersion, Value: r.Prediction, Interval: r.Interval}
		if r.Interval != nil {
			p.Coverage = r.Coverage
		}
		line.Prediction = p
		return line
	}
	p := ClassificationJSON{ModelVersion: r.ModelVersion, Class: r.Class, Scores: map[string]float32{}}
	scoreClasses := r.Classes
	if len(r.Scores) == 1 && len(r.Classes) == 2 {
		scoreClasses = r.Classes[1:] // a binary model's one score is the second class's
	}
	for k, s := range r.Scores {
		p.Scores[scoreClasses[k]] = s
	}
	if r.Probabilities != nil {
		p.Probabilities = map[string]float32{}
		for k, v := range r.Probabilities {
			p.Probabilities[r.Classes[k]] = v
		}
	}
	line.Prediction = p
	return line
}
