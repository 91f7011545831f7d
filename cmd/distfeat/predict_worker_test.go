package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/segmentio/kafka-go"

	"github.com/distfeat/distfeat/config"
	"github.com/distfeat/distfeat/internal/testbroker"
	"github.com/distfeat/distfeat/kafkaio"
	"github.com/distfeat/distfeat/model"
	"github.com/distfeat/distfeat/schema"
	"github.com/distfeat/distfeat/service"
	"github.com/distfeat/distfeat/spec"
)

const (
	predictionsTopic = "features.predictions"
	modelsTopic      = "models"
	modelName        = "shapes"
)

// predictSet is one line of examples/sets.jsonl: the raw line and its set and points.
type predictSet struct {
	line   string
	set    string
	points []float64
}

// predictExampleSets reads examples/sets.jsonl.
func predictExampleSets(t *testing.T) []predictSet {
	t.Helper()
	f, err := os.Open("../../examples/sets.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var sets []predictSet
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<24)
	for sc.Scan() {
		var rec struct {
			Set    string      `json:"set"`
			Points [][]float64 `json:"points"`
		}
		if err := json.Unmarshal(sc.Bytes(), &rec); err != nil {
			t.Fatal(err)
		}
		s := predictSet{line: sc.Text(), set: rec.Set}
		for _, p := range rec.Points {
			s.points = append(s.points, p...)
		}
		sets = append(sets, s)
	}
	return sets
}

// otherSeedSpec is examples/spec.json with another seed: another spec_id, the same columns.
func otherSeedSpec(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(shapesSpec)
	if err != nil {
		t.Fatal(err)
	}
	other := bytes.Replace(b, []byte(`"seed": 42`), []byte(`"seed": 43`), 1)
	if bytes.Equal(other, b) {
		t.Fatal("examples/spec.json has no seed 42 to change")
	}
	return writeFile(t, "other-seed.json", string(other))
}

// embedPredictions runs `embed --model` on sets and returns each set's record, decoded from
// its Arrow output: the feature record with the prediction columns (model.prediction,
// model.interval or model.scores) after the features.
func embedPredictions(t *testing.T, sets []predictSet, modelPath string, coverage string) map[string]schema.FeatureRecord {
	t.Helper()
	var in strings.Builder
	for _, s := range sets {
		in.WriteString(s.line + "\n")
	}
	out := filepath.Join(t.TempDir(), "pred.arrow")
	if code, _, stderr := runCLI(t, in.String(), "embed", "--spec", shapesSpec, "--model", modelPath, "--coverage", coverage,
		"--format", "arrow", "--out", out); code != 0 {
		t.Fatalf("embed --model: exit %d: %s", code, stderr)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	recs, _, err := schema.DecodeFeatures(b)
	if err != nil {
		t.Fatal(err)
	}
	bySet := map[string]schema.FeatureRecord{}
	for _, r := range recs {
		bySet[r.Set] = r
	}
	return bySet
}

// produceSets writes each set as records of at most 50 points, the last one ending the set.
func produceSets(ctx context.Context, t *testing.T, brokers []string, sets []predictSet) {
	t.Helper()
	var batches []schema.Batch
	for _, s := range sets {
		batches = append(batches, kafkaio.Split(schema.Batch{Set: s.set, Points: s.points, N: len(s.points) / 2, End: true}, 50)...)
	}
	pw := kafkaio.NewPointWriter(kafkaio.WriterConfig{Brokers: brokers, Topic: testbroker.TopicPoints, Dim: 2})
	if err := pw.Write(ctx, batches...); err != nil {
		t.Fatal(err)
	}
	if err := pw.Close(); err != nil {
		t.Fatal(err)
	}
}

// publishModel writes a model file to the models topic under key.
func publishModel(ctx context.Context, t *testing.T, brokers []string, key, path string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	w := &kafka.Writer{Addr: kafka.TCP(brokers...), Topic: modelsTopic, Balancer: &kafka.Murmur2Balancer{Consistent: true}, RequiredAcks: kafka.RequireAll}
	defer w.Close()
	if err := w.WriteMessages(ctx, kafka.Message{Key: []byte(key), Value: b}); err != nil {
		t.Fatal(err)
	}
}

// waitMetric polls the worker's /metrics until a line starting with prefix contains every
// part, and fails when ctx ends first.
func waitMetric(ctx context.Context, t *testing.T, addr, prefix string, parts ...string) {
	t.Helper()
	for {
		resp, err := http.Get("http://" + addr + "/metrics")
		if err == nil {
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			for _, line := range strings.Split(string(body), "\n") {
				ok := strings.HasPrefix(line, prefix)
				for _, p := range parts {
					ok = ok && strings.Contains(line, p)
				}
				if ok {
					return
				}
			}
		}
		select {
		case <-ctx.Done():
			t.Fatalf("no metric %s with %q on the worker's /metrics", prefix, parts)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// readRecords reads n records of topic with r (a group reader kept across phases).
func readRecords(ctx context.Context, t *testing.T, r *kafka.Reader, n int) []kafka.Message {
	t.Helper()
	var msgs []kafka.Message
	for len(msgs) < n {
		m, err := r.ReadMessage(ctx)
		if err != nil {
			t.Fatalf("reading %s after %d of %d records: %v", r.Config().Topic+strings.Join(r.Config().GroupTopics, ","), len(msgs), n, err)
		}
		msgs = append(msgs, m)
	}
	return msgs
}

// checkPredictions compares the predictions topic's records with embed --model's output for
// the same sets: the model version, every float32 bit of the prediction, interval and
// scores, the class, and the window's set, n and spec_id.
func checkPredictions(t *testing.T, msgs []kafka.Message, want map[string]schema.FeatureRecord, m *model.Model, specID string, coverage float64) {
	t.Helper()
	seen := map[string]bool{}
	for _, msg := range msgs {
		recs, err := schema.DecodePredictions(msg.Value)
		if err != nil || len(recs) != 1 {
			t.Fatalf("prediction record: %d rows, %v", len(recs), err)
		}
		g := recs[0]
		w, ok := want[g.Set]
		if !ok || seen[g.Set] {
			t.Fatalf("prediction for set %q: not among the sets produced in this phase, or twice", g.Set)
		}
		seen[g.Set] = true
		if string(msg.Key) != g.Set || g.ModelVersion != m.ModelVersion || g.ModelKind != m.Kind || g.SpecID != specID ||
			g.N != w.N || g.WindowEnd < g.WindowStart || headerOf(msg, "model-version") != m.ModelVersion {
			t.Errorf("set %s: key %q, model %s/%s (want %s/%s), spec_id %s (want %s), n %d (want %d), window [%d, %d], model-version header %q",
				g.Set, msg.Key, g.ModelVersion, g.ModelKind, m.ModelVersion, m.Kind, g.SpecID, specID, g.N, w.N, g.WindowStart, g.WindowEnd, headerOf(msg, "model-version"))
		}
		nf := len(w.Vectors) // embed's columns: the features, then the prediction columns
		if m.Kind == model.Classification {
			var probs []float32 // a logistic model's last column
			if m.Link == model.Logistic {
				nf, probs = nf-1, w.Vectors[nf-1]
			}
			idx := int(w.Vectors[nf-2][0])
			scores := w.Vectors[nf-1]
			if len(g.Probabilities) != len(probs) {
				t.Fatalf("set %s: probabilities %v, embed --model %v", g.Set, g.Probabilities, probs)
			}
			for k := range probs {
				if math.Float32bits(g.Probabilities[k]) != math.Float32bits(probs[k]) {
					t.Errorf("set %s: probability %d %v, embed --model %v", g.Set, k, g.Probabilities[k], probs[k])
				}
			}
			if g.Class != m.Classes[idx] || len(g.Scores) != len(scores) || strings.Join(g.Classes, ",") != strings.Join(m.Classes, ",") {
				t.Fatalf("set %s: class %q scores %v classes %v; embed --model: class %q scores %v", g.Set, g.Class, g.Scores, g.Classes, m.Classes[idx], scores)
			}
			for k := range scores {
				if math.Float32bits(g.Scores[k]) != math.Float32bits(scores[k]) {
					t.Errorf("set %s: score %d %v, embed --model %v", g.Set, k, g.Scores[k], scores[k])
				}
			}
			if math.Float32bits(g.Prediction) != math.Float32bits(scores[idx]) {
				t.Errorf("set %s: prediction %v, the winning score is %v", g.Set, g.Prediction, scores[idx])
			}
			continue
		}
		value, interval := w.Vectors[nf-2][0], w.Vectors[nf-1]
		if g.Interval == nil || g.Coverage != coverage || g.Class != "" || g.Scores != nil {
			t.Fatalf("set %s: regression prediction %+v", g.Set, g)
		}
		if math.Float32bits(g.Prediction) != math.Float32bits(value) ||
			math.Float32bits(g.Interval[0]) != math.Float32bits(interval[0]) || math.Float32bits(g.Interval[1]) != math.Float32bits(interval[1]) {
			t.Errorf("set %s: prediction %v %v, embed --model %v %v", g.Set, g.Prediction, *g.Interval, value, interval)
		}
	}
	if len(seen) != len(want) {
		t.Errorf("%d of %d sets predicted", len(seen), len(want))
	}
}

func headerOf(m kafka.Message, key string) string {
	for _, h := range m.Headers {
		if h.Key == key {
			return string(h.Value)
		}
	}
	return ""
}

// TestWorkerPredictions: `distfeat fit` → a worker with DISTFEAT_MODEL → the predictions
// topic holds, for every window, the very float32 values `embed --model` gives for the same
// set; a model published on the models topic replaces it for the windows that close after
// the worker has read it, without a restart (a regression, then a classifier); a model
// fitted under another spec_id on the topic is dead-lettered naming both spec_ids and the
// model in force stays.
func TestWorkerPredictions(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	b, err := testbroker.Start(ctx, testbroker.Options{Partitions: 2,
		Topics: []string{testbroker.TopicPoints, testbroker.TopicFeatures, testbroker.TopicDLQ, predictionsTopic, modelsTopic}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(b.Close)
	sp, err := spec.LoadSpec(shapesSpec)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	regL2, regMMD, cls, foreign := filepath.Join(dir, "l2.json"), filepath.Join(dir, "mmd.json"), filepath.Join(dir, "cls.json"), filepath.Join(dir, "foreign.json")
	numeric, names := labelShapes(t, true), labelShapes(t, false)
	runOK(t, "fit", "--in", numeric, "--label", "shape", "--spec", shapesSpec, "--families", "l2", "--out", regL2)
	runOK(t, "fit", "--in", numeric, "--label", "shape", "--spec", shapesSpec, "--families", "mmd", "--out", regMMD)
	runOK(t, "fit", "--in", names, "--label", "shape", "--task", "classification", "--classifier", "logistic", "--folds", "4", "--spec", shapesSpec, "--families", "mmd,hdd_js", "--out", cls)
	runOK(t, "fit", "--in", numeric, "--label", "shape", "--spec", otherSeedSpec(t), "--families", "l2", "--out", foreign)
	load := func(p string) *model.Model {
		m, err := model.Load(p)
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	mL2, mMMD, mCls, mForeign := load(regL2), load(regMMD), load(cls), load(foreign)

	// 7 calibration sets hold intervals at 0.5 and 0.8 (TestFitRegressionAndRefusals).
	const coverage = 0.8
	cfg := &config.Config{
		Topics: config.Topics{Brokers: b.Addrs(), InputTopic: testbroker.TopicPoints, OutputTopic: testbroker.TopicFeatures,
			DLQTopic: testbroker.TopicDLQ, Group: "predict-e2e"},
		Window: "set", Spec: shapesSpec,
		Models:      config.Models{Model: regL2, ModelsTopic: modelsTopic, ModelName: modelName, ModelCoverage: coverage},
		IdleTimeout: time.Minute, MaxOpenWindows: 1000,
		Delivery: config.Delivery{Limits: config.Limits{MaxMessageBytes: 1 << 20, MaxOutputBytes: 1_000_000},
			SessionTimeout: 6 * time.Second, CommitInterval: 100 * time.Millisecond},
		MetricsAddr: "127.0.0.1:0", ShutdownTimeout: 10 * time.Second, LogLevel: "error", LogFormat: "text",
	}
	if cfg.PredictionsTopicName() != predictionsTopic {
		t.Fatalf("default predictions topic %q", cfg.PredictionsTopicName())
	}
	// A model for another name on the topic is not this worker's.
	publishModel(ctx, t, b.Addrs(), "someone-else", foreign)
	addrc := make(chan string, 1)
	wctx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() {
		done <- service.Serve(wctx, cfg, service.NewLogger(io.Discard, "error", "text"), func(a string) { addrc <- a })
	}()
	t.Cleanup(func() {
		stop()
		if err := <-done; err != nil {
			t.Errorf("worker: %v", err)
		}
	})
	var addr string
	select {
	case addr = <-addrc:
	case err := <-done:
		t.Fatalf("worker: %v", err)
	}
	waitMetric(ctx, t, addr, "distfeat_model_info{", `model_version="`+mL2.ModelVersion+`"`, `name="shapes"`)

	preds := kafka.NewReader(kafka.ReaderConfig{Brokers: b.Addrs(), GroupTopics: []string{predictionsTopic}, GroupID: "predict-e2e-reader",
		StartOffset: kafka.FirstOffset, MinBytes: 1, MaxBytes: 16 << 20, MaxWait: 50 * time.Millisecond})
	defer preds.Close()
	sets := predictExampleSets(t)
	phases := [][]predictSet{sets[:12], sets[12:24], sets[24:]}

	// Phase 1: the file's model.
	produceSets(ctx, t, b.Addrs(), phases[0])
	checkPredictions(t, readRecords(ctx, t, preds, len(phases[0])), embedPredictions(t, phases[0], regL2, "0.8"), mL2, sp.ID(), coverage)

	// Phase 2: a model of another spec_id on the topic is refused, then another regression
	// is put in force; the next windows use it.
	publishModel(ctx, t, b.Addrs(), modelName, foreign)
	publishModel(ctx, t, b.Addrs(), modelName, regMMD)
	waitMetric(ctx, t, addr, "distfeat_model_info{", `model_version="`+mMMD.ModelVersion+`"`)
	waitMetric(ctx, t, addr, `distfeat_models_refused_total{reason="spec_id"} 1`)
	produceSets(ctx, t, b.Addrs(), phases[1])
	checkPredictions(t, readRecords(ctx, t, preds, len(phases[1])), embedPredictions(t, phases[1], regMMD, "0.8"), mMMD, sp.ID(), coverage)

	dlq := kafka.NewReader(kafka.ReaderConfig{Brokers: b.Addrs(), GroupTopics: []string{testbroker.TopicDLQ}, GroupID: "predict-e2e-dlq",
		StartOffset: kafka.FirstOffset, MinBytes: 1, MaxBytes: 16 << 20, MaxWait: 50 * time.Millisecond})
	defer dlq.Close()
	dl := readRecords(ctx, t, dlq, 1)[0]
	detail := headerOf(dl, schema.HeaderErrorDetail)
	if string(dl.Key) != modelName || headerOf(dl, schema.HeaderError) != "model_spec_id" || headerOf(dl, schema.HeaderSourceTopic) != modelsTopic ||
		!strings.Contains(detail, mForeign.SpecID) || !strings.Contains(detail, sp.ID()) {
		t.Errorf("the refused model's dead letter: key %q, error %q, source %q, detail %q (want both spec_ids %s and %s)",
			dl.Key, headerOf(dl, schema.HeaderError), headerOf(dl, schema.HeaderSourceTopic), detail, mForeign.SpecID, sp.ID())
	}

	// Phase 3: a classifier.
	publishModel(ctx, t, b.Addrs(), modelName, cls)
	waitMetric(ctx, t, addr, "distfeat_model_info{", `model_version="`+mCls.ModelVersion+`"`, `kind="classification"`)
	produceSets(ctx, t, b.Addrs(), phases[2])
	checkPredictions(t, readRecords(ctx, t, preds, len(phases[2])), embedPredictions(t, phases[2], cls, "0.8"), mCls, sp.ID(), coverage)
	for _, v := range []string{mL2.ModelVersion, mMMD.ModelVersion, mCls.ModelVersion} {
		waitMetric(ctx, t, addr, fmt.Sprintf(`distfeat_predictions_total{model_version=%q} 12`, v))
	}

	// tail prints the predictions topic as JSON lines whose "prediction" objects are
	// `embed --model`'s for the same sets, byte for byte.
	type predLine struct {
		Set        string          `json:"set"`
		SpecID     string          `json:"spec_id"`
		Prediction json.RawMessage `json:"prediction"`
	}
	want := map[string]string{}
	for i, m := range []string{regL2, regMMD, cls} {
		var in strings.Builder
		for _, s := range phases[i] {
			in.WriteString(s.line + "\n")
		}
		code, stdout, stderr := runCLI(t, in.String(), "embed", "--spec", shapesSpec, "--model", m, "--coverage", "0.8")
		if code != 0 {
			t.Fatalf("embed --model %s: exit %d: %s", m, code, stderr)
		}
		for _, line := range strings.Split(strings.TrimSpace(stdout), "\n") {
			var l predLine
			if err := json.Unmarshal([]byte(line), &l); err != nil {
				t.Fatal(err)
			}
			want[l.Set] = string(l.Prediction)
		}
	}
	code, stdout, stderr := runArgs(t, "tail", "--brokers", strings.Join(b.Addrs(), ","), "--topic", predictionsTopic,
		"--from-beginning", "--max", fmt.Sprint(len(sets)), "--timeout", "30s")
	lines := strings.Split(strings.TrimSpace(stdout), "\n")
	if code != 0 || len(lines) != len(sets) {
		t.Fatalf("tail --topic %s: exit %d, %d lines (want %d): %s", predictionsTopic, code, len(lines), len(sets), stderr)
	}
	for _, line := range lines {
		var l predLine
		if err := json.Unmarshal([]byte(line), &l); err != nil {
			t.Fatal(err)
		}
		if string(l.Prediction) != want[l.Set] || l.SpecID != sp.ID() {
			t.Errorf("tail: set %s spec_id %s prediction %s; embed --model: %s (spec_id %s)", l.Set, l.SpecID, l.Prediction, want[l.Set], sp.ID())
		}
	}
}

// TestWorkerModelRefusedAtStart: a model file fitted under another spec_id, or without an
// interval at DISTFEAT_MODEL_COVERAGE, stops the worker before it connects, naming both
// spec_ids (or the coverages).
func TestWorkerModelRefusedAtStart(t *testing.T) {
	dir := t.TempDir()
	foreign, own := filepath.Join(dir, "foreign.json"), filepath.Join(dir, "own.json")
	numeric := labelShapes(t, true)
	runOK(t, "fit", "--in", numeric, "--label", "shape", "--spec", otherSeedSpec(t), "--families", "l2", "--out", foreign)
	runOK(t, "fit", "--in", numeric, "--label", "shape", "--spec", shapesSpec, "--families", "l2", "--out", own)
	sp, err := spec.LoadSpec(shapesSpec)
	if err != nil {
		t.Fatal(err)
	}
	mForeign, err := model.Load(foreign)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		model    string
		coverage float64
		want     []string
	}{
		{foreign, 0.8, []string{"DISTFEAT_MODEL", mForeign.SpecID, sp.ID()}},
		{own, 0.9, []string{"DISTFEAT_MODEL", "not 0.9"}}, // 7 calibration sets: no 0.9 interval
	} {
		cfg := &config.Config{Topics: config.Topics{Brokers: []string{"127.0.0.1:1"}, InputTopic: "points", OutputTopic: "features", DLQTopic: "points.dlq",
			Group: "g"}, Window: "set", Spec: shapesSpec, Models: config.Models{Model: tc.model, ModelCoverage: tc.coverage}, MaxOpenWindows: 10,
			Delivery: config.Delivery{Limits: config.Limits{MaxMessageBytes: 1 << 20, MaxOutputBytes: 1_000_000},
				SessionTimeout: time.Second, CommitInterval: time.Second},
			MetricsAddr: "127.0.0.1:0", ShutdownTimeout: time.Second, LogLevel: "error", LogFormat: "text"}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		err := service.Serve(ctx, cfg, service.NewLogger(io.Discard, "error", "text"), nil)
		cancel()
		for _, w := range tc.want {
			if err == nil || !strings.Contains(err.Error(), w) {
				t.Errorf("model %s at coverage %v: error %v, want one naming %q", filepath.Base(tc.model), tc.coverage, err, w)
			}
		}
	}
}
