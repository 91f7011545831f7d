package processor

import (
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/distfeat/distfeat/embedding"
	"github.com/distfeat/distfeat/model"
	"github.com/distfeat/distfeat/schema"
	"github.com/distfeat/distfeat/spec"
	"github.com/distfeat/distfeat/window"
)

// HeaderPointFirst is the header of a PointFeature message with the index of its first
// point within the window (decimal).
const HeaderPointFirst = "point-first"

// maxPointChunk bounds the points of one PointFeature message (and so the features computed
// at once for it), whatever the output limit.
const maxPointChunk = 4096

// PointObserver is an optional extension of Observer for the per-point output: an Observer
// that implements it is told what the per-point output did.
type PointObserver interface {
	// OnPointsEmitted is called for each window with per-point output, with its points.
	OnPointsEmitted(points int)
	// OnPointsDropped is called for a window whose points did not fit the retention budget:
	// it gets its feature record but no per-point output.
	OnPointsDropped(set string, seq uint64, points int64)
}

// PointChunk is the number of points per PointFeature message: as many as fit maxOutput
// bytes (at most 4096). It is an error naming the setting if not even one point fits, or if
// the embedder has no marginal_transfer family.
func PointChunk(emb *embedding.Embedder, out *schema.PointOutput, maxOutput int) (int, error) {
	if len(emb.PointMaps()) == 0 {
		return 0, errors.New("processor: per-point output needs a marginal_transfer family in the spec")
	}
	base, per := out.EncodedSize(0), out.EncodedSize(1)-out.EncodedSize(0)
	k := (maxOutput - base) / per
	if k < 1 {
		return 0, fmt.Errorf("processor: the per-point features of one point take up to %d bytes, over the output limit DISTFEAT_MAX_OUTPUT_BYTES=%d: reduce the marginal_transfer features", base+per, maxOutput)
	}
	return min(k, maxPointChunk), nil
}

// pointMessages appends the PointFeature messages of closed window c, whose feature record
// is rec, to msgs: its retained points in order, p.pointChunk per message, each row the
// per-point features of every marginal_transfer family against the window's own features.
//
// With a per-point model a (nil: none), every row also gets the model's prediction columns
// (PointPredictionOutput), and the messages are chunked to fit them.
func (p *Processor) pointMessages(msgs []Message, c window.Closed[*windowSketch], rec schema.FeatureRecord, a *model.Applier) []Message {
	po, _ := p.obs.(PointObserver)
	u, ok := c.Sketch.s.Points()
	if !ok {
		if po != nil {
			po.OnPointsDropped(c.Set, c.Seq, c.N)
		}
		return msgs
	}
	maps := p.emb.PointMaps()
	parts := make([][]float64, len(maps))
	for i, m := range maps {
		parts[i] = m.SetPart(rec.Vectors, nil)
	}
	d := p.emb.Dim()
	n := len(u) / d
	enc, chunk := p.cfg.Points, p.pointChunk
	if a != nil {
		pp, err := p.pointPredictionFor(a)
		if err != nil {
			p.obs.OnEncodeError(c.Set, c.Seq, fmt.Errorf("per-point predictions: %w", err))
			return msgs
		}
		enc, chunk = pp.out, pp.chunk
	}
	predObs, _ := p.obs.(PredictionObserver)
	for first := 0; first < n; first += chunk {
		k := min(chunk, n-first)
		b := schema.PointBatch{Set: c.Set, Seq: c.Seq, First: int64(first), N: k, SpecID: p.specID, Vectors: make([][]float32, len(maps))}
		for i, m := range maps {
			b.Vectors[i] = make([]float32, k*m.Len())
			m.PointsParallel(parts[i], u[first*d:(first+k)*d], b.Vectors[i], p.cfg.FinalizeWorkers)
		}
		var outs []model.Output
		if a != nil {
			blocks, o, err := a.ApplyPoints(b.Vectors, k)
			if err != nil {
				p.obs.OnEncodeError(c.Set, c.Seq, fmt.Errorf("per-point predictions from index %d: %w", first, err))
				return msgs
			}
			b.Vectors, outs = append(b.Vectors, blocks...), o
		}
		value, err := enc.Encode(b)
		if err != nil {
			// As for a feature record: a bug, reported, and the rest of the window dropped
			// rather than wedging the partition.
			p.obs.OnEncodeError(c.Set, c.Seq, fmt.Errorf("per-point features from index %d: %w", first, err))
			return msgs
		}
		msgs = append(msgs, Message{
			Kind:        PointFeature,
			Key:         []byte(c.Set),
			Value:       value,
			Time:        time.UnixMilli(c.End),
			Headers:     p.pointHeaders(c.Seq, first, a),
			FirstOffset: c.FirstOffset,
			EventEnd:    -1,
		})
		if predObs != nil {
			for _, o := range outs {
				predObs.OnPrediction(a, o)
			}
		}
	}
	if po != nil {
		po.OnPointsEmitted(n)
	}
	return msgs
}

// pointHeaders are a PointFeature message's headers: the window's, point-first and, with a
// per-point model a, model-version.
func (p *Processor) pointHeaders(seq uint64, first int, a *model.Applier) []Header {
	extra := []Header{{Key: HeaderPointFirst, Value: []byte(strconv.Itoa(first))}}
	if a != nil {
		extra = append(extra, Header{Key: HeaderModelVersion, Value: []byte(a.Model().ModelVersion)})
	}
	return p.windowHeaders(seq, extra...)
}

// pointPrediction is the per-point encoder with a per-point model's prediction columns, and
// its points per message.
type pointPrediction struct {
	a     *model.Applier
	out   *schema.PointOutput
	chunk int
}

// pointPredictionFor is the per-point encoder of a per-point model, built when the model in
// force changes.
func (p *Processor) pointPredictionFor(a *model.Applier) (pointPrediction, error) {
	if p.pointPred.a == a {
		return p.pointPred, nil
	}
	out := PointPredictionOutput(p.emb, a)
	chunk, err := PointChunk(p.emb, out, p.cfg.MaxOutputBytes)
	if err != nil {
		return pointPrediction{}, err
	}
	p.pointPred = pointPrediction{a: a, out: out, chunk: chunk}
	return p.pointPred, nil
}

// PointPredictionOutput is the per-point encoder of the embedder's marginal_transfer columns
// followed by a per-point model's prediction columns, with the model's schema metadata: the
// records embed --points --model writes, and the worker's per-point topic with a per-point
// model in force.
func PointPredictionOutput(emb *embedding.Embedder, a *model.Applier) *schema.PointOutput {
	var cols []spec.Column
	for _, m := range emb.PointMaps() {
		cols = append(cols, spec.Column{Name: m.Name(), Family: m.Name(), Len: m.Len()})
	}
	for _, c := range a.OutputColumns() {
		cols = append(cols, spec.Column{Name: c.Name, Len: c.Len})
	}
	return schema.NewPointOutputMeta(emb.Spec(), cols, a.OutputMeta()...)
}
