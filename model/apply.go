package model

import (
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
	if specID != m.SpecID {
		return nil, &RefusedError{RefusedSpecID, m.CheckSpec(specID, cols)}
	}
	if err := m.CheckSpec(specID, cols); err != nil {
		return nil, &RefusedError{RefusedColumns, err}
	}
	a := &Applier{m: m, cols: slices.Clone(cols)}
	if m.Kind == Regression && coverage != 0 {
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

// ParseFor parses a model file's bytes and checks it against the spec in use (NewApplier): the
// errors are *RefusedError, RefusedDecode for bytes that are no valid model file.
func ParseFor(b []byte, specID string, cols []Column, coverage float64) (*Applier, error) {
	m, err := Parse(b)
	if err != nil {
		return nil, &RefusedError{RefusedDecode, fmt.Errorf("not a valid model file: %w", err)}
	}
	return NewApplier(m, specID, cols, coverage)
}
