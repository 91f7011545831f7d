package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/segmentio/kafka-go"

	"github.com/distfeat/distfeat/config"
	"github.com/distfeat/distfeat/internal/testbroker"
	"github.com/distfeat/distfeat/kafkaio"
	"github.com/distfeat/distfeat/schema"
	"github.com/distfeat/distfeat/service"
)

// TestWorkerPointsMatchEmbed: the worker's per-point topic and `embed --points` on the same
// sets give the same rows — set, index and every feature bit — the worker's cut into
// records by the output limit, embed's into batches of 1024 points. (seq is each path's
// window number, as in its window records: the worker's is replay-stable, derived from
// offsets, embed's is 0; all rows of a set's window carry the same one.)
func TestWorkerPointsMatchEmbed(t *testing.T) {
	const pointsTopic = "points.features"
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	b, err := testbroker.Start(ctx, testbroker.Options{Partitions: 2,
		Topics: []string{testbroker.TopicPoints, testbroker.TopicFeatures, testbroker.TopicDLQ, pointsTopic}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(b.Close)
	specPath := writeFile(t, "spec.json", pointTestSpec)
	input, sets := pointInput(4)

	// Offline.
	embedOut := filepath.Join(t.TempDir(), "points.arrow")
	if code, _, stderr := runCLI(t, input, "embed", "--spec", specPath, "--out", filepath.Join(t.TempDir(), "w"),
		"--points", embedOut, "--format", "arrow"); code != 0 {
		t.Fatalf("embed: exit %d: %s", code, stderr)
	}
	data, err := os.ReadFile(embedOut)
	if err != nil {
		t.Fatal(err)
	}
	want, _, err := schema.DecodePoints(data)
	if err != nil {
		t.Fatal(err)
	}

	// The worker.
	cfg := &config.Config{
		Topics: config.Topics{Brokers: b.Addrs(), InputTopic: testbroker.TopicPoints, OutputTopic: testbroker.TopicFeatures,
			DLQTopic: testbroker.TopicDLQ, PointsTopic: pointsTopic, Group: "points-e2e"},
		Window: "set", Spec: specPath, IdleTimeout: time.Minute, MaxOpenWindows: 1000,
		Delivery: config.Delivery{Limits: config.Limits{MaxMessageBytes: 1 << 20, MaxOutputBytes: 64 << 10},
			SessionTimeout: 6 * time.Second, CommitInterval: 100 * time.Millisecond},
		MetricsAddr: "127.0.0.1:0", ShutdownTimeout: 10 * time.Second, LogLevel: "error", LogFormat: "text",
	}
	serveUntilCleanup(ctx, t, cfg)
	produceSetLines(ctx, t, b.Addrs(), input, sets)
	got := readPointRows(ctx, t, b.Addrs(), pointsTopic, len(want))

	key := func(r schema.PointLine) string { return fmt.Sprintf("%s/%d", r.Set, r.Index) }
	byKey := map[string]schema.PointLine{}
	seqOf := map[string]uint64{}
	for _, r := range got {
		byKey[key(r)] = r
		if s, ok := seqOf[r.Set]; ok && s != r.Seq {
			t.Fatalf("set %s: rows of windows %d and %d (one window per set expected)", r.Set, s, r.Seq)
		}
		seqOf[r.Set] = r.Seq
	}
	if len(byKey) != len(want) {
		t.Fatalf("the worker wrote %d distinct rows, embed %d", len(byKey), len(want))
	}
	for _, w := range want {
		g, ok := byKey[key(w)]
		if !ok {
			t.Fatalf("row %s from embed is not on the worker's topic (e.g. %s)", key(w), key(got[0]))
		}
		if g.SpecID != w.SpecID || len(g.Features) != len(w.Features) {
			t.Fatalf("row %s: spec_id %s / %d columns, embed %s / %d", key(w), g.SpecID, len(g.Features), w.SpecID, len(w.Features))
		}
		for col, wv := range w.Features {
			gv := g.Features[col]
			if len(gv) != len(wv) {
				t.Fatalf("row %s column %s: %d values, embed %d", key(w), col, len(gv), len(wv))
			}
			for j := range wv {
				if math.Float32bits(gv[j]) != math.Float32bits(wv[j]) {
					t.Fatalf("row %s %s[%d]: worker %v, embed %v", key(w), col, j, gv[j], wv[j])
				}
			}
		}
	}

	// tail prints the per-point topic as the same rows.
	code, stdout, stderr := runArgs(t, "tail", "--brokers", strings.Join(b.Addrs(), ","), "--topic", pointsTopic,
		"--from-beginning", "--max", fmt.Sprint(len(want)), "--timeout", "30s")
	lines := strings.Split(strings.TrimSpace(stdout), "\n")
	if code != 0 || len(lines) < len(want) {
		t.Fatalf("tail --topic %s: exit %d, %d lines (want %d): %s", pointsTopic, code, len(lines), len(want), stderr)
	}
	for _, line := range lines {
		var r schema.PointLine
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatal(err)
		}
		w := byKey[key(r)]
		for col, v := range r.Features {
			if fmt.Sprint(v) != fmt.Sprint(w.Features[col]) || r.SpecID != w.SpecID {
				t.Fatalf("tail: row %s column %s: %v, the topic's %v", key(r), col, v, w.Features[col])
			}
		}
	}
}

// readPointRows reads the per-point topic from the beginning until it holds n rows.
func readPointRows(ctx context.Context, t *testing.T, brokers []string, topic string, n int) []schema.PointLine {
	t.Helper()
	var rows []schema.PointLine
	r := kafka.NewReader(kafka.ReaderConfig{Brokers: brokers, GroupTopics: []string{topic}, GroupID: "points-e2e-reader",
		StartOffset: kafka.FirstOffset, MinBytes: 1, MaxBytes: 16 << 20, MaxWait: 50 * time.Millisecond})
	defer r.Close()
	for len(rows) < n {
		m, err := r.ReadMessage(ctx)
		if err != nil {
			t.Fatalf("reading %s after %d of %d rows: %v", topic, len(rows), n, err)
		}
		rs, _, err := schema.DecodePoints(m.Value)
		if err != nil {
			t.Fatal(err)
		}
		if len(m.Value) > 64<<10 {
			t.Fatalf("per-point record of %d bytes over DISTFEAT_MAX_OUTPUT_BYTES", len(m.Value))
		}
		rows = append(rows, rs...)
	}
	return rows
}

// serveUntilCleanup runs the worker of cfg in-process until the test ends; its error then
// fails the test.
func serveUntilCleanup(ctx context.Context, t *testing.T, cfg *config.Config) {
	t.Helper()
	wctx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- service.Serve(wctx, cfg, service.NewLogger(io.Discard, "error", "text"), nil) }()
	t.Cleanup(func() {
		stop()
		if err := <-done; err != nil {
			t.Errorf("worker: %v", err)
		}
	})
}

// produceSetLines publishes the sets named by input's JSON lines, in their order, with the
// points in sets, in batches of at most 100 points (the last of each set marked its end).
func produceSetLines(ctx context.Context, t *testing.T, brokers []string, input string, sets map[string][]float64) {
	t.Helper()
	var batches []schema.Batch
	for _, line := range strings.Split(strings.TrimSpace(input), "\n") {
		name := line[strings.Index(line, `"set":"`)+7:]
		name = name[:strings.Index(name, `"`)]
		x := sets[name]
		batches = append(batches, kafkaio.Split(schema.Batch{Set: name, Points: x, N: len(x) / 2, End: true}, 100)...)
	}
	pw := kafkaio.NewPointWriter(kafkaio.WriterConfig{Brokers: brokers, Topic: testbroker.TopicPoints, Dim: 2})
	if err := pw.Write(ctx, batches...); err != nil {
		t.Fatal(err)
	}
	if err := pw.Close(); err != nil {
		t.Fatal(err)
	}
}
