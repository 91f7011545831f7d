// Package service is the worker's composition root: from a validated config.Config it loads
// the spec, compiles the embedder, builds the Kafka clients (kafkaio), the metrics registry
// and the consumer.Worker, serves /metrics, /healthz and /readyz, and runs the worker until
// its context ends. `distfeat worker` parses flags and the environment and calls Serve.
package service

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"runtime"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/distfeat/distfeat/config"
	"github.com/distfeat/distfeat/consumer"
	"github.com/distfeat/distfeat/embedding"
	"github.com/distfeat/distfeat/internal/buildinfo"
	"github.com/distfeat/distfeat/internal/metrics"
	"github.com/distfeat/distfeat/kafkaio"
	"github.com/distfeat/distfeat/schema"
	"github.com/distfeat/distfeat/spec"
	"github.com/distfeat/distfeat/window"
)

// Serve runs one worker with its metrics/health server until ctx ends. started, if
// non-nil, receives the metrics listener's address once it is bound.
func Serve(ctx context.Context, cfg *config.Config, log *slog.Logger, started func(metricsAddr string)) error {
	sp, err := spec.LoadSpec(cfg.Spec)
	if err != nil {
		return fmt.Errorf("DISTFEAT_SPEC: %w", err)
	}
	// Large records' points are shared among the cores (same bits): a worker that owns fewer
	// busy partitions than it has cores still uses them all.
	// With per-point output (DISTFEAT_POINT_FEATURES_TOPIC) the windows keep their points
	// until they close: a quarter of DISTFEAT_MAX_BUFFER_BYTES holds them, the rest is the
	// records' budget as without it.
	opts := []embedding.Option{embedding.WithAddWorkers(runtime.GOMAXPROCS(0))}
	delivery := cfg.Delivery
	delivery.SetDefaults()
	if cfg.PointsTopic != "" {
		opts = append(opts, embedding.WithPointRetention(embedding.NewPointBudget(int64(delivery.MaxBufferBytes/4))))
		delivery.MaxBufferBytes -= delivery.MaxBufferBytes / 4
	}
	emb, err := embedding.New(sp, opts...)
	if err != nil {
		return fmt.Errorf("DISTFEAT_SPEC: %w", err)
	}
	for _, w := range emb.SequentialWarnings() {
		log.Warn(w)
	}
	wcfg, err := cfg.WindowConfig()
	if err != nil {
		return err
	}
	dialer, transport, err := kafkaio.Clients(&cfg.Security)
	if err != nil {
		return err
	}
	// The transport's cached metadata: the worker's topics only, refreshed every second.
	// kafka-go refreshes it only when it expires (not on NOT_LEADER_OR_FOLLOWER), so after a
	// leader election the output writes kept going to the old leader for up to its default
	// 6 s (a 5–7 s gap after the election in TestRealKafkaFailover). Naming the topics keeps
	// each refresh small whatever the cluster holds, and makes Kafka answer
	// TOPIC_AUTHORIZATION_FAILED for a topic the worker may not describe instead of leaving
	// it out (which read as "does not exist").
	transport.MetadataTTL = time.Second
	transport.MetadataTopics = []string{cfg.InputTopic, cfg.OutputTopic, cfg.DLQTopic}
	if cfg.PointsTopic != "" {
		transport.MetadataTopics = append(transport.MetadataTopics, cfg.PointsTopic)
	}
	if cfg.Predicting() {
		transport.MetadataTopics = append(transport.MetadataTopics, cfg.PredictionsTopicName())
	}
	if cfg.ModelsTopic != "" {
		transport.MetadataTopics = append(transport.MetadataTopics, cfg.ModelsTopic)
	}
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	m := metrics.New(reg, buildinfo.String())
	w, err := consumer.NewWorker(consumer.Config{
		Topics: cfg.Topics, Models: cfg.Models, Delivery: delivery, ShutdownTimeout: cfg.ShutdownTimeout,
		Window: wcfg, Dialer: dialer, Transport: transport, User: cfg.SASLUsername,
	}, emb, schema.NewOutput(sp, emb.Columns()), m, log, window.SystemClock{})
	if err != nil {
		return err
	}

	ln, err := net.Listen("tcp", cfg.MetricsAddr)
	if err != nil {
		return fmt.Errorf("DISTFEAT_METRICS_ADDR %q: %w", cfg.MetricsAddr, err)
	}
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{Registry: reg}))
	mux.HandleFunc("/healthz", func(rw http.ResponseWriter, _ *http.Request) { fmt.Fprintln(rw, "ok") })
	mux.HandleFunc("/readyz", func(rw http.ResponseWriter, _ *http.Request) {
		if reason := w.NotReadyReason(); reason != "" {
			http.Error(rw, "not ready: "+reason, http.StatusServiceUnavailable)
			return
		}
		fmt.Fprintln(rw, "ready")
	})
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go func() {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Error("metrics server", "err", err)
		}
	}()
	defer func() {
		sctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		_ = srv.Shutdown(sctx)
	}()
	if started != nil {
		started(ln.Addr().String())
	}
	log.Info("distfeat worker starting", append([]any{"version", buildinfo.String(), "spec_id", sp.ID(), "metrics", ln.Addr().String()}, cfg.Redacted()...)...)
	err = w.Run(ctx)
	log.Info("distfeat worker stopped")
	return err
}

// NewLogger builds the process logger: level and format ("json" or text) as
// DISTFEAT_LOG_LEVEL and DISTFEAT_LOG_FORMAT give them.
func NewLogger(w io.Writer, level, format string) *slog.Logger {
	l, err := config.ParseLogLevel(level)
	if err != nil {
		l = slog.LevelInfo
	}
	opts := &slog.HandlerOptions{Level: l}
	if format == "json" {
		return slog.New(slog.NewJSONHandler(w, opts))
	}
	return slog.New(slog.NewTextHandler(w, opts))
}
