// Package startheap lets a process start without garbage collection until its heap reaches a
// few tens of megabytes, then collect as usual.
//
// Go's first collection comes at a 4 MB heap goal and the next ones at twice the live heap, so
// a process that builds a 20 MB spec (frequency matrices, projections) and reads its first
// records collects four or five times in its first 50 ms — about a tenth of a small `distfeat
// embed` run. cmd/compile solves the same problem the same way (base.AdjustStartingHeap).
package startheap

import (
	"math"
	"os"
	"runtime"
	"runtime/debug"
)

// Defer turns garbage collection off until the runtime's memory reaches limit bytes, then
// restores the defaults (GOGC=100, no memory limit) once that first collection has run. It
// does nothing when the user configured the collector (GOGC or GOMEMLIMIT in the
// environment): a deployment's GOMEMLIMIT is a promise about memory that a start-up heap
// must not break. It reports whether it changed anything.
func Defer(limit int64) bool {
	if _, ok := os.LookupEnv("GOGC"); ok {
		return false
	}
	if _, ok := os.LookupEnv("GOMEMLIMIT"); ok {
		return false
	}
	debug.SetGCPercent(-1)
	debug.SetMemoryLimit(limit)
	// The sentinel becomes unreachable now; its finalizer runs after the first collection,
	// which the memory limit triggers. The restore does not depend on anything else.
	sentinel := new([16]byte)
	runtime.SetFinalizer(sentinel, func(*[16]byte) {
		debug.SetGCPercent(100)
		debug.SetMemoryLimit(math.MaxInt64)
	})
	return true
}
