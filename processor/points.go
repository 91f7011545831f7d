package processor

import (
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/distfeat/distfeat/embedding"
	"github.com/distfeat/distfeat/schema"
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
func (p *Processor) pointMessages(msgs []Message, c window.Closed[*windowSketch], rec schema.FeatureRecord) []Message {
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
	for first := 0; first < n; first += p.pointChunk {
		k := min(p.pointChunk, n-first)
		b := schema.PointBatch{Set: c.Set, Seq: c.Seq, First: int64(first), N: k, SpecID: p.specID, Vectors: make([][]float32, len(maps))}
		for i, m := range maps {
			b.Vectors[i] = make([]float32, k*m.Len())
			m.PointsParallel(parts[i], u[first*d:(first+k)*d], b.Vectors[i], p.cfg.FinalizeWorkers)
		}
		value, err := p.cfg.Points.Encode(b)
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
			Headers:     p.windowHeaders(c.Seq, Header{Key: HeaderPointFirst, Value: []byte(strconv.Itoa(first))}),
			FirstOffset: c.FirstOffset,
			EventEnd:    -1,
		})
	}
	if po != nil {
		po.OnPointsEmitted(n)
	}
	return msgs
}
