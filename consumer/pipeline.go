package consumer

import (
	"context"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
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
	bytes   int64   // messageBytes of msgs (the output stage of the memory budget)

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

	label     string           // partition label of the metrics
	bytes     *byteGate        // bytes in flight (back-pressure by bytes as well as by batches)
	gauge     prometheus.Gauge // buffered_bytes{stage="output"}, shared with the partition
	stallKind string           // "" or the kind of the current output failure (writer goroutine only)

	mu       sync.Mutex
	inflight []*outBatch           // submitted, not yet acknowledged, in order
	acked    processor.CommitPoint // commit position of the last acknowledged batch
	hasAcked bool
	idle     *sync.Cond
}

func newPipeline(w *Worker, partition int, maxInFlight int, maxBytes int64) *pipeline {
	ctx, cancel := context.WithCancel(context.Background())
	pl := &pipeline{
		w: w, partition: partition, label: partitionLabel(partition),
		bytes: newByteGate(maxBytes, nil), gauge: w.metrics.BufferedBytes.WithLabelValues("output"),
		queue: make(chan *outBatch, maxInFlight),
		ctx:   ctx, cancel: cancel, done: make(chan struct{}),
	}
	pl.idle = sync.NewCond(&pl.mu)
	go pl.loop()
	return pl
}

// submit enqueues a batch, blocking while the pipeline is full (MaxInFlight batches, or its
// byte share in flight).
func (pl *pipeline) submit(ctx context.Context, b *outBatch) error {
	if !pl.bytes.acquire(ctx, b.bytes) {
		return ctx.Err()
	}
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
		pl.bytes.release(b.bytes)
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

// unackedMessages counts the messages of submitted batches not yet acknowledged.
func (pl *pipeline) unackedMessages() int {
	pl.mu.Lock()
	defer pl.mu.Unlock()
	n := 0
	for _, b := range pl.inflight {
		n += len(b.msgs)
	}
	return n
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
	pl.mu.Lock()
	for _, b := range pl.inflight {
		pl.gauge.Sub(float64(b.bytes))
	}
	pl.mu.Unlock()
	if pl.stallKind != "" {
		pl.w.metrics.OutputStalled.DeleteLabelValues(pl.label, pl.stallKind)
		pl.w.stalls.clear(pl.partition)
	}
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
			pl.bytes.release(b.bytes)
			pl.gauge.Sub(float64(b.bytes))
		}
	}
}

// write retries until every message of b is acknowledged; false if the pipeline closed first.
// A failed attempt is classified (outfail.go): retriable failures are retried with a back-off
// up to 5 s, permanent ones every Config.PermanentRetry; either way the partition's output counts as
// stalled (the worker is not ready, distfeat_output_stalled is 1, a log line says why and
// what to change) until the batch is through. Nothing is dropped.
func (pl *pipeline) write(b *outBatch) bool {
	w := pl.w
	msgs := b.msgs
	ends := b.ends
	bo := newBackoff(50*time.Millisecond, 5*time.Second)
	for {
		err := w.writer.WriteMessages(pl.ctx, msgs...)
		now := time.Now()
		if err == nil {
			pl.observeLatency(now, ends)
			pl.flowing()
			return true
		}
		if pl.ctx.Err() != nil {
			return false
		}
		var acked []int64
		var f outputFailure
		msgs, ends, acked, f = classifyWrite(err, msgs, ends)
		pl.observeLatency(now, acked)
		w.metrics.ProduceErrors.Inc()
		w.metrics.OutputErrors.WithLabelValues(f.topic, f.code).Inc()
		d := bo.next()
		if f.kind == failPermanent {
			d = w.cfg.PermanentRetry
		}
		pl.stalled(f, len(msgs), d)
		if !sleep(pl.ctx, d) {
			return false
		}
	}
}

// observeLatency records the emit latency of acknowledged feature records.
func (pl *pipeline) observeLatency(now time.Time, ends []int64) {
	for _, end := range ends {
		if end >= 0 {
			pl.w.metrics.EmitLatency.Observe(now.Sub(time.UnixMilli(end)).Seconds())
		}
	}
}

// stalled reports a failed write: the partition's stall state and gauge, and a log line
// (an error with the remedy for a permanent failure, a warning otherwise).
func (pl *pipeline) stalled(f outputFailure, pending int, retryIn time.Duration) {
	w := pl.w
	if pl.stallKind != f.kind {
		if pl.stallKind != "" {
			w.metrics.OutputStalled.DeleteLabelValues(pl.label, pl.stallKind)
		}
		pl.stallKind = f.kind
		w.stalls.set(pl.partition, f.kind)
		w.metrics.OutputStalled.WithLabelValues(pl.label, f.kind).Set(1)
	}
	attrs := []any{"partition", pl.partition, "topic", f.topic, "error", f.code, "kind", f.kind,
		"messages", pending, "err", f.err, "retry_in", retryIn, "action", w.remedy(f)}
	if f.kind == failPermanent {
		w.log.Error("output write failed permanently: partition stalled, worker not ready", attrs...)
		return
	}
	w.log.Warn("output write failed, retrying: worker not ready until output flows", attrs...)
}

// flowing clears the stall state after a successful write.
func (pl *pipeline) flowing() {
	if pl.stallKind == "" {
		return
	}
	pl.w.metrics.OutputStalled.DeleteLabelValues(pl.label, pl.stallKind)
	pl.w.stalls.clear(pl.partition)
	pl.w.log.Info("output flowing again", "partition", pl.partition, "after", pl.stallKind)
	pl.stallKind = ""
}
