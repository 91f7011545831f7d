// Package consumer is distfeat's Kafka side of the worker: consumer-group generations, one
// goroutine per assigned partition, the ordered output pipeline and offset commits
// (docs/guarantees.md). It only moves kafka-go messages in and out: everything between a fetched
// record and its feature records or dead letters is package processor's.
//
// Delivery in one paragraph: every partition loop hands fetched records to its processor
// (decode, windows, finalisation, dead letters) and its output, in order, to an ordered output
// pipeline. The committed offset never passes the first offset of an open window nor of a
// window whose record is not yet acknowledged (RequiredAcks=all), and the commit carries a
// small checkpoint in its metadata so that a replay after a crash or rebalance rebuilds the
// same windows and re-emits nothing that was acknowledged before the commit.
package consumer

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/segmentio/kafka-go"

	"github.com/distfeat/distfeat/config"
	"github.com/distfeat/distfeat/embedding"
	"github.com/distfeat/distfeat/internal/metrics"
	"github.com/distfeat/distfeat/kafkaio"
	"github.com/distfeat/distfeat/model"
	"github.com/distfeat/distfeat/processor"
	"github.com/distfeat/distfeat/schema"
	"github.com/distfeat/distfeat/window"
)

// Config configures a Worker. It embeds the groups of config.Config the worker reads, so the
// service hands them down whole; zero fields take the documented defaults (config's
// SetDefaults), the fields below them the defaults noted on each.
type Config struct {
	// Topics: the brokers, the input, output and dead-letter topics and the group. PointsTopic,
	// if set, receives the per-point features of the spec's marginal_transfer families
	// (processor.PointFeature), committed after acknowledgement like the feature records;
	// the embedder must then retain points (embedding.WithPointRetention).
	config.Topics
	// Models: Model is a model file put in force at start; one fitted under another spec_id
	// or for other columns, or without an interval at ModelCoverage, fails NewWorker with an
	// error naming both. ModelsTopic is a compacted topic of model files keyed by model name,
	// read from its first offset before the worker joins the group and followed afterwards:
	// the newest valid model named ModelName replaces the model in force for the windows
	// finalised after it is read; a mismatched one is dead-lettered (model_<reason>) and the
	// model in force stays (docs/fitting.md). Each closed window's prediction goes to
	// PredictionsTopic (default: OutputTopic + ".predictions"), committed after
	// acknowledgement like the feature records.
	config.Models
	// Delivery: the record limits (an input value over MaxMessageBytes is dead-lettered as
	// too_large; MaxOutputBytes bounds one produce request per partition, kafka-go
	// BatchBytes, and so every output record, dead letters cut to fit it), the memory budget
	// MaxBufferBytes for the records held outside the sketches (fetched and not yet
	// processed, output not yet acknowledged; see budget.go) divided over the partitions of
	// each generation, AllowKeyless (processor.Config), ResetCheckpoints (a partition whose
	// committed checkpoint was written under another spec or window mode restarts from the
	// committed offset without replay suppression; without it Run fails on it,
	// processor.ErrCheckpointMismatch), the group's SessionTimeout and how often each
	// partition tries to commit (CommitInterval).
	config.Delivery
	// ShutdownTimeout bounds the final flush and commit on shutdown. Default 20 s.
	ShutdownTimeout time.Duration

	Window window.Config

	// FlushInterval bounds how long a finished feature record waits for companions before
	// it is written. Default DefaultFlushInterval.
	FlushInterval time.Duration
	// FlushMessages is the number of pending output messages that triggers a write. Default
	// DefaultFlushMessages.
	FlushMessages int
	// MaxInFlight is the number of unacknowledged output batches per partition before the
	// partition stops reading (back-pressure). Default DefaultMaxInFlight.
	MaxInFlight int
	// PermanentRetry is how often an output write that failed permanently (a record over
	// the broker's size limit, a deleted topic, missing authorisation) is tried again while
	// the partition waits for the operator's fix. Default 30 s.
	PermanentRetry time.Duration
	// HeartbeatInterval of the consumer group. Default a tenth of SessionTimeout.
	HeartbeatInterval time.Duration
	// RebalanceTimeout is how long the coordinator waits for members to rejoin. Default
	// SessionTimeout.
	RebalanceTimeout time.Duration

	// Dialer (TLS/SASL) is used by the consumer group and readers; Transport by the writer
	// and the offset client. Nil: plain TCP.
	Dialer    *kafka.Dialer
	Transport *kafka.Transport
	// User is the SASL user, named in authentication and authorisation errors.
	User string
}

// The defaults of the output pipeline's settings, which no variable sets.
const (
	DefaultFlushInterval = 5 * time.Millisecond
	DefaultFlushMessages = 256
	DefaultMaxInFlight   = 4
)

func (c *Config) setDefaults() {
	c.Topics.SetDefaults()
	c.Delivery.SetDefaults()
	c.PredictionsTopic = c.PredictionsTopicName(c.OutputTopic)
	if c.ShutdownTimeout <= 0 {
		c.ShutdownTimeout = config.DefaultShutdownTimeout
	}
	if c.FlushInterval <= 0 {
		c.FlushInterval = DefaultFlushInterval
	}
	if c.FlushMessages <= 0 {
		c.FlushMessages = DefaultFlushMessages
	}
	if c.MaxInFlight <= 0 {
		c.MaxInFlight = DefaultMaxInFlight
	}
	if c.PermanentRetry <= 0 {
		c.PermanentRetry = permanentRetry
	}
	if c.HeartbeatInterval <= 0 {
		c.HeartbeatInterval = c.SessionTimeout / 10
	}
	if c.RebalanceTimeout <= 0 {
		c.RebalanceTimeout = c.SessionTimeout
	}
}

// Worker is one distfeat worker process's consumer-group member.
type Worker struct {
	cfg     Config
	emb     *embedding.Embedder
	out     *schema.Output
	points  *schema.PointOutput // per-point output (Config.PointsTopic), or nil
	models  *models             // the model in force (Config.Model, ModelsTopic), or nil
	metrics *metrics.Metrics
	log     *slog.Logger
	clock   window.Clock

	writer    *kafka.Writer
	client    *kafka.Client
	transport *kafka.Transport // the writer's and the client's

	finalizeSeconds map[string]prometheus.Observer // finalize_seconds{family}, resolved once
	clips           *clipWarner                    // the clipping warning, shared by the partitions

	ready        atomic.Bool
	fail         context.CancelCauseFunc // stops Run with an error (set by Run before any partition starts)
	stalls       stalls                  // partitions whose output is failing
	markerStalls stalls                  // partitions whose idle-close markers cannot be written
	fetchStalls  stalls                  // partitions whose input the worker may not read
	unclean      unclean                 // partitions whose shutdown left output unacknowledged or uncommitted
	running      sync.WaitGroup          // partition functions started in generations
	settled      sync.WaitGroup          // partition functions that have not finished their own work yet
	gauges       gauges

	modelFollowers sync.WaitGroup // the models topic's readers
}

// NewWorker validates the configuration and builds a worker. Nothing connects until Run.
func NewWorker(cfg Config, emb *embedding.Embedder, out *schema.Output, m *metrics.Metrics, log *slog.Logger, clock window.Clock) (w *Worker, err error) {
	cfg.setDefaults()
	if len(cfg.Brokers) == 0 {
		return nil, errors.New("consumer: no brokers configured (DISTFEAT_BROKERS)")
	}
	if err := cfg.Window.Validate(); err != nil {
		return nil, fmt.Errorf("consumer: %w", err)
	}
	if cfg.MaxOutputBytes < config.MinOutputBytes {
		return nil, fmt.Errorf("consumer: DISTFEAT_MAX_OUTPUT_BYTES %d is below the minimum %d", cfg.MaxOutputBytes, config.MinOutputBytes)
	}
	if emb == nil || out == nil || m == nil {
		return nil, errors.New("consumer: embedder, output and metrics are required")
	}
	if err := processor.CheckWorkerSpec(emb, cfg.Window.Mode); err != nil {
		return nil, fmt.Errorf("consumer: DISTFEAT_SPEC: %w", err)
	}
	if err := checkFeatureSize(emb, out, cfg.MaxOutputBytes); err != nil {
		return nil, err
	}
	var points *schema.PointOutput
	if cfg.PointsTopic != "" {
		if points, err = pointOutput(cfg, emb); err != nil {
			return nil, err
		}
	}
	if log == nil {
		log = slog.Default()
	}
	var mods *models
	if cfg.Predicting() {
		if cfg.ModelsTopic != "" && cfg.ModelName == "" {
			return nil, errors.New("consumer: DISTFEAT_MODELS_TOPIC needs DISTFEAT_MODEL_NAME")
		}
		cols := make([]model.Column, 0, len(emb.Columns()))
		for _, c := range emb.Columns() {
			cols = append(cols, model.Column{Name: c.Name, Len: c.Len})
		}
		var pointCols []model.Column // a per-point model's columns, with per-point output only
		if points != nil {
			for _, pm := range emb.PointMaps() {
				pointCols = append(pointCols, model.Column{Name: pm.Name(), Len: pm.Len()})
			}
		}
		if mods, err = newModels(cfg, emb, cols, pointCols, m, log); err != nil {
			return nil, err
		}
		m.PredictionsConfigured.Set(1)
	}
	if clock == nil {
		clock = window.SystemClock{}
	}
	transport := cfg.Transport
	if transport == nil {
		transport = &kafka.Transport{}
	}
	w = &Worker{
		cfg: cfg, emb: emb, out: out, points: points, models: mods, metrics: m, log: log, clock: clock,
		writer: &kafka.Writer{
			Addr:         kafka.TCP(cfg.Brokers...),
			Balancer:     &kafka.Murmur2Balancer{Consistent: true},
			RequiredAcks: kafka.RequireAll,
			BatchTimeout: time.Millisecond,
			BatchSize:    cfg.FlushMessages,
			BatchBytes:   int64(cfg.MaxOutputBytes),
			MaxAttempts:  3,
			Transport:    transport,
		},
		client:          &kafka.Client{Addr: kafka.TCP(cfg.Brokers...), Transport: transport, Timeout: 10 * time.Second},
		transport:       transport,
		finalizeSeconds: map[string]prometheus.Observer{},
		clips:           newClipWarner(log, clock),
	}
	for _, c := range emb.Columns() {
		w.finalizeSeconds[c.Family] = m.FinalizeSeconds.WithLabelValues(c.Family)
	}
	m.BufferLimit.Set(float64(cfg.MaxBufferBytes))
	m.SetReadiness(w.Ready)
	return w, nil
}

// Ready reports whether the worker is a member of a group generation and every partition's
// output is flowing (see NotReadyReason).
func (w *Worker) Ready() bool { return w.NotReadyReason() == "" }

// NotReadyReason is "" when the worker is ready, else why not: not a member of a consumer
// group generation, output failing on some partitions (a missing or unwritable topic, a
// record over a size limit, a broker refusing writes), or input the worker may not read. The worker recovers by itself once
// output flows again; /readyz serves this text.
func (w *Worker) NotReadyReason() string {
	if !w.ready.Load() {
		return "not a member of a consumer-group generation"
	}
	if r := w.stalls.describe(); r != "" {
		return r
	}
	if r := w.fetchStalls.describe(); r != "" {
		return "input not readable on partition(s)" + strings.TrimPrefix(r, "output failing on partition(s)")
	}
	if r := w.markerStalls.describe(); r != "" {
		return "idle-close markers (to the input topic) failing on partition(s)" + strings.TrimPrefix(r, "output failing on partition(s)")
	}
	return ""
}

// Run consumes until ctx is cancelled, then stops fetching, flushes acknowledged output,
// commits, leaves the group and returns nil. Broker outages and missing permissions are
// retried with back-off (not ready meanwhile); a TLS or SASL authentication failure ends Run
// with a *kafkaio.Error naming the layer, since retrying cannot mend a configuration.
// It returns an error wrapping ErrShutdownIncomplete when, on the stop, some partition's
// output was not acknowledged or its position not committed within ShutdownTimeout (the
// next owner replays from the last commit, so nothing is lost, but the stop was not clean).
func (w *Worker) Run(parent context.Context) (err error) {
	defer w.writer.Close()
	// A fatal condition found by a partition (a checkpoint of another configuration) stops
	// the whole worker through ctx's cause, after the other partitions' clean shutdown.
	ctx, fail := context.WithCancelCause(parent)
	defer fail(nil)
	w.fail = fail
	if err := w.checkTopics(ctx); err != nil {
		return err
	}
	if ctx.Err() != nil {
		return nil
	}
	if w.cfg.ModelsTopic != "" {
		// The followers write refused models' dead letters: they end before the writer closes.
		defer w.modelFollowers.Wait()
		if err := w.followModels(ctx); err != nil {
			return err
		}
		if ctx.Err() != nil {
			return nil
		}
	}
	group, err := kafka.NewConsumerGroup(kafka.ConsumerGroupConfig{
		ID:                w.cfg.Group,
		Brokers:           w.cfg.Brokers,
		Dialer:            w.cfg.Dialer,
		Topics:            []string{w.cfg.InputTopic},
		StartOffset:       kafka.FirstOffset,
		SessionTimeout:    w.cfg.SessionTimeout,
		HeartbeatInterval: w.cfg.HeartbeatInterval,
		RebalanceTimeout:  w.cfg.RebalanceTimeout,
		JoinGroupBackoff:  500 * time.Millisecond,
		ErrorLogger:       kafka.LoggerFunc(func(msg string, args ...any) { w.log.Debug("kafka-go group", "msg", fmt.Sprintf(msg, args...)) }),
	})
	if err != nil {
		return fmt.Errorf("consumer: group %q: %w", w.cfg.Group, err)
	}
	stopLag := w.startGroupLag(ctx) // the group's lag on every input partition (grouplag.go)
	defer stopLag()
	defer func() {
		// Leave only once every partition has flushed and committed; the partitions hold
		// their generation open until then (see below), so the group sees one departure.
		w.settled.Wait()
		group.Close()
		w.running.Wait()
		w.ready.Store(false)
		if err == nil {
			err = w.unclean.err(w.cfg.ShutdownTimeout)
		}
	}()

	// At most 2 s between join attempts: when a Kafka broker that was the group coordinator
	// dies, joins fail until the coordinator has moved (the broker session timeout, seconds),
	// and a longer back-off only adds to the time the group stands still after that
	// (TestRealKafkaFailover: up to 4 s more with a 10 s cap).
	backoff := newBackoff(200*time.Millisecond, 2*time.Second)
	for {
		gen, err := group.Next(ctx)
		if ctx.Err() != nil {
			w.log.Info("shutting down: stopping partitions")
			return fatalCause(ctx)
		}
		if err != nil {
			w.ready.Store(false)
			if err = w.classify(ctx, err, "read (join)", fmt.Sprintf("group %q (DISTFEAT_GROUP)", w.cfg.Group)); kafkaio.Fatal(err) {
				// Stop any partition still running, as for a fatal partition error.
				fail(&fatalError{fmt.Errorf("consumer: group %q: %w", w.cfg.Group, err)})
				return fatalCause(ctx)
			}
			d := backoff.next()
			w.log.Warn("consumer group: cannot join yet, retrying", "group", w.cfg.Group, "brokers", w.cfg.Brokers, "err", err, "retry_in", d)
			if !sleep(ctx, d) {
				return fatalCause(ctx)
			}
			continue
		}
		backoff.reset()
		w.metrics.Rebalances.Inc()
		assigned := gen.Assignments[w.cfg.InputTopic]
		ids := make([]int, 0, len(assigned))
		for _, a := range assigned {
			ids = append(ids, a.ID)
		}
		w.log.Info("joined generation", "generation", gen.ID, "member", gen.MemberID, "partitions", ids)
		b := w.partitionBudget(len(assigned))
		for _, a := range assigned {
			w.running.Add(1)
			w.settled.Add(1)
			gen.Start(func(genCtx context.Context) { w.runPartition(ctx, genCtx, gen, a, b) })
		}
		w.ready.Store(true)
	}
}

// runPartition is one assigned partition's life within a generation: read its commit
// checkpoint, run its loop until the generation ends or the worker stops.
func (w *Worker) runPartition(ctx, genCtx context.Context, gen *kafka.Generation, a kafka.PartitionAssignment, b budget) {
	defer w.running.Done()
	settled := sync.OnceFunc(w.settled.Done)
	defer settled()
	// Give up on the worker's stop as well as on the generation's end.
	fetchCtx, cancel := context.WithCancel(genCtx)
	stop := context.AfterFunc(ctx, cancel)
	cp, err := w.fetchCheckpoint(fetchCtx, gen, a.ID)
	stop()
	cancel()
	if err != nil {
		return // stopped before the checkpoint could be read; nothing was consumed
	}
	p := newPartition(w, gen, a.ID, a.Offset, cp, b)
	if err := p.run(ctx, genCtx); err != nil {
		w.log.Error("partition loop ended with error", "partition", a.ID, "err", err)
		var fe *fatalError
		if errors.As(err, &fe) {
			w.fail(fe)
		}
	}
	if ctx.Err() != nil {
		// The worker is stopping and this partition has committed. kafka-go ends a
		// generation as soon as one of its functions returns and then rejoins, which would
		// cost the group an extra rebalance before the leave; so hold the generation until
		// Run closes the group.
		settled()
		<-genCtx.Done()
	}
}

// fetchCheckpoint reads one partition's commit metadata (the replay checkpoint). It retries
// until it succeeds or ctx (the generation) ends: a partition never starts without it, since
// replaying without the checkpoint would re-emit acknowledged windows and, for time and
// session windows, lose the watermark. Right after a broker restart the requests on pooled
// connections fail (EOF), so a failed attempt drops the idle connections.
func (w *Worker) fetchCheckpoint(ctx context.Context, gen *kafka.Generation, partition int) (string, error) {
	bo := newBackoff(100*time.Millisecond, 5*time.Second)
	for {
		fctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		resp, err := w.client.OffsetFetch(fctx, &kafka.OffsetFetchRequest{
			GroupID: gen.GroupID,
			Topics:  map[string][]int{w.cfg.InputTopic: {partition}},
		})
		cancel()
		if err == nil && resp.Error != nil {
			err = resp.Error
		}
		if err == nil {
			err = fmt.Errorf("partition %d missing from the response", partition)
			for _, p := range resp.Topics[w.cfg.InputTopic] {
				if p.Partition == partition {
					if p.Error == nil {
						return p.Metadata, nil
					}
					err = p.Error
				}
			}
		}
		d := bo.next()
		w.log.Warn("reading the commit checkpoint failed, retrying", "partition", partition, "err", err, "retry_in", d)
		w.transport.CloseIdleConnections()
		if !sleep(ctx, d) {
			return "", ctx.Err()
		}
	}
}

// commit writes one partition's offset and checkpoint under the generation.
func (w *Worker) commit(ctx context.Context, gen *kafka.Generation, partition int, offset int64, metadata string) error {
	resp, err := w.client.OffsetCommit(ctx, &kafka.OffsetCommitRequest{
		GroupID:      gen.GroupID,
		GenerationID: int(gen.ID),
		MemberID:     gen.MemberID,
		Topics: map[string][]kafka.OffsetCommit{
			w.cfg.InputTopic: {{Partition: partition, Offset: offset, Metadata: metadata}},
		},
	})
	if err != nil {
		return err
	}
	for _, p := range resp.Topics[w.cfg.InputTopic] {
		if p.Error != nil {
			return p.Error
		}
	}
	return nil
}

func partitionLabel(p int) string { return strconv.Itoa(p) }

// partitionBudget divides MaxBufferBytes over a generation's partitions, warning when the
// budget is below what that many partitions hold at least.
func (w *Worker) partitionBudget(partitions int) budget {
	b := newBudget(int64(w.cfg.MaxBufferBytes), partitions, w.cfg.MaxMessageBytes+(1<<20), w.cfg.MaxOutputBytes)
	if partitions > 0 && b.requested < b.floor {
		w.log.Warn("DISTFEAT_MAX_BUFFER_BYTES is below what the assigned partitions hold at least; memory may exceed it",
			"max_buffer_bytes", w.cfg.MaxBufferBytes, "partitions", partitions, "per_partition", b.requested, "per_partition_floor", b.floor)
	}
	return b
}

// fatalError is a partition error that must stop the worker: Run returns it.
type fatalError struct{ err error }

func (e *fatalError) Error() string { return e.err.Error() }
func (e *fatalError) Unwrap() error { return e.err }

// fatalCause is nil when ctx ended because the caller stopped the worker, else the fatal
// error a partition stopped it with.
func fatalCause(ctx context.Context) error {
	var fe *fatalError
	if errors.As(context.Cause(ctx), &fe) {
		return fe.err
	}
	return nil
}

// classify names a failed request's cause: an authorisation error as the principal, the
// operation and the resource; any other error by a probe of the connection's layers (TCP,
// TLS, SASL), which returns a fatal error for a TLS or authentication failure. Without a
// finding it returns err.
func (w *Worker) classify(ctx context.Context, err error, operation, resource string) error {
	if aerr := kafkaio.Authorization(err, w.cfg.User, operation, resource); aerr != nil {
		return aerr
	}
	dialer := w.cfg.Dialer
	if dialer == nil {
		dialer = &kafka.Dialer{}
	}
	if perr := kafkaio.Probe(ctx, kafkaio.Target{Brokers: w.cfg.Brokers, Dialer: dialer, User: w.cfg.User}); perr != nil && ctx.Err() == nil {
		return fmt.Errorf("%w (the request failed with: %v)", perr, err)
	}
	return err
}

// backoff is a capped exponential back-off.
type backoff struct{ cur, min, max time.Duration }

func newBackoff(min, max time.Duration) *backoff { return &backoff{cur: min, min: min, max: max} }

func (b *backoff) next() time.Duration {
	d := b.cur
	b.cur *= 2
	if b.cur > b.max {
		b.cur = b.max
	}
	return d
}

func (b *backoff) reset() { b.cur = b.min }

// sleep waits d or until ctx is done; it reports whether the full wait elapsed.
func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}
