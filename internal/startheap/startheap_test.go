package startheap

import (
	"math"
	"runtime"
	"runtime/metrics"
	"testing"
	"time"
)

// gcSettings reads the collector's GOGC percentage and memory limit without changing them.
func gcSettings(t *testing.T) (gogc, limit int64) {
	t.Helper()
	s := []metrics.Sample{{Name: "/gc/gogc:percent"}, {Name: "/gc/gomemlimit:bytes"}}
	metrics.Read(s)
	return int64(s[0].Value.Uint64()), int64(s[1].Value.Uint64())
}

// The settings are process-wide, so the cases run in order in one test.
func TestDefer(t *testing.T) {
	t.Run("user settings win", func(t *testing.T) {
		t.Setenv("GOGC", "100")
		if Defer(1 << 30) {
			t.Fatal("Defer changed the collector although GOGC is set")
		}
		if gogc, limit := gcSettings(t); gogc != 100 || limit != math.MaxInt64 {
			t.Fatalf("GOGC %d, limit %d: want 100 and no limit", gogc, limit)
		}
	})
	t.Run("off until the limit, then the defaults", func(t *testing.T) {
		const limit = 64 << 20
		if !Defer(limit) {
			t.Fatal("Defer did nothing without GOGC or GOMEMLIMIT in the environment")
		}
		if gogc, got := gcSettings(t); gogc != -1 || got != limit {
			// runtime/metrics reports GOGC=off as -1.
			t.Fatalf("after Defer: GOGC %d, limit %d; want off (-1) and %d", gogc, got, limit)
		}
		// Allocate past the limit, keeping it alive: the limit forces a collection, after
		// which the sentinel's finalizer restores the defaults.
		var keep [][]byte
		deadline := time.Now().Add(time.Minute) // generous: the restore follows the next GC
		for {
			if gogc, got := gcSettings(t); gogc == 100 && got == math.MaxInt64 {
				break
			}
			if time.Now().After(deadline) {
				gogc, got := gcSettings(t)
				t.Fatalf("defaults not restored after %d MB: GOGC %d, limit %d", len(keep), gogc, got)
			}
			if len(keep) < 2*limit>>20 {
				keep = append(keep, make([]byte, 1<<20))
			} else {
				runtime.GC()
			}
			runtime.Gosched()
		}
		runtime.KeepAlive(keep)
	})
}
