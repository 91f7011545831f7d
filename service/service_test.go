package service

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/distfeat/distfeat/config"
	"github.com/distfeat/distfeat/internal/testbroker"
)

// testConfig is a worker configuration for the embedded broker b.
func testConfig(addrs []string) *config.Config {
	return &config.Config{
		Topics: config.Topics{Brokers: addrs, InputTopic: testbroker.TopicPoints, OutputTopic: testbroker.TopicFeatures,
			DLQTopic: testbroker.TopicDLQ, Group: "service-test"},
		Window: "set", IdleTimeout: time.Minute, MaxOpenWindows: 1000,
		Delivery: config.Delivery{Limits: config.Limits{MaxMessageBytes: 1 << 20, MaxOutputBytes: 1 << 20},
			SessionTimeout: 6 * time.Second, CommitInterval: 100 * time.Millisecond},
		MetricsAddr: "127.0.0.1:0", ShutdownTimeout: 10 * time.Second, LogLevel: "error", LogFormat: "text",
	}
}

func get(t *testing.T, url string) (int, string) {
	t.Helper()
	res, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return res.StatusCode, string(b)
}

// TestServe: the composition root serves /healthz at once, /readyz once the worker has
// joined its group, /metrics with the worker's and the Go runtime's metrics, and stops
// cleanly when its context ends.
func TestServe(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	b, err := testbroker.Start(ctx, testbroker.Options{Partitions: 2})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(b.Close)
	wctx, stop := context.WithCancel(ctx)
	addrs := make(chan string, 1)
	done := make(chan error, 1)
	go func() {
		done <- Serve(wctx, testConfig(b.Addrs()), NewLogger(io.Discard, "error", "text"), func(a string) { addrs <- a })
	}()
	var base string
	select {
	case a := <-addrs:
		base = "http://" + a
	case err := <-done:
		t.Fatalf("Serve returned before binding the metrics listener: %v", err)
	}
	if code, body := get(t, base+"/healthz"); code != http.StatusOK || body != "ok\n" {
		t.Errorf("/healthz: %d %q", code, body)
	}
	// Ready once the worker is a group member: wait on that progress, bounded by ctx.
	for {
		code, body := get(t, base+"/readyz")
		if code == http.StatusOK {
			if body != "ready\n" {
				t.Errorf("/readyz: %q", body)
			}
			break
		}
		if code != http.StatusServiceUnavailable || !strings.HasPrefix(body, "not ready: ") {
			t.Fatalf("/readyz before ready: %d %q", code, body)
		}
		select {
		case <-ctx.Done():
			t.Fatalf("never ready: %q", body)
		case <-time.After(20 * time.Millisecond):
		}
	}
	code, body := get(t, base+"/metrics")
	for _, want := range []string{"distfeat_", "go_goroutines", "process_"} {
		if code != http.StatusOK || !strings.Contains(body, want) {
			t.Errorf("/metrics (%d) lacks %q", code, want)
		}
	}
	stop()
	if err := <-done; err != nil {
		t.Errorf("Serve after its context ended: %v", err)
	}
}

// TestServeRefusals: a bad spec or metrics address fails before the worker starts, naming
// the variable.
func TestServeRefusals(t *testing.T) {
	log := NewLogger(io.Discard, "error", "text")
	cfg := testConfig([]string{"127.0.0.1:1"})
	cfg.Spec = "/nonexistent/spec.json"
	if err := Serve(context.Background(), cfg, log, nil); err == nil || !strings.HasPrefix(err.Error(), "DISTFEAT_SPEC: ") {
		t.Errorf("missing spec: %v", err)
	}
	cfg.Spec, cfg.MetricsAddr = "", "127.0.0.1:no-port"
	if err := Serve(context.Background(), cfg, log, nil); err == nil || !strings.HasPrefix(err.Error(), `DISTFEAT_METRICS_ADDR "127.0.0.1:no-port": `) {
		t.Errorf("bad metrics address: %v", err)
	}
}
