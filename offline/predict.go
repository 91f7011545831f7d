package offline

import (
	"bufio"
	"encoding/json"
	"io"

	"github.com/distfeat/distfeat/embedding"
	"github.com/distfeat/distfeat/model"
	"github.com/distfeat/distfeat/schema"
	"github.com/distfeat/distfeat/spec"
)

// Predictor applies a model file to embed's feature records (embed --model), through
// model.Applier: the worker's predictions topic computes the same values.
type Predictor struct {
	m        *model.Model
	a        *model.Applier
	coverage float64 // regression interval coverage; 0: none
}

// NewPredictor checks m against emb's spec and columns (a per-point model: its per-point
// columns, PointColumns) and applies it with a regression interval at coverage (one the
// model stores; 0: none); a classifier has scores and no interval. The errors are model.NewApplier's (*model.RefusedError, naming both spec_ids).
func NewPredictor(m *model.Model, emb *embedding.Embedder, coverage float64) (*Predictor, error) {
	var a *model.Applier
	var err error
	if m.PredictsPoints() {
		a, err = model.NewPointApplier(m, emb.Spec().ID(), PointColumns(emb), coverage)
	} else {
		a, err = model.NewApplier(m, emb.Spec().ID(), ModelColumns(emb.Columns()), coverage)
	}
	if err != nil {
		return nil, err
	}
	return &Predictor{m: m, a: a, coverage: a.Coverage()}, nil
}

// columns are the prediction columns appended to the Arrow output.
func (p *Predictor) columns() []spec.Column {
	var cols []spec.Column
	for _, c := range p.a.OutputColumns() {
		cols = append(cols, spec.Column{Name: c.Name, Len: c.Len})
	}
	return cols
}

// meta is the Arrow schema metadata naming the model.
func (p *Predictor) meta() [][2]string { return p.a.OutputMeta() }

// predict applies the model to r: the Arrow vectors (in columns() order) and the JSON object.
func (p *Predictor) predict(r schema.FeatureRecord) ([][]float32, any, error) {
	pr, err := p.a.Apply(r.Vectors)
	if err != nil {
		return nil, nil, err
	}
	return p.a.OutputVectors(pr), p.jsonOut(pr), nil
}

// jsonOut is the JSON-lines "prediction" object of one output (schema.RegressionJSON or
// schema.ClassificationJSON).
func (p *Predictor) jsonOut(pr model.Output) any {
	if p.m.Kind == model.Classification {
		out := schema.ClassificationJSON{ModelVersion: p.m.ModelVersion, Class: pr.Class, Scores: map[string]float32{}}
		scoreClasses := p.m.ScoreClasses()
		for k, s := range pr.Scores {
			out.Scores[scoreClasses[k]] = s
		}
		if pr.Probabilities != nil {
			out.Probabilities = map[string]float32{}
			for k, v := range pr.Probabilities {
				out.Probabilities[p.m.Classes[k]] = v
			}
		}
		return out
	}
	out := schema.RegressionJSON{ModelVersion: p.m.ModelVersion, Value: pr.Value, Interval: pr.Interval}
	if pr.Interval != nil {
		out.Coverage = p.coverage
	}
	return out
}

// NewPredictionSink is embed's output with the model's predictions: JSON lines gain a
// "prediction" object, the Arrow stream the prediction columns and the model's metadata.
func NewPredictionSink(w io.Writer, format string, sp *spec.Spec, emb *embedding.Embedder, p *Predictor) Sink {
	if format == FormatArrow {
		out := schema.NewOutputMeta(sp, append(emb.Columns(), p.columns()...), p.meta()...)
		return &arrowPredictionSink{sw: out.NewStreamWriter(w), p: p}
	}
	return &jsonlPredictionSink{w: bufio.NewWriter(w), out: schema.NewOutput(sp, emb.Columns()), p: p}
}

type arrowPredictionSink struct {
	sw *schema.StreamWriter
	p  *Predictor
}

func (s *arrowPredictionSink) Write(r schema.FeatureRecord) error {
	vecs, _, err := s.p.predict(r)
	if err != nil {
		return err
	}
	r.Vectors = append(r.Vectors[:len(r.Vectors):len(r.Vectors)], vecs...)
	return s.sw.Write(r)
}

func (s *arrowPredictionSink) Close() error { return s.sw.Close() }

// predictedLine is a feature line with its prediction.
type predictedLine struct {
	schema.FeatureLine
	Prediction any `json:"prediction"`
}

type jsonlPredictionSink struct {
	w   *bufio.Writer
	out *schema.Output
	p   *Predictor
}

func (s *jsonlPredictionSink) Write(r schema.FeatureRecord) error {
	_, pred, err := s.p.predict(r)
	if err != nil {
		return err
	}
	b, err := json.Marshal(predictedLine{FeatureLine: s.out.Line(r), Prediction: pred})
	if err != nil {
		return err
	}
	_, err = s.w.Write(append(b, '\n'))
	return err
}

func (s *jsonlPredictionSink) Close() error { return s.w.Flush() }

// PredictsPoints reports whether the model predicts each point (a per-point model, applied
// to embed --points' records) rather than each set.
func (p *Predictor) PredictsPoints() bool { return p.m.PredictsPoints() }
