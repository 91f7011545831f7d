package embedding

import "sync"

// parallelRanges splits [0, n) into up to workers contiguous ranges and calls fn(part, lo, hi)
// for each, concurrently (the last range on the calling goroutine), returning when all are
// done. part numbers the ranges from 0, so fn can index per-goroutine workspace. With
// workers ≤ 1 or n ≤ 1 it is just fn(0, 0, n). The ranges are disjoint and what fn computes
// for an index must not depend on the split: finalisation results never depend on workers.
func parallelRanges(workers, n int, fn func(part, lo, hi int)) {
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
