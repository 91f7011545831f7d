package processor

import (
	"fmt"
	"math"
	"sync/atomic"
	"testing"

	"github.com/distfeat/distfeat/embedding"
	"github.com/distfeat/distfeat/model"
	"github.com/distfeat/distfeat/schema"
	"github.com/distfeat/distfeat/window"
)

const predictSpec = `{"version": 1, "seed": 3, "dim": 2, "bounds": {"lo": [0, 0], "hi": [1, 1]},
	"families": [{"name": "mmd", "kind": "mmd", "features": 16, "bandwidth": 0.3}]}`

// swapModels is a Models whose model the test replaces.
type swapModels struct{ cur atomic.Pointer[model.Applier] }

func (s *swapModels) Current() *model.Applier { return s.cur.Load() }

// fitApplier fits a ridge regression of the mean first coordinate on the embedder's
// features of 60 random sets (12 calibration sets: an interval at 0.9) (seeded by seed), tied to the embedder's spec.
func fitApplier(t testing.TB, emb *embedding.Embedder, seed uint64) *model.Applier {
	t.Helper()
	rng := embedding.NewRNG(seed, "predict-test")
	var rows [][]float32
	var labels []string
	for i := 0; i < 60; i++ {
		pts := randomPoints(rng, 30)
		u := make([]float64, len(pts))
		if _, err := emb.Normalize(u, pts); err != nil {
			t.Fatal(err)
		}
		rows = append(rows, emb.Embed(u)[0])
		mean := 0.0
		for j := 0; j < len(pts); j += 2 {
			mean += pts[j] / 30
		}
		labels = append(labels, fmt.Sprint(mean))
	}
	m, err := model.Fit(rows, labels, model.Options{Kind: model.Regression, Seed: seed})
	if err != nil {
		t.Fatal(err)
	}
	c := emb.Columns()[0]
	m.SpecID, m.Families, m.Columns = emb.Spec().ID(), []string{c.Family}, []model.Column{{Name: c.Name, Len: c.Len}}
	if _, err := m.Marshal(); err != nil { // sets the version
		t.Fatal(err)
	}
	a, err := model.NewApplier(m, emb.Spec().ID(), []model.Column{{Name: c.Name, Len: c.Len}}, 0.9)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// TestPredictionMessages: each window's Prediction message follows its feature record, holds
// what the model in force gives on that record's features, and names its version; a model
// swapped while a window is open applies to that window when it closes after the swap;
// without a model (Current nil) no prediction is written; replayed windows get none.
func TestPredictionMessages(t *testing.T) {
	e := newEnv(t, predictSpec)
	a1, a2 := fitApplier(t, e.emb, 1), fitApplier(t, e.emb, 2)
	if a1.Model().ModelVersion == a2.Model().ModelVersion {
		t.Fatal("two fits on other data have one version")
	}
	src := &swapModels{}
	p, _ := e.newProc(Config{Models: src}, nil)
	if err := p.Restore("", 0); err != nil {
		t.Fatal(err)
	}
	rng := embedding.NewRNG(9, "predict-test-input")
	rec := func(off int64, set string, end bool) Record {
		r := jsonRec(set, string(encodeJSON(t, schema.Batch{Set: set, Points: randomPoints(rng, 5), N: 5, End: end})))
		r.Offset = off
		return r
	}
	process := func(recs ...Record) []Message {
		res, err := p.Process(recs...)
		if err != nil {
			t.Fatal(err)
		}
		return res.Messages
	}
	// check: the messages are feature, prediction pairs by model a (nil: features only).
	check := func(msgs []Message, a *model.Applier, sets ...string) {
		t.Helper()
		per := 1
		if a != nil {
			per = 2
		}
		if len(msgs) != per*len(sets) {
			t.Fatalf("%d messages for windows %v", len(msgs), sets)
		}
		for i, set := range sets {
			f := msgs[per*i]
			if f.Kind != Feature || string(f.Key) != set {
				t.Fatalf("message %d: %s %s, want the feature record of %s", per*i, f.Kind, f.Key, set)
			}
			if a == nil {
				continue
			}
			pm := msgs[per*i+1]
			recs, _, err := schema.DecodeFeatures(f.Value)
			if err != nil {
				t.Fatal(err)
			}
			preds, err := schema.DecodePredictions(pm.Value)
			if err != nil {
				t.Fatal(err)
			}
			want, err := a.Apply(recs[0].Vectors)
			if err != nil {
				t.Fatal(err)
			}
			g := preds[0]
			if pm.Kind != Prediction || string(pm.Key) != set || g.Set != set || g.Seq != recs[0].Seq || g.N != recs[0].N ||
				g.WindowStart != recs[0].WindowStart || g.WindowEnd != recs[0].WindowEnd || g.ModelVersion != a.Model().ModelVersion ||
				headerOf(pm.Headers, HeaderModelVersion) != a.Model().ModelVersion || headerOf(pm.Headers, schema.HeaderWindowID) != headerOf(f.Headers, schema.HeaderWindowID) ||
				pm.FirstOffset != f.FirstOffset {
				t.Errorf("window %s: prediction %+v (%s, headers %v) after feature record %+v", set, g, pm.Kind, pm.Headers, recs[0])
			}
			if math.Float32bits(g.Prediction) != math.Float32bits(want.Value) || g.Interval == nil || *g.Interval != *want.Interval || g.Coverage != 0.9 {
				t.Errorf("window %s: prediction %v %v, the model gives %v %v", set, g.Prediction, g.Interval, want.Value, want.Interval)
			}
		}
	}
	recs := []Record{rec(0, "a", true), rec(1, "b", false), rec(2, "c", true), rec(3, "b", true), rec(4, "d", true)}
	check(process(recs[0]), nil, "a") // no model yet
	src.cur.Store(a1)
	check(process(recs[1:3]...), a1, "c")
	cp := p.CommitPoint() // b is open: the commit holds its first record
	src.cur.Store(a2)     // b closes under a2
	check(process(recs[3:]...), a2, "b", "d")

	// A replay from that commit (a crash before the next one) re-finalises b and d under the
	// model in force at the replay, and suppresses c, acknowledged before the commit.
	src.cur.Store(a1)
	r, _ := e.newProc(Config{Models: src}, nil)
	if err := r.Restore(cp.Metadata, cp.Offset); err != nil {
		t.Fatal(err)
	}
	if cp.Offset != 1 {
		t.Fatalf("commit at %d, want 1 (b's first record)", cp.Offset)
	}
	res, err := r.Process(recs[1:]...)
	if err != nil {
		t.Fatal(err)
	}
	check(res.Messages, a1, "b", "d")
}

// BenchmarkPredictionMessage: the worker's cost of one window's prediction beyond its feature
// record — the model applied to the record's vectors (a regression with its interval, or a
// 10-class classifier) and the prediction record encoded — at feature width 2048.
func BenchmarkPredictionMessage(b *testing.B) {
	const d = 2048
	for _, classes := range []int{0, 10} {
		b.Run(fmt.Sprintf("classes=%d", classes), func(b *testing.B) {
			scores := max(classes, 1)
			m := &model.Model{Format: model.FormatVersion, Kind: model.Regression, SpecID: "s", Width: d,
				Columns: []model.Column{{Name: "f", Len: d}}, Intercept: make([]float64, scores), Weights: make([][]float64, scores),
				Conformal: &model.Conformal{NCalibration: 100, Levels: []float64{0.9}, Quantiles: []float64{1}}}
			if classes > 0 {
				m.Kind, m.Conformal = model.Classification, nil
				for k := 0; k < classes; k++ {
					m.Classes = append(m.Classes, fmt.Sprintf("class%d", k))
				}
			}
			for k := range m.Weights {
				m.Weights[k] = make([]float64, d)
				for j := range m.Weights[k] {
					m.Weights[k][j] = float64((j+k)%5) - 2
				}
			}
			if _, err := m.Marshal(); err != nil {
				b.Fatal(err)
			}
			a, err := model.NewApplier(m, "s", m.Columns, 0.9)
			if err != nil {
				b.Fatal(err)
			}
			vec := make([]float32, d)
			for j := range vec {
				vec[j] = float32(j%7) / 7
			}
			p := &Processor{specID: "s", obs: NopObserver{}, predictions: schema.NewPredictionOutput()}
			c := window.Closed[*windowSketch]{Set: "set-0001", Seq: 3, Start: 1, End: 2, N: 200}
			rec := schema.FeatureRecord{Vectors: [][]float32{vec}}
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if msgs := p.predictionMessage(nil, a, c, rec); len(msgs) != 1 {
					b.Fatal("no prediction")
				}
			}
		})
	}
}
