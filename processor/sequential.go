package processor

import (
	"errors"
	"fmt"

	"github.com/distfeat/distfeat/embedding"
	"github.com/distfeat/distfeat/schema"
	"github.com/distfeat/distfeat/sequential"
)

// Sequential runs the sequential detectors of an embedder's two_sample families (`ert`,
// docs/drift.md) over each set's windows in the order they are given, filling in the
// `<name>_seq` columns of their feature records. It reads only the records: a window's
// p-value as written (float32), so the alarms are a pure function of the feature records of
// a set, in order, and anyone holding them can recompute the detector. Its state is a few
// integers per set and family. Not safe for concurrent use.
type Sequential struct {
	cols  []embedding.SequentialColumn
	state map[string][]sequential.State
}

// NewSequential returns the detectors of emb's sequential families, or nil if it has none.
func NewSequential(emb *embedding.Embedder) *Sequential {
	cols := emb.SequentialColumns()
	if len(cols) == 0 {
		return nil
	}
	return &Sequential{cols: cols, state: map[string][]sequential.State{}}
}

// Apply folds the window of rec into its set's detectors and writes their outcome to rec's
// `<name>_seq` vectors. A nil Sequential does nothing.
func (s *Sequential) Apply(rec *schema.FeatureRecord) {
	if s == nil {
		return
	}
	st, ok := s.state[rec.Set]
	if !ok {
		st = make([]sequential.State, len(s.cols))
		s.state[rec.Set] = st
	}
	for i, c := range s.cols {
		p := float64(rec.Vectors[c.PValue][embedding.TwoSamplePValue])
		next, step := c.Detector.Update(st[i], p)
		v := rec.Vectors[c.Column]
		v[embedding.SeqStatistic] = float32(step.Statistic)
		v[embedding.SeqAlarm] = 0
		if step.Alarm {
			v[embedding.SeqAlarm] = 1
		}
		v[embedding.SeqRun] = float32(step.Run)
		v[embedding.SeqWindows] = float32(st[i].Windows + 1)
		st[i] = next
	}
}

// ErrSequentialInWorker is returned by CheckWorkerSpec for a spec with sequential detection.
var ErrSequentialInWorker = errors.New("processor: sequential detection (two_sample ert) runs in `distfeat embed` only")

// CheckWorkerSpec refuses, for the worker, a spec whose two_sample families have `ert`:
// the worker does not yet keep a set's detector state across restarts, rebalances and
// replays, so its alarms would depend on when workers restart (docs/drift.md). A worker
// must not publish such alarms silently.
func CheckWorkerSpec(emb *embedding.Embedder) error {
	if cols := emb.SequentialColumns(); len(cols) > 0 {
		return fmt.Errorf("%w: family %q sets ert, but the worker cannot yet keep a set's detector state across restarts "+
			"and rebalances; remove ert for the worker (its per-window p-values are unchanged) and run the detector over the "+
			"feature records with `distfeat embed`", ErrSequentialInWorker, cols[0].Family)
	}
	return nil
}
