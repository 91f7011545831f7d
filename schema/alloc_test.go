package schema

import (
	"runtime/metrics"
)

// Allocation bounds checked by tests and fuzzers: decoding s bytes allocates at most
// factor·s + allocSlack bytes.
//
//   - JSON: the point buffer is at most 8·dim·s/(2·dim+1) < 4·s bytes (every point takes at
//     least 2·dim+1 bytes of input and the buffer never grows), plus the set ID (≤ s), the
//     escape buffer for strings with escapes (≤ s) and error details: factor 8.
//   - Arrow: the library's buffers are capped at 2·s + 1 MiB by the budget allocator, the
//     points at twice the coordinate bytes (float32 → float64), and every message costs a
//     few KiB of Go objects (record, arrays, array data) for at least ~100 bytes of input:
//     factor 64.
//
// allocSlack covers the constant parts (1 MiB allocator budget, schema objects, error
// formatting) and the granularity of the runtime's allocation statistics, which count small
// objects when a span is refilled (up to a span per size class).
const (
	jsonAllocFactor  = 8
	arrowAllocFactor = 64
	allocSlack       = 4 << 20
)

// bytesAllocated reports the heap bytes allocated while f runs (approximately: see
// allocSlack).
func bytesAllocated(f func()) uint64 {
	s := []metrics.Sample{{Name: "/gc/heap/allocs:bytes"}}
	metrics.Read(s)
	before := s[0].Value.Uint64()
	f()
	metrics.Read(s)
	return s[0].Value.Uint64() - before
}
