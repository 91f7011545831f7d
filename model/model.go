// Package model fits, stores and applies linear models on distfeat's features: ridge
// regression with split-conformal prediction intervals, and one-vs-rest ridge classification
// with per-class scores (docs/fitting.md). It is pure math on feature rows: the caller embeds
// the sets (the embed and worker code path) and passes one row per set.
package model

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"slices"
)

// FormatVersion is the model file format this package writes and reads.
const FormatVersion = 1

// Task kinds.
const (
	Regression     = "regression"
	Classification = "classification"
)

// Column is one feature column the model reads, in the order its weights use them.
type Column struct {
	Name string `json:"name"`
	Len  int    `json:"len"`
}

// CV records the cross-validation that chose λ: folds of whole sets, shuffled with Seed.
type CV struct {
	Folds   int       `json:"folds"`
	Seed    uint64    `json:"seed"`
	Metric  string    `json:"metric"`  // "rmse" (regression) or "accuracy" (classification)
	Lambdas []float64 `json:"lambdas"` // the grid tried
	Scores  []float64 `json:"scores"`  // the metric at each λ, over the out-of-fold predictions
}

// Conformal holds the split-conformal absolute-residual quantiles of a regression model: at
// Levels[i] coverage the interval is prediction ± Quantiles[i]. They come from NCalibration
// held-out sets the model was not fitted on; a level whose quantile would need more
// calibration sets than there are is left out.
type Conformal struct {
	NCalibration int       `json:"n_calibration"`
	Levels       []float64 `json:"levels"`
	Quantiles    []float64 `json:"quantiles"`
}

// Holdout are the metrics on the calibration sets, which the model never saw.
type Holdout struct {
	N        int     `json:"n"`
	RMSE     float64 `json:"rmse,omitempty"`
	RMSEMean float64 `json:"rmse_constant,omitempty"` // the constant predictor (training mean)
	Accuracy float64 `json:"accuracy,omitempty"`
}

// Model is a fitted linear model and the model file's content (docs/fitting.md). Score k of
// a feature row x is Intercept[k] + Σ_j Weights[k][j]·x[j]; a regression model has one score,
// the prediction; a classifier one per class, and predicts the class of the largest.
type Model struct {
	Format       int         `json:"format"`
	Kind         string      `json:"kind"`
	ModelVersion string      `json:"model_version"`
	SpecID       string      `json:"spec_id"`
	Families     []string    `json:"families"`
	Columns      []Column    `json:"columns"`
	Width        int         `json:"width"`
	Label        string      `json:"label,omitempty"`
	NSets        int         `json:"n_sets"`
	Lambda       float64     `json:"lambda"`
	Classes      []string    `json:"classes,omitempty"`
	CV           CV          `json:"cv"`
	Holdout      Holdout     `json:"holdout"`
	Conformal    *Conformal  `json:"conformal,omitempty"`
	Intercept    []float64   `json:"intercept"`
	Weights      [][]float64 `json:"weights"`
}

// Version is the model's content hash: the first 16 hex digits of the SHA-256 of its JSON
// with model_version empty. Encoding/json writes struct fields in order and floats in their
// shortest round-tripping form, so the same model always has the same version.
func (m *Model) Version() (string, error) {
	c := *m
	c.ModelVersion = ""
	b, err := json.Marshal(&c)
	if err != nil {
		return "", fmt.Errorf("model: %w", err)
	}
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:8]), nil
}

// Marshal sets ModelVersion and returns the model file's bytes (indented JSON, newline).
func (m *Model) Marshal() ([]byte, error) {
	v, err := m.Version()
	if err != nil {
		return nil, err
	}
	m.ModelVersion = v
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("model: %w", err)
	}
	return append(b, '\n'), nil
}

// Load reads and validates a model file.
func Load(path string) (*Model, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("model: %w", err)
	}
	m, err := Parse(b)
	if err != nil {
		return nil, fmt.Errorf("model %s: %w", path, err)
	}
	return m, nil
}

// Parse decodes and validates a model file's bytes: known format and kind, consistent
// shapes, finite numbers, and a model_version that matches the content.
func Parse(b []byte) (*Model, error) {
	var m Model
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, err
	}
	if err := m.validate(); err != nil {
		return nil, err
	}
	v, err := m.Version()
	if err != nil {
		return nil, err
	}
	if v != m.ModelVersion {
		return nil, fmt.Errorf("model_version %q does not match the content (hash %s): the file was edited or corrupted", m.ModelVersion, v)
	}
	return &m, nil
}

func (m *Model) validate() error {
	if m.Format != FormatVersion {
		return fmt.Errorf("format %d: this distfeat reads format %d", m.Format, FormatVersion)
	}
	scores := 1
	switch m.Kind {
	case Regression:
		if len(m.Classes) != 0 {
			return errors.New("a regression model has no classes")
		}
	case Classification:
		if len(m.Classes) < 2 {
			return fmt.Errorf("a classifier needs at least 2 classes, has %d", len(m.Classes))
		}
		if m.Conformal != nil {
			return errors.New("a classifier has no conformal residual quantiles")
		}
		scores = len(m.Classes)
	default:
		return fmt.Errorf("kind %q: want %s or %s", m.Kind, Regression, Classification)
	}
	if m.SpecID == "" {
		return errors.New("no spec_id")
	}
	w := 0
	for _, c := range m.Columns {
		if c.Len <= 0 {
			return fmt.Errorf("column %q has length %d", c.Name, c.Len)
		}
		w += c.Len
	}
	if len(m.Columns) == 0 || w != m.Width {
		return fmt.Errorf("width %d but the columns add up to %d", m.Width, w)
	}
	if len(m.Intercept) != scores || len(m.Weights) != scores {
		return fmt.Errorf("%d intercepts and %d weight rows for %d scores", len(m.Intercept), len(m.Weights), scores)
	}
	for k, row := range m.Weights {
		if len(row) != m.Width {
			return fmt.Errorf("weight row %d has %d weights, width is %d", k, len(row), m.Width)
		}
		if !allFinite(row) || !allFinite(m.Intercept) {
			return errors.New("non-finite weight or intercept")
		}
	}
	if c := m.Conformal; c != nil {
		if len(c.Levels) != len(c.Quantiles) {
			return fmt.Errorf("conformal: %d levels, %d quantiles", len(c.Levels), len(c.Quantiles))
		}
		for i, l := range c.Levels {
			if !(l > 0 && l < 1) || !(c.Quantiles[i] >= 0) || math.IsInf(c.Quantiles[i], 0) {
				return fmt.Errorf("conformal level %v quantile %v", l, c.Quantiles[i])
			}
		}
	}
	return nil
}

func allFinite(v []float64) bool {
	for _, x := range v {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return false
		}
	}
	return true
}

// CheckSpec refuses a model fitted under another spec or for columns of other widths than
// the embedder's, with an error naming both. cols are the embedder's output columns.
func (m *Model) CheckSpec(specID string, cols []Column) error {
	if specID != m.SpecID {
		return fmt.Errorf("model %s was fitted under spec_id %s, the spec in use is %s", m.ModelVersion, m.SpecID, specID)
	}
	for _, want := range m.Columns {
		i := slices.IndexFunc(cols, func(c Column) bool { return c.Name == want.Name })
		if i < 0 {
			return fmt.Errorf("model %s reads column %q, which the spec %s has not", m.ModelVersion, want.Name, specID)
		}
		if cols[i].Len != want.Len {
			return fmt.Errorf("model %s expects column %q of width %d, the spec %s gives width %d", m.ModelVersion, want.Name, want.Len, specID, cols[i].Len)
		}
	}
	return nil
}

// Row concatenates the model's columns from a record's vectors (named by cols, in the
// embedder's order) into dst, the feature row Predict takes.
func (m *Model) Row(dst []float32, cols []Column, vecs [][]float32) ([]float32, error) {
	dst = dst[:0]
	for _, want := range m.Columns {
		i := slices.IndexFunc(cols, func(c Column) bool { return c.Name == want.Name })
		if i < 0 || i >= len(vecs) || len(vecs[i]) != want.Len {
			return nil, fmt.Errorf("model %s: record lacks column %q of width %d", m.ModelVersion, want.Name, want.Len)
		}
		dst = append(dst, vecs[i]...)
	}
	return dst, nil
}

// Prediction is a model's output for one feature row.
type Prediction struct {
	// Value is the regression prediction (for a classifier, the winning score).
	Value float64
	// Lo and Hi bound the split-conformal interval (regression, when a coverage was asked).
	Lo, Hi float64
	// Class is the predicted class (classification).
	Class string
	// Scores are the per-class scores (classification), in Classes order.
	Scores []float64
}

// Predict applies the model to one feature row of Width values. coverage (regression only)
// selects the interval: 0 for none, else one of Conformal.Levels.
func (m *Model) Predict(x []float32, coverage float64) (Prediction, error) {
	if len(x) != m.Width {
		return Prediction{}, fmt.Errorf("model %s: feature row of width %d, the model's width is %d", m.ModelVersion, len(x), m.Width)
	}
	var p Prediction
	if m.Kind == Regression {
		p.Value = score(m.Intercept[0], m.Weights[0], x)
		if coverage != 0 {
			q, err := m.Quantile(coverage)
			if err != nil {
				return Prediction{}, err
			}
			p.Lo, p.Hi = p.Value-q, p.Value+q
		}
		return p, nil
	}
	p.Scores = make([]float64, len(m.Classes))
	best := 0
	for k := range m.Classes {
		p.Scores[k] = score(m.Intercept[k], m.Weights[k], x)
		if p.Scores[k] > p.Scores[best] {
			best = k
		}
	}
	p.Class, p.Value = m.Classes[best], p.Scores[best]
	return p, nil
}

// Quantile is the interval half-width at the given coverage (a regression model's
// Conformal level).
func (m *Model) Quantile(coverage float64) (float64, error) {
	if m.Conformal == nil {
		return 0, fmt.Errorf("model %s has no prediction intervals (kind %s)", m.ModelVersion, m.Kind)
	}
	i := slices.Index(m.Conformal.Levels, coverage)
	if i < 0 {
		return 0, fmt.Errorf("model %s has intervals at coverage %v, not %v", m.ModelVersion, m.Conformal.Levels, coverage)
	}
	return m.Conformal.Quantiles[i], nil
}

// score is b + w·x in float64, summed in index order; each product is rounded before the
// sum (an explicit conversion), so no platform fuses it into an FMA and the bytes are the
// same everywhere.
func score(b float64, w []float64, x []float32) float64 {
	s := b
	for j, v := range x {
		s += float64(w[j] * float64(v))
	}
	return s
}
