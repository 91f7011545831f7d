package model

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"
)

// Reasons an Applier refuses a model (the reason label of distfeat_models_refused_total and,
// prefixed with "model_", the error header of a refused model's dead letter).
const (
	RefusedDecode   = "decode"    // not a valid model file
	RefusedSpecID   = "spec_id"   // fitted under another spec
	RefusedColumns  = "columns"   // reads a column the spec has not, or at another width
	RefusedCoverage = "coverage"  // no interval at the configured coverage
	RefusedTooLarge = "too_large" // its prediction records would exceed the output limit (the caller checks)
	RefusedPer      = "per"       // predicts per point where windows are predicted, or per set where points are
)

// RefusedError is why a model cannot be applied to an embedder's records: Reason is one of
// the Refused constants.
type RefusedError struct {
	Reason string
	Err    error
}

func (e *RefusedError) Error() string { return e.Err.Error() }
func (e *RefusedError) Unwrap() error { return e.Err }

// RefusedReason is err's RefusedError reason, or RefusedDecode for any other error.
func RefusedReason(err error) string {
	var re *RefusedError
	if errors.As(err, &re) {
		return re.Reason
	}
	return RefusedDecode
}

// Applier is a model checked against the columns of the spec in use, with the interval
// coverage: the one computation of a window's prediction, shared by `embed --model` and the
// worker's predictions topic, so both give the same float32 values. It is immutable and safe
// for concurrent use.
type Applier struct {
	m        *Model
	cols     []Column  // the embedder's, in record order
	coverage float64   // regression interval coverage; 0: none (always 0 for a classifier)
	q        float64   // the interval half-width at coverage
	rows     sync.Pool // of *[]float32: feature rows of models reading several columns
}

// NewApplier refuses (*RefusedError) a model fitted under another spec_id than specID, one
// reading columns that cols (the embedder's columns, in record order) lack or have at another
// width, and a regression model without an interval at coverage (0: no interval). A
// classifier ignores coverage.
func NewApplier(m *Model, specID string, cols []Column, coverage float64) (*Applier, error) {
	if m.PredictsPoints() {
		return nil, &RefusedError{RefusedPer, fmt.Errorf("model %s predicts each point (fitted on per-point features, fit --point-label): it applies to per-point records (embed --points, DISTFEAT_POINT_FEATURES_TOPIC), not to windows", m.ModelVersion)}
	}
	return newApplier(m, specID, cols, coverage)
}

// NewPointApplier is NewApplier for a per-point model (Per = PerPoint) on per-point records:
// cols are the embedder's per-point columns (its marginal_transfer families, in spec order).
// A per-set model is refused (RefusedPer). A per-point regression without intervals (as
// FitPoints fits it) ignores coverage, as a classifier does.
func NewPointApplier(m *Model, specID string, cols []Column, coverage float64) (*Applier, error) {
	if !m.PredictsPoints() {
		return nil, &RefusedError{RefusedPer, fmt.Errorf("model %s predicts each window (set): per-point records need a per-point model (distfeat fit --point-label)", m.ModelVersion)}
	}
	return newApplier(m, specID, cols, coverage)
}

func newApplier(m *Model, specID string, cols []Column, coverage float64) (*Applier, error) {
	if specID != m.SpecID {
		return nil, &RefusedError{RefusedSpecID, m.CheckSpec(specID, cols)}
	}
	if err := m.CheckSpec(specID, cols); err != nil {
		return nil, &RefusedError{RefusedColumns, err}
	}
	a := &Applier{m: m, cols: slices.Clone(cols)}
	if m.Kind == Regression && coverage != 0 && !(m.PredictsPoints() && m.Conformal == nil) {
		q, err := m.Quantile(coverage)
		if err != nil {
			return nil, &RefusedError{RefusedCoverage, err}
		}
		a.coverage, a.q = coverage, q
	}
	return a, nil
}

// Model is the applied model (do not modify).
func (a *Applier) Model() *Model { return a.m }

// Coverage is the interval coverage of the predictions (0: none).
func (a *Applier) Coverage() float64 { return a.coverage }

// Output is one record's prediction, in float32 as every output format carries it.
type Output struct {
	// Value is the regression prediction; for a classifier the winning class's score.
	Value float32
	// Interval is [lo, hi] at the Applier's coverage (regression with a coverage), else nil.
	Interval *[2]float32
	// Class and ClassIndex are the predicted class and its index in Classes (classification).
	Class      string
	ClassIndex int
	// Scores are the classifier's scores, one per ScoreClasses() (a binary model may have one,
	// classes[1]'s), else nil.
	Scores []float32
	// Probabilities are the class probabilities in Classes order (link logistic), else nil.
	Probabilities []float32
}

// Apply predicts from a record's vectors (one per embedder column, in record order).
func (a *Applier) Apply(vecs [][]float32) (Output, error) {
	buf, _ := a.rows.Get().(*[]float32)
	if buf == nil {
		buf = new([]float32)
	}
	defer a.rows.Put(buf)
	row, err := a.m.Row(*buf, a.cols, vecs)
	if err != nil {
		return Output{}, err
	}
	*buf = row
	p, err := a.m.Predict(row, a.coverage)
	if err != nil {
		return Output{}, err
	}
	out := Output{Value: float32(p.Value)}
	if a.m.Kind == Classification {
		out.Class = p.Class
		out.Scores = make([]float32, len(p.Scores))
		for k, s := range p.Scores {
			out.Scores[k] = float32(s)
		}
		out.ClassIndex = slices.Index(a.m.Classes, p.Class)
		if p.Probabilities != nil {
			out.Probabilities = make([]float32, len(p.Probabilities))
			for k, v := range p.Probabilities {
				out.Probabilities[k] = float32(v)
			}
		}
		return out, nil
	}
	if a.coverage != 0 {
		out.Interval = &[2]float32{float32(p.Lo), float32(p.Hi)}
	}
	return out, nil
}

// Columns of the predictions appended to a record (embed --model's feature records, and the
// per-point records of a per-point model: embed --points --model and the worker's per-point
// topic), after its feature columns.
const (
	ColPrediction    = "model.prediction"    // [1]: the prediction, or the class's index in distfeat.model_classes
	ColInterval      = "model.interval"      // [2]: lo, hi (regression, with a coverage)
	ColScores        = "model.scores"        // [scores]: per-class scores, or a binary model's one (classification)
	ColProbabilities = "model.probabilities" // [classes]: class probabilities (link logistic)
)

// OutputColumns are the prediction columns this Applier's outputs fill (OutputVectors), in order.
func (a *Applier) OutputColumns() []Column {
	cols := []Column{{Name: ColPrediction, Len: 1}}
	if a.m.Kind == Classification {
		cols = append(cols, Column{Name: ColScores, Len: len(a.m.Weights)})
		if a.m.Link == Logistic {
			cols = append(cols, Column{Name: ColProbabilities, Len: len(a.m.Classes)})
		}
		return cols
	}
	if a.coverage != 0 {
		cols = append(cols, Column{Name: ColInterval, Len: 2})
	}
	return cols
}

// OutputMeta is the Arrow schema metadata naming the model, for records with OutputColumns.
func (a *Applier) OutputMeta() [][2]string {
	m := a.m
	classes, _ := json.Marshal(m.Classes)
	md := [][2]string{{"distfeat.model_version", m.ModelVersion}, {"distfeat.model_kind", m.Kind}}
	if m.Kind == Classification {
		md = append(md, [2]string{"distfeat.model_classes", string(classes)})
		if sc := m.ScoreClasses(); len(sc) != len(m.Classes) { // a binary model's one score
			b, _ := json.Marshal(sc)
			md = append(md, [2]string{"distfeat.model_score_classes", string(b)})
		}
		if m.Link != "" {
			md = append(md, [2]string{"distfeat.model_link", m.Link})
		}
		return md
	}
	if a.coverage != 0 {
		md = append(md, [2]string{"distfeat.model_coverage", fmt.Sprint(a.coverage)})
	}
	return md
}

// OutputVectors are out's values in OutputColumns order: the prediction (a classifier's:
// its class index), then the scores and probabilities, or the interval.
func (a *Applier) OutputVectors(out Output) [][]float32 {
	if a.m.Kind == Classification {
		vecs := [][]float32{{float32(out.ClassIndex)}, out.Scores}
		if out.Probabilities != nil {
			vecs = append(vecs, out.Probabilities)
		}
		return vecs
	}
	vecs := [][]float32{{out.Value}}
	if out.Interval != nil {
		vecs = append(vecs, out.Interval[:])
	}
	return vecs
}

// ApplyPoints predicts every point of a block of n points (a per-point model): vecs holds
// one row-major block per record column (n·len values, point i at [i·len, (i+1)·len)), in
// the order of the columns the Applier was made with. It returns the predictions as blocks
// of OutputColumns (n·len each, point i's at [i·len, (i+1)·len)), and each point's Output.
func (a *Applier) ApplyPoints(vecs [][]float32, n int) ([][]float32, []Output, error) {
	if len(vecs) != len(a.cols) {
		return nil, nil, fmt.Errorf("model %s: %d point columns, want %d", a.m.ModelVersion, len(vecs), len(a.cols))
	}
	for c, col := range a.cols {
		if len(vecs[c]) != n*col.Len {
			return nil, nil, fmt.Errorf("model %s: point column %q has %d values, want %d points × %d", a.m.ModelVersion, col.Name, len(vecs[c]), n, col.Len)
		}
	}
	ocols := a.OutputColumns()
	blocks := make([][]float32, len(ocols))
	for k, c := range ocols {
		blocks[k] = make([]float32, 0, n*c.Len)
	}
	outs := make([]Output, n)
	row := make([][]float32, len(a.cols))
	for i := 0; i < n; i++ {
		for c, col := range a.cols {
			row[c] = vecs[c][i*col.Len : (i+1)*col.Len]
		}
		out, err := a.Apply(row)
		if err != nil {
			return nil, nil, err
		}
		outs[i] = out
		for k, v := range a.OutputVectors(out) {
			blocks[k] = append(blocks[k], v...)
		}
	}
	return blocks, outs, nil
}
