package consumer

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/segmentio/kafka-go"

	"github.com/distfeat/distfeat/config"
	"github.com/distfeat/distfeat/embedding"
	"github.com/distfeat/distfeat/internal/metrics"
	"github.com/distfeat/distfeat/internal/testbroker"
	"github.com/distfeat/distfeat/processor"
	"github.com/distfeat/distfeat/schema"
	"github.com/distfeat/distfeat/spec"
	"github.com/distfeat/distfeat/window"
)

// TestStartupMissingTopic: a worker whose input, output or dead-letter topic does not exist
// fails at start-up with an error naming the topic and its variable, instead of joining and
// holding every window in retries while /readyz says ready.
func TestStartupMissingTopic(t *testing.T) {
	t.Parallel()
	skipOnRealCluster(t)
	for _, tc := range []struct {
		missing, env string
	}{
		{testbroker.TopicFeatures, "DISTFEAT_OUTPUT_TOPIC"},
		{testbroker.TopicDLQ, "DISTFEAT_DLQ_TOPIC"},
		{testbroker.TopicPoints, "DISTFEAT_INPUT_TOPIC"},
	} {
		t.Run(tc.missing, func(t *testing.T) {
			t.Parallel()
			var topics []string
			for _, tp := range []string{testbroker.TopicPoints, testbroker.TopicFeatures, testbroker.TopicDLQ} {
				if tp != tc.missing {
					topics = append(topics, tp)
				}
			}
			b := startBroker(t, testbroker.Options{Partitions: 1, Topics: topics})
			h := newHarnessEnv(t, defaultTopics(b.Addrs()[0]), smallSpec)
			rw := h.start(h.config("missing-"+tc.missing, window.Config{}), nil)
			select {
			case err := <-rw.done:
				rw.done <- nil // the cleanup's shutdown expects a result
				want := tc.env + `: topic "` + tc.missing + `" does not exist`
				if err == nil || !errors.Is(err, ErrTopicMissing) || !strings.Contains(err.Error(), want) {
					t.Fatalf("Run = %v, want an error containing %q", err, want)
				}
			case <-time.After(20 * time.Second):
				t.Fatalf("Run did not return within 20 s with topic %q missing", tc.missing)
			}
		})
	}
}

// TestFeatureRecordTooLargeAtStartup: a spec whose feature records cannot fit the output
// limit is refused by NewWorker, naming the variable, rather than stalling every partition
// on its first window.
func TestFeatureRecordTooLargeAtStartup(t *testing.T) {
	sp, err := spec.ParseSpec([]byte(`{"version":1,"seed":7,"dim":2,"bounds":{"lo":[0,0],"hi":[1,1]},
 "families":[{"name":"mmd","kind":"mmd","features":4096,"bandwidth":0.2}]}`))
	if err != nil {
		t.Fatal(err)
	}
	emb, err := embedding.New(sp)
	if err != nil {
		t.Fatal(err)
	}
	out := schema.NewOutput(sp, emb.Columns())
	size, err := processor.MaxFeatureBytes(emb, out)
	if err != nil {
		t.Fatal(err)
	}
	cfg := Config{Topics: config.Topics{Brokers: []string{"127.0.0.1:1"}}, Window: window.Config{Mode: "set", MaxOpen: 10}}
	m := metrics.New(prometheus.NewRegistry(), "test")
	for _, tc := range []struct {
		limit int
		ok    bool
	}{
		{size - 1, false},
		{size, true},
	} {
		cfg.MaxOutputBytes = tc.limit
		_, err := NewWorker(cfg, emb, out, m, nil, nil)
		if tc.ok != (err == nil) {
			t.Errorf("limit %d for %d-byte records: NewWorker error %v, want ok=%v", tc.limit, size, err, tc.ok)
		}
		if err != nil && !strings.Contains(err.Error(), "DISTFEAT_MAX_OUTPUT_BYTES") {
			t.Errorf("error %q does not name DISTFEAT_MAX_OUTPUT_BYTES", err)
		}
	}
}

// TestOutputFailureNotReady: while writes to the output topic fail, even retriably, the
// worker reports not ready (with the reason), distfeat_output_stalled and
// distfeat_output_errors_total say which partition and error, and a log line says so; once
// the topic accepts writes again it is ready, the gauge is cleared and every window is
// delivered. A permanent failure (the broker calls a feature record too large) is logged
// as an error naming the window (set and window-id) and the variables to change.
func TestOutputFailureNotReady(t *testing.T) {
	t.Parallel()
	skipOnRealCluster(t)
	for _, tc := range []struct {
		code kafka.Error
		kind string
		log  string
	}{
		{kafka.NotEnoughReplicas, failRetriable, "output write failed, retrying: worker not ready until output flows"},
		{kafka.MessageSizeTooLarge, failPermanent, "output write failed permanently: partition stalled, worker not ready"},
	} {
		t.Run(tc.kind, func(t *testing.T) {
			t.Parallel()
			b := startBroker(t, testbroker.Options{Partitions: 1})
			h := newHarnessEnv(t, defaultTopics(b.Addrs()[0]), smallSpec)
			features := h.collect(h.env.Features)
			cfg := h.config("stall-"+tc.kind, window.Config{})
			cfg.PermanentRetry = 200 * time.Millisecond
			logs := newLogCounter(testLogger(t).Handler())
			rw := h.startLogged(cfg, nil, slog.New(logs))
			first := randomSets(71, "a", 2, 10, 1)
			h.produce("json", 100, first...)
			h.checkAllWindows(t, features, 30*time.Second, first)
			waitUntil(t, 10*time.Second, "Ready()", rw.w.Ready)

			var blocked atomic.Bool
			blocked.Store(true)
			failed := failOutput(b, h.env.Features, &blocked, tc.code)
			during := randomSets(72, "stuck", 3, 10, 1)
			h.produce("json", 100, during...)
			waitUntil(t, 10*time.Second, "not ready while the output fails", func() bool { return !rw.w.Ready() })
			if r := rw.w.NotReadyReason(); !strings.Contains(r, "output failing on partition(s) 0 ("+tc.kind+")") {
				t.Errorf("NotReadyReason = %q", r)
			}
			if g := testutilCounter(rw.metrics.OutputStalled.WithLabelValues("0", tc.kind)); g != 1 {
				t.Errorf("distfeat_output_stalled{partition=0,reason=%s} = %v, want 1", tc.kind, g)
			}
			if n := testutilCounter(rw.metrics.OutputErrors.WithLabelValues(h.env.Features, snake(tc.code.Title()))); n < 1 {
				t.Errorf("distfeat_output_errors_total{topic=features,error=%s} = %v, want ≥ 1", snake(tc.code.Title()), n)
			}
			waitUntil(t, 10*time.Second, "the log line", func() bool { return logs.count(tc.log) > 0 })
			if tc.kind == failPermanent {
				attrs := logs.lastAttrs(tc.log)
				for _, want := range []string{`set "stuck`, "window-id", "DISTFEAT_MAX_OUTPUT_BYTES", "message.max.bytes"} {
					if !strings.Contains(attrs, want) {
						t.Errorf("log line %q lacks %q: %s", tc.log, want, attrs)
					}
				}
			}

			blocked.Store(false)
			h.checkAllWindows(t, features, 30*time.Second, append(first, during...))
			waitUntil(t, 10*time.Second, "Ready() after the output recovered", rw.w.Ready)
			if n := logs.count("output flowing again"); n < 1 {
				t.Error("no log line on recovery")
			}
			if failed.Load() == 0 {
				t.Error("the fault did not take")
			}
			var stalled int
			ch := make(chan prometheus.Metric, 16)
			rw.metrics.OutputStalled.Collect(ch)
			close(ch)
			for range ch {
				stalled++
			}
			if stalled != 0 {
				t.Errorf("%d distfeat_output_stalled series after recovery, want none", stalled)
			}
		})
	}
}

// TestClassifyError pins which produce errors are retried quickly and which are handled as
// permanent (a slow, loud retry that needs an operator).
func TestClassifyError(t *testing.T) {
	for _, tc := range []struct {
		err        error
		kind, code string
	}{
		{kafka.NotEnoughReplicas, failRetriable, "not_enough_replicas"},
		{kafka.LeaderNotAvailable, failRetriable, "leader_not_available"},
		{kafka.RequestTimedOut, failRetriable, "request_timed_out"},
		{kafka.MessageSizeTooLarge, failPermanent, "message_size_too_large"},
		{kafka.MessageTooLargeError{}, failPermanent, "message_size_too_large"},
		{kafka.TopicAuthorizationFailed, failPermanent, "topic_authorization_failed"},
		{kafka.UnknownTopicOrPartition, failPermanent, "unknown_topic_or_partition"},
		{kafka.InvalidRecord, failPermanent, "invalid_record"},
		{context.DeadlineExceeded, failRetriable, "network"},
		{errors.New("something else"), failRetriable, "other"},
		{errors.New("write tcp 127.0.0.1:1: connection reset by peer"), failRetriable, "network"},
	} {
		kind, code := classifyError(tc.err)
		if kind != tc.kind || code != tc.code {
			t.Errorf("classifyError(%v) = %s, %s; want %s, %s", tc.err, kind, code, tc.kind, tc.code)
		}
	}
}

// TestMarkerFailureNotReady: when the worker cannot write idle-close markers to its input
// topic (here: no Write authorisation), idle windows cannot close, so the worker reports not
// ready with distfeat_output_stalled{reason="markers"} and the error counted; once the
// markers go through, the idle window is delivered and the worker is ready again.
func TestMarkerFailureNotReady(t *testing.T) {
	t.Parallel()
	skipOnRealCluster(t)
	b := startBroker(t, testbroker.Options{Partitions: 1})
	h := newHarnessEnv(t, defaultTopics(b.Addrs()[0]), smallSpec)
	features := h.collect(h.env.Features)
	cfg := h.config("markers", window.Config{Mode: "set", IdleTimeout: time.Second, MaxOpen: 100})
	rw := h.start(cfg, nil)
	waitUntil(t, 10*time.Second, "Ready()", rw.w.Ready)
	open := randomSets(91, "idle", 1, 10, 1)
	open[0].End = false
	h.produce("json", 100, open...)
	var blocked atomic.Bool
	blocked.Store(true)
	failOutput(b, h.env.Points, &blocked, kafka.TopicAuthorizationFailed)
	waitUntil(t, 15*time.Second, "not ready while markers fail", func() bool { return !rw.w.Ready() })
	if r := rw.w.NotReadyReason(); !strings.Contains(r, "idle-close markers") {
		t.Errorf("NotReadyReason = %q", r)
	}
	if g := testutilCounter(rw.metrics.OutputStalled.WithLabelValues("0", "markers")); g != 1 {
		t.Errorf(`distfeat_output_stalled{partition="0",reason="markers"} = %v, want 1`, g)
	}
	if n := testutilCounter(rw.metrics.OutputErrors.WithLabelValues(h.env.Points, "topic_authorization_failed")); n < 1 {
		t.Errorf("output_errors_total{topic=points,error=topic_authorization_failed} = %v", n)
	}
	if len(features.snapshot()) != 0 {
		t.Fatal("the idle window was emitted without its marker")
	}
	blocked.Store(false)
	h.checkAllWindows(t, features, 30*time.Second, open)
	waitUntil(t, 10*time.Second, "Ready() after the markers went through", rw.w.Ready)
	if n := testutilCounter(rw.metrics.CloseMarkers.WithLabelValues("closed")); n != 1 {
		t.Errorf("close_markers_total{closed} = %v, want 1", n)
	}
}
