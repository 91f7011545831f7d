package processor

import (
	"strconv"
	"time"

	"github.com/distfeat/distfeat/embedding"
	"github.com/distfeat/distfeat/schema"
	"github.com/distfeat/distfeat/window"
)

// Finalize computes the feature records of closed windows, one per window in order, with
// specID in each. hook (may be nil) observes each family's finalisation time. The sketches
// are only read: the caller releases them afterwards. It is the one finalisation path of
// the worker (all windows closed by one Process call at once) and of `distfeat embed`: the
// windows are finalised together (embedding.FinalizeBatchParallel over up to workers
// goroutines, bit-identical to finalising them one by one), so each random Fourier matrix
// is streamed once per batch.
func Finalize(specID string, closed []window.Closed[*embedding.Sketch], workers int, hook embedding.FinalizeHook) []schema.FeatureRecord {
	if len(closed) == 0 {
		return nil
	}
	sketches := make([]*embedding.Sketch, len(closed))
	for i, c := range closed {
		sketches[i] = c.Sketch
	}
	vectors := embedding.FinalizeBatchParallel(sketches, workers, hook)
	recs := make([]schema.FeatureRecord, len(closed))
	for i, c := range closed {
		recs[i] = schema.FeatureRecord{
			Set: c.Set, WindowStart: c.Start, WindowEnd: c.End, Seq: c.Seq, N: c.N,
			SpecID: specID, Vectors: vectors[i],
		}
	}
	return recs
}

// featureMessage is a finalised window's feature record for the output topic, value being
// rec encoded (p.out.Encode) or err its encoding's error. ok is false when encoding failed
// (reported to the observer; the window is dropped).
func (p *Processor) featureMessage(c window.Closed[*windowSketch], rec schema.FeatureRecord, value []byte, err error, rc rejectCount) (Message, bool) {
	if err != nil {
		// Encoding a well-formed record cannot fail short of a bug, and stopping here
		// would wedge the partition: the window is reported and dropped instead.
		p.obs.OnEncodeError(c.Set, c.Seq, err)
		return Message{}, false
	}
	p.obs.OnWindowEmitted(c.Reason, c.N)
	if do, ok := p.obs.(DriftObserver); ok {
		for _, d := range p.drift {
			pv := float64(rec.Vectors[d.Column][embedding.TwoSamplePValue])
			do.OnTwoSample(d.Family, pv, pv <= d.Alpha)
		}
	}
	if so, ok := p.obs.(SequentialObserver); ok && p.seq != nil {
		for _, c := range p.seq.cols {
			v := rec.Vectors[c.Column]
			so.OnSequential(c.Family, float64(v[embedding.SeqERT]), v[embedding.SeqAlarm] == 1)
		}
	}
	return Message{
		Kind:        Feature,
		Key:         []byte(c.Set),
		Value:       value,
		Time:        time.UnixMilli(c.End),
		Headers:     p.windowHeaders(c.Seq, rejectedHeaders(rc)...),
		FirstOffset: c.FirstOffset,
		EventEnd:    c.End,
	}, true
}

// rejectedHeaders say how much of a partial window was dead-lettered: none when nothing was,
// and the points only when every rejected record's points were counted.
func rejectedHeaders(rc rejectCount) []Header {
	if rc.records == 0 {
		return nil
	}
	h := []Header{{Key: schema.HeaderRejectedRecords, Value: []byte(strconv.FormatInt(rc.records, 10))}}
	if !rc.uncounted {
		h = append(h, Header{Key: schema.HeaderRejectedPoints, Value: []byte(strconv.FormatInt(rc.points, 10))})
	}
	return h
}

// windowHeaders are the headers of every record a closed window emits (its feature record and
// its per-point records): content type, spec_id and window-id; extra are appended.
func (p *Processor) windowHeaders(seq uint64, extra ...Header) []Header {
	return append([]Header{
		{Key: schema.HeaderContentType, Value: []byte(schema.ContentTypeArrow)},
		{Key: schema.HeaderSpecID, Value: []byte(p.specID)},
		{Key: schema.HeaderWindowID, Value: []byte(strconv.FormatUint(seq, 10))},
	}, extra...)
}
