package main

import (
	"context"
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
	"github.com/distfeat/distfeat/embedding"
	"github.com/distfeat/distfeat/internal/testbroker"
	"github.com/distfeat/distfeat/model"
	"github.com/distfeat/distfeat/schema"
	"github.com/distfeat/distfeat/service"
)

// pointTrainInput is n sets of 40 points of pointTestSpec's units with a per-point label
// "y": "east" right of the set's own (shifted) centre line, else "west".
func pointTrainInput(n int) string {
	var b strings.Builder
	rng := embedding.NewRNG(5, "point-predict-train")
	for s := 0; s < n; s++ {
		c := 3 + 4*rng.Float64()
		var pts, ys []string
		for i := 0; i < 40; i++ {
			x, y := c+2*(rng.Float64()-0.5)*2.5, 10*rng.Float64()
			pts = append(pts, fmt.Sprintf("[%v,%v]", x, y))
			label := "west"
			if x > c {
				label = "east"
			}
			ys = append(ys, fmt.Sprintf("%q", label))
		}
		fmt.Fprintf(&b, `{"set":"t%02d","points":[%s],"y":[%s]}`+"\n", s, strings.Join(pts, ","), strings.Join(ys, ","))
	}
	return b.String()
}

// TestWorkerPointPredictions: `fit --point-label` → a worker with DISTFEAT_MODEL and
// DISTFEAT_POINT_FEATURES_TOPIC → every per-point record carries the model's predictions,
// the same rows — set, index, every feature and prediction bit — as `embed --points
// --model`; the records name the model in a model-version header. The refusals: embed
// with a per-point model and no --points, a per-set model with --points, and a worker with
// a per-point model and no per-point topic.
func TestWorkerPointPredictions(t *testing.T) {
	const pointsTopic, predsTopic = "points.features", "features.predictions"
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	specPath := writeFile(t, "spec.json", pointTestSpec)
	modelPath := filepath.Join(t.TempDir(), "model.json")
	if code, _, stderr := runCLI(t, pointTrainInput(6), "fit", "--spec", specPath, "--point-label", "y", "--folds", "3",
		"--families", "mt", "--out", modelPath); code != 0 {
		t.Fatalf("fit: exit %d: %s", code, stderr)
	}
	m, err := model.Load(modelPath)
	if err != nil {
		t.Fatal(err)
	}
	if !m.PredictsPoints() || m.Kind != model.Classification || len(m.Weights) != 2 {
		t.Fatalf("fit --point-label wrote per %q kind %s with %d score rows", m.Per, m.Kind, len(m.Weights))
	}
	input, sets := pointInput(4)

	// The refusals.
	if code, _, stderr := runCLI(t, input, "embed", "--spec", specPath, "--model", modelPath); code != 2 || !strings.Contains(stderr, "predicts each point") || !strings.Contains(stderr, "--points") {
		t.Errorf("embed --model (per-point) without --points: exit %d: %s", code, stderr)
	}
	setModel := filepath.Join(t.TempDir(), "set-model.json")
	if code, _, stderr := runCLI(t, pointTrainInput(6), "fit", "--spec", specPath, "--label", "set", "--task", "classification",
		"--families", "mmd", "--folds", "3", "--out", setModel); code != 0 {
		t.Fatalf("fit (per set): exit %d: %s", code, stderr)
	}
	if code, _, stderr := runCLI(t, input, "embed", "--spec", specPath, "--model", setModel, "--points", filepath.Join(t.TempDir(), "p"),
		"--out", filepath.Join(t.TempDir(), "w")); code != 2 || !strings.Contains(stderr, "needs a per-point model") {
		t.Errorf("embed --points --model (per-set): exit %d: %s", code, stderr)
	}

	// Offline.
	embedOut := filepath.Join(t.TempDir(), "points.arrow")
	if code, _, stderr := runCLI(t, input, "embed", "--spec", specPath, "--out", filepath.Join(t.TempDir(), "w"),
		"--points", embedOut, "--format", "arrow", "--model", modelPath); code != 0 {
		t.Fatalf("embed: exit %d: %s", code, stderr)
	}
	data, err := os.ReadFile(embedOut)
	if err != nil {
		t.Fatal(err)
	}
	want, cols, err := schema.DecodePoints(data)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(cols, ",") != "mt,pooled,model.prediction,model.scores" {
		t.Fatalf("embed --points --model columns %v", cols)
	}
	// The predictions are the model's on the row's own features (the columns are not
	// decoration): recompute from the mt column.
	a, err := model.NewPointApplier(m, m.SpecID, []model.Column{{Name: "mt", Len: 32}, {Name: "pooled", Len: 16}}, 0)
	if err != nil {
		t.Fatal(err)
	}
	classes := map[string]int{}
	for _, r := range want {
		o, err := a.Apply([][]float32{r.Features["mt"], r.Features["pooled"]})
		if err != nil {
			t.Fatal(err)
		}
		if r.Features["model.prediction"][0] != float32(o.ClassIndex) || r.Features["model.scores"][0] != o.Scores[0] {
			t.Fatalf("row %s/%d: prediction %v scores %v, the model gives %v %v", r.Set, r.Index, r.Features["model.prediction"], r.Features["model.scores"], o.ClassIndex, o.Scores)
		}
		classes[o.Class]++
	}
	if len(classes) != 2 {
		t.Errorf("every point predicted as one class: %v", classes)
	}

	b, err := testbroker.Start(ctx, testbroker.Options{Partitions: 2,
		Topics: []string{testbroker.TopicPoints, testbroker.TopicFeatures, testbroker.TopicDLQ, pointsTopic, predsTopic}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(b.Close)
	cfg := &config.Config{
		Topics: config.Topics{Brokers: b.Addrs(), InputTopic: testbroker.TopicPoints, OutputTopic: testbroker.TopicFeatures,
			DLQTopic: testbroker.TopicDLQ, PointsTopic: pointsTopic, Group: "point-predict-e2e"},
		Window: "set", Spec: specPath,
		Models:      config.Models{Model: modelPath, ModelCoverage: 0.9},
		IdleTimeout: time.Minute, MaxOpenWindows: 1000,
		Delivery: config.Delivery{Limits: config.Limits{MaxMessageBytes: 1 << 20, MaxOutputBytes: 64 << 10},
			SessionTimeout: 6 * time.Second, CommitInterval: 100 * time.Millisecond},
		MetricsAddr: "127.0.0.1:0", ShutdownTimeout: 10 * time.Second, LogLevel: "error", LogFormat: "text",
	}

	// A per-point model without the per-point topic: refused at start-up, naming the variable.
	noPoints := *cfg
	noPoints.PointsTopic = ""
	if err := service.Serve(ctx, &noPoints, service.NewLogger(io.Discard, "error", "text"), nil); err == nil ||
		!strings.Contains(err.Error(), "DISTFEAT_POINT_FEATURES_TOPIC") || !strings.Contains(err.Error(), m.ModelVersion) {
		t.Fatalf("worker with a per-point model and no per-point topic: %v", err)
	}

	serveUntilCleanup(ctx, t, cfg)
	produceSetLines(ctx, t, b.Addrs(), input, sets)
	r := kafka.NewReader(kafka.ReaderConfig{Brokers: b.Addrs(), GroupTopics: []string{pointsTopic}, GroupID: "point-predict-reader",
		StartOffset: kafka.FirstOffset, MinBytes: 1, MaxBytes: 16 << 20, MaxWait: 50 * time.Millisecond})
	defer r.Close()
	var got []schema.PointLine
	for len(got) < len(want) {
		msg := readRecords(ctx, t, r, 1)[0]
		if v := headerOf(msg, "model-version"); v != m.ModelVersion {
			t.Fatalf("per-point record with model-version %q, want %s", v, m.ModelVersion)
		}
		rows, gcols, err := schema.DecodePoints(msg.Value)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Join(gcols, ",") != strings.Join(cols, ",") {
			t.Fatalf("the worker's per-point columns %v, embed's %v", gcols, cols)
		}
		got = append(got, rows...)
	}
	key := func(r schema.PointLine) string { return fmt.Sprintf("%s/%d", r.Set, r.Index) }
	byKey := map[string]schema.PointLine{}
	for _, g := range got {
		byKey[key(g)] = g
	}
	if len(byKey) != len(want) {
		t.Fatalf("the worker wrote %d distinct rows, embed %d", len(byKey), len(want))
	}
	for _, w := range want {
		g, ok := byKey[key(w)]
		if !ok {
			t.Fatalf("row %s from embed is not on the worker's topic", key(w))
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
}

// TestFitPointLabelRefusals: what fit --point-label refuses, each by name (exit 2).
func TestFitPointLabelRefusals(t *testing.T) {
	specPath := writeFile(t, "spec.json", pointTestSpec)
	noMT := writeFile(t, "nomt.json", `{"version":1,"seed":1,"dim":2,"bounds":{"lo":[0,0],"hi":[10,10]},
	 "families":[{"name":"mmd","kind":"mmd","features":16,"bandwidth":0.1}]}`)
	in := pointTrainInput(6)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--point-label", "y", "--label", "set"}, "exclude each other"},
		{[]string{"--point-label", "y", "--classifier", "logistic"}, "--classifier logistic is not offered per point"},
		{[]string{"--point-label", "y", "--families", "mmd"}, `no marginal_transfer family "mmd"`},
		{[]string{"--point-label", "y", "--spec", noMT}, "the spec has no marginal_transfer family"},
	} {
		args := append([]string{"fit", "--spec", specPath, "--out", filepath.Join(t.TempDir(), "m.json")}, c.args...)
		if code, _, stderr := runCLI(t, in, args...); code != 2 || !strings.Contains(stderr, c.want) {
			t.Errorf("fit %v: exit %d, stderr %q; want exit 2 naming %q", c.args, code, stderr, c.want)
		}
	}
	// A per-point regression needs numbers.
	if code, _, stderr := runCLI(t, in, "fit", "--spec", specPath, "--point-label", "y", "--task", "regression", "--folds", "3",
		"--out", filepath.Join(t.TempDir(), "m.json")); code == 0 || !strings.Contains(stderr, `is not a finite number`) {
		t.Errorf("a per-point regression on class labels: exit %d, stderr %q", code, stderr)
	}
	// A line without the per-point label array is an error naming the set and the field.
	if code, _, stderr := runCLI(t, in+`{"set":"nolabels","points":[[1,2],[3,4]]}`+"\n", "fit", "--spec", specPath,
		"--point-label", "y", "--folds", "3", "--out", filepath.Join(t.TempDir(), "m.json")); code == 0 || !strings.Contains(stderr, `set "nolabels" has no field "y"`) {
		t.Errorf("a set without per-point labels: exit %d, stderr %q", code, stderr)
	}
}
