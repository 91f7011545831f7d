package window

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestManyKeysBounded: 100 000 distinct sets through a Manager with MaxOpen = 1000, in every
// mode. Open windows never exceed MaxOpen, the per-set state and the offset bookkeeping stay
// proportional to it, and no point is lost: every accepted point is in exactly one emitted
// window (tumbling windows), the evicted ones included.
func TestManyKeysBounded(t *testing.T) {
	const keys, maxOpen = 100_000, 1000
	for _, cfg := range []Config{
		{Mode: ModeSet},
		{Mode: ModeCount, Size: 4},
		{Mode: ModeTime, Size: 60_000, AllowedLateness: 5_000},
		{Mode: ModeSession, Gap: 30_000, AllowedLateness: 5_000},
	} {
		t.Run(string(cfg.Mode), func(t *testing.T) {
			cfg.MaxOpen, cfg.IdleTimeout = maxOpen, 1<<62
			m, clock := newTestManager(t, cfg)
			rng := rand.New(rand.NewPCG(7, 7))
			accepted := map[int64]bool{}
			var emitted []int64
			reasons := map[Reason]int{}
			collect := func(cs []Closed[*fakeSketch]) {
				for _, x := range take(t, m, cs) {
					emitted = append(emitted, x.IDs...)
					reasons[x.Reason]++
				}
			}
			id := int64(1)
			late := 0
			for i := range 150_000 {
				// Each set appears once in order, and again at random: revisits hit both open
				// and evicted sets.
				set := i
				if i >= keys {
					set = rng.IntN(keys)
				}
				np := 1 + rng.IntN(3)
				x := in(int64(i), 0, fmt.Sprintf("k%06d", set), 1_700_000_000_000+int64(i)*10-rng.Int64N(2000), rng.IntN(10) == 0, ids(id, np)...)
				id += int64(np)
				cs, err := m.Add(x)
				switch {
				case err == nil:
					for _, p := range pointsOf(x) {
						accepted[p.id] = true
					}
				case errors.Is(err, ErrLate):
					late++
				default:
					t.Fatalf("Add: %v", err)
				}
				collect(cs)
				if m.Open() > maxOpen {
					t.Fatalf("after %d inputs: Open() = %d > MaxOpen", i+1, m.Open())
				}
				if i%25_000 == 0 {
					checkInvariants(t, m)
					c := m.SafeOffset(int64(i) + 1)
					if live := len(m.fifo.q) - m.fifo.head - m.fifo.dead; len(m.fifo.q) > 3*live+200 || len(m.keys) > maxOpen || len(m.spans) > 3*live+100 {
						t.Fatalf("bookkeeping grows: fifo %d (live %d), sets %d, spans %d", len(m.fifo.q), live, len(m.keys), len(m.spans))
					}
					if c > int64(i)+1 {
						t.Fatalf("cut %d beyond next", c)
					}
				}
			}
			clock.Advance(1 << 62)
			collect(m.Expire())
			if m.Open() != 0 {
				t.Fatalf("Open() = %d after expiring everything", m.Open())
			}
			slices.Sort(emitted)
			if len(emitted) != len(accepted) || slices.ContainsFunc(emitted, func(id int64) bool { return !accepted[id] }) ||
				len(slices.Compact(slices.Clone(emitted))) != len(emitted) {
				t.Fatalf("%d points accepted, %d emitted (each accepted point must be emitted exactly once)", len(accepted), len(emitted))
			}
			if reasons[ReasonEvicted] == 0 {
				t.Fatalf("no eviction happened: %v", reasons)
			}
			t.Logf("reasons %v, %d late (time: tombstones of evicted windows), %d tombstones left", reasons, late, len(m.tombs))
		})
	}
}

// TestRelease: released sketches are reused for new panes instead of allocating.
func TestRelease(t *testing.T) {
	made := 0
	m, err := NewManager(Config{Mode: ModeSet, MaxOpen: 10}, func() *fakeSketch { made++; return newFake() }, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 100 {
		cs, err := m.Add(in(int64(i), 0, "a", 1, true, int64(i)))
		if err != nil || len(cs) != 1 || len(cs[0].Sketch.ids) != 1 || cs[0].Sketch.ids[0] != int64(i) {
			t.Fatalf("window %d: %v %v", i, cs, err)
		}
		m.Release(cs[0].Sketch)
	}
	if made != 1 {
		t.Fatalf("newSketch called %d times for 100 sequential windows with Release", made)
	}
	if got := m.SizeBytes(); got != 0 {
		t.Fatalf("SizeBytes() = %d with nothing open", got)
	}
	if _, err := m.Add(in(100, 0, "b", 1, false, 1, 2, 3)); err != nil {
		t.Fatal(err)
	}
	if got, want := m.SizeBytes(), newFake().SizeBytes()+3*8; got != want {
		t.Fatalf("SizeBytes() = %d, want %d", got, want)
	}
}

// TestHoppingMergeDoesNotAlias: in hopping time and count windows, a closed window's sketch
// must not be a pane still used by later windows (the fake sketch panics if the Manager
// touches a sketch handed out and not yet released). Windows are held unreleased here.
func TestHoppingMergeDoesNotAlias(t *testing.T) {
	for _, cfg := range []Config{
		{Mode: ModeTime, Size: 10, Hop: 4, MaxOpen: 100},
		{Mode: ModeCount, Size: 6, Hop: 4, MaxOpen: 100},
		{Mode: ModeCount, Size: 5, Hop: 2, MaxOpen: 100},
	} {
		m, _ := newTestManager(t, cfg)
		var held []Closed[*fakeSketch]
		for i := range 200 {
			cs, err := m.Add(in(int64(i), 0, "a", int64(i), false, ids(int64(3*i), 3)...))
			if err != nil {
				t.Fatal(err)
			}
			for _, c := range cs {
				c.Sketch.out = true
				if int64(len(c.Sketch.ids)) != c.N {
					t.Fatalf("%+v: window N=%d holds %d", cfg, c.N, len(c.Sketch.ids))
				}
			}
			held = append(held, cs...)
		}
		if len(held) < 50 {
			t.Fatalf("%+v: only %d windows", cfg, len(held))
		}
	}
}
