package processor

import "sync/atomic"

// shareWork calls fn(i) for every i in [0, n), on the calling goroutine and up to workers−1
// helpers, each taking the next index not yet taken. It returns once every fn has returned,
// without waiting for helpers that had not started by then (they find nothing left and
// exit): on a busy machine a helper may get a core only milliseconds later, and the caller
// does the work itself instead of waiting for it. fn must not depend on which goroutine
// runs it.
func shareWork(n, workers int, fn func(i int)) {
	if workers = min(workers, n); workers <= 1 {
		for i := range n {
			fn(i)
		}
		return
	}
	var next, finished atomic.Int64
	all := int64(n)
	done := make(chan struct{})
	work := func() {
		for i := next.Add(1) - 1; i < all; i = next.Add(1) - 1 {
			fn(int(i))
			if finished.Add(1) == all {
				close(done)
			}
		}
	}
	for range workers - 1 {
		go work()
	}
	work()
	<-done
}
