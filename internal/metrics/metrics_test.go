package metrics

import (
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// TestDesignMetricsExposed: the core metrics of docs/configuration.md are served on /metrics
// under the distfeat_ prefix, with the labels dashboards and alerts select on.
func TestDesignMetricsExposed(t *testing.T) {
	reg := prometheus.NewRegistry()
	m := New(reg, "v-test")
	// Touch the labelled families so that they appear in the exposition.
	m.Records.WithLabelValues("ok").Inc()
	m.RecordsInvalid.WithLabelValues("decode").Inc()
	m.WindowsEmitted.WithLabelValues("end").Inc()
	m.FinalizeSeconds.WithLabelValues("mmd").Observe(0.001)
	m.ConsumerLag.WithLabelValues("0").Set(3)
	m.CommittedOffset.WithLabelValues("0").Set(7)
	m.WindowPoints.Observe(2500)
	m.EmitLatency.Observe(0.2)
	m.OutputErrors.WithLabelValues("features", "message_size_too_large").Inc()
	m.OutputStalled.WithLabelValues("3", "permanent").Set(1)
	m.BufferedBytes.WithLabelValues("queue").Set(5)
	m.GroupLag.WithLabelValues("5").Set(11)
	m.GroupCommittedOffset.WithLabelValues("5").Set(-1)
	m.CloseMarkers.WithLabelValues("closed").Inc()
	m.BufferLimit.Set(1 << 27)
	m.Predictions.WithLabelValues("0123456789abcdef").Inc()
	m.ModelInfo.WithLabelValues("mc", "0123456789abcdef", "fedcba9876543210", "regression").Set(1)
	m.ModelsRefused.WithLabelValues("spec_id").Inc()
	m.ModelLoads.WithLabelValues("topic").Inc()
	m.PredictionValue.Observe(-3.5)
	m.PredictionIntervalWidth.Observe(4.9)
	ready := true
	m.SetReadiness(func() bool { return ready })

	rec := httptest.NewRecorder()
	promhttp.HandlerFor(reg, promhttp.HandlerOpts{}).ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	body := rec.Body.String()
	want := []string{
		`distfeat_points_total `,
		`distfeat_records_total{result="ok"} 1`,
		`distfeat_records_invalid_total{reason="decode"} 1`,
		`distfeat_windows_open `,
		`distfeat_windows_emitted_total{reason="end"} 1`,
		`distfeat_window_points_bucket{le=`,
		`distfeat_finalize_seconds_bucket{family="mmd",le=`,
		`distfeat_emit_latency_seconds_bucket{le=`,
		`distfeat_consumer_lag{partition="0"} 3`,
		`distfeat_committed_offset{partition="0"} 7`,
		`distfeat_rebalances_total `,
		`distfeat_produce_errors_total `,
		`distfeat_sketch_bytes `,
		`distfeat_build_info{goversion="go`,
		`distfeat_output_errors_total{error="message_size_too_large",topic="features"} 1`,
		`distfeat_output_stalled{partition="3",reason="permanent"} 1`,
		`distfeat_buffered_bytes{stage="queue"} 5`,
		`distfeat_group_lag{partition="5"} 11`,
		`distfeat_group_committed_offset{partition="5"} -1`,
		`distfeat_group_partitions_unassigned `,
		`distfeat_group_lag_errors_total `,
		`distfeat_close_markers_total{result="closed"} 1`,
		`distfeat_buffer_limit_bytes 1.34217728e+08`,
		`distfeat_ready 1`,
		`distfeat_predictions_total{model_version="0123456789abcdef"} 1`,
		`distfeat_model_info{kind="regression",model_version="0123456789abcdef",name="mc",spec_id="fedcba9876543210"} 1`,
		`distfeat_models_refused_total{reason="spec_id"} 1`,
		`distfeat_model_loads_total{source="topic"} 1`,
		`distfeat_predictions_configured 0`,
		`distfeat_prediction_value_bucket{le="-3"} 1`,
		`distfeat_prediction_value_bucket{le="-5"} 0`,
		`distfeat_prediction_interval_width_bucket{le="5.12"} 1`,
	}
	for _, w := range want {
		if !strings.Contains(body, w) {
			t.Errorf("/metrics lacks %q", w)
		}
	}
	if !strings.Contains(body, `version="v-test"`) {
		t.Errorf("build_info does not carry the version label")
	}
}

// TestReady: distfeat_ready follows the readiness check at every scrape, and is 0 before a
// worker gives one.
func TestReady(t *testing.T) {
	reg := prometheus.NewRegistry()
	m := New(reg, "v-test")
	scrape := func() string {
		rec := httptest.NewRecorder()
		promhttp.HandlerFor(reg, promhttp.HandlerOpts{}).ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
		return rec.Body.String()
	}
	if !strings.Contains(scrape(), "\ndistfeat_ready 0\n") {
		t.Error("distfeat_ready is not 0 before SetReadiness")
	}
	ready := true
	m.SetReadiness(func() bool { return ready })
	if !strings.Contains(scrape(), "\ndistfeat_ready 1\n") {
		t.Error("distfeat_ready is not 1 while ready")
	}
	ready = false
	if !strings.Contains(scrape(), "\ndistfeat_ready 0\n") {
		t.Error("distfeat_ready is not 0 once not ready")
	}
}
