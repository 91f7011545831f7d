package consumer

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/segmentio/kafka-go"

	"github.com/distfeat/distfeat/kafkaio"
	"github.com/distfeat/distfeat/processor"
)

// partition is one assigned partition's loop: its own reader, processor (window state) and
// output pipeline. It runs on a single goroutine (plus the reader and writer goroutines it
// owns). Everything between a fetched record and its output messages is the processor's;
// the reader goroutine decodes each record ahead (processor.Prepare, a pure function of the
// record), so that with one busy partition the decoding of the next records runs on another
// core while the loop handles the current ones, and ProcessPrepared adds the points of one
// call's records to their windows' sketches on every core, as it finalises the windows.
type partition struct {
	w     *Worker
	gen   *kafka.Generation
	id    int
	label string
	start int64 // offset the generation assigned (committed, or FirstOffset)
	proc  *processor.Processor

	position  atomic.Int64 // the processor's next offset, readable by the lag tracker
	committed int64        // last committed offset (-1: none by this loop)
	lastMeta  string

	budget   budget
	queued   *byteGate        // bytes of fetched records, and their decoded points, not yet processed (queue stage)
	outGauge prometheus.Gauge // buffered_bytes{stage="output"}: pending and in-flight output

	markers []processor.CloseRequest // idle closes whose markers are not yet written

	pending      []kafka.Message // output waiting for the next flush, in order
	pendingBytes int64           // their bytes
	pendingFirst int64           // lowest window first offset (or DLQ offset) in pending; -1 when empty
	pendingEnds  []int64         // window end event times in pending, for emit latency
	out          *pipeline

	fetched []processor.Prepared // records taken from the reader for one processor call, reused
}

// fetchedRecord is a record taken from the kafka-go reader and decoded ahead by the reader
// goroutine, as the partition loop receives it.
type fetchedRecord struct {
	processor.Prepared
	size int64 // messageBytes of the record
	held int64 // what it holds of the queue stage: size plus its decoded points
}

// prepare converts m for the processor and decodes it ahead (processor.Prepare).
func (p *partition) prepare(m kafka.Message) fetchedRecord {
	hdrs := make([]processor.Header, len(m.Headers))
	for i, h := range m.Headers {
		hdrs[i] = processor.Header{Key: h.Key, Value: h.Value}
	}
	pr := p.proc.Prepare(processor.Record{
		Topic: m.Topic, Partition: m.Partition, Offset: m.Offset,
		Key: m.Key, Value: m.Value, Time: m.Time, Headers: hdrs,
	})
	n := messageBytes(m)
	return fetchedRecord{Prepared: pr, size: n, held: n + pr.DecodedBytes()}
}

// fetchBatch is the most records handed to the processor in one call: what the reader has
// already fetched, up to this many. Windows closed by one call are finalised together.
const fetchBatch = 64

func newPartition(w *Worker, gen *kafka.Generation, id int, start int64, checkpoint string, b budget) *partition {
	return &partition{
		w: w, gen: gen, id: id, label: partitionLabel(id), start: start, budget: b,
		outGauge:     w.metrics.BufferedBytes.WithLabelValues("output"),
		committed:    -1,
		pendingFirst: -1,
		lastMeta:     checkpoint,
	}
}

// newProcessor builds the partition's processor and restores it from the commit metadata.
func (p *partition) newProcessor() error {
	w := p.w
	obs := &observer{m: w.metrics, log: w.log, partition: p.id, finalize: w.finalizeSeconds, clips: w.clips}
	proc, err := processor.New(processor.Config{
		Window:       w.cfg.Window,
		Limits:       w.cfg.Limits,
		AllowKeyless: w.cfg.AllowKeyless,
		Group:        w.cfg.Group,
		Points:       w.points,
		Models:       w.processorModels(),
	}, w.emb, w.out, obs, w.clock)
	if err != nil {
		return err
	}
	if err := proc.Restore(p.lastMeta, max(p.start, 0)); err != nil {
		if !w.cfg.ResetCheckpoints && errors.Is(err, processor.ErrDefaultSpecChanged) {
			return &fatalError{fmt.Errorf("consumer: partition %d of group %q: %w", p.id, w.cfg.Group, err)} // the error says the ways forward
		}
		if !w.cfg.ResetCheckpoints {
			return &fatalError{fmt.Errorf("consumer: partition %d: %w; the group %q was run with another DISTFEAT_WINDOW (mode, size, hop, gap or lateness) or DISTFEAT_SPEC: restore them, use a new DISTFEAT_GROUP, or start once with DISTFEAT_RESET_CHECKPOINTS=true to resume from the committed offsets without replay suppression",
				p.id, err, w.cfg.Group)}
		}
		w.log.Warn("DISTFEAT_RESET_CHECKPOINTS: ignoring the committed checkpoint, starting without replay suppression", "partition", p.id, "err", err)
	}
	p.proc = proc
	if p.start >= 0 {
		p.committed = p.start
	}
	p.position.Store(proc.Next())
	return nil
}

// startReader starts the partition's kafka-go reader at the assigned offset and a goroutine
// that decodes its records ahead (prepare) and feeds them into the returned channel until
// ctx ends.
func (p *partition) startReader(ctx context.Context) (<-chan fetchedRecord, func(), error) {
	w := p.w
	reader := kafka.NewReader(kafka.ReaderConfig{
		Brokers:        w.cfg.Brokers,
		Topic:          w.cfg.InputTopic,
		Partition:      p.id,
		Dialer:         w.cfg.Dialer,
		MinBytes:       1,
		MaxBytes:       p.budget.fetchMax,
		MaxWait:        kafkaio.FetchMaxWait,
		QueueCapacity:  p.budget.fetchCap,
		ReadBackoffMin: 50 * time.Millisecond,
		ReadBackoffMax: time.Second,
		ErrorLogger: kafka.LoggerFunc(func(msg string, args ...any) {
			w.log.Debug("kafka-go reader", "partition", p.id, "msg", fmt.Sprintf(msg, args...))
		}),
	})
	startOffset := p.start
	if startOffset < 0 {
		startOffset = kafka.FirstOffset
	}
	if err := reader.SetOffset(startOffset); err != nil {
		reader.Close()
		return nil, nil, fmt.Errorf("partition %d: set offset %d: %w", p.id, startOffset, err)
	}
	// The channel is the queue stage of the memory budget: each record takes its bytes and
	// those of its decoded points from p.queued before it is sent, and handle gives them back
	// once the processor is done. Decoding here, before the record waits in the channel, lets
	// it overlap the processing of the records ahead of it.
	msgs := make(chan fetchedRecord, fetchBatch)
	go func() {
		defer close(msgs)
		defer w.fetchStalls.clear(p.id)
		denied := false // the input is not readable: the worker is not ready
		for {
			m, err := reader.FetchMessage(ctx)
			if err != nil {
				if ctx.Err() != nil {
					return
				}
				if aerr := kafkaio.Authorization(err, w.cfg.User, "read", fmt.Sprintf("topic %q (DISTFEAT_INPUT_TOPIC)", w.cfg.InputTopic)); aerr != nil {
					w.fetchStalls.set(p.id, "not authorised")
					denied, err = true, aerr
				}
				w.log.Warn("fetch failed, retrying", "partition", p.id, "err", err)
				if !sleep(ctx, 500*time.Millisecond) {
					return
				}
				continue
			}
			if denied {
				w.fetchStalls.clear(p.id)
				denied = false
			}
			r := p.prepare(m)
			if !p.queued.acquire(ctx, r.held) {
				return
			}
			select {
			case msgs <- r:
			case <-ctx.Done():
				p.queued.release(r.held)
				return
			}
		}
	}()
	w.log.Info("partition assigned", "partition", p.id, "start_offset", startOffset, "replay_until", p.proc.ReplayUntil(),
		"fetch_queue_records", p.budget.fetchCap, "fetch_max_bytes", p.budget.fetchMax, "queue_bytes", p.budget.queue, "output_bytes", p.budget.output)
	// closeReader runs after ctx ended: wait for the goroutine, return what it queued.
	closeReader := func() {
		for range msgs {
		}
		reader.Close()
		p.queued.release(p.queued.held())
	}
	return msgs, closeReader, nil
}

// run processes the partition until the generation ends (genCtx) or the worker stops (ctx).
// On a worker stop it flushes, waits for acknowledgements (bounded by ShutdownTimeout) and
// commits; on a generation end it does the same within revokeDrainTimeout and drops its
// state (the next owner replays from the commit and rebuilds the open windows).
func (p *partition) run(ctx, genCtx context.Context) error {
	w := p.w
	if err := p.newProcessor(); err != nil {
		return err
	}
	readerCtx, stopReader := context.WithCancel(genCtx)
	defer stopReader()
	p.queued = newByteGate(p.budget.queue, w.metrics.BufferedBytes.WithLabelValues("queue"))
	msgs, closeReader, err := p.startReader(readerCtx)
	if err != nil {
		return err
	}
	defer func() {
		stopReader()
		closeReader()
	}()
	go p.trackLag(readerCtx)
	defer func() {
		w.metrics.ConsumerLag.DeleteLabelValues(p.label)
		w.metrics.CommittedOffset.DeleteLabelValues(p.label)
	}()

	p.out = newPipeline(w, p.id, w.cfg.MaxInFlight, p.budget.output)
	defer func() {
		p.out.close()
		p.outGauge.Sub(float64(p.pendingBytes))
		p.pendingBytes = 0
	}()

	// A flush blocks while the pipeline is full (back-pressure, e.g. the output topic refuses
	// writes); it must give way to a worker stop as well as to a generation end, or a stop
	// during an output outage would wait for the outage to end.
	loopCtx, cancelLoop := context.WithCancel(genCtx)
	defer cancelLoop()
	defer context.AfterFunc(ctx, cancelLoop)()

	commitTick := time.NewTicker(w.cfg.CommitInterval)
	defer commitTick.Stop()
	flushTick := time.NewTicker(w.cfg.FlushInterval)
	defer flushTick.Stop()
	expireTick := time.NewTicker(expireInterval(w.cfg.Window.IdleTimeout))
	defer expireTick.Stop()
	defer p.updateGauges(true)
	defer p.clearMarkerStall()

	for {
		select {
		case <-ctx.Done():
			stopReader()
			return p.shutdown(genCtx)
		case <-genCtx.Done():
			stopReader()
			p.revoke(revokeDrainTimeout)
			w.log.Info("partition revoked", "partition", p.id, "next", p.proc.Next(), "committed", p.committed)
			return nil
		case r, ok := <-msgs:
			if !ok {
				continue
			}
			if err := p.handle(r, msgs); err != nil {
				return err
			}
			if len(p.pending) >= w.cfg.FlushMessages || p.pendingBytes >= int64(w.cfg.MaxOutputBytes) {
				_ = p.flush(loopCtx) // fails only when the loop is ending
			}
		case <-flushTick.C:
			_ = p.flush(loopCtx)
		case <-expireTick.C:
			p.requestCloses(loopCtx)
			p.updateGauges(false)
		case <-commitTick.C:
			p.tryCommit(genCtx)
		}
	}
}

// handle processes m and whatever further records the reader has already fetched in one
// processor call, and queues their output. It takes at most fetchBatch records, and no more
// than the pending output has room for before the next flush (a record closes at most a
// few windows), so output batches stay near FlushMessages and back-pressure bounds memory
// as before.
func (p *partition) handle(r fetchedRecord, more <-chan fetchedRecord) error {
	limit := min(fetchBatch, max(p.w.cfg.FlushMessages-len(p.pending), 1))
	// Dead letters are as large as their records: take no more input bytes than the pending
	// output has room for before the next flush (at least one record).
	room := int64(p.w.cfg.MaxOutputBytes) - p.pendingBytes
	p.fetched = append(p.fetched[:0], r.Prepared)
	taken, held := r.size, r.held
drain:
	for len(p.fetched) < limit && taken < room {
		select {
		case r, ok := <-more:
			if !ok {
				break drain
			}
			p.fetched = append(p.fetched, r.Prepared)
			taken += r.size
			held += r.held
		default:
			break drain
		}
	}
	res, err := p.proc.ProcessPrepared(p.fetched...)
	p.queued.release(held)
	clear(p.fetched) // the reused buffer must not keep the records' values alive
	if err != nil {
		return fmt.Errorf("partition %d: %w", p.id, err)
	}
	p.position.Store(p.proc.Next()) // the lag tracker reports high watermark − position
	p.queue(res)
	return nil
}

// queue appends the processor's output to the pending messages, in order.
func (p *partition) queue(res processor.Result) {
	for _, m := range res.Messages {
		topic := p.w.cfg.OutputTopic
		switch m.Kind {
		case processor.DeadLetter:
			topic = p.w.cfg.DLQTopic
		case processor.PointFeature:
			topic = p.w.cfg.PointsTopic
		case processor.Prediction:
			topic = p.w.cfg.PredictionsTopic
		}
		headers := make([]kafka.Header, len(m.Headers))
		for i, h := range m.Headers {
			headers[i] = kafka.Header{Key: h.Key, Value: h.Value}
		}
		km := kafka.Message{Topic: topic, Key: m.Key, Value: m.Value, Headers: headers, Time: m.Time}
		p.pending = append(p.pending, km)
		n := messageBytes(km)
		p.pendingBytes += n
		p.outGauge.Add(float64(n))
		p.pendingEnds = append(p.pendingEnds, m.EventEnd)
		if p.pendingFirst < 0 || m.FirstOffset < p.pendingFirst {
			p.pendingFirst = m.FirstOffset
		}
	}
}

// flush hands pending output to the pipeline (blocking when MaxInFlight batches are
// unacknowledged: back-pressure). The batch carries the commit point of this moment: once it
// and every earlier batch are acknowledged, everything closed by records below the
// processor's next offset is delivered.
func (p *partition) flush(ctx context.Context) error {
	if len(p.pending) == 0 {
		return nil
	}
	b := &outBatch{msgs: p.pending, ends: p.pendingEnds, first: p.pendingFirst, through: p.proc.Next(),
		commit: p.proc.CommitPoint(), bytes: p.pendingBytes}
	if err := p.out.submit(ctx, b); err != nil {
		return err
	}
	p.pending, p.pendingEnds, p.pendingFirst, p.pendingBytes = nil, nil, -1, 0
	return nil
}

// commitCandidate is what may be committed now: the current position when no output is
// pending or in flight, else the position captured with the last acknowledged batch.
func (p *partition) commitCandidate() (processor.CommitPoint, bool) {
	if p.proc.Replaying() {
		// Still replaying what the last commit covered: that commit stays the right one.
		return processor.CommitPoint{}, false
	}
	inFlight, acked, ok := p.out.state()
	if len(p.pending) == 0 && !inFlight {
		return p.proc.CommitPoint(), true
	}
	return acked, ok
}

// tryCommit commits the candidate position if it differs from the last commit. It returns
// the commit's error (nil when there was nothing to commit).
func (p *partition) tryCommit(ctx context.Context) error {
	next := p.proc.Next()
	if next == 0 && p.committed < 0 {
		return nil // nothing read yet
	}
	cp, ok := p.commitCandidate()
	if !ok || cp.Offset < p.committed || (cp.Offset == p.committed && cp.Metadata == p.lastMeta) {
		if p.committed < next {
			p.w.metrics.CommitDeferred.Inc()
		}
		return nil
	}
	cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if err := p.w.commit(cctx, p.gen, p.id, cp.Offset, cp.Metadata); err != nil {
		p.w.log.Warn("commit failed (will retry)", "partition", p.id, "offset", cp.Offset, "err", err)
		return err
	}
	p.committed, p.lastMeta = cp.Offset, cp.Metadata
	p.w.metrics.CommittedOffset.WithLabelValues(p.label).Set(float64(cp.Offset))
	return nil
}

// shutdown flushes everything, waits for acknowledgements and commits (SIGTERM path). A
// partition whose output is not acknowledged, or whose commit fails, within ShutdownTimeout
// is recorded as unclean: Run then returns ErrShutdownIncomplete (non-zero exit).
func (p *partition) shutdown(genCtx context.Context) error {
	ctx, cancel := context.WithTimeout(context.Background(), p.w.cfg.ShutdownTimeout)
	defer cancel()
	go func() {
		select {
		case <-genCtx.Done():
			cancel()
		case <-ctx.Done():
		}
	}()
	var failure error
	if err := p.flush(ctx); err != nil {
		failure = fmt.Errorf("flush: %w", err)
		p.w.log.Warn("shutdown: flush incomplete", "partition", p.id, "err", err)
	}
	if err := p.out.drain(ctx); err != nil {
		failure = fmt.Errorf("output not acknowledged: %w", err)
		p.w.log.Warn("shutdown: output not fully acknowledged; the next owner replays it", "partition", p.id, "err", err)
	}
	if err := p.tryCommit(ctx); err != nil && failure == nil {
		failure = fmt.Errorf("commit: %w", err)
	}
	if failure != nil {
		unacked := p.out.unackedMessages() + len(p.pending)
		uncommitted := p.proc.Next() - max(p.committed, p.start, 0)
		p.w.unclean.add(unacked, uncommitted)
		p.w.log.Error("shutdown incomplete: partition not committed; the next owner replays it", "partition", p.id,
			"committed", p.committed, "next", p.proc.Next(), "uncommitted_records", uncommitted, "unacknowledged_messages", unacked, "err", failure)
	}
	p.w.log.Info("partition stopped", "partition", p.id, "committed", p.committed, "open_windows", p.proc.Open())
	return nil
}

// lagInterval is how often a partition's lag is refreshed from the broker.
const lagInterval = time.Second

// trackLag keeps distfeat_consumer_lag current even while the partition loop is stalled
// (back-pressure, a long finalisation): the high watermark comes from the broker, the
// position from the loop.
func (p *partition) trackLag(ctx context.Context) {
	t := time.NewTicker(lagInterval)
	defer t.Stop()
	topic := p.w.cfg.InputTopic
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		resp, err := p.w.client.ListOffsets(ctx, &kafka.ListOffsetsRequest{
			Topics: map[string][]kafka.OffsetRequest{topic: {kafka.LastOffsetOf(p.id)}},
		})
		if err != nil {
			continue
		}
		for _, po := range resp.Topics[topic] {
			if po.Partition == p.id && po.Error == nil && ctx.Err() == nil {
				p.w.metrics.ConsumerLag.WithLabelValues(p.label).Set(float64(max(po.LastOffset-p.position.Load(), 0)))
			}
		}
	}
}

// revokeDrainTimeout bounds the hand-over work on a rebalance; the group waits for it (up to
// the rebalance timeout) before reassigning the partition.
const revokeDrainTimeout = 2 * time.Second

// revoke is the hand-over on a generation end: flush what is pending, wait (bounded) for the
// output to be acknowledged, and commit, so that the next owner does not re-emit windows
// that were in fact delivered. Whatever does not finish in time is replayed (byte-identical).
func (p *partition) revoke(timeout time.Duration) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	if err := p.flush(ctx); err == nil {
		_ = p.out.drain(ctx)
	}
	p.tryCommit(ctx)
}

// updateGauges publishes this partition's open windows and sketch memory into the
// process-wide gauges.
func (p *partition) updateGauges(final bool) {
	open, bytes := p.w.gauges.set(p.id, p.proc, final)
	p.w.metrics.WindowsOpen.Set(float64(open))
	p.w.metrics.SketchBytes.Set(float64(bytes))
}

// expireInterval is how often idle windows are checked.
func expireInterval(idle time.Duration) time.Duration {
	if idle <= 0 {
		return time.Second
	}
	d := idle / 4
	if d < 10*time.Millisecond {
		d = 10 * time.Millisecond
	}
	if d > time.Second {
		d = time.Second
	}
	return d
}

// messageBytes is a record's size as the memory budget counts it: key, value and headers.
func messageBytes(m kafka.Message) int64 {
	n := len(m.Key) + len(m.Value)
	for _, h := range m.Headers {
		n += len(h.Key) + len(h.Value)
	}
	return int64(n)
}
