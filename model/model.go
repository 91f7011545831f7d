// Package model fits, stores and applies linear models on distfeat's features: ridge
// regression with split-conformal prediction intervals, one-vs-rest ridge classification
// with per-class scores, and L2-penalised logistic regression with class probabilities; it
// also applies linear models fitted elsewhere (scikit-learn, exported to the same file)
// (docs/fitting.md). It is pure math on feature rows: the caller embeds
// the sets (the embed and worker code path) and passes one row per set.
package model

import (
	"bytes"
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

// Links: how a classifier's scores become probabilities. The empty link (the identity) has
// scores only — decision values, as a ridge classifier's or a linear SVM's.
const (
	// Logistic: a binary model's one score s gives P(classes[1]) = 1/(1+e^−s); a model with
	// one score per class gives the softmax of the scores.
	Logistic = "logistic"
)

// PerPoint is the Per of a model fitted on per-point (marginal_transfer) features, which
// predicts every point of a window (FitPoints); an empty Per predicts each window (set).
const PerPoint = "point"

// Classifiers Fit fits.
const (
	RidgeClassifier    = "ridge"    // one-vs-rest ridge on ±1 targets (the default)
	LogisticClassifier = "logistic" // L2-penalised logistic regression (multinomial, binary for two classes)
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
// the prediction; a classifier one per class, and predicts the class of the largest — or,
// binary with one score (as scikit-learn stores a binary model), classes[1] when the score
// is positive, else classes[0]. Link says how scores become probabilities.
//
// Estimator, Per, Link and a zero CV or NSets are omitted from the file when empty, so files
// written before they existed keep their bytes and model_version.
type Model struct {
	Format       int         `json:"format"`
	Kind         string      `json:"kind"`
	Estimator    string      `json:"estimator,omitempty"` // what fitted it; empty: distfeat fit's ridge
	ModelVersion string      `json:"model_version"`
	SpecID       string      `json:"spec_id"`
	Families     []string    `json:"families"`
	Columns      []Column    `json:"columns"`
	Width        int         `json:"width"`
	Label        string      `json:"label,omitempty"`
	Per          string      `json:"per,omitempty"` // PerPoint: predicts each point (per-point features); empty: each set
	NSets        int         `json:"n_sets,omitempty"`
	Lambda       float64     `json:"lambda"`
	Classes      []string    `json:"classes,omitempty"`
	Link         string      `json:"link,omitempty"`
	CV           CV          `json:"cv,omitzero"`
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

// Seal completes a model document written elsewhere (an exporter: the Python package's
// export_model): it decodes it strictly (an unknown field is an error, not ignored),
// validates it like Parse, sets model_version from the content and returns the model and
// its file bytes. A model_version in the document is replaced.
func Seal(doc []byte) (*Model, []byte, error) {
	dec := json.NewDecoder(bytes.NewReader(doc))
	dec.DisallowUnknownFields()
	var m Model
	if err := dec.Decode(&m); err != nil {
		return nil, nil, fmt.Errorf("model: %w", err)
	}
	if err := m.validate(); err != nil {
		return nil, nil, fmt.Errorf("model: %w", err)
	}
	b, err := m.Marshal()
	if err != nil {
		return nil, nil, err
	}
	return &m, b, nil
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
		if m.Link != "" {
			return fmt.Errorf("link %q: a regression model's score is its prediction (no link)", m.Link)
		}
	case Classification:
		if len(m.Classes) < 2 {
			return fmt.Errorf("a classifier needs at least 2 classes, has %d", len(m.Classes))
		}
		for i, c := range m.Classes {
			if slices.Contains(m.Classes[:i], c) {
				return fmt.Errorf("class %q appears twice", c)
			}
		}
		if m.Conformal != nil {
			return errors.New("a classifier has no conformal residual quantiles")
		}
		if m.Link != "" && m.Link != Logistic {
			return fmt.Errorf("link %q: want %s or none", m.Link, Logistic)
		}
		scores = len(m.Classes)
		if scores == 2 && len(m.Weights) == 1 {
			scores = 1 // binary: one score, for classes[1]
		}
	default:
		return fmt.Errorf("kind %q: want %s or %s", m.Kind, Regression, Classification)
	}
	if m.Per != "" && m.Per != PerPoint {
		return fmt.Errorf("per %q: want %s or none (per set)", m.Per, PerPoint)
	}
	if !(m.Lambda >= 0) || math.IsInf(m.Lambda, 0) {
		return fmt.Errorf("lambda %v: want a finite penalty ≥ 0", m.Lambda)
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
	// Value is the regression prediction; for a classifier, the winning score (a binary
	// model's one score: positive for classes[1]).
	Value float64
	// Lo and Hi bound the split-conformal interval (regression, when a coverage was asked).
	Lo, Hi float64
	// Class is the predicted class (classification).
	Class string
	// Scores are the classifier's scores, one per weight row: per class in Classes order,
	// or a binary model's one score (of classes[1]).
	Scores []float64
	// Probabilities are the class probabilities in Classes order (link logistic), else nil.
	Probabilities []float64
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
	p.Scores = make([]float64, len(m.Weights))
	for k := range m.Weights {
		p.Scores[k] = score(m.Intercept[k], m.Weights[k], x)
	}
	if len(p.Scores) == 1 { // binary with one score, as scikit-learn decides: classes[1] when > 0
		p.Value = p.Scores[0]
		p.Class = m.Classes[0]
		if p.Value > 0 {
			p.Class = m.Classes[1]
		}
	} else {
		best := argmax(p.Scores) // the first of equal scores, as numpy's argmax
		p.Class, p.Value = m.Classes[best], p.Scores[best]
	}
	if m.Link == Logistic {
		p.Probabilities = probabilities(p.Scores)
	}
	return p, nil
}

// ScoreClasses names the class each score belongs to: Classes, or for a binary model with
// one score, classes[1] (the class a positive score predicts).
func (m *Model) ScoreClasses() []string {
	if m.Kind == Classification && len(m.Weights) == 1 && len(m.Classes) == 2 {
		return m.Classes[1:]
	}
	return m.Classes
}

// probabilities are the logistic link's class probabilities of the scores: [1−σ(s), σ(s)]
// for one score, else the softmax (computed from the scores minus their maximum, so no
// exp overflows), as scikit-learn's LogisticRegression.predict_proba.
func probabilities(s []float64) []float64 {
	if len(s) == 1 {
		p := 1 / (1 + math.Exp(-s[0]))
		return []float64{1 - p, p}
	}
	mx := s[argmax(s)]
	out := make([]float64, len(s))
	sum := 0.0
	for k, v := range s {
		out[k] = math.Exp(v - mx)
		sum += out[k]
	}
	for k := range out {
		out[k] /= sum
	}
	return out
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

// PredictsPoints reports whether the model predicts each point of a window from its
// per-point features (Per = PerPoint) rather than each window from its feature record.
func (m *Model) PredictsPoints() bool { return m.Per == PerPoint }
