package offline

import (
	"fmt"

	"github.com/distfeat/distfeat/calibrate"
	"github.com/distfeat/distfeat/schema"
)

// TopicSample gathers the sets of a points topic's records (`calibrate --from-topic`), in
// order of first appearance, until MaxSets of them have ended. Invalid records are counted
// and skipped (the worker would dead-letter them).
type TopicSample struct {
	topic   string
	dim     int
	maxSets int
	order   []string
	sets    map[string]*calibrate.Set
	ended   map[string]bool
	nEnd    int
	bad     int
}

// NewTopicSample gathers up to maxSets sets of topic's records; dim 0 takes the first JSON
// record's dimension.
func NewTopicSample(topic string, dim, maxSets int) *TopicSample {
	return &TopicSample{topic: topic, dim: dim, maxSets: maxSets, sets: map[string]*calibrate.Set{}, ended: map[string]bool{}}
}

// Add decodes one record and reports whether more are wanted (fewer than MaxSets ended).
func (t *TopicSample) Add(key, value []byte, contentType string, timeMs int64) bool {
	if t.dim == 0 && contentType != schema.ContentTypeArrow {
		t.dim, _ = FirstPointDim(value)
	}
	if t.dim == 0 {
		t.bad++
		return true
	}
	bs, err := schema.DecodeRecord(key, value, contentType, timeMs, schema.DecodeOptions{Dim: t.dim})
	if err != nil {
		t.bad++
		return true
	}
	for _, b := range bs {
		t.add(b)
	}
	return t.nEnd < t.maxSets
}

func (t *TopicSample) add(b schema.Batch) {
	s, ok := t.sets[b.Set]
	if !ok {
		s = &calibrate.Set{ID: b.Set}
		t.sets[b.Set] = s
		t.order = append(t.order, b.Set)
	}
	s.Points = append(s.Points, b.Points...)
	if b.End && !t.ended[b.Set] {
		t.ended[b.Set] = true
		t.nEnd++
	}
}

// Count is the number of sets seen and of those ended.
func (t *TopicSample) Count() (sets, ended int) { return len(t.order), t.nEnd }

// Result lists the ended sets first, then (if fewer than MaxSets) the still open ones, with
// the dimension, the number of invalid records skipped and of open sets used.
func (t *TopicSample) Result() (out []calibrate.Set, dim, bad, open int, err error) {
	if t.dim == 0 {
		return nil, 0, t.bad, 0, fmt.Errorf("topic %q: cannot infer the dimension from its records (Arrow, or none with points): give --dim or --spec", t.topic)
	}
	for _, pass := range []bool{true, false} {
		for _, id := range t.order {
			if t.ended[id] == pass && len(out) < t.maxSets && len(t.sets[id].Points) > 0 {
				out = append(out, *t.sets[id])
				if !pass {
					open++
				}
			}
		}
	}
	return out, t.dim, t.bad, open, nil
}
