package consumer

import (
	"log/slog"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/distfeat/distfeat/internal/metrics"
	"github.com/distfeat/distfeat/model"
	"github.com/distfeat/distfeat/processor"
	"github.com/distfeat/distfeat/window"
)

// observer is the Prometheus (and log) implementation of processor.Observer for one
// partition.
type observer struct {
	m         *metrics.Metrics
	log       *slog.Logger
	partition int
	finalize  map[string]prometheus.Observer // finalize_seconds{family}, resolved once
	clips     *clipWarner
}

var (
	_ processor.Observer           = (*observer)(nil)
	_ processor.PointObserver      = (*observer)(nil)
	_ processor.DriftObserver      = (*observer)(nil)
	_ processor.ClipObserver       = (*observer)(nil)
	_ processor.SequentialObserver = (*observer)(nil)
	_ processor.PredictionObserver = (*observer)(nil)
)

// OnPrediction counts predictions_total{model_version} and observes the prediction and its
// interval's width.
func (o *observer) OnPrediction(a *model.Applier, out model.Output) {
	o.m.Predictions.WithLabelValues(a.Model().ModelVersion).Inc()
	o.m.PredictionValue.Observe(float64(out.Value))
	if out.Interval != nil {
		o.m.PredictionIntervalWidth.Observe(float64(out.Interval[1] - out.Interval[0]))
	}
}

// OnRecord counts records_total{result}.
func (o *observer) OnRecord(result string) { o.m.Records.WithLabelValues(result).Inc() }

// OnPoints counts points_total (and the points the clipping warning's share is of).
func (o *observer) OnPoints(n int) {
	o.m.Points.Add(float64(n))
	o.clips.added(n)
}

// OnClippedSet feeds the clipping warning.
func (o *observer) OnClippedSet(set string, points, clipped int) {
	o.clips.clipped(set, points, clipped)
}

// OnClipped counts points_clipped_total.
func (o *observer) OnClipped(n int) { o.m.PointsClipped.Add(float64(n)) }

// OnDeadLetter counts records_invalid_total{reason} and dead_letters_total, and logs at debug.
func (o *observer) OnDeadLetter(offset int64, reason, detail string) {
	o.m.RecordsInvalid.WithLabelValues(reason).Inc()
	o.m.DeadLetters.Inc()
	o.log.Debug("dead letter", "partition", o.partition, "offset", offset, "reason", reason, "detail", detail)
}

// OnEndWithoutWindow counts end_without_window_total.
func (o *observer) OnEndWithoutWindow() { o.m.EndWithoutWindow.Inc() }

// OnWindowEmitted counts windows_emitted_total{reason} and observes window_points.
func (o *observer) OnWindowEmitted(reason window.Reason, points int64) {
	o.m.WindowsEmitted.WithLabelValues(string(reason)).Inc()
	o.m.WindowPoints.Observe(float64(points))
}

// OnFinalize observes finalize_seconds{family}.
func (o *observer) OnFinalize(family string, elapsed time.Duration) {
	if h, ok := o.finalize[family]; ok {
		h.Observe(elapsed.Seconds())
	}
}

// OnPointsEmitted counts point_features_total (processor.PointObserver).
func (o *observer) OnPointsEmitted(n int) { o.m.PointFeatures.Add(float64(n)) }

// OnPointsDropped counts point_windows_dropped_total and warns: the window's points
// exceeded the retention budget, so it has no per-point output.
func (o *observer) OnPointsDropped(set string, seq uint64, points int64) {
	o.m.PointWindowsDropped.Inc()
	o.log.Warn("window without per-point output: its points exceeded the retention budget (a quarter of DISTFEAT_MAX_BUFFER_BYTES)",
		"partition", o.partition, "set", set, "seq", seq, "points", points)
}

// OnTwoSample observes two_sample_p_value{family} and counts two_sample_flagged_total{family}
// (processor.DriftObserver).
func (o *observer) OnTwoSample(family string, pValue float64, flagged bool) {
	o.m.TwoSamplePValue.WithLabelValues(family).Observe(pValue)
	if flagged {
		o.m.TwoSampleFlagged.WithLabelValues(family).Inc()
	}
}

// OnSequential counts sequential_windows_total{family} and sequential_alarms_total{family}
// and sets sequential_ert{family} (processor.SequentialObserver).
func (o *observer) OnSequential(family string, ert float64, alarm bool) {
	o.m.SequentialWindows.WithLabelValues(family).Inc()
	o.m.SequentialERT.WithLabelValues(family).Set(ert)
	if alarm {
		o.m.SequentialAlarms.WithLabelValues(family).Inc()
	}
}

// OnCloseMarker counts close_markers_total{result} (processor.MarkerObserver).
func (o *observer) OnCloseMarker(result string) { o.m.CloseMarkers.WithLabelValues(result).Inc() }

// OnEncodeError logs the dropped window and counts it in produce_errors_total.
func (o *observer) OnEncodeError(set string, seq uint64, err error) {
	o.log.Error("encode feature record", "partition", o.partition, "set", set, "seq", seq, "err", err)
	o.m.ProduceErrors.Inc()
}
