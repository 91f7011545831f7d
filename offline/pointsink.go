package offline

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/distfeat/distfeat/embedding"
	"github.com/distfeat/distfeat/processor"
	"github.com/distfeat/distfeat/schema"
	"github.com/distfeat/distfeat/spec"
)

// PointChunk is the number of points whose per-point features a PointSink computes and
// writes at a time (one Arrow record batch each): 4 MiB of features at D = 1024, whatever
// the size of the set.
const PointChunk = 1024

// PointSink writes the per-point features of each embedded set (`embed --points`): for
// every point of the set, in input order, the marginal-transfer features against the
// set's own window features — the rows the worker publishes on its per-point topic.
type PointSink struct {
	maps    []*embedding.PointMap
	out     *schema.PointOutput
	arrow   *schema.PointStreamWriter // with --format arrow
	jw      *bufio.Writer             // with --format jsonl
	workers int
	a       [][]float64 // per map: the set part
	bufs    [][]float32 // per map: a chunk's features
	pred    *Predictor  // a per-point model's predictions, appended to every point's row; nil: none
}

// NewPointSink returns the per-point writer of the spec's marginal_transfer families (one
// column each), or an error if the spec has none.
func NewPointSink(w io.Writer, format string, sp *spec.Spec, emb *embedding.Embedder, workers int) (*PointSink, error) {
	return newPointSink(w, format, sp, emb, workers, nil)
}

// NewPointPredictionSink is NewPointSink with a per-point model's predictions (embed --points
// --model): every point's row gains the prediction columns (Arrow, with the model's schema
// metadata) or a "prediction" object (JSON lines), as embed --model adds them to a set's.
func NewPointPredictionSink(w io.Writer, format string, sp *spec.Spec, emb *embedding.Embedder, workers int, p *Predictor) (*PointSink, error) {
	if !p.m.PredictsPoints() {
		return nil, fmt.Errorf("model %s predicts each set: per-point records need a per-point model (distfeat fit --point-label)", p.m.ModelVersion)
	}
	return newPointSink(w, format, sp, emb, workers, p)
}

func newPointSink(w io.Writer, format string, sp *spec.Spec, emb *embedding.Embedder, workers int, p *Predictor) (*PointSink, error) {
	maps := emb.PointMaps()
	if len(maps) == 0 {
		return nil, errors.New("--points: the spec has no marginal_transfer family (docs/marginal-transfer.md; distfeat calibrate --point-label proposes one)")
	}
	var cols []embedding.Column
	for _, m := range maps {
		cols = append(cols, embedding.Column{Name: m.Name(), Family: m.Name(), Len: m.Len()})
	}
	out := schema.NewPointOutput(sp, cols)
	if p != nil && format == FormatArrow {
		out = processor.PointPredictionOutput(emb, p.a) // the worker's per-point records with a per-point model
	}
	s := &PointSink{maps: maps, out: out, workers: workers, a: make([][]float64, len(maps)), bufs: make([][]float32, len(maps)), pred: p}
	if format == FormatArrow {
		s.arrow = out.NewStreamWriter(w)
	} else {
		s.jw = bufio.NewWriter(w)
	}
	return s, nil
}

// Write computes and writes the per-point features of the set whose window record is rec
// and whose normalised points are u.
func (s *PointSink) Write(rec schema.FeatureRecord, u []float64, dim int) error {
	for i, m := range s.maps {
		s.a[i] = m.SetPart(rec.Vectors, s.a[i])
	}
	n := len(u) / dim
	for first := 0; first < n; first += PointChunk {
		k := min(PointChunk, n-first)
		vecs := make([][]float32, len(s.maps))
		for i, m := range s.maps {
			if cap(s.bufs[i]) < k*m.Len() {
				s.bufs[i] = make([]float32, k*m.Len())
			}
			vecs[i] = s.bufs[i][:k*m.Len()]
			m.PointsParallel(s.a[i], u[first*dim:(first+k)*dim], vecs[i], s.workers)
		}
		b := schema.PointBatch{Set: rec.Set, Seq: rec.Seq, First: int64(first), N: k, SpecID: rec.SpecID, Vectors: vecs}
		var preds []any
		if s.pred != nil {
			blocks, outs, err := s.pred.a.ApplyPoints(vecs, k)
			if err != nil {
				return err
			}
			if s.arrow != nil {
				b.Vectors = append(vecs, blocks...)
			}
			for _, o := range outs {
				preds = append(preds, s.pred.jsonOut(o))
			}
		}
		if s.arrow != nil {
			if err := s.arrow.Write(b); err != nil {
				return err
			}
			continue
		}
		for i, line := range s.out.Lines(b) {
			var v any = line
			if preds != nil {
				v = predictedPoint{PointLine: line, Prediction: preds[i]}
			}
			j, err := json.Marshal(v)
			if err != nil {
				return err
			}
			if _, err := s.jw.Write(append(j, '\n')); err != nil {
				return err
			}
		}
	}
	return nil
}

// predictedPoint is a per-point line with its prediction (a per-point model).
type predictedPoint struct {
	schema.PointLine
	Prediction any `json:"prediction"`
}

// Close ends the output (the Arrow stream's end, or the buffered lines' flush).
func (s *PointSink) Close() error {
	if s.arrow != nil {
		return s.arrow.Close()
	}
	return s.jw.Flush()
}
