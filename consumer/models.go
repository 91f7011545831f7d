package consumer

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/segmentio/kafka-go"

	"github.com/distfeat/distfeat/embedding"
	"github.com/distfeat/distfeat/internal/metrics"
	"github.com/distfeat/distfeat/kafkaio"
	"github.com/distfeat/distfeat/model"
	"github.com/distfeat/distfeat/processor"
	"github.com/distfeat/distfeat/schema"
)

// models holds the model in force (processor.Models): the model file's at start, replaced by
// each valid model named ModelName that the follower of the models topic reads.
type models struct {
	name      string // ModelName, or the file's path for a file-only worker
	specID    string
	cols      []model.Column
	pointCols []model.Column // the per-point columns (DISTFEAT_POINT_FEATURES_TOPIC); nil: no per-point output
	emb       *embedding.Embedder
	coverage  float64
	m         *metrics.Metrics
	log       *slog.Logger

	cur atomic.Pointer[model.Applier]
	mu  sync.Mutex // serialises set (ModelInfo's labels follow cur)
}

var _ processor.Models = (*models)(nil)

// Current is the model in force (nil: none yet).
func (s *models) Current() *model.Applier { return s.cur.Load() }

// set puts a in force, from source ("file" or "topic"), unless it is the model in force.
func (s *models) set(a *model.Applier, source string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	old := s.cur.Load()
	if old != nil && old.Model().ModelVersion == a.Model().ModelVersion {
		return
	}
	s.cur.Store(a)
	m := a.Model()
	s.m.ModelInfo.Reset()
	s.m.ModelInfo.WithLabelValues(s.name, m.ModelVersion, m.SpecID, m.Kind).Set(1)
	s.m.ModelLoads.WithLabelValues(source).Inc()
	prev := ""
	if old != nil {
		prev = old.Model().ModelVersion
	}
	s.log.Info("model in force", "name", s.name, "model_version", m.ModelVersion, "previous", prev, "source", source,
		"kind", m.Kind, "spec_id", m.SpecID, "coverage", a.Coverage())
}

// maxSetBytes is the longest set ID the input accepts (schema.DecodeOptions' default).
const maxSetBytes = 256

// applier checks a model against the spec in use: a per-set model against the window
// columns, a per-point model against the per-point columns — refused (RefusedPer) without
// DISTFEAT_POINT_FEATURES_TOPIC, which its predictions are written to — and its records
// against the output limit (checkSize).
func (s *models) applier(mod *model.Model, maxOutput int) (*model.Applier, error) {
	var a *model.Applier
	var err error
	switch {
	case mod.PredictsPoints() && s.pointCols == nil:
		return nil, &model.RefusedError{Reason: model.RefusedPer, Err: fmt.Errorf("model %s predicts each point (fit --point-label): its predictions go to the per-point records, and DISTFEAT_POINT_FEATURES_TOPIC is not set", mod.ModelVersion)}
	case mod.PredictsPoints():
		a, err = model.NewPointApplier(mod, s.specID, s.pointCols, s.coverage)
	default:
		a, err = model.NewApplier(mod, s.specID, s.cols, s.coverage)
	}
	if err == nil {
		err = checkSize(a, s.emb, maxOutput)
	}
	return a, err
}

// checkSize refuses (RefusedTooLarge) a model whose prediction records, for the longest set
// ID, would not fit the output limit with their headers: the broker would refuse them and
// stall the partition. A per-point model's records are the per-point records with its
// prediction columns: one point's must fit.
func checkSize(a *model.Applier, emb *embedding.Embedder, maxOutput int) error {
	m := a.Model()
	if m.PredictsPoints() {
		if _, err := processor.PointChunk(emb, processor.PointPredictionOutput(emb, a), maxOutput); err != nil {
			return &model.RefusedError{Reason: model.RefusedTooLarge, Err: fmt.Errorf("model %s: %w", m.ModelVersion, err)}
		}
		return nil
	}
	r := schema.PredictionRecord{Set: strings.Repeat("x", maxSetBytes), SpecID: m.SpecID, ModelVersion: m.ModelVersion,
		ModelKind: m.Kind, Interval: &[2]float32{}, Coverage: a.Coverage()}
	if len(m.Classes) > 0 {
		r.Classes, r.Scores = m.Classes, make([]float32, len(m.Classes))
	}
	b, err := schema.NewPredictionOutput().Encode(r)
	if err != nil {
		return &model.RefusedError{Reason: model.RefusedDecode, Err: err}
	}
	if size := len(b) + 2*maxSetBytes + 1024; size > maxOutput { // key and headers: set ID, window-id, spec-id, model-version
		return &model.RefusedError{Reason: model.RefusedTooLarge, Err: fmt.Errorf("model %s: its prediction records take up to %d bytes, over the output limit DISTFEAT_MAX_OUTPUT_BYTES=%d (%d classes)",
			m.ModelVersion, size, maxOutput, len(m.Classes))}
	}
	return nil
}

// newModels loads the model file, if any, refusing one that does not fit the spec in use.
// pointCols are the per-point columns, nil without per-point output.
func newModels(cfg Config, emb *embedding.Embedder, cols, pointCols []model.Column, m *metrics.Metrics, log *slog.Logger) (*models, error) {
	s := &models{name: cfg.ModelName, specID: emb.Spec().ID(), cols: cols, pointCols: pointCols, emb: emb, coverage: cfg.ModelCoverage, m: m, log: log}
	if s.name == "" {
		s.name = cfg.Model
	}
	if cfg.Model != "" {
		mod, err := model.Load(cfg.Model)
		if err != nil {
			return nil, fmt.Errorf("consumer: DISTFEAT_MODEL: %w", err)
		}
		a, err := s.applier(mod, cfg.MaxOutputBytes)
		if err != nil {
			return nil, fmt.Errorf("consumer: DISTFEAT_MODEL %s: %w", cfg.Model, err)
		}
		s.set(a, "file")
	}
	return s, nil
}

// followModels reads the models topic from its first offset until it has read every record
// that was on it when called, so that the model the topic holds is in force before the first
// window is finalised, then keeps following it on goroutines until ctx ends. It returns
// early (nil) if ctx ends first.
func (w *Worker) followModels(ctx context.Context) error {
	topic := w.cfg.ModelsTopic
	var ends map[int]int64 // partition → offset the catch-up reads up to
	bo := newBackoff(200*time.Millisecond, 5*time.Second)
	for {
		var err error
		if ends, err = w.modelTopicEnds(ctx, topic); err == nil {
			break
		}
		if err = w.classify(ctx, err, "describe", fmt.Sprintf("topic %q (DISTFEAT_MODELS_TOPIC)", topic)); kafkaio.Fatal(err) {
			return fmt.Errorf("consumer: %w", err)
		}
		d := bo.next()
		w.log.Warn("cannot read the models topic's offsets yet, retrying", "topic", topic, "err", err, "retry_in", d)
		if !sleep(ctx, d) {
			return nil
		}
	}
	var caught sync.WaitGroup
	for part, end := range ends {
		caught.Add(1)
		w.modelFollowers.Add(1)
		go func() {
			defer w.modelFollowers.Done()
			w.followModelPartition(ctx, part, end, caught.Done)
		}()
	}
	done := make(chan struct{})
	go func() { caught.Wait(); close(done) }()
	select {
	case <-done:
		cur := w.models.Current()
		if cur == nil {
			w.log.Warn("no model in force yet: windows get no prediction until a model named DISTFEAT_MODEL_NAME arrives on the models topic",
				"name", w.cfg.ModelName, "topic", topic)
		}
	case <-ctx.Done():
	}
	return nil
}

// modelTopicEnds returns, per partition of the models topic, the offset after its last
// record (0 for an empty partition): what the catch-up reads.
func (w *Worker) modelTopicEnds(ctx context.Context, topic string) (map[int]int64, error) {
	mctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	md, err := w.client.Metadata(mctx, &kafka.MetadataRequest{Topics: []string{topic}})
	if err != nil {
		return nil, err
	}
	var reqs []kafka.OffsetRequest
	for _, t := range md.Topics {
		if t.Error != nil {
			return nil, fmt.Errorf("topic %q: %w", topic, t.Error)
		}
		for _, p := range t.Partitions {
			reqs = append(reqs, kafka.FirstOffsetOf(p.ID), kafka.LastOffsetOf(p.ID))
		}
	}
	if len(reqs) == 0 {
		return nil, fmt.Errorf("topic %q has no partitions", topic)
	}
	resp, err := w.client.ListOffsets(mctx, &kafka.ListOffsetsRequest{Topics: map[string][]kafka.OffsetRequest{topic: reqs}})
	if err != nil {
		return nil, err
	}
	ends := map[int]int64{}
	for _, po := range resp.Topics[topic] {
		if po.Error != nil {
			return nil, fmt.Errorf("topic %q partition %d: %w", topic, po.Partition, po.Error)
		}
		ends[po.Partition] = po.LastOffset
		if po.LastOffset <= po.FirstOffset {
			ends[po.Partition] = -1 // empty: nothing to catch up
		}
	}
	return ends, nil
}

// followModelPartition reads one partition of the models topic from its first offset until
// ctx ends, calling caught once it has read the record before end (at once when end < 0).
func (w *Worker) followModelPartition(ctx context.Context, part int, end int64, caught func()) {
	once := sync.OnceFunc(caught)
	defer once()
	if end < 0 {
		once()
	}
	r := kafka.NewReader(kafka.ReaderConfig{
		Brokers: w.cfg.Brokers, Topic: w.cfg.ModelsTopic, Partition: part, Dialer: w.cfg.Dialer,
		MinBytes: 1, MaxBytes: 16 << 20, MaxWait: kafkaio.FetchMaxWait,
		ReadBackoffMin: 50 * time.Millisecond, ReadBackoffMax: time.Second,
		ErrorLogger: kafka.LoggerFunc(func(msg string, args ...any) {
			w.log.Debug("kafka-go models reader", "partition", part, "msg", fmt.Sprintf(msg, args...))
		}),
	})
	defer r.Close()
	if err := r.SetOffset(kafka.FirstOffset); err != nil {
		w.log.Error("models topic: cannot start reading", "partition", part, "err", err)
		return
	}
	for {
		m, err := r.FetchMessage(ctx)
		if err != nil {
			if ctx.Err() != nil {
				return
			}
			w.log.Warn("models topic: fetch failed, retrying", "partition", part, "err", err)
			if !sleep(ctx, 500*time.Millisecond) {
				return
			}
			continue
		}
		w.modelRecord(ctx, m)
		if m.Offset >= end-1 {
			once()
		}
	}
}

// modelRecord handles one record of the models topic: a valid model named ModelName goes
// in force; a mismatched or invalid one is refused (metric, log, dead letter) and the model
// in force stays; other names are ignored; a tombstone (deleted name) leaves the model in
// force (docs/fitting.md).
func (w *Worker) modelRecord(ctx context.Context, m kafka.Message) {
	if string(m.Key) != w.cfg.ModelName {
		return
	}
	where := []any{"name", w.cfg.ModelName, "topic", m.Topic, "partition", m.Partition, "offset", m.Offset}
	if m.Value == nil {
		w.log.Warn("models topic: tombstone for this worker's model ignored; the model in force stays", where...)
		return
	}
	var a *model.Applier
	mod, err := model.Parse(m.Value)
	if err != nil {
		err = &model.RefusedError{Reason: model.RefusedDecode, Err: fmt.Errorf("not a valid model file: %w", err)}
	} else {
		a, err = w.models.applier(mod, w.cfg.MaxOutputBytes)
	}
	if err != nil {
		reason := model.RefusedReason(err)
		w.metrics.ModelsRefused.WithLabelValues(reason).Inc()
		running := ""
		if cur := w.models.Current(); cur != nil {
			running = cur.Model().ModelVersion
		}
		w.log.Error("models topic: model refused, the model in force stays; dead-lettered", append(where, "reason", reason, "err", err, "model_in_force", running)...)
		w.deadLetterModel(ctx, m, reason, err)
		return
	}
	w.models.set(a, "topic")
}

// deadLetterModel writes a refused model's dead letter, retrying while ctx lasts: the models
// topic has no commit to hold, so the dead letter is written before the next record is read.
func (w *Worker) deadLetterModel(ctx context.Context, m kafka.Message, reason string, err error) {
	hdrs := make([]processor.Header, len(m.Headers))
	for i, h := range m.Headers {
		hdrs[i] = processor.Header{Key: h.Key, Value: h.Value}
	}
	dl := processor.ModelDeadLetter(processor.Record{Topic: m.Topic, Partition: m.Partition, Offset: m.Offset,
		Key: m.Key, Value: m.Value, Headers: hdrs, Time: m.Time}, reason, err, w.cfg.MaxOutputBytes)
	km := kafka.Message{Topic: w.cfg.DLQTopic, Key: dl.Key, Value: dl.Value, Time: dl.Time}
	for _, h := range dl.Headers {
		km.Headers = append(km.Headers, kafka.Header{Key: h.Key, Value: h.Value})
	}
	bo := newBackoff(200*time.Millisecond, 10*time.Second)
	for {
		werr := w.writer.WriteMessages(ctx, km)
		if werr == nil {
			w.metrics.DeadLetters.Inc()
			return
		}
		if ctx.Err() != nil || errors.Is(werr, context.Canceled) {
			return
		}
		d := bo.next()
		w.metrics.ProduceErrors.Inc()
		w.log.Warn("models topic: writing a refused model's dead letter failed, retrying", "err", werr, "retry_in", d)
		if !sleep(ctx, d) {
			return
		}
	}
}

// processorModels is the processors' model source: nil (no predictions) without a model.
func (w *Worker) processorModels() processor.Models {
	if w.models == nil {
		return nil
	}
	return w.models
}
