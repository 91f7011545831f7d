package offline

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"

	"github.com/distfeat/distfeat/embedding"
	"github.com/distfeat/distfeat/model"
	"github.com/distfeat/distfeat/schema"
	"github.com/distfeat/distfeat/spec"
)

// Arrow columns and schema metadata a Predictor adds to embed's output (docs/fitting.md).
const (
	colPrediction = "model.prediction" // [1]: the prediction, or the class's index in distfeat.model_classes
	colInterval   = "model.interval"   // [2]: lo, hi (regression, with a coverage)
	colScores     = "model.scores"     // [classes]: per-class scores (classification)
)

// Predictor applies a model file to embed's feature records (embed --model).
type Predictor struct {
	m        *model.Model
	cols     []model.Column // the embedder's, in record order
	coverage float64        // regression interval coverage; 0: none
}

// CheckModel refuses a model fitted under another spec or width than emb's (model.CheckSpec).
func CheckModel(m *model.Model, emb *embedding.Embedder) error {
	return m.CheckSpec(emb.Spec().ID(), ModelColumns(emb.Columns()))
}

// NewPredictor applies m (checked with CheckModel) with a regression interval at coverage
// (one the model stores: model.Quantile; 0: none); a classifier has scores and no interval.
func NewPredictor(m *model.Model, emb *embedding.Embedder, coverage float64) *Predictor {
	p := &Predictor{m: m, cols: ModelColumns(emb.Columns()), coverage: coverage}
	if m.Kind == model.Classification {
		p.coverage = 0
	}
	return p
}

// columns are the prediction columns appended to the Arrow output.
func (p *Predictor) columns() []spec.Column {
	cols := []spec.Column{{Name: colPrediction, Len: 1}}
	if p.m.Kind == model.Classification {
		return append(cols, spec.Column{Name: colScores, Len: len(p.m.Classes)})
	}
	if p.coverage != 0 {
		cols = append(cols, spec.Column{Name: colInterval, Len: 2})
	}
	return cols
}

// meta is the Arrow schema metadata naming the model.
func (p *Predictor) meta() [][2]string {
	classes, _ := json.Marshal(p.m.Classes)
	md := [][2]string{{"distfeat.model_version", p.m.ModelVersion}, {"distfeat.model_kind", p.m.Kind}}
	if p.m.Kind == model.Classification {
		return append(md, [2]string{"distfeat.model_classes", string(classes)})
	}
	if p.coverage != 0 {
		md = append(md, [2]string{"distfeat.model_coverage", fmt.Sprint(p.coverage)})
	}
	return md
}

// regressionOut and classOut are the JSON-lines "prediction" object. Values are float32,
// as in the Arrow columns, so both formats carry the same numbers.
type regressionOut struct {
	ModelVersion string      `json:"model_version"`
	Value        float32     `json:"value"`
	Interval     *[2]float32 `json:"interval,omitempty"`
	Coverage     float64     `json:"coverage,omitempty"`
}

type classOut struct {
	ModelVersion string             `json:"model_version"`
	Class        string             `json:"class"`
	Scores       map[string]float32 `json:"scores"`
}

// predict applies the model to r: the Arrow vectors (in columns() order) and the JSON object.
func (p *Predictor) predict(r schema.FeatureRecord) ([][]float32, any, error) {
	row, err := p.m.Row(nil, p.cols, r.Vectors)
	if err != nil {
		return nil, nil, err
	}
	pr, err := p.m.Predict(row, p.coverage)
	if err != nil {
		return nil, nil, err
	}
	if p.m.Kind == model.Classification {
		out := classOut{ModelVersion: p.m.ModelVersion, Class: pr.Class, Scores: map[string]float32{}}
		scores := make([]float32, len(pr.Scores))
		idx := 0
		for k, s := range pr.Scores {
			scores[k] = float32(s)
			out.Scores[p.m.Classes[k]] = scores[k]
			if p.m.Classes[k] == pr.Class {
				idx = k
			}
		}
		return [][]float32{{float32(idx)}, scores}, out, nil
	}
	out := regressionOut{ModelVersion: p.m.ModelVersion, Value: float32(pr.Value)}
	vecs := [][]float32{{out.Value}}
	if p.coverage != 0 {
		out.Interval, out.Coverage = &[2]float32{float32(pr.Lo), float32(pr.Hi)}, p.coverage
		vecs = append(vecs, out.Interval[:])
	}
	return vecs, out, nil
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
