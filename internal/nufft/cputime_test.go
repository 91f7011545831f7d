package nufft

import (
	"runtime"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// cpuClock reports, next to the wall-clock ns/op, the CPU time the benchmark's thread spent
// per operation ("cpu-ns/op"): on a loaded machine the wall clock also counts the time the
// thread waited for a core, the CPU time does not.
type cpuClock struct {
	b     *testing.B
	start time.Duration
}

func threadCPU(b *testing.B) time.Duration {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts); err != nil {
		b.Fatalf("clock_gettime: %v", err)
	}
	return time.Duration(ts.Nano())
}

// startCPU locks the goroutine to its thread and resets the timers.
func startCPU(b *testing.B) *cpuClock {
	b.Helper()
	runtime.LockOSThread()
	b.Cleanup(runtime.UnlockOSThread)
	b.ResetTimer()
	return &cpuClock{b: b, start: threadCPU(b)}
}

// stop reports cpu-ns/op, divided further by per (e.g. points per window) when per > 1.
func (c *cpuClock) stop(per float64, unit string) {
	el := threadCPU(c.b) - c.start
	c.b.StopTimer()
	c.b.ReportMetric(float64(el.Nanoseconds())/float64(c.b.N), "cpu-ns/op")
	if per > 1 {
		c.b.ReportMetric(float64(el.Nanoseconds())/float64(c.b.N)/per, unit)
	}
}
