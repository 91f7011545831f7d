package consumer

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/segmentio/kafka-go"

	"github.com/distfeat/distfeat/embedding"
	"github.com/distfeat/distfeat/internal/testbroker"
	"github.com/distfeat/distfeat/model"
	"github.com/distfeat/distfeat/schema"
	"github.com/distfeat/distfeat/spec"
	"github.com/distfeat/distfeat/window"
)

const modelsSpec = `{"version":1,"seed":7,"dim":2,"bounds":{"lo":[0,0],"hi":[1,1]},
 "families":[{"name":"mmd","kind":"mmd","features":32,"bandwidth":0.2}]}`

// fitModelFile fits a ridge regression of the sets' mean first coordinate on the harness's
// features of 60 random sets (seed), under the harness's spec, and returns its file's bytes.
func fitModelFile(t *testing.T, h *harness, seed uint64) ([]byte, *model.Model) {
	t.Helper()
	var rows [][]float32
	var labels []string
	for _, s := range randomSets(seed, "fit", 60, 40, 0) {
		u := make([]float64, len(s.Points))
		if _, err := h.emb.Normalize(u, s.Points); err != nil {
			t.Fatal(err)
		}
		rows = append(rows, h.emb.Embed(u)[0])
		mean := 0.0
		for j := 0; j < len(s.Points); j += 2 {
			mean += s.Points[j] / float64(s.N)
		}
		labels = append(labels, fmt.Sprint(mean))
	}
	m, err := model.Fit(rows, labels, model.Options{Kind: model.Regression, Seed: seed})
	if err != nil {
		t.Fatal(err)
	}
	c := h.emb.Columns()[0]
	m.SpecID, m.Families, m.Columns = h.emb.Spec().ID(), []string{c.Family}, []model.Column{{Name: c.Name, Len: c.Len}}
	b, err := m.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	return b, m
}

// TestWorkerModelsTopic: at start the worker reads the models topic to its end before any
// window closes, so the newest valid model under its name (not the model file, not a later
// invalid record, not another name's) predicts the first windows; while running, a model
// reading a column the spec lacks and a record that is no model file are refused (metric,
// dead letter with model_<reason>) and a tombstone is ignored, the model in force staying; a
// valid model then predicts the windows that close after it was read. Every prediction is the
// model's output on its window's delivered features, and the input is committed once the
// predictions are acknowledged.
func TestWorkerModelsTopic(t *testing.T) {
	env := testbroker.ForTestExtra(t, 2, "features.predictions", "models")
	h := newHarnessEnv(t, env, modelsSpec)
	fileBytes, fileModel := fitModelFile(t, h, 1)
	aBytes, a := fitModelFile(t, h, 2)
	bBytes, b := fitModelFile(t, h, 3)
	var wrongCols map[string]any
	if err := json.Unmarshal(aBytes, &wrongCols); err != nil {
		t.Fatal(err)
	}
	wrongCols["columns"] = []map[string]any{{"name": "nope", "len": 32}}
	wrongCols["model_version"] = ""
	wrong, err := json.Marshal(wrongCols)
	if err != nil {
		t.Fatal(err)
	}
	wrong = fixVersion(t, wrong)
	wm, err := model.Parse(wrong)
	if err != nil {
		t.Fatal(err)
	}
	modelPath := filepath.Join(t.TempDir(), "model.json")
	if err := os.WriteFile(modelPath, fileBytes, 0o644); err != nil {
		t.Fatal(err)
	}
	publish := func(msgs ...kafka.Message) {
		t.Helper()
		w := &kafka.Writer{Addr: kafka.TCP(env.Brokers...), Topic: env.Extra["models"], Balancer: &kafka.Murmur2Balancer{Consistent: true},
			RequiredAcks: kafka.RequireAll, BatchTimeout: time.Millisecond, Transport: h.tr}
		defer w.Close()
		ctx, cancel := context.WithTimeout(context.Background(), testbroker.StallTimeout)
		defer cancel()
		for _, m := range msgs { // one at a time: in this order on the partition
			if err := w.WriteMessages(ctx, m); err != nil {
				t.Fatal(err)
			}
		}
	}
	publish(kafka.Message{Key: []byte("m"), Value: aBytes}, kafka.Message{Key: []byte("m"), Value: []byte("{not a model")},
		kafka.Message{Key: []byte("other"), Value: bBytes})

	cfg := h.config("models", window.Config{})
	cfg.PredictionsTopic, cfg.ModelsTopic, cfg.ModelName, cfg.Model, cfg.ModelCoverage = env.Extra["features.predictions"], env.Extra["models"], "m", modelPath, 0.9
	feats, preds, dlq := h.collect(env.Features), h.collect(env.Extra["features.predictions"]), h.collect(env.DLQ)
	rw := h.start(cfg, nil)

	// check waits for n predictions in all and checks those of the sets of batch against
	// model m applied to their delivered feature records.
	check := func(n int, batch []schema.Batch, m *model.Model) {
		t.Helper()
		ap, err := model.NewApplier(m, h.emb.Spec().ID(), []model.Column{{Name: "mmd", Len: 32}}, 0.9)
		if err != nil {
			t.Fatal(err)
		}
		fs := feats.waitFor(t, 30*time.Second, "feature records", func(ms []kafka.Message) bool { return len(ms) >= n })
		ps := preds.waitFor(t, 30*time.Second, "predictions", func(ms []kafka.Message) bool { return len(ms) >= n })
		bySet := map[string]schema.FeatureRecord{}
		for _, f := range fs {
			r, _, err := schema.DecodeFeatures(f.Value)
			if err != nil {
				t.Fatal(err)
			}
			bySet[r[0].Set] = r[0]
		}
		got := map[string]schema.PredictionRecord{}
		for _, p := range ps {
			r, err := schema.DecodePredictions(p.Value)
			if err != nil {
				t.Fatal(err)
			}
			got[r[0].Set] = r[0]
		}
		for _, s := range batch {
			p, ok := got[s.Set]
			if !ok {
				t.Fatalf("set %s: no prediction", s.Set)
			}
			want, err := ap.Apply(bySet[s.Set].Vectors)
			if err != nil {
				t.Fatal(err)
			}
			if p.ModelVersion != m.ModelVersion || math.Float32bits(p.Prediction) != math.Float32bits(want.Value) || p.Interval == nil || *p.Interval != *want.Interval {
				t.Errorf("set %s: prediction %s %v %v, want %s %v %v", s.Set, p.ModelVersion, p.Prediction, p.Interval, m.ModelVersion, want.Value, *want.Interval)
			}
		}
	}
	first := randomSets(4, "first", 6, 50, 1_732_000_000_000)
	h.produce("json", 20, first...)
	check(6, first, a)
	if got := testutilCounter(rw.metrics.ModelsRefused.WithLabelValues(model.RefusedDecode)); got != 1 {
		t.Errorf("models_refused_total{decode} %v after the start, want 1", got)
	}
	if f, tp := testutilCounter(rw.metrics.ModelLoads.WithLabelValues("file")), testutilCounter(rw.metrics.ModelLoads.WithLabelValues("topic")); f != 1 || tp != 1 {
		t.Errorf("model_loads_total file %v topic %v, want 1 and 1 (%s then %s)", f, tp, fileModel.ModelVersion, a.ModelVersion)
	}

	publish(kafka.Message{Key: []byte("m"), Value: wrong}, kafka.Message{Key: []byte("m"), Value: nil},
		kafka.Message{Key: []byte("m"), Value: bBytes})
	deadline := time.Now().Add(testbroker.StallTimeout)
	for rw.w.models.Current().Model().ModelVersion != b.ModelVersion {
		if time.Now().After(deadline) {
			t.Fatalf("model %s not in force %s after it was published", b.ModelVersion, testbroker.StallTimeout)
		}
		time.Sleep(10 * time.Millisecond)
	}
	second := randomSets(5, "second", 6, 50, 1_732_000_100_000)
	h.produce("json", 20, second...)
	check(12, second, b)
	if got := testutilCounter(rw.metrics.ModelsRefused.WithLabelValues(model.RefusedColumns)); got != 1 {
		t.Errorf("models_refused_total{columns} %v, want 1", got)
	}
	dead := dlq.waitFor(t, 30*time.Second, "2 dead letters", func(ms []kafka.Message) bool { return len(ms) >= 2 })
	for i, want := range []string{"model_decode", "model_columns"} {
		if e := headerOf(dead[i], schema.HeaderError); e != want || string(dead[i].Key) != "m" || headerOf(dead[i], schema.HeaderSourceTopic) != env.Extra["models"] {
			t.Errorf("dead letter %d: key %q error %q source %q, want %s from the models topic (detail %q)", i, dead[i].Key, e,
				headerOf(dead[i], schema.HeaderSourceTopic), want, headerOf(dead[i], schema.HeaderErrorDetail))
		}
	}
	if d := headerOf(dead[1], schema.HeaderErrorDetail); d == "" || !strings.Contains(d, `"nope"`) || !strings.Contains(d, wm.ModelVersion) {
		t.Errorf("columns dead letter detail %q does not name the column and the model", d)
	}
	if got := testutilCounter(rw.metrics.Predictions.WithLabelValues(b.ModelVersion)); got != 6 {
		t.Errorf("predictions_total{%s} %v, want 6", b.ModelVersion, got)
	}
	waitCommitted(t, h, "models", h.topicEnds(env.Points))
}

// fixVersion sets a model file's model_version to its content hash (an edited model that is
// still a valid file).
func fixVersion(t *testing.T, b []byte) []byte {
	t.Helper()
	var m model.Model
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	out, err := m.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestModelPredictionSize: a model whose prediction records cannot fit the output limit (a
// classifier with very many long class names) is refused as too_large, naming the limit;
// an ordinary one fits.
func TestModelPredictionSize(t *testing.T) {
	mk := func(classes int) *model.Applier {
		t.Helper()
		m := &model.Model{Format: model.FormatVersion, Kind: model.Regression, SpecID: "s", Width: 2,
			Columns: []model.Column{{Name: "f", Len: 2}}, Intercept: []float64{0}, Weights: [][]float64{{1, 1}}}
		if classes > 0 {
			m.Kind, m.Intercept, m.Weights = model.Classification, make([]float64, classes), make([][]float64, classes)
			for k := range classes {
				m.Classes = append(m.Classes, fmt.Sprintf("%0200d", k))
				m.Weights[k] = []float64{1, float64(k)}
			}
		}
		if _, err := m.Marshal(); err != nil {
			t.Fatal(err)
		}
		a, err := model.NewApplier(m, "s", m.Columns, 0)
		if err != nil {
			t.Fatal(err)
		}
		return a
	}
	if err := checkSize(mk(0), nil, 8<<10); err != nil {
		t.Errorf("a regression within 8 KiB: %v", err)
	}
	if err := checkSize(mk(10), nil, 1_000_000); err != nil {
		t.Errorf("10 classes within 1 MB: %v", err)
	}
	err := checkSize(mk(5000), nil, 1_000_000) // 5000 × 200-byte names: over 1 MB
	if model.RefusedReason(err) != model.RefusedTooLarge || !strings.Contains(err.Error(), "DISTFEAT_MAX_OUTPUT_BYTES=1000000") {
		t.Errorf("5000 long class names: %v, want too_large naming the limit", err)
	}
}

// TestPerPointModelNeedsPointTopic: a per-point model is refused (reason per, naming
// DISTFEAT_POINT_FEATURES_TOPIC) by a worker without per-point output, applied to the
// per-point columns by one with it, and refused as too_large when one point's record with
// its predictions cannot fit the output limit; a per-set model still applies to windows.
func TestPerPointModelNeedsPointTopic(t *testing.T) {
	sp, err := spec.ParseSpec([]byte(`{"version":1,"seed":7,"dim":2,"bounds":{"lo":[0,0],"hi":[1,1]},
	 "families":[{"name":"mmd","kind":"mmd","features":32,"bandwidth":0.2},
	   {"name":"mt","kind":"marginal_transfer","set_family":"mmd","sigma_p":0.4,"sigma_x":0.3,"features":64}]}`))
	if err != nil {
		t.Fatal(err)
	}
	emb, err := embedding.New(sp)
	if err != nil {
		t.Fatal(err)
	}
	mk := func(per string, col model.Column) *model.Model {
		m := &model.Model{Format: model.FormatVersion, Kind: model.Classification, Per: per, SpecID: sp.ID(), Width: col.Len,
			Columns: []model.Column{col}, Classes: []string{"a", "b"}, Intercept: []float64{0, 0}, Weights: [][]float64{make([]float64, col.Len), make([]float64, col.Len)}}
		if _, err := m.Marshal(); err != nil {
			t.Fatal(err)
		}
		return m
	}
	perPoint, perSet := mk(model.PerPoint, model.Column{Name: "mt", Len: 64}), mk("", model.Column{Name: "mmd", Len: 32})
	setCols, pointCols := []model.Column{{Name: "mmd", Len: 32}}, []model.Column{{Name: "mt", Len: 64}}
	without := &models{specID: sp.ID(), cols: setCols, emb: emb}
	_, err = without.applier(perPoint, 1_000_000)
	if model.RefusedReason(err) != model.RefusedPer || !strings.Contains(err.Error(), "DISTFEAT_POINT_FEATURES_TOPIC") {
		t.Errorf("per-point model without per-point output: %v, want refused (per) naming DISTFEAT_POINT_FEATURES_TOPIC", err)
	}
	with := &models{specID: sp.ID(), cols: setCols, pointCols: pointCols, emb: emb}
	if a, err := with.applier(perPoint, 1_000_000); err != nil || !a.Model().PredictsPoints() {
		t.Errorf("per-point model with per-point output: %v", err)
	}
	if _, err := with.applier(perSet, 1_000_000); err != nil {
		t.Errorf("per-set model: %v", err)
	}
	if _, err := with.applier(perPoint, 1500); model.RefusedReason(err) != model.RefusedTooLarge {
		t.Errorf("per-point model over a 1500-byte limit: %v, want too_large", err)
	}
}
