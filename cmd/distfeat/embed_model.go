package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"slices"

	"github.com/distfeat/distfeat/embedding"
	"github.com/distfeat/distfeat/model"
	"github.com/distfeat/distfeat/schema"
	"github.com/distfeat/distfeat/spec"
)

// Arrow columns and schema metadata embed --model adds (docs/fitting.md).
const (
	colPrediction = "model.prediction"    // [1]: the prediction, or the class's index in distfeat.model_classes
	colInterval   = "model.interval"      // [2]: lo, hi (regression, with a coverage)
	colScores     = "model.scores"        // [scores]: per-class scores, or a binary model's one (classification)
	colProbs      = "model.probabilities" // [classes]: class probabilities (link logistic)
)

// predictor applies a model file to embed's feature records.
type predictor struct {
	m        *model.Model
	cols     []model.Column // the embedder's, in record order
	coverage float64        // regression interval coverage; 0: none
}

// loadPredictor loads the model file and refuses one fitted under another spec or width.
func loadPredictor(path string, coverage float64, sp *spec.Spec, emb *embedding.Embedder) (*predictor, error) {
	m, err := model.Load(path)
	if err != nil {
		return nil, fmt.Errorf("--model: %w", err)
	}
	p := &predictor{m: m, cols: modelColumns(emb.Columns()), coverage: coverage}
	if err := m.CheckSpec(sp.ID(), p.cols); err != nil {
		return nil, fmt.Errorf("--model %s: %w", path, err)
	}
	if m.Kind == model.Classification {
		p.coverage = 0 // a classifier has scores, no interval
	} else if coverage != 0 {
		if _, err := m.Quantile(coverage); err != nil {
			return nil, fmt.Errorf("--coverage: %w", err)
		}
	}
	return p, nil
}

// columns are the prediction columns appended to the Arrow output.
func (p *predictor) columns() []spec.Column {
	cols := []spec.Column{{Name: colPrediction, Len: 1}}
	if p.m.Kind == model.Classification {
		cols = append(cols, spec.Column{Name: colScores, Len: len(p.m.Weights)})
		if p.m.Link == model.Logistic {
			cols = append(cols, spec.Column{Name: colProbs, Len: len(p.m.Classes)})
		}
		return cols
	}
	if p.coverage != 0 {
		cols = append(cols, spec.Column{Name: colInterval, Len: 2})
	}
	return cols
}

// meta is the Arrow schema metadata naming the model.
func (p *predictor) meta() [][2]string {
	classes, _ := json.Marshal(p.m.Classes)
	md := [][2]string{{"distfeat.model_version", p.m.ModelVersion}, {"distfeat.model_kind", p.m.Kind}}
	if p.m.Kind == model.Classification {
		md = append(md, [2]string{"distfeat.model_classes", string(classes)})
		if sc := p.m.ScoreClasses(); len(sc) != len(p.m.Classes) { // a binary model's one score
			b, _ := json.Marshal(sc)
			md = append(md, [2]string{"distfeat.model_score_classes", string(b)})
		}
		if p.m.Link != "" {
			md = append(md, [2]string{"distfeat.model_link", p.m.Link})
		}
		return md
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
	// Probabilities are the class probabilities (link logistic).
	Probabilities map[string]float32 `json:"probabilities,omitempty"`
}

// predict applies the model to r: the Arrow vectors (in columns() order) and the JSON object.
func (p *predictor) predict(r schema.FeatureRecord) ([][]float32, any, error) {
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
		for k, s := range pr.Scores {
			scores[k] = float32(s)
			out.Scores[p.m.ScoreClasses()[k]] = scores[k]
		}
		vecs := [][]float32{{float32(slices.Index(p.m.Classes, pr.Class))}, scores}
		if pr.Probabilities != nil {
			probs := make([]float32, len(pr.Probabilities))
			out.Probabilities = map[string]float32{}
			for k, v := range pr.Probabilities {
				probs[k] = float32(v)
				out.Probabilities[p.m.Classes[k]] = probs[k]
			}
			vecs = append(vecs, probs)
		}
		return vecs, out, nil
	}
	out := regressionOut{ModelVersion: p.m.ModelVersion, Value: float32(pr.Value)}
	vecs := [][]float32{{out.Value}}
	if p.coverage != 0 {
		out.Interval, out.Coverage = &[2]float32{float32(pr.Lo), float32(pr.Hi)}, p.coverage
		vecs = append(vecs, out.Interval[:])
	}
	return vecs, out, nil
}

// newPredictionSink is embed's output with the model's predictions: JSON lines gain a
// "prediction" object, the Arrow stream the prediction columns and the model's metadata.
func newPredictionSink(w io.Writer, format string, sp *spec.Spec, emb *embedding.Embedder, p *predictor) featureSink {
	if format == "arrow" {
		out := schema.NewOutputMeta(sp, append(emb.Columns(), p.columns()...), p.meta()...)
		return &arrowPredictionSink{sw: out.NewStreamWriter(w), p: p}
	}
	return &jsonlPredictionSink{w: bufio.NewWriter(w), out: schema.NewOutput(sp, emb.Columns()), p: p}
}

type arrowPredictionSink struct {
	sw *schema.StreamWriter
	p  *predictor
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
	p   *predictor
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
