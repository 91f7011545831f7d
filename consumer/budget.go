package consumer

import (
	"context"
	"sync"

	"github.com/prometheus/client_golang/prometheus"
)

// Memory budget (DISTFEAT_MAX_BUFFER_BYTES). What a worker holds besides its windows' sketches
// is records: fetched and not yet processed, and output not yet acknowledged. Each is bounded
// by bytes, not by records, so that 1 MB records cannot multiply a record-count bound into
// gigabytes. The budget is divided evenly over the partitions of a generation, and each
// partition's share as follows:
//
//   - fetch (a quarter): the kafka-go reader's queue holds QueueCapacity decoded records of
//     at most the fetch size each; QueueCapacity is what fits in the quarter (at least 1).
//   - queue (half): records taken from the reader and waiting for, or in, the processor,
//     counted by key+value+header bytes plus their points decoded ahead (processor.Prepare:
//     8 bytes per coordinate, raw and normalised) (byteGate); the reader stops while it is
//     full. The one record the reader goroutine is decoding counts once it is queued.
//   - output (a quarter): output pending and in flight, counted by bytes. In flight gets the
//     quarter less one output limit (DISTFEAT_MAX_OUTPUT_BYTES); pending output is flushed
//     once it reaches the output limit, and one processor call takes no more input bytes than
//     the room left before that flush. The partition stops reading while in flight is full
//     (back-pressure).
//
// One record or batch larger than its share is always admitted when nothing else is held,
// so a share below one maximum record slows a partition down but never stops it; the
// per-partition floor is therefore a few maximum records, and the start-up log says when
// the budget is below that for the partitions assigned.
type budget struct {
	fetchCap  int   // kafka-go QueueCapacity
	fetchMax  int   // kafka-go MaxBytes: the largest fetch response, and so the largest record
	queue     int64 // bytes of fetched records waiting for the processor
	output    int64 // bytes of output pending or in flight
	floor     int64 // the least a partition may hold whatever the budget
	requested int64 // the share the budget gives (may be below floor)
}

// newBudget divides total bytes over partitions for records of up to maxRecord bytes (the
// input limit plus room for the broker's larger too_large records) and output records of up
// to maxOutput bytes.
func newBudget(total int64, partitions, maxRecord, maxOutput int) budget {
	share := total / int64(max(partitions, 1))
	b := budget{fetchMax: maxRecord, requested: share}
	// The reader holds its queue plus the record it is handing over.
	b.fetchCap = int(min(max(share/4/int64(maxRecord)-1, 1), 256))
	b.queue = max(share/2, int64(maxRecord))
	// Pending output (flushed at maxOutput bytes, plus one processor call's output) comes on
	// top of what is in flight.
	b.output = max(share/4-int64(maxOutput), int64(maxOutput))
	b.floor = b.fetchBytes() + b.queue + b.output + int64(maxOutput)
	return b
}

// fetchBytes is the most the kafka-go reader holds: its queue and the record in hand.
func (b budget) fetchBytes() int64 { return int64(b.fetchCap+1) * int64(b.fetchMax) }

// byteGate bounds the bytes held between a producer and a consumer goroutine.
type byteGate struct {
	mu    sync.Mutex
	cond  *sync.Cond
	limit int64
	used  int64
	gauge prometheus.Gauge // process-wide buffered bytes of this stage (nil: none)
}

func newByteGate(limit int64, gauge prometheus.Gauge) *byteGate {
	g := &byteGate{limit: limit, gauge: gauge}
	g.cond = sync.NewCond(&g.mu)
	return g
}

// acquire waits until n more bytes fit under the limit — or nothing is held, so one item
// larger than the limit still passes — and takes them. It returns false when ctx ends while
// it waits.
func (g *byteGate) acquire(ctx context.Context, n int64) bool {
	stop := context.AfterFunc(ctx, func() {
		g.mu.Lock()
		g.cond.Broadcast()
		g.mu.Unlock()
	})
	defer stop()
	g.mu.Lock()
	defer g.mu.Unlock()
	for g.used > 0 && g.used+n > g.limit {
		if ctx.Err() != nil {
			return false
		}
		g.cond.Wait()
	}
	g.used += n
	if g.gauge != nil {
		g.gauge.Add(float64(n))
	}
	return true
}

// release gives n bytes back.
func (g *byteGate) release(n int64) {
	if n == 0 {
		return
	}
	g.mu.Lock()
	g.used -= n
	g.cond.Broadcast()
	g.mu.Unlock()
	if g.gauge != nil {
		g.gauge.Sub(float64(n))
	}
}

// held returns the bytes currently taken.
func (g *byteGate) held() int64 {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.used
}
