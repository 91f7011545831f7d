package window

import (
	"errors"
	"slices"
	"testing"
	"time"
)

// step is one Add and what it must return: exactly these windows, in this order.
type step struct {
	in   Input
	err  error // sentinel the error must wrap, or nil
	wins []win
}

// semCase is a hand-worked example of one mode's semantics.
type semCase struct {
	name  string
	cfg   Config
	steps []step
	flush []win // windows still open at the end, closed by Expire (any order)
}

func w(set string, seq uint64, start, end, n int64, reason Reason, first, last int64, ids ...int64) win {
	return win{set, seq, start, end, n, reason, first, last, ids}
}

func runSemCases(t *testing.T, cases []semCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tc.cfg.MaxOpen = max(tc.cfg.MaxOpen, 100)
			tc.cfg.IdleTimeout = time.Hour
			m, clock := newTestManager(t, tc.cfg)
			for i, s := range tc.steps {
				cs, err := m.Add(s.in)
				if s.err == nil && err != nil || s.err != nil && !errors.Is(err, s.err) {
					t.Fatalf("step %d: Add(%+v) error %v, want %v", i, s.in, err, s.err)
				}
				got := take(t, m, cs)
				if !slices.EqualFunc(got, s.wins, equalWin) {
					t.Fatalf("step %d: Add(%+v) closed\n  %v\nwant\n  %v", i, s.in, got, s.wins)
				}
				checkInvariants(t, m)
			}
			var o outcome
			flush(t, m, clock, &o)
			for i := range tc.flush {
				tc.flush[i].Reason = ReasonIdle
			}
			if d := diffWins(o.wins, tc.flush); d != "" {
				t.Fatalf("windows left open at the end:\n%s", d)
			}
		})
	}
}

func TestSetMode(t *testing.T) {
	runSemCases(t, []semCase{{
		name: "end closes after adding; end-only; unknown end; reopen",
		cfg:  Config{Mode: ModeSet},
		steps: []step{
			{in: in(0, 0, "a", 100, false, 1, 2)},
			{in: in(0, 2, "b", 101, false, 3)},
			{in: in(1, 0, "a", 105, true, 4), wins: []win{w("a", 0, 100, 105, 3, ReasonEnd, 0, 1, 1, 2, 4)}},
			{in: in(2, 0, "b", 90, true), wins: []win{w("b", 2, 101, 101, 1, ReasonEnd, 0, 2, 3)}},
			{in: in(3, 0, "c", 90, true), err: ErrEndWithoutWindow},
			{in: in(3, 0, "c", 90, false)}, // no points, no end: nothing
			{in: in(4, 3, "a", 200, false, 5)},
			{in: in(5, 0, "a", 150, false, 6)}, // Start/End follow arrival order
		},
		flush: []win{w("a", 4<<20|3, 200, 150, 2, "", 4, 5, 5, 6)},
	}, {
		name: "default mode is set",
		cfg:  Config{},
		steps: []step{
			{in: in(7, 1, "x", 1, true, 9), wins: []win{w("x", 7<<20|1, 1, 1, 1, ReasonEnd, 7, 7, 9)}},
		},
	}})
}

func TestCountMode(t *testing.T) {
	runSemCases(t, []semCase{{
		name: "tumbling: splits within a record, Seq of a window starting mid-batch, end emits the partial window",
		cfg:  Config{Mode: ModeCount, Size: 3},
		steps: []step{
			{in: in(0, 0, "a", 10, false, ids(1, 5)...), wins: []win{w("a", 0, 10, 10, 3, ReasonCount, 0, 0, 1, 2, 3)}},
			{in: in(1, 0, "b", 11, false, 6)},
			{in: in(2, 1, "a", 12, false, 7, 8), wins: []win{w("a", 3, 10, 12, 3, ReasonCount, 0, 2, 4, 5, 7)}},
			{in: in(3, 0, "a", 13, true), wins: []win{w("a", 2<<20|2, 12, 12, 1, ReasonEnd, 2, 3, 8)}},
			{in: in(4, 0, "a", 14, true), err: ErrEndWithoutWindow},
		},
		flush: []win{w("b", 1<<20, 11, 11, 1, "", 1, 1, 6)},
	}, {
		name: "sliding, Size 5 not a multiple of Hop 3",
		cfg:  Config{Mode: ModeCount, Size: 5, Hop: 3},
		steps: []step{
			{in: in(0, 0, "a", 0, false, 1, 2, 3, 4)},
			{in: in(1, 0, "a", 1, false, 5, 6, 7, 8), wins: []win{
				w("a", 0, 0, 1, 5, ReasonCount, 0, 1, 1, 2, 3, 4, 5),
				w("a", 3, 0, 1, 5, ReasonCount, 0, 1, 4, 5, 6, 7, 8),
			}},
			{in: in(2, 0, "a", 2, false, 9, 10, 11, 12), wins: []win{w("a", 1<<20|2, 1, 2, 5, ReasonCount, 1, 2, 7, 8, 9, 10, 11)}},
			// End: the earliest incomplete window [9, 14) holds 10, 11, 12.
			{in: in(3, 0, "a", 3, true), wins: []win{w("a", 2<<20|1, 2, 2, 3, ReasonEnd, 2, 3, 10, 11, 12)}},
		},
	}, {
		name: "sliding in panes of 2 (Size 6, Hop 4); end with nothing new emits nothing",
		cfg:  Config{Mode: ModeCount, Size: 6, Hop: 4},
		steps: []step{
			{in: in(0, 0, "a", 5, false, ids(1, 10)...), wins: []win{
				w("a", 0, 5, 5, 6, ReasonCount, 0, 0, 1, 2, 3, 4, 5, 6),
				w("a", 4, 5, 5, 6, ReasonCount, 0, 0, 5, 6, 7, 8, 9, 10),
			}},
			{in: in(1, 0, "a", 6, true)}, // window [8,14) holds 9, 10, both emitted already
			{in: in(2, 0, "a", 7, true), err: ErrEndWithoutWindow},
		},
	}, {
		name: "batch index offsets Seq",
		cfg:  Config{Mode: ModeCount, Size: 2},
		steps: []step{
			{in: in(5, 7, "a", 1, false, 1, 2, 3), wins: []win{w("a", 5<<20|7, 1, 1, 2, ReasonCount, 5, 5, 1, 2)}},
		},
		flush: []win{w("a", 5<<20|9, 1, 1, 1, "", 5, 5, 3)},
	}, {
		name: "end with points completing a window",
		cfg:  Config{Mode: ModeCount, Size: 2},
		steps: []step{
			{in: in(0, 0, "a", 1, false, 1)},
			{in: in(1, 0, "a", 2, true, 2, 3), wins: []win{
				w("a", 0, 1, 2, 2, ReasonCount, 0, 1, 1, 2),
				w("a", 1<<20|1, 2, 2, 1, ReasonEnd, 1, 1, 3),
			}},
			{in: in(2, 0, "a", 3, true, 4, 5), wins: []win{w("a", 2<<20, 3, 3, 2, ReasonCount, 2, 2, 4, 5)}},
		},
	}})
}

func TestTimeMode(t *testing.T) {
	runSemCases(t, []semCase{{
		name: "tumbling, no lateness",
		cfg:  Config{Mode: ModeTime, Size: 10},
		steps: []step{
			{in: in(0, 0, "a", 3, false, 1)},
			{in: in(1, 0, "b", 5, false, 2)},
			{in: in(2, 0, "a", 12, false, 3), wins: []win{
				w("a", 0, 0, 10, 1, ReasonWatermark, 0, 0, 1),
				w("b", 0, 0, 10, 1, ReasonWatermark, 1, 1, 2),
			}},
			{in: in(3, 0, "a", 8, false, 4), err: ErrLate},
			{in: in(3, 1, "a", 8, true), wins: nil}, // End without points: no effect in time mode
			{in: in(4, 0, "b", 31, false, 5), wins: []win{w("a", 1, 10, 20, 1, ReasonWatermark, 2, 2, 3)}},
		},
		flush: []win{w("b", 3, 30, 40, 1, "", 4, 4, 5)},
	}, {
		name: "hopping, Size 10 not a multiple of Hop 4; partly closed input is late",
		cfg:  Config{Mode: ModeTime, Size: 10, Hop: 4},
		steps: []step{
			{in: in(0, 0, "a", 9, false, 1)}, // windows 0 [0,10), 1 [4,14), 2 [8,18)
			{in: in(1, 0, "a", 13, false, 2), wins: []win{w("a", 0, 0, 10, 1, ReasonWatermark, 0, 0, 1)}},
			{in: in(2, 0, "a", 11, false, 3)},
			{in: in(3, 0, "a", 9, false, 4), err: ErrLate}, // [0,10) closed, [4,14) and [8,18) open
			{in: in(4, 0, "a", 20, false, 5), wins: []win{
				w("a", 1, 4, 14, 3, ReasonWatermark, 0, 2, 1, 2, 3),
				w("a", 2, 8, 18, 3, ReasonWatermark, 0, 2, 1, 2, 3),
			}},
		},
		flush: []win{
			w("a", 3, 12, 22, 2, "", 1, 4, 2, 5),
			w("a", 4, 16, 26, 1, "", 4, 4, 5),
			w("a", 5, 20, 30, 1, "", 4, 4, 5),
		},
	}, {
		name: "allowed lateness",
		cfg:  Config{Mode: ModeTime, Size: 10, AllowedLateness: 5},
		steps: []step{
			{in: in(0, 0, "a", 3, false, 1)},
			{in: in(1, 0, "b", 5, false, 2)},
			{in: in(2, 0, "a", 12, false, 3)},
			{in: in(3, 0, "a", 8, false, 4)}, // watermark 7: [0,10) still open
			{in: in(4, 0, "b", 31, false, 5), wins: []win{
				w("a", 0, 0, 10, 2, ReasonWatermark, 0, 3, 1, 4),
				w("b", 0, 0, 10, 1, ReasonWatermark, 1, 1, 2),
				w("a", 1, 10, 20, 1, ReasonWatermark, 2, 2, 3),
			}},
			{in: in(5, 0, "a", 21, false, 6)},
			{in: in(6, 0, "a", 15, false, 7), err: ErrLate},
		},
		flush: []win{w("b", 3, 30, 40, 1, "", 4, 4, 5), w("a", 2, 20, 30, 1, "", 5, 5, 6)},
	}, {
		name: "a watermark jump closes many windows in end-time order",
		cfg:  Config{Mode: ModeTime, Size: 10, AllowedLateness: 100},
		steps: []step{
			{in: in(0, 0, "z", 25, false, 1)},
			{in: in(1, 0, "y", 5, false, 2)},
			{in: in(2, 0, "x", 15, false, 3)},
			{in: in(3, 0, "x", 5, false, 4)},
			{in: in(4, 0, "z", 5, false, 5)},
			{in: in(5, 0, "y", 25, false, 6)},
			{in: in(6, 0, "w", 200, false, 7), wins: []win{
				w("x", 0, 0, 10, 1, ReasonWatermark, 3, 3, 4),
				w("y", 0, 0, 10, 1, ReasonWatermark, 1, 1, 2),
				w("z", 0, 0, 10, 1, ReasonWatermark, 4, 4, 5),
				w("x", 1, 10, 20, 1, ReasonWatermark, 2, 2, 3),
				w("y", 2, 20, 30, 1, ReasonWatermark, 5, 5, 6),
				w("z", 2, 20, 30, 1, ReasonWatermark, 0, 0, 1),
			}},
		},
		flush: []win{w("w", 20, 200, 210, 1, "", 6, 6, 7)},
	}, {
		name: "several batches of one record; FirstOffset is the earliest point's record",
		cfg:  Config{Mode: ModeTime, Size: 10, AllowedLateness: 50},
		steps: []step{
			{in: in(0, 0, "a", 7, false, 1)},
			{in: in(1, 0, "a", 2, false, 2)},
			{in: in(1, 1, "b", 60, false, 3), wins: []win{w("a", 0, 0, 10, 2, ReasonWatermark, 0, 1, 1, 2)}},
		},
		flush: []win{w("b", 6, 60, 70, 1, "", 1, 1, 3)},
	}})
}

func TestSessionMode(t *testing.T) {
	runSemCases(t, []semCase{{
		name: "gap closes; out-of-order joins; late",
		cfg:  Config{Mode: ModeSession, Gap: 10},
		steps: []step{
			{in: in(0, 0, "a", 100, false, 1)},
			{in: in(1, 0, "a", 105, false, 2)},
			{in: in(2, 0, "a", 130, false, 3), wins: []win{w("a", 0, 100, 105, 2, ReasonGap, 0, 1, 1, 2)}},
			{in: in(3, 0, "a", 125, false, 4)},               // 125 + 10 > 130: on time; joins [130]
			{in: in(4, 0, "a", 112, false, 5), err: ErrLate}, // 112 + 10 ≤ 130
			{in: in(5, 0, "b", 200, false, 6), wins: []win{w("a", 2<<20, 125, 130, 2, ReasonGap, 2, 3, 3, 4)}},
		},
		flush: []win{w("b", 5<<20, 200, 200, 1, "", 5, 5, 6)},
	}, {
		name: "a point bridging two sessions merges them; the first-arrived session keeps its Seq",
		cfg:  Config{Mode: ModeSession, Gap: 10, AllowedLateness: 20},
		steps: []step{
			{in: in(0, 0, "b", 200, false, 1)},
			{in: in(1, 0, "b", 215, false, 2)},
			{in: in(2, 0, "b", 208, false, 3)},
			{in: in(3, 0, "b", 209, true), wins: []win{w("b", 0, 200, 215, 3, ReasonEnd, 0, 3, 1, 2, 3)}},
			{in: in(4, 0, "b", 209, true), err: ErrEndWithoutWindow},
			{in: in(5, 0, "c", 300, false, 4)},
			{in: in(6, 0, "c", 285, false, 5)}, // a second session, before the first in event time
			{in: in(7, 0, "c", 292, false, 6)},
			{in: in(8, 0, "c", 330, false, 7), wins: []win{w("c", 5<<20, 285, 300, 3, ReasonGap, 5, 7, 4, 5, 6)}},
			{in: in(9, 2, "d", 331, true, 8, 9), wins: []win{w("d", 9<<20|2, 331, 331, 2, ReasonEnd, 9, 9, 8, 9)}},
		},
		flush: []win{w("c", 8<<20, 330, 330, 1, "", 8, 8, 7)},
	}})
}

// TestExpire: idle expiry in every mode, with the manual clock.
func TestExpire(t *testing.T) {
	for _, cfg := range []Config{
		{Mode: ModeSet},
		{Mode: ModeCount, Size: 3},
		{Mode: ModeCount, Size: 3, Hop: 1},
		{Mode: ModeTime, Size: 10, AllowedLateness: 1000},
		{Mode: ModeTime, Size: 10, Hop: 5, AllowedLateness: 1000},
		{Mode: ModeSession, Gap: 10, AllowedLateness: 1000},
	} {
		t.Run(string(cfg.Mode), func(t *testing.T) {
			cfg.MaxOpen, cfg.IdleTimeout = 100, 10*time.Second
			m, clock := newTestManager(t, cfg)
			var o outcome
			expire := func(wantSets ...string) {
				t.Helper()
				ws := take(t, m, m.Expire())
				var sets []string
				for _, x := range ws {
					if x.Reason != ReasonIdle {
						t.Fatalf("expired window %v has reason %s", x, x.Reason)
					}
					if !slices.Contains(sets, x.Set) {
						sets = append(sets, x.Set)
					}
				}
				if !slices.Equal(sets, wantSets) {
					t.Fatalf("Expire closed windows of %v, want %v", sets, wantSets)
				}
				o.wins = append(o.wins, ws...)
				checkInvariants(t, m)
			}
			feed(t, m, &o, in(0, 0, "a", 5, false, 1))
			clock.Advance(4 * time.Second)
			feed(t, m, &o, in(1, 0, "b", 6, false, 2), in(1, 1, "c", 6, false, 3))
			clock.Advance(4 * time.Second)
			expire() // a: 8 s
			feed(t, m, &o, in(2, 0, "c", 7, false, 4))
			clock.Advance(2 * time.Second)
			expire("a") // a: 10 s, b: 6 s, c: 2 s
			clock.Advance(4 * time.Second)
			expire("b") // b: 10 s, c: 6 s
			clock.Advance(4 * time.Second)
			expire("c")
			if m.Open() != 0 {
				t.Fatalf("Open() = %d after everything expired", m.Open())
			}
			ws := sortWins(o.wins)
			var got [][]int64
			for _, x := range ws {
				got = append(got, x.IDs)
			}
			switch cfg.Mode {
			case ModeTime:
				// A time window closed early leaves a tombstone: its points are now late…
				if _, err := m.Add(in(3, 0, "a", 7, false, 5)); !errors.Is(err, ErrLate) {
					t.Fatalf("point for an expired time window: %v, want ErrLate", err)
				}
				// …until the watermark passes it.
				feed(t, m, &o, in(4, 0, "z", 5000, false, 6))
				if len(m.tombs) != 0 {
					t.Fatalf("tombstones %v survive the watermark", m.tombs)
				}
			default:
				// Elsewhere the set simply starts a new window, with a new Seq.
				cs, err := m.Add(in(3, 0, "a", 7, true, 5))
				if err != nil || len(cs) != 1 || cs[0].Seq != 3<<20 {
					t.Fatalf("point after expiry: %v, %v", cs, err)
				}
			}
			if len(ws) == 0 || !slices.ContainsFunc(got, func(x []int64) bool { return slices.Contains(x, 4) && slices.Contains(x, 3) }) {
				t.Fatalf("expired windows %v: c's points 3 and 4 should share a window", ws)
			}
		})
	}
}

// TestEvict: opening a window beyond MaxOpen first emits the least recently updated set's
// windows with reason "evicted".
func TestEvict(t *testing.T) {
	t.Run("set", func(t *testing.T) {
		m, _ := newTestManager(t, Config{Mode: ModeSet, MaxOpen: 2})
		var o outcome
		feed(t, m, &o, in(0, 0, "a", 1, false, 1), in(1, 0, "b", 1, false, 2), in(2, 0, "a", 1, false, 3))
		cs, _ := m.Add(in(3, 0, "c", 1, false, 4))
		if got := take(t, m, cs); len(got) != 1 || !equalWin(got[0], w("b", 1<<20, 1, 1, 1, ReasonEvicted, 1, 1, 2)) {
			t.Fatalf("evicted %v, want b's window", got)
		}
		if m.Open() != 2 {
			t.Fatalf("Open() = %d", m.Open())
		}
	})
	t.Run("count", func(t *testing.T) {
		m, _ := newTestManager(t, Config{Mode: ModeCount, Size: 3, MaxOpen: 1})
		var o outcome
		feed(t, m, &o, in(0, 0, "a", 1, false, 1, 2), in(1, 0, "b", 2, false, 3))
		if len(o.wins) != 1 || !equalWin(o.wins[0], w("a", 0, 1, 1, 2, ReasonEvicted, 0, 0, 1, 2)) {
			t.Fatalf("evicted %v", o.wins)
		}
	})
	t.Run("time", func(t *testing.T) {
		m, _ := newTestManager(t, Config{Mode: ModeTime, Size: 10, AllowedLateness: 1000, MaxOpen: 1})
		var o outcome
		feed(t, m, &o, in(0, 0, "a", 5, false, 1), in(1, 0, "b", 5, false, 2), in(2, 0, "a", 6, false, 3), in(3, 0, "a", 15, false, 4))
		want := []win{w("a", 0, 0, 10, 1, ReasonEvicted, 0, 0, 1), w("b", 0, 0, 10, 1, ReasonEvicted, 1, 1, 2)}
		if d := diffWins(o.wins, want); d != "" || !slices.Equal(o.late, []string{"2/0/a"}) {
			t.Fatalf("evicted:\n%s late %v", d, o.late)
		}
	})
	t.Run("session", func(t *testing.T) {
		m, _ := newTestManager(t, Config{Mode: ModeSession, Gap: 10, AllowedLateness: 1000, MaxOpen: 1})
		var o outcome
		feed(t, m, &o, in(0, 0, "a", 100, false, 1), in(1, 0, "b", 100, false, 2), in(2, 0, "a", 101, false, 3))
		want := []win{w("a", 0, 100, 100, 1, ReasonEvicted, 0, 0, 1), w("b", 1<<20, 100, 100, 1, ReasonEvicted, 1, 1, 2)}
		if d := diffWins(o.wins, want); d != "" {
			t.Fatalf("evicted:\n%s", d)
		}
	})
}

// TestSafeOffsetExamples: worked examples of the cut (the property test covers the rest).
func TestSafeOffsetExamples(t *testing.T) {
	m, _ := newTestManager(t, Config{Mode: ModeSet, MaxOpen: 10})
	var o outcome
	feed(t, m, &o, in(0, 0, "a", 1, false, 1), in(1, 0, "b", 1, false, 2), in(2, 0, "a", 1, true, 3))
	// b is open from 1; a (closed) spans 0..2, so 1 would split it: the cut is 0.
	if c := m.SafeOffset(3); c != 0 {
		t.Fatalf("cut = %d, want 0", c)
	}
	feed(t, m, &o, in(3, 0, "b", 1, true), in(4, 0, "c", 1, false, 4))
	if c := m.SafeOffset(5); c != 4 {
		t.Fatalf("cut = %d, want 4 (c's first offset)", c)
	}
	feed(t, m, &o, in(5, 0, "c", 1, true), in(6, 0, "e", 1, false, 6))
	if c := m.SafeOffset(7); c != 6 {
		t.Fatalf("cut = %d, want 6 (e opened at 6; c spans 4..5, wholly before)", c)
	}
	feed(t, m, &o, in(7, 0, "f", 1, false, 7), in(8, 0, "e", 1, true))
	if c := m.SafeOffset(9); c != 6 {
		t.Fatalf("cut = %d, want 6 (f is open from 7, but e spans 6..8)", c)
	}
	feed(t, m, &o, in(9, 0, "f", 1, true), in(10, 0, "d", 1, true, 5))
	if c := m.SafeOffset(11); c != 11 {
		t.Fatalf("cut = %d, want 11 (nothing open or crossing)", c)
	}

	tm, _ := newTestManager(t, Config{Mode: ModeTime, Size: 10, MaxOpen: 10})
	feed(t, tm, &o, in(10, 0, "a", 5, false, 1), in(11, 0, "b", 12, false, 2), in(12, 0, "a", 13, false, 3))
	// a's [0,10) closed at 11; open: b [10,20) from 11, a [10,20) from 12.
	if c := tm.SafeOffset(13); c != 11 {
		t.Fatalf("time cut = %d, want 11", c)
	}
	if cp := tm.Checkpoint(); cp != "window/v1;m=time;c=11;n=13;w=size:10,hop:10,late:0;me=5;cme=13" {
		t.Fatalf("checkpoint %q", cp)
	}
}
