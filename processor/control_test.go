package processor

import (
	"bytes"
	"testing"
	"time"

	"github.com/distfeat/distfeat/schema"
	"github.com/distfeat/distfeat/window"
)

// markerCounts is counts that also counts close markers.
type markerCounts struct {
	*counts
	markers map[string]int
}

func (m *markerCounts) OnCloseMarker(result string) { m.markers[result]++ }

// controlRec is the record a worker of group appends for req.
func controlRec(req CloseRequest, group string) Record {
	k, v, h := ControlRecord(req, group)
	return Record{Topic: topic, Key: k, Value: v, Headers: h}
}

// TestCloseMarkers is issue 13 item 4 at the processor: an idle close becomes a marker in
// the log, and the window closes where the marker is read, so a replay (from the start, or
// from any commit point) emits the same windows byte for byte — x/0 with n = 3 and the later
// window with n = 2, never x/0 with n = 5. Markers are never points or dead letters: a
// duplicate is stale, another group's is foreign, an unknown kind is ignored.
func TestCloseMarkers(t *testing.T) {
	e := newEnv(t, smallSpec)
	cfg := Config{Window: window.Config{Mode: "set", IdleTimeout: 2 * time.Second, MaxOpen: 100}, Group: "g"}
	clock := window.NewFakeClock(time.UnixMilli(1_700_000_000_000))
	p, c := e.newProc(cfg, clock)
	mc := &markerCounts{counts: c, markers: map[string]int{}}
	p.obs = mc

	x3 := jsonRec("x", `{"points": [[0.1, 0.2], [0.3, 0.4], [0.5, 0.6]]}`)
	log := numbered(0, x3)
	out := processAll(t, p, log, 0)
	if reqs := p.ExpireDue(); len(reqs) != 0 {
		t.Fatalf("ExpireDue before the idle timeout: %v", reqs)
	}
	clock.Advance(3 * time.Second)
	reqs := p.ExpireDue()
	if len(reqs) != 1 || reqs[0].Set != "x" || reqs[0].After != 0 {
		t.Fatalf("ExpireDue = %+v, want one request for x after offset 0", reqs)
	}
	if again := p.ExpireDue(); len(again) != 0 {
		t.Errorf("the same idle set requested twice: %+v", again)
	}
	unknown := jsonRec("x", ``)
	unknown.Headers = []Header{{Key: schema.HeaderControl, Value: []byte("compact")}}
	rest := []Record{
		controlRec(reqs[0], "g"),
		jsonRec("x", `{"points": [[0.7, 0.8], [0.9, 0.1]], "end": true}`),
		controlRec(reqs[0], "g"),     // a duplicate (a retried write): stale
		controlRec(reqs[0], "other"), // another group's: ignored
		unknown,
	}
	for i := range rest {
		rest[i].Offset = int64(1 + i)
	}
	log = append(log, rest...)
	out = append(out, processAll(t, p, rest, 1)...)
	feats, dead := split(out)
	if len(dead) != 0 {
		t.Errorf("%d dead letters from control records", len(dead))
	}
	wins := e.windowsBySet(feats)["x"]
	if len(wins) != 2 || wins[0].rec.N != 3 || wins[0].rec.Seq != 0 || wins[1].rec.N != 2 || wins[1].rec.Seq != 2<<20 {
		t.Fatalf("windows of x: %+v; want x/0 n=3 then x/%d n=2", wins, 2<<20)
	}
	if mc.markers[MarkerClosed] != 1 || mc.markers[MarkerStale] != 1 || mc.markers[MarkerForeign] != 1 || mc.markers[MarkerInvalid] != 1 {
		t.Errorf("marker results %v, want one each of closed, stale, foreign, invalid", mc.markers)
	}
	if c.points != 5 {
		t.Errorf("%d points counted, want 5 (markers are not points)", c.points)
	}

	// Replays, with a clock that never expires anything (a restart decides nothing by
	// processing time): from the start, the same feature records byte for byte; from the
	// commit point after each record, every window emitted again is byte-identical to the
	// first run's.
	got, _ := split(processAll(t, mustFresh(t, e, cfg), log, 1))
	if len(got) != len(feats) {
		t.Fatalf("replay from the start: %d feature records, want %d", len(got), len(feats))
	}
	first := map[string][]byte{}
	for i, f := range feats {
		first[string(f.Key)+"/"+headerOf(f.Headers, schema.HeaderWindowID)] = f.Value
		if !bytes.Equal(got[i].Value, f.Value) || headerOf(got[i].Headers, schema.HeaderWindowID) != headerOf(f.Headers, schema.HeaderWindowID) {
			t.Errorf("replay from the start: window %d differs", i)
		}
	}
	for cut := 0; cut <= len(log); cut++ {
		after, _ := split(processAllFrom(t, e, cfg, log, cut))
		for _, m := range after {
			id := string(m.Key) + "/" + headerOf(m.Headers, schema.HeaderWindowID)
			if v, ok := first[id]; !ok || !bytes.Equal(v, m.Value) {
				t.Errorf("restart after record %d: window %s emitted with other bytes than the first run (known: %v)", cut, id, ok)
			}
		}
	}
}

// mustFresh is a fresh processor with a clock that never expires anything.
func mustFresh(t *testing.T, e *env, cfg Config) *Processor {
	t.Helper()
	p, _ := e.newProc(cfg, window.NewFakeClock(time.UnixMilli(0)))
	return p
}

// processAllFrom processes log[:cut], "crashes", restores a new processor from the commit
// point and processes the records from the committed offset on, returning the second
// processor's output (what a restarted worker emits).
func processAllFrom(t *testing.T, e *env, cfg Config, log []Record, cut int) []Message {
	t.Helper()
	first := mustFresh(t, e, cfg)
	processAll(t, first, log[:cut], 1)
	cp := first.CommitPoint()
	again := mustFresh(t, e, cfg)
	if err := again.Restore(cp.Metadata, cp.Offset); err != nil {
		t.Fatal(err)
	}
	var tail []Record
	for _, r := range log {
		if r.Offset >= cp.Offset {
			tail = append(tail, r)
		}
	}
	return processAll(t, again, tail, 1)
}
