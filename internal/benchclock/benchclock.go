// Package benchclock reports a benchmark's CPU time per operation next to the wall clock:
// on a shared, loaded machine the wall clock also counts the time the benchmark's thread
// waited for a core, the thread's CPU time does not.
package benchclock

import (
	"runtime"
	"testing"
	"time"
)

// Clock measures the CPU time of the benchmark's thread from Start to Stop.
type Clock struct {
	b     *testing.B
	start time.Duration
}

// Start locks the benchmark's goroutine to its thread (so the thread's CPU clock is the
// benchmark's) and resets the benchmark timer.
func Start(b *testing.B) *Clock {
	b.Helper()
	runtime.LockOSThread()
	b.Cleanup(runtime.UnlockOSThread)
	b.ResetTimer()
	return &Clock{b: b, start: threadCPU(b)}
}

// Stop stops the timer and reports "cpu-ns/op", and, when per > 1, the CPU time per op
// divided by per under the name unit (e.g. per = points per window, "cpu-ns/point").
func (c *Clock) Stop(per float64, unit string) {
	el := threadCPU(c.b) - c.start
	c.b.StopTimer()
	op := float64(el.Nanoseconds()) / float64(c.b.N)
	c.b.ReportMetric(op, "cpu-ns/op")
	if per > 1 {
		c.b.ReportMetric(op/per, unit)
	}
}
