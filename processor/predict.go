package processor

import (
	"strconv"
	"time"

	"github.com/distfeat/distfeat/model"
	"github.com/distfeat/distfeat/schema"
	"github.com/distfeat/distfeat/window"
)

// HeaderModelVersion is the header of a Prediction message naming the model that made it.
const HeaderModelVersion = "model-version"

// Models supplies the model in force (Config.Models). Current may return nil: no model yet,
// no prediction. The Processor asks once per Process or ExpireIdle call, so every window that
// one call closes is predicted by one model, and a model read while a window is open applies
// from the next call that closes windows, never to part of a window.
type Models interface {
	Current() *model.Applier
}

// PredictionObserver is an optional extension of Observer for the predictions: called for
// each Prediction message with the model that made it and its output.
type PredictionObserver interface {
	OnPrediction(a *model.Applier, out model.Output)
}

// predictionMessage appends closed window c's prediction by a (nil: none) to msgs. A model
// that cannot be applied to the record (it was checked against the embedder's columns when it
// was loaded, so a bug) is reported like an encoding error and the window gets no prediction.
func (p *Processor) predictionMessage(msgs []Message, a *model.Applier, c window.Closed[*windowSketch], rec schema.FeatureRecord) []Message {
	if a == nil {
		return msgs
	}
	out, err := a.Apply(rec.Vectors)
	var value []byte
	if err == nil {
		m := a.Model()
		r := schema.PredictionRecord{
			Set: c.Set, WindowStart: c.Start, WindowEnd: c.End, Seq: c.Seq, N: c.N, SpecID: p.specID,
			ModelVersion: m.ModelVersion, ModelKind: m.Kind, Prediction: out.Value, Interval: out.Interval,
		}
		if out.Interval != nil {
			r.Coverage = a.Coverage()
		}
		if out.Scores != nil {
			r.Class, r.Classes, r.Scores, r.Probabilities = out.Class, m.Classes, out.Scores, out.Probabilities
		}
		value, err = p.predictions.Encode(r)
	}
	if err != nil {
		p.obs.OnEncodeError(c.Set, c.Seq, err)
		return msgs
	}
	if po, ok := p.obs.(PredictionObserver); ok {
		po.OnPrediction(a, out)
	}
	return append(msgs, Message{
		Kind:        Prediction,
		Key:         []byte(c.Set),
		Value:       value,
		Time:        time.UnixMilli(c.End),
		Headers:     p.windowHeaders(c.Seq, Header{Key: HeaderModelVersion, Value: []byte(a.Model().ModelVersion)}),
		FirstOffset: c.FirstOffset,
		EventEnd:    -1,
	})
}

// ModelDeadLetter is the dead letter of a model refused on the models topic (rec is its
// record there): the original key, value and headers, cut to fit maxOutput bytes like every
// dead letter, with error "model_" + reason (model.RefusedReason), error-detail and the
// source headers.
func ModelDeadLetter(rec Record, reason string, err error, maxOutput int) Message {
	own := []Header{
		{Key: schema.HeaderError, Value: []byte("model_" + reason)},
		{Key: schema.HeaderErrorDetail, Value: []byte(truncateUTF8(err.Error(), MaxErrorDetail))},
		{Key: schema.HeaderSourceTopic, Value: []byte(rec.Topic)},
		{Key: schema.HeaderSourcePartition, Value: []byte(strconv.Itoa(rec.Partition))},
		{Key: schema.HeaderSourceOffset, Value: []byte(strconv.FormatInt(rec.Offset, 10))},
	}
	key, value, headers := fitDeadLetter(rec.Key, rec.Value, rec.Headers, own, maxOutput)
	return Message{Kind: DeadLetter, Key: key, Value: value, Headers: headers, Time: rec.Time, FirstOffset: rec.Offset, EventEnd: -1}
}
