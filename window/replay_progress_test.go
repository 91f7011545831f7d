package window

import (
	"fmt"
	"testing"
	"time"
)

// TestSafeOffsetAdvancesAfterReplay: after a restore and a replay, once every window has
// closed, SafeOffset(next) is next again (the commit must not stay pinned at the old cut);
// in time mode once the watermark has passed the tombstones of windows closed early too.
func TestSafeOffsetAdvancesAfterReplay(t *testing.T) {
	for _, cfg := range []Config{
		{Mode: ModeTime, Size: 2000, Hop: 1000, IdleTimeout: time.Second, MaxOpen: 1 << 20},
		{Mode: ModeTime, Size: 1000, IdleTimeout: time.Second, MaxOpen: 1 << 20},
		{Mode: ModeSession, Gap: 500, IdleTimeout: time.Second, MaxOpen: 1 << 20},
		{Mode: ModeSet, IdleTimeout: time.Second, MaxOpen: 1 << 20},
	} {
		t.Run(fmt.Sprint(cfg.Mode, cfg.Hop), func(t *testing.T) {
			record := func(off int64) Input {
				set := fmt.Sprintf("s%d", off%6)
				return in(off, 0, set, 1_000_000+(off/6)*200, off%37 == 36, off)
			}
			first, _ := newTestManager(t, cfg)
			var cut int64
			var cp string
			for off := int64(0); off < 300; off++ {
				if _, err := first.Add(record(off)); err != nil {
					t.Fatal(err)
				}
				if off == 200 {
					cut, cp = first.SafeOffset(off+1), first.Checkpoint()
				}
			}
			second, clock := newTestManager(t, cfg)
			if err := second.Restore(cp, -1); err != nil {
				t.Fatal(err)
			}
			for off := cut; off < 600; off++ {
				if _, err := second.Add(record(off)); err != nil {
					t.Fatal(err)
				}
				if off%50 == 0 {
					second.SafeOffset(off + 1)
					second.Checkpoint()
				}
			}
			clock.Advance(2 * time.Second)
			second.Expire()
			if second.Open() != 0 {
				t.Fatalf("%d windows still open after the idle timeout", second.Open())
			}
			next := int64(600)
			if cfg.Mode == ModeTime {
				// Windows closed early leave tombstones that hold the cut at their first record
				// until the watermark passes them, and the records judged with them until
				// then: two records far ahead in event time release it (the first one's window
				// is closed by the second).
				for _, x := range []Input{in(600, 0, "z", 1e12, false, 1), in(601, 0, "y", 2e12, false, 2)} {
					if _, err := second.Add(x); err != nil {
						t.Fatal(err)
					}
				}
				next = 602
			}
			want := next
			if cfg.Mode == ModeTime {
				want = 601 // y's window is open
			}
			if got := second.SafeOffset(next); got != want {
				t.Errorf("SafeOffset(%d) = %d with no window open before it (cut restored at %d), want %d", next, got, cut, want)
			}
		})
	}
}
