package window

import (
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"
)

// fakeSketch records exactly which points were added: each point is (id, −id) (Dim 2), so a
// split that cuts a point in half is caught. A sketch handed out in a Closed is marked out
// until released: the Manager must not touch it meanwhile.
type fakeSketch struct {
	ids []int64
	out bool
}

func newFake() *fakeSketch { return &fakeSketch{} }

func (f *fakeSketch) Add(u []float64) {
	if f.out {
		panic("Add on a sketch handed out to the caller")
	}
	if len(u)%2 != 0 {
		panic(fmt.Sprintf("Add of %d values: not whole points", len(u)))
	}
	for i := 0; i < len(u); i += 2 {
		if u[i+1] != -u[i] {
			panic(fmt.Sprintf("misaligned point (%v, %v)", u[i], u[i+1]))
		}
		f.ids = append(f.ids, int64(u[i]))
	}
}

func (f *fakeSketch) Merge(o *fakeSketch) error {
	if f.out || o.out {
		panic("Merge involving a sketch handed out to the caller")
	}
	f.ids = append(f.ids, o.ids...)
	return nil
}

func (f *fakeSketch) Count() int64   { return int64(len(f.ids)) }
func (f *fakeSketch) Reset()         { f.ids, f.out = f.ids[:0], false }
func (f *fakeSketch) SizeBytes() int { return 32 + 8*len(f.ids) }

// pts returns the points of ids as Input.Points (Dim 2).
func pts(ids ...int64) []float64 {
	u := make([]float64, 0, 2*len(ids))
	for _, id := range ids {
		u = append(u, float64(id), -float64(id))
	}
	return u
}

// ids returns n consecutive ids from first.
func ids(first int64, n int) []int64 {
	out := make([]int64, n)
	for i := range out {
		out[i] = first + int64(i)
	}
	return out
}

// in builds an Input.
func in(off int64, idx int, set string, t int64, end bool, ids ...int64) Input {
	return Input{Offset: off, Index: idx, Set: set, Points: pts(ids...), Dim: 2, EventTime: t, End: end}
}

// win is a Closed reduced to comparable values.
type win struct {
	Set         string
	Seq         uint64
	Start, End  int64
	N           int64
	Reason      Reason
	First, Last int64
	IDs         []int64 // sorted
}

func (w win) String() string {
	return fmt.Sprintf("{%s seq=%d [%d,%d] n=%d %s off=%d..%d ids=%v}", w.Set, w.Seq, w.Start, w.End, w.N, w.Reason, w.First, w.Last, w.IDs)
}

func (w win) key() string { return fmt.Sprintf("%s/%d", w.Set, w.Seq) }

func equalWin(a, b win) bool {
	return a.Set == b.Set && a.Seq == b.Seq && a.Start == b.Start && a.End == b.End && a.N == b.N &&
		a.Reason == b.Reason && a.First == b.First && a.Last == b.Last && slices.Equal(a.IDs, b.IDs)
}

// take converts closed windows to wins, checks N against the sketch, and releases them.
func take(t testing.TB, m *Manager[*fakeSketch], cs []Closed[*fakeSketch]) []win {
	t.Helper()
	var out []win
	for _, c := range cs {
		c.Sketch.out = true
		got := slices.Clone(c.Sketch.ids)
		slices.Sort(got)
		if int64(len(got)) != c.N {
			t.Errorf("window %s/%d: N=%d but the sketch holds %d points", c.Set, c.Seq, c.N, len(got))
		}
		out = append(out, win{c.Set, c.Seq, c.Start, c.End, c.N, c.Reason, c.FirstOffset, c.LastOffset, got})
		m.Release(c.Sketch)
	}
	return out
}

// newTestManager returns a Manager over fake sketches with a fake clock.
func newTestManager(t testing.TB, cfg Config) (*Manager[*fakeSketch], *FakeClock) {
	t.Helper()
	clock := NewFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	m, err := NewManager(cfg, newFake, clock)
	if err != nil {
		t.Fatalf("NewManager(%+v): %v", cfg, err)
	}
	return m, clock
}

// outcome is what a run produced.
type outcome struct {
	wins []win
	late []string // "offset/index/set" of late inputs
	ends []string // "offset/index/set" of ends without a window
}

func inputID(x Input) string { return fmt.Sprintf("%d/%d/%s", x.Offset, x.Index, x.Set) }

// feed adds inputs and collects the outcome, checking invariants after each input.
func feed(t testing.TB, m *Manager[*fakeSketch], o *outcome, inputs ...Input) {
	t.Helper()
	for _, x := range inputs {
		cs, err := m.Add(x)
		switch {
		case err == nil:
		case errors.Is(err, ErrLate):
			o.late = append(o.late, inputID(x))
		case errors.Is(err, ErrEndWithoutWindow):
			o.ends = append(o.ends, inputID(x))
		default:
			t.Fatalf("Add(%+v): %v", x, err)
		}
		if err != nil && len(cs) != 0 {
			t.Fatalf("Add returned windows together with error %v", err)
		}
		o.wins = append(o.wins, take(t, m, cs)...)
		checkInvariants(t, m)
	}
}

// flush closes everything still open through idle expiry.
func flush(t testing.TB, m *Manager[*fakeSketch], clock *FakeClock, o *outcome) {
	t.Helper()
	clock.Advance(1000 * time.Hour)
	o.wins = append(o.wins, take(t, m, m.Expire())...)
	if m.Open() != 0 || len(m.keys) != 0 {
		t.Fatalf("after expiring everything: Open()=%d, %d sets left", m.Open(), len(m.keys))
	}
	checkInvariants(t, m)
}

// sortWins orders windows by set, then seq (for comparing runs regardless of emit order).
func sortWins(ws []win) []win {
	ws = slices.Clone(ws)
	sort.Slice(ws, func(i, j int) bool {
		if ws[i].Set != ws[j].Set {
			return ws[i].Set < ws[j].Set
		}
		return ws[i].Seq < ws[j].Seq
	})
	return ws
}

// diffWins reports the difference between two window lists (order-insensitive), or "".
func diffWins(got, want []win) string {
	g, w := sortWins(got), sortWins(want)
	var b strings.Builder
	i, j := 0, 0
	for i < len(g) || j < len(w) {
		switch {
		case j == len(w) || (i < len(g) && (g[i].Set < w[j].Set || g[i].Set == w[j].Set && g[i].Seq < w[j].Seq)):
			fmt.Fprintf(&b, "  unexpected %v\n", g[i])
			i++
		case i == len(g) || (g[i].Set > w[j].Set || g[i].Set == w[j].Set && g[i].Seq > w[j].Seq):
			fmt.Fprintf(&b, "  missing    %v\n", w[j])
			j++
		default:
			if !equalWin(g[i], w[j]) {
				fmt.Fprintf(&b, "  got  %v\n  want %v\n", g[i], w[j])
			}
			i++
			j++
		}
	}
	return b.String()
}

// checkInvariants recomputes the Manager's bookkeeping from scratch.
func checkInvariants(t testing.TB, m *Manager[*fakeSketch]) {
	t.Helper()
	total, lru := 0, 0
	for k := m.lruHead; k != nil; k = k.next {
		lru++
		if m.keys[k.set] != k {
			t.Fatalf("LRU holds set %q that is not in the map", k.set)
		}
		if k.next != nil && k.next.last.After(k.last) {
			t.Fatalf("LRU out of order at %q", k.set)
		}
	}
	if lru != len(m.keys) {
		t.Fatalf("LRU has %d sets, map %d", lru, len(m.keys))
	}
	minFirst := int64(1<<63 - 1)
	for _, k := range m.keys {
		if len(k.panes) == 0 {
			t.Fatalf("set %q kept without panes", k.set)
		}
		var open int
		switch m.mode {
		case ModeSet:
			open = 1
		case ModeCount:
			lo := int64(0)
			if k.pos >= m.size {
				lo = floorDiv(k.pos-m.size, m.hop) + 1
			}
			open = int(floorDiv(k.pos-1, m.hop) - lo + 1)
		case ModeTime:
			ws := map[int64]bool{}
			for i, p := range k.panes {
				if i > 0 && k.panes[i-1].idx >= p.idx {
					t.Fatalf("time panes of %q out of order", k.set)
				}
				for w := max(m.kLo(p.idx), k.emitted+1); w <= m.kHi(p.idx); w++ {
					ws[w] = true
				}
			}
			open = len(ws)
			if b := m.timeBuckets[k.nextEnd]; k.bucketIx < 0 || k.bucketIx >= len(b) || b[k.bucketIx] != k ||
				!slices.Contains(m.timeEnds.items, k.nextEnd) {
				t.Fatalf("set %q not filed under its next window end", k.set)
			}
			if want := max(k.emitted+1, m.kLo(k.panes[0].idx))*m.hop + m.size; k.nextEnd != want {
				t.Fatalf("set %q filed under %d, its next window ends at %d", k.set, k.nextEnd, want)
			}
		case ModeSession:
			open = len(k.panes)
			for i, p := range k.panes {
				if i > 0 && k.panes[i-1].maxT+m.gap > p.minT {
					t.Fatalf("sessions of %q overlap: %d..%d and %d..%d", k.set, k.panes[i-1].minT, k.panes[i-1].maxT, p.minT, p.maxT)
				}
				if p.heapIx < 0 || m.sessHeap.items[p.heapIx] != p {
					t.Fatalf("session of %q not in the heap", k.set)
				}
			}
		}
		if open != k.open {
			t.Fatalf("set %q: open=%d, recomputed %d", k.set, k.open, open)
		}
		total += open
		for _, p := range k.panes {
			if p.dead {
				t.Fatalf("set %q holds a dead pane", k.set)
			}
			minFirst = min(minFirst, p.firstOff)
		}
	}
	if total != m.open {
		t.Fatalf("Open()=%d, recomputed %d", m.open, total)
	}
	if f := m.fifo.front(); (f == nil) != (len(m.keys) == 0) || (f != nil && f.firstOff != minFirst) {
		t.Fatalf("fifo front disagrees with the panes (min first offset %d)", minFirst)
	}
}
