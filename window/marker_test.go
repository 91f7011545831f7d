package window

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"testing"
	"time"
)

// TestCloseMarker: ExpireDue asks once per idle period and closes nothing; a marker closes
// the set's windows (reason idle) only if the set has windows and got no points after the
// request; anything else is stale and changes nothing.
func TestCloseMarker(t *testing.T) {
	for _, cfg := range []Config{
		{Mode: ModeSet},
		{Mode: ModeCount, Size: 4},
		{Mode: ModeCount, Size: 4, Hop: 2},
		{Mode: ModeTime, Size: 10, AllowedLateness: 1000},
		{Mode: ModeTime, Size: 10, Hop: 5, AllowedLateness: 1000},
		{Mode: ModeSession, Gap: 10, AllowedLateness: 1000},
	} {
		t.Run(fmt.Sprintf("%s/%d/%d", cfg.Mode, cfg.Size, cfg.Hop), func(t *testing.T) {
			cfg.MaxOpen, cfg.IdleTimeout = 100, 2*time.Second
			m, clock := newTestManager(t, cfg)
			var o outcome
			due := func(want ...CloseRequest) {
				t.Helper()
				if got := m.ExpireDue(); !slices.Equal(got, want) {
					t.Fatalf("ExpireDue() = %v, want %v", got, want)
				}
			}
			marker := func(req CloseRequest, off int64, wantErr error) []win {
				t.Helper()
				cs, err := m.CloseMarker(req, off)
				if !errors.Is(err, wantErr) || err != nil && len(cs) != 0 {
					t.Fatalf("CloseMarker(%+v, %d) = %d windows, %v; want %v", req, off, len(cs), err, wantErr)
				}
				checkInvariants(t, m)
				return take(t, m, cs)
			}
			feed(t, m, &o, in(0, 0, "x", 1, false, 1), in(1, 0, "x", 2, false, 2), in(2, 0, "x", 3, false, 3))
			clock.Advance(time.Second)
			due()
			clock.Advance(time.Second)
			x := CloseRequest{Set: "x", After: 2, Seq: 0}
			due(x)
			due() // asked once
			open := m.Open()
			marker(CloseRequest{Set: "y", After: 2}, 3, ErrStaleMarker) // no window
			marker(CloseRequest{Set: "x", After: 1}, 4, ErrStaleMarker) // x got points at offset 2, after 1
			marker(CloseRequest{Set: "x", After: 5}, 5, ErrInvalidInput)
			if m.Open() != open {
				t.Fatalf("stale markers changed Open() from %d to %d", open, m.Open())
			}
			ws := marker(x, 6, nil)
			var pts []int64
			for _, w := range ws {
				if w.Reason != ReasonIdle || w.Set != "x" {
					t.Fatalf("marker closed %v", w)
				}
				pts = append(pts, w.IDs...)
			}
			if slices.Sort(pts); !slices.Equal(slices.Compact(pts), []int64{1, 2, 3}) || m.Open() != 0 {
				t.Fatalf("marker closed %v (Open() = %d after): want x's points 1..3, nothing open", ws, m.Open())
			}
			if cfg.Mode == ModeSet && (len(ws) != 1 || ws[0].Seq != 0 || ws[0].Last != 6) {
				t.Fatalf("set window %v: want seq 0 (the request's Seq) ending at the marker's offset 6", ws)
			}
			marker(x, 7, ErrStaleMarker) // a second marker for the same request

			// Points after the request make its marker stale; the set is asked again once idle again.
			feed(t, m, &o, in(10, 0, "y", 20, false, 4))
			clock.Advance(2 * time.Second)
			y := CloseRequest{Set: "y", After: 10, Seq: 10 << 20}
			due(y)
			feed(t, m, &o, in(11, 0, "y", 21, false, 5))
			marker(y, 12, ErrStaleMarker)
			due()
			clock.Advance(2 * time.Second)
			due(CloseRequest{Set: "y", After: 12, Seq: 10 << 20})
			if _, err := m.CloseMarker(y, 11); !errors.Is(err, ErrInvalidInput) {
				t.Fatalf("marker at an offset going backwards: %v, want ErrInvalidInput", err)
			}
		})
	}
}

// TestCloseMarkerIssueReplay is the reproduction of issue 13 item 4 in the window package:
// three points for x, x goes idle and its window is closed by a marker, two more points with
// End, then a crash before anything is committed. The replay reads the same records,
// marker included, and emits the very same two windows: x/0 with 3 points and x/(4<<20)
// with 2 — never x/0 with 5 points (what re-deciding the idle close by the clock gave).
func TestCloseMarkerIssueReplay(t *testing.T) {
	cfg := Config{Mode: ModeSet, MaxOpen: 100, IdleTimeout: 2 * time.Second}
	run := func(live bool) []win {
		m, clock := newTestManager(t, cfg)
		var o outcome
		feed(t, m, &o, in(0, 0, "x", 1, false, 1), in(1, 0, "x", 2, false, 2), in(2, 0, "x", 3, false, 3))
		req := CloseRequest{Set: "x", After: 2}
		if live {
			clock.Advance(2 * time.Second)
			if got := m.ExpireDue(); len(got) != 1 || got[0].Set != "x" || got[0].After != 2 || got[0].Seq != 0 {
				t.Fatalf("ExpireDue() = %v", got)
			}
		}
		cs, err := m.CloseMarker(req, 3)
		if err != nil {
			t.Fatalf("CloseMarker: %v", err)
		}
		o.wins = append(o.wins, take(t, m, cs)...)
		feed(t, m, &o, in(4, 0, "x", 4, false, 4), in(5, 0, "x", 5, true, 5))
		return o.wins
	}
	first, replay := run(true), run(false)
	want := []win{
		{Set: "x", Seq: 0, Start: 1, End: 3, N: 3, Reason: ReasonIdle, First: 0, Last: 3, IDs: []int64{1, 2, 3}},
		{Set: "x", Seq: 4 << 20, Start: 4, End: 5, N: 2, Reason: ReasonEnd, First: 4, Last: 5, IDs: []int64{4, 5}},
	}
	if d := diffWins(first, want); d != "" {
		t.Fatalf("first run:\n%s", d)
	}
	if d := diffWins(replay, first); d != "" {
		t.Fatalf("replay differs from the first run:\n%s", d)
	}
}

// logEntry is one record of a simulated input partition: a point record (its batches) or a
// close marker.
type logEntry struct {
	ins    []Input
	marker *CloseRequest
}

// TestCloseMarkerReplayProperty: random input in every mode, with processing time passing
// at random, ExpireDue's requests appended to the log as markers a few records later (as a
// produced marker lands behind records already in the partition), and everything closed by
// markers at the end. A second Manager reading the same log from the start (its clock never
// moves) emits exactly the same windows and finds the same markers stale; a restart from a
// checkpoint taken at a random record (Restore, then replay from the cut) completes the
// first run's output with identical windows (no time/session window twice).
func TestCloseMarkerReplayProperty(t *testing.T) {
	for _, mode := range []Mode{ModeSet, ModeCount, ModeTime, ModeSession} {
		t.Run(string(mode), func(t *testing.T) {
			markers, closed := 0, 0
			for seed := uint64(0); seed < 100; seed++ {
				rng := rand.New(rand.NewPCG(seed, 13))
				cfg := modeConfig(rng, mode, false)
				cfg.IdleTimeout = 2 * time.Second
				recs := genInputs(rng, gen{sets: 1 + rng.IntN(5), records: 30 + rng.IntN(50), maxBatches: 2, maxPoints: 4, endProb: 0.05, step: 3, jitter: 10})
				nm, nc := markerReplayCheck(t, cfg, recs, rng, fmt.Sprintf("seed %d", seed))
				markers += nm
				closed += nc
			}
			t.Logf("%d markers, %d of them closed windows", markers, closed)
			if closed == 0 {
				t.Fatal("no marker closed a window")
			}
		})
	}
}

// markerReplayCheck runs one random case of TestCloseMarkerReplayProperty and returns the
// number of markers and of markers that closed windows.
func markerReplayCheck(t *testing.T, cfg Config, recs []Input, rng *rand.Rand, name string) (int, int) {
	t.Helper()
	m, clock := newTestManager(t, cfg)
	var log []logEntry
	var first outcome
	var stale []int64
	nMarkers, nClosed := 0, 0
	apply := func(m *Manager[*fakeSketch], o *outcome, stale *[]int64, off int64, e logEntry) {
		if e.marker == nil {
			feed(t, m, o, e.ins...)
			return
		}
		cs, err := m.CloseMarker(*e.marker, off)
		switch {
		case errors.Is(err, ErrStaleMarker):
			*stale = append(*stale, off)
		case err != nil:
			t.Fatalf("CloseMarker: %v", err)
		}
		o.wins = append(o.wins, take(t, m, cs)...)
		checkInvariants(t, m)
	}
	type pendingReq struct {
		req   CloseRequest
		after int // records still to pass before the marker lands
	}
	var pending []pendingReq
	appendEntry := func(e logEntry) {
		off := int64(len(log))
		for i := range e.ins {
			e.ins[i].Offset = off
		}
		log = append(log, e)
		if e.marker != nil {
			nMarkers++
			before := len(first.wins)
			apply(m, &first, &stale, off, e)
			if len(first.wins) > before {
				nClosed++
			}
			return
		}
		apply(m, &first, &stale, off, e)
	}
	land := func(all bool) {
		var keep []pendingReq
		for _, p := range pending {
			if p.after <= 0 || all {
				appendEntry(logEntry{marker: &p.req})
			} else {
				p.after--
				keep = append(keep, p)
			}
		}
		pending = keep
	}
	restartAt := rng.IntN(len(recs)) // checkpoint before the record with this index
	var cut int64
	var cp string
	var firstBefore int
	for i := 0; i < len(recs); {
		j := i
		for j < len(recs) && recs[j].Offset == recs[i].Offset {
			j++
		}
		clock.Advance(time.Duration(rng.IntN(1500)) * time.Millisecond)
		for _, r := range m.ExpireDue() {
			pending = append(pending, pendingReq{r, rng.IntN(3)})
		}
		land(false)
		if i <= restartAt && restartAt < j {
			cut = m.SafeOffset(int64(len(log)))
			cp = m.Checkpoint()
			firstBefore = len(first.wins)
		}
		appendEntry(logEntry{ins: slices.Clone(recs[i:j])})
		i = j
	}
	for range 3 { // close everything by markers
		land(true)
		clock.Advance(time.Hour)
		for _, r := range m.ExpireDue() {
			pending = append(pending, pendingReq{r, 0})
		}
		land(true)
	}
	if m.Open() != 0 {
		t.Fatalf("%d windows still open after closing everything by markers", m.Open())
	}

	// The same log from the start.
	m2, _ := newTestManager(t, cfg)
	var again outcome
	var stale2 []int64
	for off, e := range log {
		apply(m2, &again, &stale2, int64(off), e)
	}
	if d := diffWins(again.wins, first.wins); d != "" || !slices.Equal(stale, stale2) {
		t.Fatalf("%+v: reading the log again differs:\n%s stale markers %v, first run %v", cfg, d, stale2, stale)
	}
	// A restart from the checkpoint taken before record restartAt.
	m3, _ := newTestManager(t, cfg)
	if err := m3.Restore(cp, -1); err != nil {
		t.Fatalf("Restore(%q): %v", cp, err)
	}
	resumed := outcome{wins: slices.Clone(first.wins[:firstBefore]), late: first.late, ends: first.ends}
	var stale3 []int64
	for off := cut; off < int64(len(log)); off++ {
		var o outcome
		apply(m3, &o, &stale3, off, log[off])
		resumed.wins = append(resumed.wins, o.wins...)
	}
	if testing.Verbose() && os.Getenv("MARKER_DEBUG") == name {
		for off, e := range log {
			if e.marker != nil {
				t.Logf("%d: marker %+v", off, *e.marker)
			} else {
				for _, x := range e.ins {
					t.Logf("%d: %s t=%d n=%d end=%v", off, x.Set, x.EventTime, len(x.Points)/2, x.End)
				}
			}
		}
		t.Logf("stale first %v, resumed %v", stale, stale3)
		for _, w := range first.wins {
			t.Logf("first %v", w)
		}
		for _, w := range resumed.wins {
			t.Logf("resumed %v", w)
		}
	}
	compareReplay(t, cfg, resumed, first, fmt.Sprintf("%s: restart at cut %d, checkpoint %q", name, cut, cp))
	return nMarkers, nClosed
}
