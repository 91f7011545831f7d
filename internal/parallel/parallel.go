// Package parallel shares loops among goroutines the way distfeat's hot paths need: the
// caller works too, and a helper that gets a core late (on a busy 2-vCPU machine, starting a
// goroutine takes 0.1–1.5 ms) does less instead of being waited for. Results must not depend
// on the split: every caller computes the same bits for any number of workers.
package parallel

import (
	"sync"
	"sync/atomic"
)

// Ranges splits [0, n) into up to workers contiguous ranges and calls fn(part, lo, hi)
// for each, concurrently (the last range on the calling goroutine), returning when all are
// done. part numbers the ranges from 0, so fn can index per-goroutine workspace. With
// workers ≤ 1 or n ≤ 1 it is just fn(0, 0, n). The ranges are disjoint and what fn computes
// for an index must not depend on the split: finalisation results never depend on workers.
// It suits work that must be split in fixed parts (Sketch.Add's per-part accumulators);
// independent items are better shared (Share).
func Ranges(workers, n int, fn func(part, lo, hi int)) {
	parts := min(workers, n)
	if parts <= 1 {
		fn(0, 0, n)
		return
	}
	var wg sync.WaitGroup
	for p := 0; p < parts; p++ {
		lo, hi := p*n/parts, (p+1)*n/parts
		if p == parts-1 {
			fn(p, lo, hi)
			break
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			fn(p, lo, hi)
		}()
	}
	wg.Wait()
}

// Share calls fn(part, lo, hi) over chunks [lo, hi) of [0, n), chunk items each (the
// last may be shorter), shared dynamically by the calling goroutine (part 0) and up to
// workers−1 helpers (parts 1, 2, …): each goroutine takes the next chunk not yet taken, so a
// goroutine that gets a core late, or is slowed by other load, does less, and the others
// more. It returns once every chunk is done, without waiting for helpers that had not taken
// one by then (they find nothing left and exit without calling fn). A goroutine's part is
// the same for all its chunks and no two running goroutines share one, so fn can index
// per-goroutine workspace by it. With one chunk or workers ≤ 1 it is just fn(0, 0, n). What
// fn computes for an index must not depend on the chunks or on which goroutine runs it:
// finalisation results never depend on workers.
func Share(workers, n, chunk int, fn func(part, lo, hi int)) {
	chunk = max(chunk, 1)
	chunks := (n + chunk - 1) / chunk
	parts := min(workers, chunks)
	if parts <= 1 {
		fn(0, 0, n)
		return
	}
	var next, finished atomic.Int64
	all := int64(chunks)
	done := make(chan struct{})
	work := func(part int) {
		for c := next.Add(1) - 1; c < all; c = next.Add(1) - 1 {
			lo := int(c) * chunk
			fn(part, lo, min(lo+chunk, n))
			if finished.Add(1) == all {
				close(done)
			}
		}
	}
	for p := 1; p < parts; p++ {
		go work(p)
	}
	work(0)
	<-done
}

// Each calls fn(i) for every i in [0, n), shared like Share with chunks of one item.
func Each(workers, n int, fn func(i int)) {
	Share(workers, n, 1, func(_, lo, hi int) {
		for i := lo; i < hi; i++ {
			fn(i)
		}
	})
}
