package consumer

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/segmentio/kafka-go"

	"github.com/distfeat/distfeat/embedding"
	"github.com/distfeat/distfeat/schema"
	"github.com/distfeat/distfeat/window"
)

// partition is one assigned partition's loop: its own reader, window state and output
// pipeline. It runs on a single goroutine (plus the reader and writer goroutines it owns).
type partition struct {
	w         *Worker
	gen       *kafka.Generation
	id        int
	label     string
	start     int64 // offset the generation assigned (committed, or FirstOffset)
	manager   *window.Manager[*embedding.Sketch]
	decodeOpt schema.DecodeOptions

	// replayUntil: records below it were processed, and everything they produced was
	// acknowledged, before the last commit; their emissions and dead letters are suppressed.
	replayUntil int64
	next        int64        // next offset to process
	position    atomic.Int64 // next, readable by the lag tracker
	committed   int64        // last committed offset (-1: none by this loop)
	lastMeta    string

	pending      []kafka.Message // output waiting for the next flush, in order
	pendingFirst int64           // lowest window first offset (or DLQ offset) in pending; -1 when empty
	pendingEnds  []int64         // window end event times in pending, for emit latency
	out          *pipeline

	normBuf []float64      // normalised points of the current record, reused
	insBuf  []window.Input // window inputs of the current record, reused
}

func newPartition(w *Worker, gen *kafka.Generation, id int, start int64, checkpoint string) *partition {
	return &partition{
		w: w, gen: gen, id: id, label: partitionLabel(id), start: start,
		decodeOpt: schema.DecodeOptions{
			Dim:       w.emb.Dim(),
			MaxPoints: w.cfg.MaxPointsPerRecord,
		},
		committed:    -1,
		pendingFirst: -1,
		lastMeta:     checkpoint,
	}
}

// run processes the partition until the generation ends (genCtx) or the worker stops (ctx).
// On a worker stop it flushes, waits for acknowledgements (bounded by ShutdownTimeout) and
// commits; on a generation end it does the same within revokeDrainTimeout and drops its
// state (the next owner replays from the commit and rebuilds the open windows).
func (p *partition) run(ctx, genCtx context.Context) error {
	w := p.w
	mgr, err := window.NewManager(w.cfg.Window, w.emb.NewSketch, w.clock)
	if err != nil {
		return err
	}
	p.manager = mgr
	meta, err := parseMetadata(p.lastMeta)
	if err != nil {
		w.log.Warn("ignoring unreadable commit metadata", "partition", p.id, "err", err)
		meta = metadata{}
	}
	if err := mgr.Restore(meta.window, meta.replayUntil); err != nil {
		w.log.Warn("ignoring unusable window checkpoint", "partition", p.id, "err", err)
		_ = mgr.Restore("", 0)
		meta.replayUntil = 0
	}
	p.replayUntil = meta.replayUntil

	readerCtx, stopReader := context.WithCancel(genCtx)
	defer stopReader()
	reader := kafka.NewReader(kafka.ReaderConfig{
		Brokers:        w.cfg.Brokers,
		Topic:          w.cfg.InputTopic,
		Partition:      p.id,
		Dialer:         w.cfg.Dialer,
		MinBytes:       1,
		MaxBytes:       w.cfg.MaxMessageBytes + (1 << 20),
		MaxWait:        250 * time.Millisecond,
		QueueCapacity:  256,
		ReadBackoffMin: 50 * time.Millisecond,
		ReadBackoffMax: time.Second,
		ErrorLogger: kafka.LoggerFunc(func(msg string, args ...any) {
			w.log.Debug("kafka-go reader", "partition", p.id, "msg", fmt.Sprintf(msg, args...))
		}),
	})
	defer reader.Close()
	startOffset := p.start
	if startOffset < 0 {
		startOffset = kafka.FirstOffset
	}
	if err := reader.SetOffset(startOffset); err != nil {
		return fmt.Errorf("partition %d: set offset %d: %w", p.id, startOffset, err)
	}
	if p.start >= 0 {
		p.next = p.start
		p.committed = p.start
	}
	p.position.Store(p.next)
	go p.trackLag(readerCtx)
	defer func() {
		w.metrics.ConsumerLag.DeleteLabelValues(p.label)
		w.metrics.CommittedOffset.DeleteLabelValues(p.label)
	}()

	msgs := make(chan kafka.Message, 64)
	go func() {
		defer close(msgs)
		for {
			m, err := reader.FetchMessage(readerCtx)
			if err != nil {
				if readerCtx.Err() != nil {
					return
				}
				w.log.Warn("fetch failed, retrying", "partition", p.id, "err", err)
				if !sleep(readerCtx, 500*time.Millisecond) {
					return
				}
				continue
			}
			select {
			case msgs <- m:
			case <-readerCtx.Done():
				return
			}
		}
	}()

	p.out = newPipeline(w, p.id, w.cfg.MaxInFlight)
	defer p.out.close()

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

	w.log.Info("partition assigned", "partition", p.id, "start_offset", startOffset, "replay_until", p.replayUntil)
	defer p.updateGauges(true)

	for {
		select {
		case <-ctx.Done():
			stopReader()
			return p.shutdown(genCtx)
		case <-genCtx.Done():
			stopReader()
			p.revoke(revokeDrainTimeout)
			w.log.Info("partition revoked", "partition", p.id, "next", p.next, "committed", p.committed)
			return nil
		case m, ok := <-msgs:
			if !ok {
				continue
			}
			if err := p.handle(genCtx, m); err != nil {
				if genCtx.Err() != nil || ctx.Err() != nil {
					continue
				}
				return err
			}
			if len(p.pending) >= w.cfg.FlushMessages {
				if err := p.flush(loopCtx); err != nil {
					continue
				}
			}
		case <-flushTick.C:
			if err := p.flush(loopCtx); err != nil {
				continue
			}
		case <-expireTick.C:
			closed := p.manager.Expire()
			if len(closed) > 0 {
				p.emitAll(closed)
			}
			p.updateGauges(false)
		case <-commitTick.C:
			p.tryCommit(genCtx)
		}
	}
}

// handle processes one input record.
func (p *partition) handle(ctx context.Context, m kafka.Message) error {
	w := p.w
	p.next = m.Offset + 1
	p.position.Store(p.next) // the lag tracker reports high watermark − position
	replaying := m.Offset < p.replayUntil
	if replaying {
		w.metrics.Records.WithLabelValues("replayed").Inc()
	}

	if len(m.Value) > w.cfg.MaxMessageBytes {
		p.deadLetter(m, &schema.InvalidError{Reason: schema.ReasonTooLarge,
			Detail: fmt.Sprintf("value is %d bytes, limit %d (DISTFEAT_MAX_MESSAGE_BYTES)", len(m.Value), w.cfg.MaxMessageBytes)}, replaying)
		return nil
	}
	batches, err := schema.DecodeRecord(m.Key, m.Value, header(m, "content-type"), m.Time.UnixMilli(), p.decodeOpt)
	if err != nil {
		p.deadLetter(m, err, replaying)
		return nil
	}
	// Normalise every batch before adding any, so a record is all in or all out.
	total := 0
	for _, b := range batches {
		total += len(b.Points)
	}
	if cap(p.normBuf) < total {
		p.normBuf = make([]float64, total)
	}
	norm := p.normBuf[:total]
	at, clipped := 0, 0
	for i, b := range batches {
		c, err := w.emb.Normalize(norm[at:at+len(b.Points)], b.Points)
		if err != nil {
			p.deadLetter(m, asInvalid(err, i, b.Set), replaying)
			return nil
		}
		clipped += c
		at += len(b.Points)
	}

	// A record is dead-lettered at most once, with every rejected batch in the detail. Late
	// multi-set records are caught whole by CheckLate below; a batch can still be rejected
	// after earlier ones were applied only when adding one evicts (MAX_OPEN_WINDOWS) the set
	// of a later one.
	var rejected *schema.InvalidError
	reject := func(e *schema.InvalidError) {
		if rejected == nil {
			rejected = e
		} else {
			rejected.Detail += "; " + e.Detail
		}
	}
	ins := p.insBuf[:0]
	for range batches {
		ins = append(ins, window.Input{})
	}
	p.insBuf = ins
	at, index := 0, 0
	for i, b := range batches {
		ins[i] = window.Input{
			Offset: m.Offset, Index: index, Set: b.Set,
			Points: norm[at : at+len(b.Points)], Dim: w.emb.Dim(),
			EventTime: b.EventTime, End: b.End,
		}
		at += len(b.Points)
		index += b.N
	}
	// A record with several sets is all in or all out: if any of its batches is late, none
	// is applied and the record is dead-lettered whole.
	if len(ins) > 1 {
		if err := p.manager.CheckLate(ins); err != nil {
			p.deadLetter(m, &schema.InvalidError{Reason: schema.ReasonLate, Detail: err.Error()}, replaying)
			return nil
		}
	}
	for i, in := range ins {
		b := batches[i]
		closed, err := p.manager.Add(in)
		switch {
		case errors.Is(err, window.ErrLate):
			reject(&schema.InvalidError{Reason: schema.ReasonLate,
				Detail: fmt.Sprintf("batch %d (set %q, t=%d): %v", i, b.Set, b.EventTime, err)})
			continue
		case errors.Is(err, window.ErrEndWithoutWindow):
			if !replaying {
				w.metrics.EndWithoutWindow.Inc()
			}
		case err != nil:
			reject(&schema.InvalidError{Reason: schema.ReasonDecode, Detail: err.Error()})
			continue
		}
		if !replaying {
			w.metrics.Points.Add(float64(b.N))
		}
		if len(closed) > 0 {
			if replaying {
				// Closed by a record below replayUntil: emitted and acknowledged before the commit.
				for _, c := range closed {
					p.manager.Release(c.Sketch)
				}
			} else {
				p.emitAll(closed)
			}
		}
	}
	if rejected != nil {
		p.deadLetter(m, rejected, replaying)
		return nil
	}
	if !replaying {
		w.metrics.Records.WithLabelValues("ok").Inc()
		if clipped > 0 {
			w.metrics.PointsClipped.Add(float64(clipped))
		}
	}
	return nil
}

// emitAll finalises closed windows and queues their feature records.
func (p *partition) emitAll(closed []window.Closed[*embedding.Sketch]) {
	w := p.w
	for _, c := range closed {
		vecs := c.Sketch.Finalize(w.observeFinalize)
		rec := schema.FeatureRecord{
			Set: c.Set, WindowStart: c.Start, WindowEnd: c.End, Seq: c.Seq, N: c.N,
			SpecID: w.specID, Vectors: vecs,
		}
		value, err := w.out.Encode(rec)
		p.manager.Release(c.Sketch)
		if err != nil {
			// Encoding a well-formed record cannot fail short of a bug, and stopping here
			// would wedge the partition: the window is logged and counted instead.
			w.log.Error("encode feature record", "set", c.Set, "seq", c.Seq, "err", err)
			w.metrics.ProduceErrors.Inc()
			continue
		}
		seq := strconv.FormatUint(c.Seq, 10)
		p.queue(kafka.Message{
			Topic: w.cfg.OutputTopic,
			Key:   []byte(c.Set),
			Value: value,
			Time:  time.UnixMilli(c.End),
			Headers: []kafka.Header{
				{Key: "content-type", Value: []byte(schema.ContentTypeArrow)},
				{Key: "spec-id", Value: []byte(rec.SpecID)},
				{Key: "window-id", Value: []byte(seq)},
			},
		}, c.FirstOffset, c.End)
		w.metrics.WindowsEmitted.WithLabelValues(string(c.Reason)).Inc()
		w.metrics.WindowPoints.Observe(float64(c.N))
	}
}

// deadLetter queues the original record for the dead-letter topic with the error headers.
func (p *partition) deadLetter(m kafka.Message, err error, replaying bool) {
	if replaying {
		return // dead-lettered and acknowledged before the last commit
	}
	w := p.w
	reason := schema.ReasonOf(err)
	detail := err.Error()
	var inv *schema.InvalidError
	if errors.As(err, &inv) {
		detail = inv.Detail
	}
	if len(detail) > 1024 {
		detail = detail[:1024]
	}
	w.metrics.RecordsInvalid.WithLabelValues(reason).Inc()
	w.metrics.Records.WithLabelValues("invalid").Inc()
	w.log.Debug("dead letter", "partition", p.id, "offset", m.Offset, "reason", reason, "detail", detail)
	headers := make([]kafka.Header, 0, len(m.Headers)+5)
	headers = append(headers, m.Headers...)
	headers = append(headers,
		kafka.Header{Key: "error", Value: []byte(reason)},
		kafka.Header{Key: "error-detail", Value: []byte(detail)},
		kafka.Header{Key: "source-topic", Value: []byte(m.Topic)},
		kafka.Header{Key: "source-partition", Value: []byte(strconv.Itoa(m.Partition))},
		kafka.Header{Key: "source-offset", Value: []byte(strconv.FormatInt(m.Offset, 10))},
	)
	p.queue(kafka.Message{Topic: w.cfg.DLQTopic, Key: m.Key, Value: m.Value, Headers: headers, Time: m.Time}, m.Offset, -1)
	w.metrics.DeadLetters.Inc()
}

// queue appends an output message; first is the lowest input offset it depends on.
func (p *partition) queue(msg kafka.Message, first int64, endMs int64) {
	p.pending = append(p.pending, msg)
	p.pendingEnds = append(p.pendingEnds, endMs)
	if p.pendingFirst < 0 || first < p.pendingFirst {
		p.pendingFirst = first
	}
}

// flush hands pending output to the pipeline (blocking when MaxInFlight batches are
// unacknowledged: back-pressure). The batch carries the commit position of this moment.
func (p *partition) flush(ctx context.Context) error {
	if len(p.pending) == 0 {
		return nil
	}
	b := &outBatch{msgs: p.pending, ends: p.pendingEnds, first: p.pendingFirst, through: p.next,
		commit: p.currentCommitPoint()}
	if err := p.out.submit(ctx, b); err != nil {
		return err
	}
	p.pending, p.pendingEnds, p.pendingFirst = nil, nil, -1
	return nil
}

// currentCommitPoint is the window manager's safe offset with the checkpoint of this moment
// and replayUntil = next: committing it is correct once all output queued so far is
// acknowledged (everything closed by records below next is then delivered).
func (p *partition) currentCommitPoint() commitPoint {
	return commitPoint{
		offset:   p.manager.SafeOffset(p.next),
		metadata: formatMetadata(metadata{replayUntil: p.next, window: p.manager.Checkpoint()}),
	}
}

// commitCandidate is what may be committed now: the current position when no output is
// pending or in flight, else the position captured with the last acknowledged batch.
func (p *partition) commitCandidate() (commitPoint, bool) {
	if p.next < p.replayUntil {
		// Still replaying what the last commit covered: that commit stays the right one.
		return commitPoint{}, false
	}
	inFlight, acked, ok := p.out.state()
	if len(p.pending) == 0 && !inFlight {
		return p.currentCommitPoint(), true
	}
	return acked, ok
}

// tryCommit commits the candidate position if it differs from the last commit.
func (p *partition) tryCommit(ctx context.Context) {
	if p.next == 0 && p.committed < 0 {
		return // nothing read yet
	}
	cp, ok := p.commitCandidate()
	if !ok || cp.offset < p.committed || (cp.offset == p.committed && cp.metadata == p.lastMeta) {
		if p.committed < p.next {
			p.w.metrics.CommitDeferred.Inc()
		}
		return
	}
	cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if err := p.w.commit(cctx, p.gen, p.id, cp.offset, cp.metadata); err != nil {
		p.w.log.Warn("commit failed (will retry)", "partition", p.id, "offset", cp.offset, "err", err)
		return
	}
	p.committed, p.lastMeta = cp.offset, cp.metadata
	p.w.metrics.CommittedOffset.WithLabelValues(p.label).Set(float64(cp.offset))
}

// shutdown flushes everything, waits for acknowledgements and commits (SIGTERM path).
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
	if err := p.flush(ctx); err != nil {
		p.w.log.Warn("shutdown: flush incomplete", "partition", p.id, "err", err)
	}
	if err := p.out.drain(ctx); err != nil {
		p.w.log.Warn("shutdown: output not fully acknowledged; the next owner replays it", "partition", p.id, "err", err)
	}
	p.tryCommit(ctx)
	p.w.log.Info("partition stopped", "partition", p.id, "committed", p.committed, "open_windows", p.manager.Open())
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
	open, bytes := p.w.gauges.set(p.id, p.manager, final)
	p.w.metrics.WindowsOpen.Set(float64(open))
	p.w.metrics.SketchBytes.Set(float64(bytes))
}

func header(m kafka.Message, key string) string {
	for _, h := range m.Headers {
		if h.Key == key {
			return string(h.Value)
		}
	}
	return ""
}

// asInvalid maps a normalisation error to its dead-letter reason.
func asInvalid(err error, batch int, set string) error {
	reason := schema.ReasonDecode
	switch {
	case errors.Is(err, embedding.ErrOutOfBounds):
		reason = schema.ReasonOutOfBounds
	case errors.Is(err, embedding.ErrNonFinite):
		reason = schema.ReasonNonFinite
	}
	return &schema.InvalidError{Reason: reason, Detail: fmt.Sprintf("batch %d (set %q): %v", batch, set, err)}
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
