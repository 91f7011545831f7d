package parallel

import (
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
)

// TestShare: every index of [0, n) is handed to fn exactly once, in chunks of chunk
// items aligned on multiples of chunk; parts are below min(workers, chunks) and never held
// by two goroutines at once (fn may index per-goroutine workspace by part); one chunk or one
// worker is a single fn(0, 0, n) on the caller; and fn is never called after Share
// returns (a helper that starts late finds nothing left and does not touch the caller's
// workspace, which the caller may already be reusing).
func TestShare(t *testing.T) {
	for _, tc := range []struct{ workers, n, chunk int }{
		{1, 10, 1}, {2, 0, 1}, {2, 1, 1}, {2, 5, 8}, {2, 2, 1}, {2, 100, 1}, {3, 100, 7},
		{5, 64, 64}, {5, 65, 64}, {8, 1000, 3}, {4, 37, 0},
	} {
		t.Run(fmt.Sprintf("workers=%d/n=%d/chunk=%d", tc.workers, tc.n, tc.chunk), func(t *testing.T) {
			chunk := max(tc.chunk, 1)
			chunks := (tc.n + chunk - 1) / chunk
			parts := min(tc.workers, chunks)
			for iter := 0; iter < 200; iter++ {
				seen := make([]int32, tc.n)
				busy := make([]atomic.Bool, max(parts, 1))
				var returned atomic.Bool
				var mu sync.Mutex
				var calls [][3]int
				Share(tc.workers, tc.n, tc.chunk, func(part, lo, hi int) {
					if returned.Load() {
						t.Errorf("fn(%d, %d, %d) called after Share returned", part, lo, hi)
						return
					}
					if part < 0 || part >= len(busy) {
						t.Errorf("part %d outside [0, %d)", part, len(busy))
						return
					}
					if busy[part].Swap(true) {
						t.Errorf("part %d used by two goroutines at once", part)
					}
					defer busy[part].Store(false)
					mu.Lock()
					calls = append(calls, [3]int{part, lo, hi})
					mu.Unlock()
					for i := lo; i < hi; i++ {
						atomic.AddInt32(&seen[i], 1)
					}
				})
				returned.Store(true)
				for i, c := range seen {
					if c != 1 {
						t.Fatalf("index %d handed to fn %d times", i, c)
					}
				}
				if parts <= 1 {
					if len(calls) != 1 || calls[0] != [3]int{0, 0, tc.n} {
						t.Fatalf("calls %v, want one fn(0, 0, %d)", calls, tc.n)
					}
					continue
				}
				for _, c := range calls {
					if c[1]%chunk != 0 || c[2] != min(c[1]+chunk, tc.n) {
						t.Fatalf("chunk [%d, %d) is not a chunk of %d", c[1], c[2], chunk)
					}
				}
			}
		})
	}
}
