package consumer

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/segmentio/kafka-go"

	"github.com/distfeat/distfeat/processor"
)

// outBatch is one ordered group of output messages (feature records and dead letters) from
// one partition.
type outBatch struct {
	msgs    []kafka.Message
	ends    []int64 // window end event time (ms) per message; -1 for dead letters
	first   int64   // lowest input offset any message depends on
	through int64   // the partition's next offset when the batch was cut

	// commit is the commit position captured when the batch was cut: the window manager's
	// safe offset and checkpoint at `through`. It may be committed once this batch and
	// every earlier one are acknowledged (offset and checkpoint must belong together).
	commit processor.CommitPoint
}

// pipeline writes one partition's batches in order, one at a time, retrying failures until
// they are acknowledged. It tracks what is in flight so that commits never pass
// unacknowledged output, and it bounds the number of batches in flight (back-pressure).
type pipeline struct {
	w         *Worker
	partition int
	queue     chan *outBatch
	ctx       context.Context
	cancel    context.CancelFunc
	done      chan struct{}

	mu       sync.Mutex
	inflight []*outBatch           // submitted, not yet acknowledged, in order
	acked    processor.CommitPoint // commit position of the last acknowledged batch
	hasAcked bool
	idle     *sync.Cond
}

func newPipeline(w *Worker, partition int, maxInFlight int) *pipeline {
	ctx, cancel := context.WithCancel(context.Background())
	pl := &pipeline{
		w: w, partition: partition,
		queue: make(chan *outBatch, maxInFlight),
		ctx:   ctx, cancel: cancel, done: make(chan struct{}),
	}
	pl.idle = sync.NewCond(&pl.mu)
	go pl.loop()
	return pl
}

// submit enqueues a batch, blocking while the pipeline is full.
func (pl *pipeline) submit(ctx context.Context, b *outBatch) error {
	pl.mu.Lock()
	pl.inflight = append(pl.inflight, b)
	pl.mu.Unlock()
	select {
	case pl.queue <- b:
		return nil
	case <-ctx.Done():
		// Not queued, so never written: it must not count as in flight (commits and drains
		// would wait on it forever). It is the last entry: submit runs on one goroutine.
		pl.mu.Lock()
		if n := len(pl.inflight); n > 0 && pl.inflight[n-1] == b {
			pl.inflight = pl.inflight[:n-1]
		}
		pl.idle.Broadcast()
		pl.mu.Unlock()
		return ctx.Err()
	}
}

// state reports whether batches are in flight and the commit position of the last
// acknowledged batch (ok false: none acknowledged yet).
func (pl *pipeline) state() (inFlight bool, acked processor.CommitPoint, ok bool) {
	pl.mu.Lock()
	defer pl.mu.Unlock()
	return len(pl.inflight) > 0, pl.acked, pl.hasAcked
}

// drain waits until every submitted batch is acknowledged or ctx ends.
func (pl *pipeline) drain(ctx context.Context) error {
	stop := context.AfterFunc(ctx, func() {
		pl.mu.Lock()
		pl.idle.Broadcast()
		pl.mu.Unlock()
	})
	defer stop()
	pl.mu.Lock()
	defer pl.mu.Unlock()
	for len(pl.inflight) > 0 {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		pl.idle.Wait()
	}
	return nil
}

// close abandons unwritten batches (their input is not committed, so a replay re-creates
// them) and stops the writer goroutine.
func (pl *pipeline) close() {
	pl.cancel()
	<-pl.done
}

func (pl *pipeline) loop() {
	defer close(pl.done)
	for {
		select {
		case <-pl.ctx.Done():
			return
		case b := <-pl.queue:
			if !pl.write(b) {
				return
			}
			pl.mu.Lock()
			pl.inflight = pl.inflight[1:]
			pl.acked, pl.hasAcked = b.commit, true
			pl.idle.Broadcast()
			pl.mu.Unlock()
		}
	}
}

// write retries until every message of b is acknowledged; false if the pipeline closed first.
func (pl *pipeline) write(b *outBatch) bool {
	w := pl.w
	msgs := b.msgs
	ends := b.ends
	bo := newBackoff(50*time.Millisecond, 5*time.Second)
	for {
		err := w.writer.WriteMessages(pl.ctx, msgs...)
		now := time.Now()
		if err == nil {
			for _, end := range ends {
				if end >= 0 {
					w.metrics.EmitLatency.Observe(now.Sub(time.UnixMilli(end)).Seconds())
				}
			}
			return true
		}
		if pl.ctx.Err() != nil {
			return false
		}
		w.metrics.ProduceErrors.Inc()
		// Retry only the messages that failed; the others are acknowledged.
		var werrs kafka.WriteErrors
		summary := err
		if errors.As(err, &werrs) && len(werrs) == len(msgs) {
			summary = writeErrorSummary(werrs)
			var retryMsgs []kafka.Message
			var retryEnds []int64
			for i, e := range werrs {
				if e != nil {
					retryMsgs = append(retryMsgs, msgs[i])
					retryEnds = append(retryEnds, ends[i])
				} else if ends[i] >= 0 {
					w.metrics.EmitLatency.Observe(now.Sub(time.UnixMilli(ends[i])).Seconds())
				}
			}
			msgs, ends = retryMsgs, retryEnds
		}
		d := bo.next()
		w.log.Warn("output write failed, retrying", "partition", pl.partition, "messages", len(msgs), "err", summary, "retry_in", d)
		if !sleep(pl.ctx, d) {
			return false
		}
	}
}

// writeErrorSummary condenses kafka-go's per-message errors into one line.
func writeErrorSummary(werrs kafka.WriteErrors) error {
	var first error
	failed := 0
	for _, e := range werrs {
		if e != nil {
			failed++
			if first == nil {
				first = e
			}
		}
	}
	return fmt.Errorf("%d of %d messages failed, first: %w", failed, len(werrs), first)
}
