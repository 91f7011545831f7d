package schema

import (
	"fmt"
	"sync"
	"unicode/utf8"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/array"
	"github.com/apache/arrow/go/v15/arrow/memory"
)

// PredictionRecord is a model's prediction for one closed window: the value of one record on
// the predictions topic (docs/fitting.md). Its numbers are the float32 values `embed --model`
// writes for the same window.
type PredictionRecord struct {
	Set                    string
	WindowStart, WindowEnd int64 // ms since epoch
	Seq                    uint64
	N                      int64
	SpecID                 string
	// ModelVersion and ModelKind name the model in force when the window was finalised.
	ModelVersion string
	ModelKind    string // "regression" or "classification"
	// Prediction is the regression prediction, or the predicted class's score.
	Prediction float32
	// Interval is [lo, hi] at Coverage (regression with a coverage), else nil.
	Interval *[2]float32
	Coverage float64
	// Class is the predicted class, Classes the model's classes and Scores their scores
	// (classification; empty for regression). A binary model with one score (as
	// scikit-learn's) has one: classes[1]'s, positive when it predicts classes[1].
	Class   string
	Classes []string
	Scores  []float32
	// Probabilities are the class probabilities in Classes order (a logistic model), else nil.
	Probabilities []float32
}

// Prediction columns after the window's (set … spec_id).
const (
	colModelVersion = "model_version"
	colModelKind    = "model_kind"
	colPrediction   = "prediction"
	colIntervalLo   = "interval_lo"
	colIntervalHi   = "interval_hi"
	colCoverage     = "coverage"
	colClass        = "class"
	colClasses      = "classes"
	colScores       = "scores"
	colProbs        = "probabilities"
)

// predictionSchema is the predictions topic's schema: the window columns as in the feature
// records (non-nullable), then model_version utf8, model_kind utf8, prediction float32, and
// the nullable interval_lo, interval_hi float32, coverage float64 (null without an interval),
// class utf8, classes list<utf8> and scores list<float32> (null for a regression), and
// probabilities list<float32> (null unless the model is logistic). It is the
// same for every model, so one reader reads the records of every model version.
var predictionSchema = func() *arrow.Schema {
	ts := &arrow.TimestampType{Unit: arrow.Millisecond, TimeZone: "UTC"}
	return arrow.NewSchema([]arrow.Field{
		{Name: colSet, Type: arrow.BinaryTypes.String},
		{Name: colWindowStart, Type: ts},
		{Name: colWindowEnd, Type: ts},
		{Name: colSeq, Type: arrow.PrimitiveTypes.Uint64},
		{Name: colN, Type: arrow.PrimitiveTypes.Int64},
		{Name: colSpecID, Type: arrow.BinaryTypes.String},
		{Name: colModelVersion, Type: arrow.BinaryTypes.String},
		{Name: colModelKind, Type: arrow.BinaryTypes.String},
		{Name: colPrediction, Type: arrow.PrimitiveTypes.Float32},
		{Name: colIntervalLo, Type: arrow.PrimitiveTypes.Float32, Nullable: true},
		{Name: colIntervalHi, Type: arrow.PrimitiveTypes.Float32, Nullable: true},
		{Name: colCoverage, Type: arrow.PrimitiveTypes.Float64, Nullable: true},
		{Name: colClass, Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: colClasses, Type: arrow.ListOf(arrow.BinaryTypes.String), Nullable: true},
		{Name: colScores, Type: arrow.ListOf(arrow.PrimitiveTypes.Float32), Nullable: true},
		{Name: colProbs, Type: arrow.ListOf(arrow.PrimitiveTypes.Float32), Nullable: true},
	}, nil)
}()

// PredictionOutput encodes prediction records. It is safe for concurrent use.
type PredictionOutput struct {
	enc      *streamEncoder
	builders sync.Pool // of *array.RecordBuilder: NewRecord leaves one empty and reusable
}

// NewPredictionOutput returns the predictions topic's encoder.
func NewPredictionOutput() *PredictionOutput {
	return &PredictionOutput{enc: newStreamEncoder(predictionSchema)}
}

// PredictionSchema returns the predictions topic's Arrow schema (shared; do not modify).
func PredictionSchema() *arrow.Schema { return predictionSchema }

// Encode encodes r as one Arrow IPC stream of one row; the bytes are a deterministic function
// of r.
func (o *PredictionOutput) Encode(r PredictionRecord) ([]byte, error) {
	if !utf8.ValidString(r.Set) {
		return nil, fmt.Errorf("schema: prediction set ID %s is not valid UTF-8", quoteTrunc(r.Set))
	}
	if !scoresFit(len(r.Scores), len(r.Classes)) {
		return nil, fmt.Errorf("schema: prediction with %d scores for %d classes", len(r.Scores), len(r.Classes))
	}
	if r.Probabilities != nil && len(r.Probabilities) != len(r.Classes) {
		return nil, fmt.Errorf("schema: prediction with %d probabilities for %d classes", len(r.Probabilities), len(r.Classes))
	}
	b, _ := o.builders.Get().(*array.RecordBuilder)
	if b == nil {
		b = array.NewRecordBuilder(memory.DefaultAllocator, predictionSchema)
	}
	b.Field(0).(*array.StringBuilder).Append(r.Set)
	b.Field(1).(*array.TimestampBuilder).Append(arrow.Timestamp(r.WindowStart))
	b.Field(2).(*array.TimestampBuilder).Append(arrow.Timestamp(r.WindowEnd))
	b.Field(3).(*array.Uint64Builder).Append(r.Seq)
	b.Field(4).(*array.Int64Builder).Append(r.N)
	b.Field(5).(*array.StringBuilder).Append(r.SpecID)
	b.Field(6).(*array.StringBuilder).Append(r.ModelVersion)
	b.Field(7).(*array.StringBuilder).Append(r.ModelKind)
	b.Field(8).(*array.Float32Builder).Append(r.Prediction)
	lo, hi, cov := b.Field(9).(*array.Float32Builder), b.Field(10).(*array.Float32Builder), b.Field(11).(*array.Float64Builder)
	if r.Interval != nil {
		lo.Append(r.Interval[0])
		hi.Append(r.Interval[1])
		cov.Append(r.Coverage)
	} else {
		lo.AppendNull()
		hi.AppendNull()
		cov.AppendNull()
	}
	class, classes, scores, probs := b.Field(12).(*array.StringBuilder), b.Field(13).(*array.ListBuilder), b.Field(14).(*array.ListBuilder), b.Field(15).(*array.ListBuilder)
	if r.Classes != nil {
		class.Append(r.Class)
		classes.Append(true)
		classes.ValueBuilder().(*array.StringBuilder).AppendValues(r.Classes, nil)
		scores.Append(true)
		scores.ValueBuilder().(*array.Float32Builder).AppendValues(r.Scores, nil)
	} else {
		class.AppendNull()
		classes.AppendNull()
		scores.AppendNull()
	}
	if r.Probabilities != nil {
		probs.Append(true)
		probs.ValueBuilder().(*array.Float32Builder).AppendValues(r.Probabilities, nil)
	} else {
		probs.AppendNull()
	}
	rec := b.NewRecord()
	o.builders.Put(b)
	defer rec.Release()
	value, err := o.enc.encode(rec)
	if err != nil {
		return nil, fmt.Errorf("schema: encode prediction: %w", err)
	}
	return value, nil
}

// DecodePredictions reads a predictions topic record's value (one or more rows), checking
// the schema: for consumers of the topic and tests.
func DecodePredictions(value []byte) ([]PredictionRecord, error) {
	var out []PredictionRecord
	err := readOutputStream(value, func(s *arrow.Schema) error {
		if !s.Equal(predictionSchema) {
			return malformed("not a prediction stream: schema %s", s)
		}
		return nil
	}, func(rec arrow.Record) error {
		col := func(i int) arrow.Array { return rec.Column(i) }
		for i := 0; i < int(rec.NumRows()); i++ {
			r := PredictionRecord{
				Set:          col(0).(*array.String).Value(i),
				WindowStart:  int64(col(1).(*array.Timestamp).Value(i)),
				WindowEnd:    int64(col(2).(*array.Timestamp).Value(i)),
				Seq:          col(3).(*array.Uint64).Value(i),
				N:            col(4).(*array.Int64).Value(i),
				SpecID:       col(5).(*array.String).Value(i),
				ModelVersion: col(6).(*array.String).Value(i),
				ModelKind:    col(7).(*array.String).Value(i),
				Prediction:   col(8).(*array.Float32).Value(i),
			}
			if lo := col(9).(*array.Float32); lo.IsValid(i) {
				r.Interval = &[2]float32{lo.Value(i), col(10).(*array.Float32).Value(i)}
				r.Coverage = col(11).(*array.Float64).Value(i)
			}
			if cl := col(12).(*array.String); cl.IsValid(i) {
				r.Class = cl.Value(i)
				classes, scores := col(13).(*array.List), col(14).(*array.List)
				cs, ce := classes.ValueOffsets(i)
				names := classes.ListValues().(*array.String)
				for j := cs; j < ce; j++ {
					r.Classes = append(r.Classes, names.Value(int(j)))
				}
				ss, se := scores.ValueOffsets(i)
				vals := scores.ListValues().(*array.Float32)
				for j := ss; j < se; j++ {
					r.Scores = append(r.Scores, vals.Value(int(j)))
				}
				if !scoresFit(len(r.Scores), len(r.Classes)) {
					return malformed("prediction row %d: %d scores for %d classes", i, len(r.Scores), len(r.Classes))
				}
			}
			if probs := col(15).(*array.List); probs.IsValid(i) {
				ps, pe := probs.ValueOffsets(i)
				vals := probs.ListValues().(*array.Float32)
				r.Probabilities = make([]float32, 0, pe-ps)
				for j := ps; j < pe; j++ {
					r.Probabilities = append(r.Probabilities, vals.Value(int(j)))
				}
				if len(r.Probabilities) != len(r.Classes) {
					return malformed("prediction row %d: %d probabilities for %d classes", i, len(r.Probabilities), len(r.Classes))
				}
			}
			out = append(out, r)
		}
		return nil
	})
	return out, err
}

// scoresFit says whether a classifier's scores match its classes: one per class, or one for
// two classes (a binary model's single score).
func scoresFit(scores, classes int) bool {
	return scores == classes || (scores == 1 && classes == 2)
}
