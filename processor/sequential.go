package processor

import (
	"errors"
	"fmt"

	"github.com/distfeat/distfeat/embedding"
	"github.com/distfeat/distfeat/schema"
	"github.com/distfeat/distfeat/sequential"
	"github.com/distfeat/distfeat/window"
)

// Sequential runs the sequential detectors of an embedder's two_sample families (`ert`,
// docs/drift.md) over each set's windows in the order they close, filling in the
// `<name>_seq` columns of their feature records. It reads a window's p-value as written
// (float32), so the alarms are a pure function of a set's feature records in order.
//
// Its state survives restarts by replay, not by storage. A set's CUSUM depends only on the
// windows since it last was 0 (its run): restarted at 0 any earlier, it meets the original
// once the original returns to 0, and is identical from there on. So the Processor keeps its
// commit at or below the first record of every set's current run (Hold), and a replay from
// the commit recomputes the p-values of the windows it re-reads (without emitting them): the
// state, and every alarm, is the same with or without restarts. Only sets with a run in
// progress are held in memory (a few integers each). Not safe for concurrent use.
//
// A run is forgotten when the set's next window starts more than MaxRunRecords records after
// it (the set went quiet): the detector restarts at 0 there, with or without a restart in
// between, so such runs need not hold the commit and a quiet set cannot pin it forever.
type Sequential struct {
	cols   []embedding.SequentialColumn
	sets   map[string]*seqSet
	maxRun int64 // MaxRunRecords (tests lower it)
}

// seqSet is one set's detector states and, per family, the first record of its run.
type seqSet struct {
	st    []sequential.State
	first []int64
}

// MaxRunRecords is how many records after its first a set's run in progress holds the commit
// (Sequential): a window of the set that starts later restarts its detector at 0.
const MaxRunRecords = 100_000

// NewSequential returns the detectors of emb's sequential families, or nil if it has none.
func NewSequential(emb *embedding.Embedder) *Sequential {
	cols := emb.SequentialColumns()
	if len(cols) == 0 {
		return nil
	}
	return &Sequential{cols: cols, sets: map[string]*seqSet{}, maxRun: MaxRunRecords}
}

// Apply folds the window of rec, whose first point is in record firstOffset, into its set's
// detectors and writes their outcome to rec's `<name>_seq` vectors. A nil Sequential does
// nothing.
func (s *Sequential) Apply(rec *schema.FeatureRecord, firstOffset int64) {
	if s == nil {
		return
	}
	ss := s.sets[rec.Set]
	if ss == nil {
		ss = &seqSet{st: make([]sequential.State, len(s.cols)), first: make([]int64, len(s.cols))}
	}
	running := false
	for i, c := range s.cols {
		if ss.st[i].S > 0 && ss.first[i] < firstOffset-s.maxRun {
			ss.st[i] = sequential.State{} // a stale run: forgotten (and no longer held)
		}
		p := float64(rec.Vectors[c.PValue][embedding.TwoSamplePValue])
		next, step := c.Detector.Update(ss.st[i], p)
		if ss.st[i].S == 0 {
			ss.first[i] = firstOffset // a run starts (or not) with this window
		}
		v := rec.Vectors[c.Column]
		v[embedding.SeqStatistic] = float32(step.Statistic)
		v[embedding.SeqAlarm] = 0
		if step.Alarm {
			v[embedding.SeqAlarm] = 1
		}
		v[embedding.SeqRun] = float32(step.Run)
		ss.st[i] = next
		running = running || next.S > 0
	}
	if running {
		s.sets[rec.Set] = ss
	} else {
		delete(s.sets, rec.Set)
	}
}

// Hold is the first record of the oldest run in progress that a window closing from now on
// can continue (the commit must not pass it), or −1 when there is none. oldest is the first
// offset of the oldest open window (or the next offset): later windows start at or after
// it, so runs older than oldest − MaxRunRecords will be forgotten and are not held; they are
// dropped from memory.
func (s *Sequential) Hold(oldest int64) int64 {
	if s == nil {
		return -1
	}
	h := int64(-1)
	for set, ss := range s.sets {
		live := false
		for i, st := range ss.st {
			if st.S == 0 || ss.first[i] < oldest-s.maxRun {
				continue
			}
			live = true
			if h < 0 || ss.first[i] < h {
				h = ss.first[i]
			}
		}
		if !live {
			delete(s.sets, set) // its next window would forget every run: the same as none
		}
	}
	return h
}

// Running is the number of sets with a run in progress (the detector's memory).
func (s *Sequential) Running() int {
	if s == nil {
		return 0
	}
	return len(s.sets)
}

// ErrSequentialInWorker is returned by CheckWorkerSpec for a spec with sequential detection
// in a window mode that cannot hold its commit.
var ErrSequentialInWorker = errors.New("processor: sequential detection (two_sample ert) needs set or count windows in the worker")

// CheckWorkerSpec refuses, for the worker, a spec whose two_sample families have `ert` under
// time or session windows: the commit hold that makes the detector's state survive restarts
// (Sequential) is implemented for set and count windows only, and a worker must not publish
// alarms that depend on when it restarted.
func CheckWorkerSpec(emb *embedding.Embedder, mode window.Mode) error {
	if cols := emb.SequentialColumns(); len(cols) > 0 && mode != "" && mode != window.ModeSet && mode != window.ModeCount {
		return fmt.Errorf("%w: family %q sets ert and DISTFEAT_WINDOW is %s; use set or count windows, or remove ert "+
			"(its per-window p-values are unchanged) and run the detector over the feature records with `distfeat embed`",
			ErrSequentialInWorker, cols[0].Family, mode)
	}
	return nil
}
