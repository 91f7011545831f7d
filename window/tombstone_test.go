package window

import (
	"errors"
	"fmt"
	"runtime"
	"slices"
	"testing"
)

// TestTombstonesBounded: the reproduction in miniature — 100 000 distinct sets with
// one event time in a one-hour time window, MaxOpen = 100. Every set after the hundredth
// evicts one, and the watermark never moves, so before the bound every evicted set left a
// tombstone until the end of the run (about 100 000 of them, ≥ 10 MB). Now tombstones stay
// within tombsPerOpen × MaxOpen, the live heap of the Manager stays within a budget of
// 1 KiB per open window or tombstone (a window here is a key, a pane and a one-point fake
// sketch, ≈ 400 B; a tombstone a map entry, a heap entry and its name, ≈ 100 B), every point
// is emitted exactly once, and no (set, seq) is emitted twice.
func TestTombstonesBounded(t *testing.T) {
	const keys, maxOpen = 100_000, 100
	cfg := Config{Mode: ModeTime, Size: 3_600_000, MaxOpen: maxOpen, IdleTimeout: 1 << 62}
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	m, _ := newTestManager(t, cfg)
	names := make([]string, keys) // allocated up front: set names are the caller's memory
	for i := range names {
		names[i] = fmt.Sprintf("k%07d", i)
	}
	seen := map[string]bool{}
	emitted := 0
	for i, name := range names {
		cs, err := m.Add(in(int64(i), 0, name, 1_700_000_000_000, false, int64(i)))
		if err != nil {
			t.Fatalf("Add %s: %v", name, err)
		}
		for _, w := range take(t, m, cs) {
			if seen[w.key()] {
				t.Fatalf("window %s emitted twice", w.key())
			}
			seen[w.key()] = true
			emitted += int(w.N)
		}
		if len(m.tombs) > tombsPerOpen*maxOpen || m.tombHeap.len() > 2*len(m.tombs)+64 {
			t.Fatalf("after %d sets: %d tombstones (%d heap entries), bound %d", i+1, len(m.tombs), m.tombHeap.len(), tombsPerOpen*maxOpen)
		}
	}
	seen = nil
	runtime.GC()
	runtime.ReadMemStats(&after)
	held := int64(after.HeapAlloc) - int64(before.HeapAlloc) - int64(keys*(16+16)) // minus the names and their headers
	budget := int64((maxOpen + tombsPerOpen*maxOpen) * 1024)
	t.Logf("%d sets: %d open, %d tombstones, live heap of the manager ≈ %d B (budget %d B)", keys, m.Open(), len(m.tombs), held, budget)
	if held > budget {
		t.Errorf("the Manager holds ≈ %d B of heap after %d sets, budget %d B", held, keys, budget)
	}
	if emitted+m.Open() != keys {
		t.Errorf("%d points emitted + %d open windows, want %d", emitted, m.Open(), keys)
	}
	runtime.KeepAlive(m)
	runtime.KeepAlive(names)
}

// TestTombstoneOverflow: the rule for forgotten tombstones (two kept here). A set whose
// tombstone is kept is late for its closed windows; a set whose tombstone was forgotten, and
// any set that opens a window in the forgotten range, gets a reopen id (top bit set) instead
// of the window number, so no (set, id) is emitted twice; windows after the forgotten range,
// and all windows once the watermark passes it, get their window numbers again. A set that
// is open keeps its own record of what it closed even when its tombstone is forgotten.
func TestTombstoneOverflow(t *testing.T) {
	cfg := Config{Mode: ModeTime, Size: 10, AllowedLateness: 1000, MaxOpen: 1, IdleTimeout: 1 << 62}
	m, _ := newTestManager(t, cfg)
	m.maxTombs = 2
	var got []win
	add := func(x Input, wantErr error) {
		t.Helper()
		cs, err := m.Add(x)
		if !errors.Is(err, wantErr) {
			t.Fatalf("Add(%s at t=%d): %v, want %v", x.Set, x.EventTime, err, wantErr)
		}
		got = append(got, take(t, m, cs)...)
		checkInvariants(t, m)
	}
	add(in(0, 0, "a", 5, false, 1), nil)
	add(in(1, 0, "b", 5, false, 2), nil) // evicts a: tombstone a
	add(in(2, 0, "c", 5, false, 3), nil) // evicts b: tombstone b
	add(in(3, 0, "d", 5, false, 4), nil) // evicts c: tombstone c, a's is forgotten
	if _, ok := m.tombs["a"]; ok || m.forgot != 0 {
		t.Fatalf("tombstones %v, forgotten up to %d: want a's forgotten (window 0)", m.tombs, m.forgot)
	}
	add(in(4, 0, "c", 6, false, 5), ErrLate) // c's tombstone is kept
	add(in(5, 0, "a", 6, false, 6), nil)     // a returns: reopen id; evicts d, b's tombstone is forgotten
	add(in(6, 0, "e", 55, false, 7), nil)    // window 5, after the forgotten range: its number; evicts a
	add(in(7, 0, "f", 7, false, 8), nil)     // new set in the forgotten range: reopen id; evicts e
	add(in(8, 0, "g", 2000, false, 9), nil)  // watermark 1000 closes every window so far; evicts f
	add(in(9, 0, "h", 1995, false, 10), nil) // no forgotten range any more: window number; evicts g
	if m.forgot != noWindow {
		t.Fatalf("forgotten range %d survives the watermark", m.forgot)
	}
	// An open set whose tombstone is forgotten still rejects its closed windows.
	m2, _ := newTestManager(t, Config{Mode: ModeTime, Size: 10, AllowedLateness: 1000, MaxOpen: 2, IdleTimeout: 1 << 62})
	m2.maxTombs = 1
	for i, x := range []Input{in(0, 0, "p", 5, false, 1), in(1, 0, "q", 5, false, 2), in(2, 0, "r", 5, false, 3),
		in(3, 0, "p", 15, false, 4), in(4, 0, "s", 15, false, 5)} { // p evicted, p reopens at window 1, s evicts q: p's tombstone forgotten
		if _, err := m2.Add(x); err != nil {
			t.Fatalf("input %d: %v", i, err)
		}
	}
	if _, ok := m2.tombs["p"]; ok || m2.keys["p"] == nil {
		t.Fatalf("setup: p open %v, tombstones %v", m2.keys["p"] != nil, m2.tombs)
	}
	if _, err := m2.Add(in(5, 0, "p", 5, false, 6)); !errors.Is(err, ErrLate) {
		t.Fatalf("open set, forgotten tombstone, closed window: %v, want ErrLate", err)
	}

	want := map[string]uint64{ // set/first id → expected seq
		"a/1": 0, "b/2": 0, "c/3": 0, "d/4": 0, "a/6": reopenSeq(0, 5, 0), "e/7": 5, "f/8": reopenSeq(0, 7, 0), "g/9": 200,
	}
	seen := map[string]bool{}
	for _, w := range got {
		if seen[w.key()] {
			t.Fatalf("(set, seq) %s emitted twice: %v", w.key(), got)
		}
		seen[w.key()] = true
		k := fmt.Sprintf("%s/%d", w.Set, w.IDs[0])
		s, ok := want[k]
		if !ok || s != w.Seq {
			t.Errorf("window %v: want seq %d", w, s)
		}
		delete(want, k)
	}
	if len(want) != 0 {
		t.Errorf("windows not emitted: %v (got %v)", want, got)
	}
	if !slices.ContainsFunc(got, func(w win) bool { return w.Seq>>63 == 1 && w.Start == 0 && w.End == 10 }) {
		t.Errorf("no reopened window keeps its time bounds [0,10): %v", got)
	}
}
