//go:build !unix

package benchclock

import (
	"testing"
	"time"
)

// threadCPU falls back to the wall clock where no thread CPU clock is available.
func threadCPU(*testing.B) time.Duration { return time.Duration(time.Now().UnixNano()) }
