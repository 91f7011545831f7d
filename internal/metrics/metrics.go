// Package metrics defines distfeat's Prometheus collectors (listed in docs/configuration.md).
// One Metrics value is created per process and passed to the components that update it; nothing
// is global.
package metrics

import (
	"runtime"
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"
)

// Metrics holds every distfeat_ collector.
type Metrics struct {
	// Points counts points added to windows.
	Points prometheus.Counter
	// PointsClipped counts points clamped into the spec's bounds (out_of_bounds: clip).
	PointsClipped prometheus.Counter
	// Records counts input records by result: ok, invalid, late, replayed.
	Records *prometheus.CounterVec
	// RecordsInvalid counts dead-lettered records by reason (the reasons of docs/input-output.md).
	RecordsInvalid *prometheus.CounterVec
	// EndWithoutWindow counts `end` markers for sets with no open window (valid, nothing to emit).
	EndWithoutWindow prometheus.Counter
	// WindowsOpen is the number of open windows across this process's partitions.
	WindowsOpen prometheus.Gauge
	// WindowsEmitted counts emitted feature records by close reason.
	WindowsEmitted *prometheus.CounterVec
	// WindowPoints is the distribution of points per emitted window.
	WindowPoints prometheus.Histogram
	// PointFeatures counts points written to the per-point topic (marginal_transfer).
	PointFeatures prometheus.Counter
	// PointWindowsDropped counts windows whose points did not fit the retention budget and
	// got no per-point output.
	PointWindowsDropped prometheus.Counter
	// FinalizeSeconds is the finalisation time per family.
	FinalizeSeconds *prometheus.HistogramVec
	// TwoSamplePValue is the distribution of two_sample families' p-values (uniform
	// while nothing drifts).
	TwoSamplePValue *prometheus.HistogramVec
	// TwoSampleFlagged counts windows whose p-value is at most the family's alpha.
	TwoSampleFlagged *prometheus.CounterVec
	// SequentialWindows and SequentialAlarms count the windows and the alarms of two_sample
	// families' sequential detectors (ert); SequentialERT is each family's ERT in windows.
	SequentialWindows *prometheus.CounterVec
	SequentialAlarms  *prometheus.CounterVec
	SequentialERT     *prometheus.GaugeVec
	// EmitLatency is the time from a window's last event time to the broker's acknowledgement.
	EmitLatency prometheus.Histogram
	// ConsumerLag is high watermark minus next offset, per partition.
	ConsumerLag *prometheus.GaugeVec
	// CommittedOffset is the last committed offset per partition.
	CommittedOffset *prometheus.GaugeVec
	// CommitDeferred counts commits held back because no safe offset advanced.
	CommitDeferred prometheus.Counter
	// Rebalances counts consumer-group generations joined.
	Rebalances prometheus.Counter
	// ProduceErrors counts failed writes to the output or dead-letter topics.
	ProduceErrors prometheus.Counter
	// OutputErrors counts failed output writes by topic and error (the Kafka error name, or
	// "network"), so an alert can tell a missing topic from an oversized record.
	OutputErrors *prometheus.CounterVec
	// BufferedBytes is the bytes of records the worker holds outside its sketches, by stage:
	// queue (fetched, not yet processed) and output (pending or in flight, unacknowledged);
	// bounded by DISTFEAT_MAX_BUFFER_BYTES with the fetch stage.
	BufferedBytes *prometheus.GaugeVec
	// OutputStalled is 1 per partition whose output is failing, labelled with the kind of
	// failure (retriable, permanent, or markers: idle-close markers to the input topic);
	// while any is 1 the worker's /readyz fails.
	OutputStalled *prometheus.GaugeVec
	// BufferLimit is DISTFEAT_MAX_BUFFER_BYTES, the budget BufferedBytes (with the fetch
	// stage) stays within: near it the worker stops fetching until output is acknowledged.
	BufferLimit prometheus.Gauge
	// Ready is 1 while the worker is ready (/readyz 200) and 0 otherwise, evaluated at each
	// scrape with the check SetReadiness gives (0 before).
	Ready     prometheus.GaugeFunc
	readiness atomic.Pointer[func() bool]
	// SketchBytes is the memory held by open windows' sketches.
	SketchBytes prometheus.Gauge
	// DeadLetters counts records written to the dead-letter topic.
	DeadLetters prometheus.Counter
	// BuildInfo is 1, labelled with the version and Go version.
	BuildInfo *prometheus.GaugeVec
	// GroupLag is the consumer group's lag per partition of the input topic, as lag exporters
	// and KEDA see it: high watermark minus the group's committed offset (minus the log start
	// when nothing is committed). Every worker exports it for every partition, owned or not,
	// so a partition nobody consumes shows growing lag; aggregate with max by (partition).
	GroupLag *prometheus.GaugeVec
	// GroupCommittedOffset is the group's committed offset per partition of the input topic
	// (-1: none), read from the broker.
	GroupCommittedOffset *prometheus.GaugeVec
	// GroupPartitionsUnassigned is the number of input partitions no member of a Stable group
	// has in its assignment.
	GroupPartitionsUnassigned prometheus.Gauge
	// GroupLagErrors counts failed group-lag polls.
	GroupLagErrors prometheus.Counter
	// CloseMarkers counts durable idle-close markers by result: requested, closed, stale,
	// foreign (another group's).
	CloseMarkers *prometheus.CounterVec
	// Predictions counts prediction records by the model version that made them.
	Predictions *prometheus.CounterVec
	// ModelInfo is 1 for the model in force (name, model_version, spec_id, kind); absent
	// while none is.
	ModelInfo *prometheus.GaugeVec
	// ModelsRefused counts models refused by reason (decode, spec_id, columns, coverage, too_large):
	// from the models topic (dead-lettered; the running model stays).
	ModelsRefused *prometheus.CounterVec
	// ModelLoads counts models put in force, by source (file, topic).
	ModelLoads *prometheus.CounterVec
	// PredictionsConfigured is 1 when the worker predicts (DISTFEAT_MODEL or
	// DISTFEAT_MODELS_TOPIC), so an alert can tell "no model in force" from "no model wanted".
	PredictionsConfigured prometheus.Gauge
	// PredictionValue is the distribution of regression predictions (a classifier's: the
	// winning class's score); PredictionIntervalWidth that of the intervals' widths.
	PredictionValue         prometheus.Histogram
	PredictionIntervalWidth prometheus.Histogram
}

// New creates the collectors and registers them with reg (nil: not registered, for tests).
func New(reg prometheus.Registerer, version string) *Metrics {
	m := &Metrics{}
	m.newInputMetrics()
	m.newWindowMetrics()
	m.newOffsetMetrics()
	m.newOutputMetrics()
	m.newGroupMetrics()
	m.newPredictionMetrics()
	m.BuildInfo = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "distfeat_build_info", Help: "Always 1; labelled with the build.",
	}, []string{"version", "goversion"})
	m.BuildInfo.WithLabelValues(version, runtime.Version()).Set(1)
	m.Ready = prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "distfeat_ready", Help: "1 while the worker is ready (/readyz 200: a group member whose partitions' output, input and idle-close markers flow), 0 otherwise.",
	}, func() float64 {
		if f := m.readiness.Load(); f != nil && (*f)() {
			return 1
		}
		return 0
	})
	if reg != nil {
		reg.MustRegister(m.collectors()...)
	}
	return m
}

// SetReadiness gives distfeat_ready the worker's readiness check.
func (m *Metrics) SetReadiness(ready func() bool) { m.readiness.Store(&ready) }

// newInputMetrics creates the collectors of the input side: points, records, dead letters.
func (m *Metrics) newInputMetrics() {
	m.Points = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "distfeat_points_total", Help: "Points added to windows.",
	})
	m.PointsClipped = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "distfeat_points_clipped_total", Help: "Points clamped into the spec bounds (out_of_bounds=clip).",
	})
	m.Records = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "distfeat_records_total", Help: "Input records by result (ok, invalid, late, replayed).",
	}, []string{"result"})
	m.RecordsInvalid = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "distfeat_records_invalid_total", Help: "Dead-lettered input records by reason.",
	}, []string{"reason"})
	m.EndWithoutWindow = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "distfeat_end_without_window_total", Help: "end markers for sets without an open window.",
	})
	m.DeadLetters = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "distfeat_dead_letters_total", Help: "Records written to the dead-letter topic.",
	})
}

// newWindowMetrics creates the collectors of the windows: open, emitted, their size, finalisation and emit latency, sketch memory.
func (m *Metrics) newWindowMetrics() {
	m.WindowsOpen = prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "distfeat_windows_open", Help: "Open windows.",
	})
	m.PointFeatures = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "distfeat_point_features_total", Help: "Points written to the per-point topic (marginal_transfer families).",
	})
	m.PointWindowsDropped = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "distfeat_point_windows_dropped_total", Help: "Windows whose points exceeded the retention budget: feature record only, no per-point output.",
	})
	m.WindowsEmitted = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "distfeat_windows_emitted_total", Help: "Emitted feature records by close reason.",
	}, []string{"reason"})
	m.WindowPoints = prometheus.NewHistogram(prometheus.HistogramOpts{
		Name: "distfeat_window_points", Help: "Points per emitted window.",
		Buckets: prometheus.ExponentialBuckets(1, 4, 12),
	})
	m.FinalizeSeconds = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name: "distfeat_finalize_seconds", Help: "Window finalisation time per family.",
		Buckets: prometheus.ExponentialBuckets(1e-6, 2, 22), // 1 µs … 2 s, factor 2
	}, []string{"family"})
	m.TwoSamplePValue = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name: "distfeat_two_sample_p_value", Help: "p-values of two_sample families' windows (uniform on [0,1] while the stream matches the reference).",
		Buckets: []float64{0.001, 0.01, 0.05, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1},
	}, []string{"family"})
	m.TwoSampleFlagged = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "distfeat_two_sample_flagged_total", Help: "Windows of two_sample families whose p-value is at most the family's alpha.",
	}, []string{"family"})
	m.SequentialWindows = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "distfeat_sequential_windows_total", Help: "Windows seen by two_sample families' sequential detectors (ert).",
	}, []string{"family"})
	m.SequentialAlarms = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "distfeat_sequential_alarms_total", Help: "Alarms of two_sample families' sequential detectors: while nothing changes, one per ert windows of a set.",
	}, []string{"family"})
	m.SequentialERT = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "distfeat_sequential_ert", Help: "The expected run time, in windows of a set, between false alarms of a two_sample family's sequential detector.",
	}, []string{"family"})
	m.EmitLatency = prometheus.NewHistogram(prometheus.HistogramOpts{
		Name: "distfeat_emit_latency_seconds", Help: "Event time of a window's last point to broker acknowledgement of its feature record.",
		Buckets: prometheus.ExponentialBuckets(0.001, 4, 12),
	})
	m.SketchBytes = prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "distfeat_sketch_bytes", Help: "Memory held by open windows' sketches.",
	})
}

// newOffsetMetrics creates the collectors of the consumer: lag, commits, rebalances.
func (m *Metrics) newOffsetMetrics() {
	m.ConsumerLag = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "distfeat_consumer_lag", Help: "High watermark minus next offset to read, per partition.",
	}, []string{"partition"})
	m.CommittedOffset = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "distfeat_committed_offset", Help: "Last committed offset per partition.",
	}, []string{"partition"})
	m.CommitDeferred = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "distfeat_commit_deferred_total", Help: "Commit attempts that could not advance (open windows or unacknowledged output below the position).",
	})
	m.Rebalances = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "distfeat_rebalances_total", Help: "Consumer-group generations joined.",
	})
	m.CloseMarkers = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "distfeat_close_markers_total", Help: "Durable idle-close markers by result (requested, closed, stale, foreign).",
	}, []string{"result"})
}

// newOutputMetrics creates the collectors of the output: write errors, buffered bytes, stalls.
func (m *Metrics) newOutputMetrics() {
	m.ProduceErrors = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "distfeat_produce_errors_total", Help: "Failed writes to the output or dead-letter topic (retried).",
	})
	m.OutputErrors = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "distfeat_output_errors_total", Help: "Failed output writes by topic and error (Kafka error name, or network).",
	}, []string{"topic", "error"})
	m.BufferedBytes = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "distfeat_buffered_bytes", Help: "Bytes of records held outside the sketches, by stage (queue: fetched not yet processed; output: pending or unacknowledged).",
	}, []string{"stage"})
	m.OutputStalled = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "distfeat_output_stalled", Help: "1 while a partition's output is failing, by kind (retriable, permanent, markers); the worker is not ready meanwhile.",
	}, []string{"partition", "reason"})
	m.BufferLimit = prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "distfeat_buffer_limit_bytes", Help: "The memory budget for buffered records (DISTFEAT_MAX_BUFFER_BYTES) that buffered_bytes stays within.",
	})
}

// newGroupMetrics creates the collectors of the consumer group as the broker reports it.
func (m *Metrics) newGroupMetrics() {
	m.GroupLag = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "distfeat_group_lag", Help: "Consumer-group lag per input partition (high watermark minus the group's committed offset), owned by this worker or not.",
	}, []string{"partition"})
	m.GroupCommittedOffset = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "distfeat_group_committed_offset", Help: "The consumer group's committed offset per input partition (-1: none), as the broker reports it.",
	}, []string{"partition"})
	m.GroupPartitionsUnassigned = prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "distfeat_group_partitions_unassigned", Help: "Input partitions that no member of the (Stable) consumer group has assigned.",
	})
	m.GroupLagErrors = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "distfeat_group_lag_errors_total", Help: "Failed polls of the group's committed offsets and the input topic's watermarks.",
	})
}

// predictionBuckets cover predictions of either sign over six decades: 0, ±10^-2 … ±10^4
// in steps of about half a decade.
func predictionBuckets() []float64 {
	pos := []float64{0.01, 0.03, 0.1, 0.3, 1, 2, 3, 5, 7, 10, 20, 30, 100, 300, 1000, 3000, 10000}
	b := []float64{}
	for i := len(pos) - 1; i >= 0; i-- {
		b = append(b, -pos[i])
	}
	b = append(b, 0)
	return append(b, pos...)
}

// newPredictionMetrics creates the collectors of the model predictions.
func (m *Metrics) newPredictionMetrics() {
	m.Predictions = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "distfeat_predictions_total", Help: "Prediction records written, by model version.",
	}, []string{"model_version"})
	m.ModelInfo = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "distfeat_model_info", Help: "1 for the model in force (DISTFEAT_MODEL_NAME or the file), labelled with its version, spec_id and kind; absent while none is.",
	}, []string{"name", "model_version", "spec_id", "kind"})
	m.ModelsRefused = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "distfeat_models_refused_total", Help: "Models on the models topic refused (dead-lettered; the running model stays), by reason: decode, spec_id, columns, coverage, too_large.",
	}, []string{"reason"})
	m.ModelLoads = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "distfeat_model_loads_total", Help: "Models put in force, by source (file, topic).",
	}, []string{"source"})
	m.PredictionsConfigured = prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "distfeat_predictions_configured", Help: "1 when the worker applies a model (DISTFEAT_MODEL or DISTFEAT_MODELS_TOPIC set), else 0.",
	})
	m.PredictionValue = prometheus.NewHistogram(prometheus.HistogramOpts{
		Name: "distfeat_prediction_value", Help: "Regression predictions (a classifier's: the winning class's score).",
		Buckets: predictionBuckets(),
	})
	m.PredictionIntervalWidth = prometheus.NewHistogram(prometheus.HistogramOpts{
		Name: "distfeat_prediction_interval_width", Help: "Width (hi − lo) of the regression predictions' intervals at DISTFEAT_MODEL_COVERAGE.",
		Buckets: prometheus.ExponentialBuckets(0.01, 2, 22), // 0.01 … 2·10^4
	})
}

// collectors lists every collector, for registration.
func (m *Metrics) collectors() []prometheus.Collector {
	return []prometheus.Collector{m.OutputErrors, m.OutputStalled, m.BufferedBytes,
		m.Points, m.PointsClipped, m.Records, m.RecordsInvalid, m.EndWithoutWindow,
		m.WindowsOpen, m.WindowsEmitted, m.WindowPoints, m.PointFeatures, m.PointWindowsDropped, m.FinalizeSeconds, m.TwoSamplePValue, m.TwoSampleFlagged,
		m.SequentialWindows, m.SequentialAlarms, m.SequentialERT, m.EmitLatency,
		m.ConsumerLag, m.CommittedOffset, m.CommitDeferred, m.Rebalances, m.ProduceErrors,
		m.SketchBytes, m.DeadLetters, m.BuildInfo, m.GroupLag, m.GroupCommittedOffset,
		m.GroupPartitionsUnassigned, m.GroupLagErrors, m.CloseMarkers, m.BufferLimit, m.Ready,
		m.Predictions, m.ModelInfo, m.ModelsRefused, m.ModelLoads, m.PredictionsConfigured, m.PredictionValue, m.PredictionIntervalWidth}
}
