package processor

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/distfeat/distfeat/embedding"
	"github.com/distfeat/distfeat/schema"
	"github.com/distfeat/distfeat/window"
)

// seqEnv is a spec with one two_sample family with sequential detection at ERT 20 windows
// (alarms in a short stream), against a reference of 1000 points of N((0.5, 0.5), 0.1²I).
func seqEnv(t *testing.T) *env {
	t.Helper()
	r := rand.New(rand.NewPCG(37, 1))
	var b strings.Builder
	for range 10 {
		pts := make([][2]float64, 100)
		for i := range pts {
			pts[i] = [2]float64{0.5 + 0.1*r.NormFloat64(), 0.5 + 0.1*r.NormFloat64()}
		}
		line, _ := json.Marshal(map[string]any{"set": "ref", "points": pts})
		b.Write(append(line, '\n'))
	}
	ref := filepath.Join(t.TempDir(), "ref.jsonl")
	if err := os.WriteFile(ref, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return newEnv(t, fmt.Sprintf(`{"dim": 2, "families": [{"name": "drift", "kind": "two_sample", "reference": %q, "bands": 2, "frequencies": 5, "ert": 20}]}`, ref))
}

// seqStream is three sets interleaved, records of 10 points: "a" steady, "b" moved by 0.03
// in x (a third of a standard deviation) from its 4th window, "c" by 0.1 from its 2nd. In
// set mode (ends) every 3rd record of a set ends its window (30 points).
func seqStream(t *testing.T, records int, ends bool) []Record {
	r := rand.New(rand.NewPCG(37, 2))
	shift := map[string]struct {
		from int
		dx   float64
	}{"a": {1 << 30, 0}, "b": {3, 0.03}, "c": {1, 0.1}}
	sent := map[string]int{}
	var recs []Record
	for i := range records {
		set := []string{"a", "b", "c"}[r.IntN(3)]
		k := sent[set]
		sent[set]++
		dx := 0.0
		if k/3 >= shift[set].from {
			dx = shift[set].dx
		}
		pts := make([]float64, 20)
		for j := 0; j < 20; j += 2 {
			pts[j], pts[j+1] = 0.5+dx+0.1*r.NormFloat64(), 0.5+0.1*r.NormFloat64()
		}
		recs = append(recs, arrowRec(set, encodeArrow(t, schema.Batch{Set: set, Points: pts, N: 10, End: ends && k%3 == 2, EventTime: int64(i)})))
	}
	return numbered(0, recs...)
}

// TestSequentialReplay: the sequential detector's outputs (statistic, alarms, change-point
// runs) are the same with or without a restart at any commit point: for every k, a
// Processor restored from the commit point taken after k records and replaying from its
// offset emits byte-for-byte what the uninterrupted one emitted after it. The stream must
// alarm, and with tumbling windows the runs must hold the commit (below where the windows
// alone would put it).
func TestSequentialReplay(t *testing.T) {
	e := seqEnv(t)
	seqCol := -1
	for i, c := range e.emb.Columns() {
		if c.Name == "drift_seq" {
			seqCol = i
		}
	}
	for _, tc := range []struct {
		wc     window.Config
		maxRun int64 // 0: MaxRunRecords
	}{{wc: window.Config{Mode: "set"}}, {wc: window.Config{Mode: "count", Size: 30}}, {wc: window.Config{Mode: "count", Size: 30, Hop: 10}},
		{wc: window.Config{Mode: "set"}, maxRun: 12}} {
		wc := tc.wc
		newProc := func() *Processor {
			p, _ := e.newProc(Config{Window: wc}, nil)
			if tc.maxRun > 0 {
				p.seq.maxRun = tc.maxRun // runs longer than that are forgotten, with or without a restart
			}
			return p
		}
		t.Run(fmt.Sprintf("%s/%d/%d/maxrun%d", wc.Mode, wc.Size, wc.Hop, tc.maxRun), func(t *testing.T) {
			recs := seqStream(t, 150, wc.Mode == "set")
			ref := newProc()
			after, cps := referenceOutputs(t, ref, recs)
			alarms := map[string]int{}
			for set, ws := range e.windowsBySet(after[0]) {
				for _, w := range ws {
					if v := w.rec.Vectors[seqCol]; v[embedding.SeqAlarm] == 1 {
						alarms[set]++
					}
				}
			}
			held := 0
			plain := newProc() // the windows' own cut, for comparison
			for k := 1; k <= len(recs); k++ {
				if _, err := plain.Process(recs[k-1]); err != nil {
					t.Fatal(err)
				}
				if cps[k].Offset < plain.mgr.SafeOffset(plain.Next()) {
					held++
				}
			}
			t.Logf("%d windows, alarms per set %v; commit held by a run at %d of %d commit points", len(after[0]), alarms, held, len(recs))
			// Sliding windows hold the commit further back themselves (their first panes).
			if alarms["c"] == 0 || held == 0 && wc.Hop == 0 && tc.maxRun == 0 {
				t.Fatalf("the stream does not exercise the detector: alarms %v, %d held commits", alarms, held)
			}
			for k := 1; k < len(recs); k++ {
				p := newProc()
				if err := p.Restore(cps[k].Metadata, cps[k].Offset); err != nil {
					t.Fatalf("k=%d: Restore: %v", k, err)
				}
				got := processAll(t, p, recs[cps[k].Offset:], 7)
				if d := sameMessages(got, after[k]); d != "" {
					t.Fatalf("commit after %d records (offset %d): replay: %s", k, cps[k].Offset, d)
				}
			}
		})
	}
}

// TestSequentialQuietSetReleasesCommit: a set that leaves a run in progress and goes quiet
// holds the commit only until the partition has moved MaxRunRecords past the run (lowered
// here), and then its state is dropped.
func TestSequentialQuietSetReleasesCommit(t *testing.T) {
	e := seqEnv(t)
	p, _ := e.newProc(Config{}, nil)
	p.seq.maxRun = 20
	r := rand.New(rand.NewPCG(37, 3))
	window := func(set string, dx float64) Record {
		pts := make([]float64, 60)
		for j := 0; j < 60; j += 2 {
			pts[j], pts[j+1] = 0.5+dx+0.1*r.NormFloat64(), 0.5+0.1*r.NormFloat64()
		}
		return arrowRec(set, encodeArrow(t, schema.Batch{Set: set, Points: pts, N: 30, End: true}))
	}
	// "q": shifted windows until its statistic is positive (a run starts), then silence.
	var recs []Record
	for i := 0; i < 20 && p.seq.Running() == 0; i++ {
		recs = numbered(0, append(recs, window("q", 0.04))...)
		processAll(t, p, recs[len(recs)-1:], 1)
	}
	if p.seq.Running() != 1 {
		t.Fatal("set q never started a run")
	}
	first := p.seq.sets["q"].first[0]
	if cp := p.CommitPoint(); cp.Offset > first {
		t.Fatalf("commit %d passes q's run at %d", cp.Offset, first)
	}
	// Other sets' windows, steady; q's run stays held until 20 records past it.
	for k := 0; k < 40; k++ {
		recs = numbered(0, append(recs, window(fmt.Sprintf("s%d", k%3), 0))...)
		processAll(t, p, recs[len(recs)-1:], 1)
		cp := p.CommitPoint()
		held := cp.Offset <= first
		if want := p.Next() <= first+20; held != want {
			t.Fatalf("after %d records: commit %d, q's run at %d held %v, want %v", p.Next(), cp.Offset, first, held, want)
		}
	}
	if _, ok := p.seq.sets["q"]; ok {
		t.Error("q's stale run still in memory")
	}
}

// TestCheckWorkerSpec: sequential detection is refused under time and session windows.
func TestCheckWorkerSpec(t *testing.T) {
	e := seqEnv(t)
	for mode, ok := range map[window.Mode]bool{"": true, window.ModeSet: true, window.ModeCount: true, window.ModeTime: false, window.ModeSession: false} {
		if err := CheckWorkerSpec(e.emb, mode); (err == nil) != ok {
			t.Errorf("mode %q: error %v", mode, err)
		}
	}
}
