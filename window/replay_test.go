package window

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// TestReplayProperty: for random input in every mode, a run interrupted by restarts — at
// random record boundaries take C = SafeOffset(next) and cp = Checkpoint(), start a fresh
// Manager, Restore(cp, …) and replay from offset C — emits, over all its incarnations, exactly
// the windows of an uninterrupted run: every window at least once and identical each time
// (by Seq and by content). Time and session modes must not emit a window twice nor report a
// late input twice; set and count modes re-emit windows that closed after the cut,
// identically. Restarts are chained (the next restart may come while the previous replay is
// still below its checkpoint), and ends without a window are reported exactly once.
//
// Set and count runs use a small MaxOpen so that eviction happens (it is replay-stable
// there); time and session runs do not evict, because which windows a replay must evict
// depends on windows that opened before the cut (see the package doc). Idle expiry is not
// exercised mid-run: it is processing-time by design. Both runs expire everything at the end,
// so the windows still open at the end are compared as well.
func TestReplayProperty(t *testing.T) {
	for _, mode := range []Mode{ModeSet, ModeCount, ModeTime, ModeSession} {
		t.Run(string(mode), func(t *testing.T) {
			restarts, reEmitted := 0, 0
			for seed := uint64(0); seed < 150; seed++ {
				rng := rand.New(rand.NewPCG(seed, 2))
				evict := (mode == ModeSet || mode == ModeCount) && rng.IntN(2) == 0
				cfg := modeConfig(rng, mode, evict)
				inputs := genInputs(rng, gen{sets: 1 + rng.IntN(6), records: 40 + rng.IntN(60), maxBatches: 3, maxPoints: 5, endProb: 0.08, step: 3, jitter: 15})
				r, n := replayCheck(t, cfg, inputs, rng)
				restarts += r
				reEmitted += n
			}
			t.Logf("%d restarts, %d windows emitted twice", restarts, reEmitted)
			if restarts == 0 {
				t.Fatal("no restart was exercised")
			}
		})
	}
}

// TestReplayExplicitUntil restarts once with replayUntil passed explicitly (= next), as the
// contract describes, rather than taken from the checkpoint.
func TestReplayExplicitUntil(t *testing.T) {
	for _, mode := range []Mode{ModeSet, ModeCount, ModeTime, ModeSession} {
		t.Run(string(mode), func(t *testing.T) {
			for seed := uint64(0); seed < 40; seed++ {
				rng := rand.New(rand.NewPCG(seed, 3))
				cfg := modeConfig(rng, mode, false)
				inputs := genInputs(rng, gen{sets: 3, records: 80, maxBatches: 2, maxPoints: 4, endProb: 0.05, step: 2, jitter: 12})
				want := runOnce(t, cfg, inputs)
				cutAt := inputs[len(inputs)/2].Offset
				m, _ := newTestManager(t, cfg)
				var got outcome
				var rest []Input
				for _, x := range inputs {
					if x.Offset < cutAt {
						feed(t, m, &got, x)
					}
				}
				c := m.SafeOffset(cutAt)
				cp := m.Checkpoint()
				m2, clock := newTestManager(t, cfg)
				if err := m2.Restore(cp, cutAt); err != nil {
					t.Fatalf("Restore(%q): %v", cp, err)
				}
				for _, x := range inputs {
					if x.Offset >= c {
						rest = append(rest, x)
					}
				}
				feed(t, m2, &got, rest...)
				flush(t, m2, clock, &got)
				compareReplay(t, cfg, got, want, fmt.Sprintf("seed %d, cut %d (next %d)", seed, c, cutAt))
			}
		})
	}
}

// runOnce runs inputs uninterrupted and expires everything at the end.
func runOnce(t *testing.T, cfg Config, inputs []Input) outcome {
	t.Helper()
	m, clock := newTestManager(t, cfg)
	var o outcome
	feed(t, m, &o, inputs...)
	flush(t, m, clock, &o)
	return o
}

// replayCheck runs inputs with random chained restarts and compares with an uninterrupted
// run. It returns the number of restarts and of windows emitted more than once.
func replayCheck(t *testing.T, cfg Config, inputs []Input, rng *rand.Rand) (int, int) {
	t.Helper()
	want := runOnce(t, cfg, inputs)

	var offs []int64 // distinct record offsets, in order
	for _, x := range inputs {
		if len(offs) == 0 || offs[len(offs)-1] != x.Offset {
			offs = append(offs, x.Offset)
		}
	}
	// Restart points: record positions (indexes into offs), increasing.
	var stops []int
	for i := range 1 + rng.IntN(4) {
		_ = i
		stops = append(stops, 1+rng.IntN(len(offs)))
	}
	slices.Sort(stops)

	var got outcome
	var log []string
	m, clock := newTestManager(t, cfg)
	from := int64(-1) // replay start offset
	for _, stop := range stops {
		next := offs[len(offs)-1] + 1
		if stop < len(offs) {
			next = offs[stop]
		}
		var lastFed int64 = -1
		for _, x := range inputs {
			if x.Offset >= from && x.Offset < next {
				feed(t, m, &got, x)
				lastFed = x.Offset
			}
		}
		if lastFed >= 0 && rng.IntN(2) == 0 {
			next = lastFed + 1 // what a consumer passes: the last record's offset + 1
		}
		c := m.SafeOffset(next)
		cp := m.Checkpoint()
		log = append(log, fmt.Sprintf("restart: next=%d cut=%d cp=%q", next, c, cp))
		checkCut(t, cfg, m, c, next, want.wins)
		if len(cp) > 512 {
			t.Fatalf("checkpoint of %d bytes: %q", len(cp), cp)
		}
		m, clock = newTestManager(t, cfg)
		if err := m.Restore(cp, -1); err != nil {
			t.Fatalf("Restore(%q): %v", cp, err)
		}
		from = c
	}
	for _, x := range inputs {
		if x.Offset >= from {
			feed(t, m, &got, x)
		}
	}
	flush(t, m, clock, &got)
	n := compareReplay(t, cfg, got, want, strings.Join(log, "\n"))
	return len(stops), n
}

// checkCut checks a cut: never beyond next or the first offset of an open window and, in
// set and count modes, not crossed by any window of the uninterrupted run.
func checkCut(t *testing.T, cfg Config, m *Manager[*fakeSketch], c, next int64, all []win) {
	t.Helper()
	if c > next {
		t.Fatalf("SafeOffset(%d) = %d > next", next, c)
	}
	for _, k := range m.keys {
		for _, p := range k.panes {
			if p.firstOff < c {
				t.Fatalf("SafeOffset(%d) = %d passes the first offset %d of an open window of %q", next, c, p.firstOff, k.set)
			}
		}
	}
	if cfg.mode() == ModeSet || cfg.mode() == ModeCount {
		for _, w := range all {
			if w.First < c && c <= w.Last {
				t.Fatalf("cut %d (next %d) crosses window %v", c, next, w)
			}
		}
	}
}

// compareReplay compares the outcome of an interrupted run with the uninterrupted one and
// returns the number of windows emitted more than once.
func compareReplay(t *testing.T, cfg Config, got, want outcome, ctx string) int {
	t.Helper()
	ref := map[string]win{}
	for _, w := range want.wins {
		if _, dup := ref[w.key()]; dup {
			t.Fatalf("uninterrupted run emitted %s twice", w.key())
		}
		ref[w.key()] = w
	}
	seen := map[string]int{}
	for _, w := range got.wins {
		r, ok := ref[w.key()]
		if !ok {
			t.Fatalf("%v\n%+v: emitted %v, which the uninterrupted run did not", ctx, cfg, w)
		}
		if !equalWin(w, r) {
			t.Fatalf("%v\n%+v: window differs from the uninterrupted run:\n got  %v\n want %v", ctx, cfg, w, r)
		}
		seen[w.key()]++
	}
	dups := 0
	for k, w := range ref {
		switch n := seen[k]; {
		case n == 0:
			t.Fatalf("%v\n%+v: window %v never emitted", ctx, cfg, w)
		case n > 1:
			dups++
			if m := cfg.mode(); m == ModeTime || m == ModeSession {
				t.Fatalf("%v\n%+v: window %v emitted %d times", ctx, cfg, w, n)
			}
		}
	}
	for _, l := range [][2][]string{{got.late, want.late}, {got.ends, want.ends}} {
		g, w := slices.Clone(l[0]), slices.Clone(l[1])
		slices.Sort(g)
		slices.Sort(w)
		if !slices.Equal(g, w) {
			t.Fatalf("%v\n%+v: reported %v, uninterrupted run %v", ctx, cfg, g, w)
		}
	}
	return dups
}

// TestReplayPartialAck: a restart where the caller acknowledged output only up to
// acked < next (the rest was in flight and is lost with the crash), so it resumes from
// min(cut, first offsets of the lost windows) and passes replayUntil = acked, suppressing
// emissions of inputs below acked itself. No window may be lost; in set mode the
// re-emitted windows are also exact. (Exact replay needs the snapshot's own cut and next:
// see Restore.)
func TestReplayPartialAck(t *testing.T) {
	for _, mode := range []Mode{ModeSet, ModeTime} {
		t.Run(string(mode), func(t *testing.T) {
			for seed := uint64(0); seed < 100; seed++ {
				rng := rand.New(rand.NewPCG(seed, 4))
				cfg := modeConfig(rng, mode, false)
				inputs := genInputs(rng, gen{sets: 4, records: 80, maxBatches: 2, maxPoints: 4, endProb: 0.1, step: 2, jitter: 12})
				want := runOnce(t, cfg, inputs)
				next := inputs[len(inputs)*2/3].Offset
				acked := inputs[rng.IntN(len(inputs)*2/3)].Offset
				m, _ := newTestManager(t, cfg)
				var delivered []win
				from := int64(1 << 62)
				for _, x := range inputs {
					if x.Offset >= next {
						break
					}
					cs, _ := m.Add(x)
					for _, w := range take(t, m, cs) {
						if x.Offset < acked {
							delivered = append(delivered, w)
						} else {
							from = min(from, w.First) // lost in flight: replay must rebuild it
						}
					}
				}
				from = min(from, m.SafeOffset(next))
				cp := m.Checkpoint()
				m2, clock := newTestManager(t, cfg)
				if err := m2.Restore(cp, acked); err != nil {
					t.Fatal(err)
				}
				var o outcome
				for _, x := range inputs {
					if x.Offset < from {
						continue
					}
					cs, _ := m2.Add(x)
					ws := take(t, m2, cs)
					if x.Offset >= acked {
						o.wins = append(o.wins, ws...)
					}
				}
				flush(t, m2, clock, &o)
				got := map[string]win{}
				for _, w := range append(delivered, o.wins...) {
					got[w.key()] = w
				}
				for _, w := range want.wins {
					g, ok := got[w.key()]
					if !ok {
						t.Fatalf("seed %d, %+v (acked %d, next %d, from %d, cp %q): window %v lost", seed, cfg, acked, next, from, cp, w)
					}
					if mode == ModeSet && !equalWin(g, w) {
						t.Fatalf("seed %d: window %v re-emitted as %v", seed, w, g)
					}
				}
			}
		})
	}
}
