package processor

import (
	"math"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/distfeat/distfeat/config"
	"github.com/distfeat/distfeat/embedding"
	"github.com/distfeat/distfeat/model"
	"github.com/distfeat/distfeat/schema"
	"github.com/distfeat/distfeat/spec"
	"github.com/distfeat/distfeat/window"
)

// pointModel is a per-point classifier on pointSpec's mt column with seeded weights (three
// classes), applied to the embedder's per-point columns.
func pointModel(t *testing.T, emb *embedding.Embedder) *model.Applier {
	t.Helper()
	rng := embedding.NewRNG(9, "point-model")
	m := &model.Model{Format: model.FormatVersion, Kind: model.Classification, Per: model.PerPoint, SpecID: emb.Spec().ID(),
		Families: []string{"mt"}, Columns: []model.Column{{Name: "mt", Len: 64}}, Width: 64, Classes: []string{"p", "q", "r"}}
	for k := 0; k < 3; k++ {
		w := make([]float64, 64)
		for j := range w {
			w[j] = rng.Normal()
		}
		m.Weights, m.Intercept = append(m.Weights, w), append(m.Intercept, 0.1*float64(k))
	}
	if _, err := m.Marshal(); err != nil {
		t.Fatal(err)
	}
	var cols []model.Column
	for _, pm := range emb.PointMaps() {
		cols = append(cols, model.Column{Name: pm.Name(), Len: pm.Len()})
	}
	if _, err := model.NewApplier(m, emb.Spec().ID(), cols, 0); model.RefusedReason(err) != model.RefusedPer {
		t.Fatalf("NewApplier on a per-point model: %v, want refused (per)", err)
	}
	a, err := model.NewPointApplier(m, emb.Spec().ID(), cols, 0.9)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// TestProcessorPointPredictions: with a per-point model in force, each window's per-point
// messages carry the model's prediction columns — for every point what model.Applier gives
// on the row's own features — and a model-version header, chunked to the output limit with
// them; the window gets no Prediction message.
func TestProcessorPointPredictions(t *testing.T) {
	for _, maxOut := range []int{1_000_000, 16 << 10} {
		t.Run(strconv.Itoa(maxOut), func(t *testing.T) {
			sp, err := spec.ParseSpec([]byte(pointSpec))
			if err != nil {
				t.Fatal(err)
			}
			emb, err := embedding.New(sp, embedding.WithPointRetention(embedding.NewPointBudget(1<<20)))
			if err != nil {
				t.Fatal(err)
			}
			var cols []embedding.Column
			for _, m := range emb.PointMaps() {
				cols = append(cols, embedding.Column{Name: m.Name(), Len: m.Len()})
			}
			a := pointModel(t, emb)
			models := &swapModels{}
			models.cur.Store(a)
			p, err := New(Config{Window: window.Config{Mode: "set", IdleTimeout: time.Minute, MaxOpen: 100}, Limits: config.Limits{MaxOutputBytes: maxOut},
				Points: schema.NewPointOutput(sp, cols), Models: models}, emb, schema.NewOutput(sp, emb.Columns()), &pointCounts{}, nil)
			if err != nil {
				t.Fatal(err)
			}
			recs, _ := pointSets(300)
			rows, chunks := 0, 0
			for _, m := range processAll(t, p, recs, 1) {
				switch m.Kind {
				case Feature:
					continue
				case PointFeature:
				default:
					t.Fatalf("unexpected %v message (a per-point model writes no Prediction)", m.Kind)
				}
				if len(m.Value) > maxOut {
					t.Fatalf("per-point message of %d bytes over the limit %d", len(m.Value), maxOut)
				}
				if v := headerOf(m.Headers, HeaderModelVersion); v != a.Model().ModelVersion {
					t.Fatalf("model-version header %q, want %s", v, a.Model().ModelVersion)
				}
				chunks++
				got, gcols, err := schema.DecodePoints(m.Value)
				if err != nil {
					t.Fatal(err)
				}
				if strings.Join(gcols, ",") != "mt,pool,model.prediction,model.scores" {
					t.Fatalf("columns %v", gcols)
				}
				for _, r := range got {
					out, err := a.Apply([][]float32{r.Features["mt"], r.Features["pool"]})
					if err != nil {
						t.Fatal(err)
					}
					if r.Features["model.prediction"][0] != float32(out.ClassIndex) {
						t.Fatalf("%s/%d: class index %v, the model gives %d", r.Set, r.Index, r.Features["model.prediction"], out.ClassIndex)
					}
					for k, s := range out.Scores {
						if math.Float32bits(r.Features["model.scores"][k]) != math.Float32bits(s) {
							t.Fatalf("%s/%d: score %d = %v, the model gives %v", r.Set, r.Index, k, r.Features["model.scores"][k], s)
						}
					}
					rows++
				}
			}
			if rows != 750 {
				t.Fatalf("%d predicted rows, want 750", rows)
			}
			if maxOut < 100_000 && chunks < 4 {
				t.Errorf("%d per-point messages under a %d-byte limit", chunks, maxOut)
			}
		})
	}
}
