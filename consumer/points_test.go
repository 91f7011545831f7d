package consumer

import (
	"context"
	"math"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/segmentio/kafka-go"

	"github.com/distfeat/distfeat/embedding"
	"github.com/distfeat/distfeat/internal/metrics"
	"github.com/distfeat/distfeat/internal/testbroker"
	"github.com/distfeat/distfeat/schema"
	"github.com/distfeat/distfeat/spec"
	"github.com/distfeat/distfeat/window"
)

const pointsSpec = `{"version":1,"seed":7,"dim":2,"bounds":{"lo":[0,0],"hi":[1,1]},
 "families":[{"name":"mmd","kind":"mmd","features":64,"bandwidth":0.2},
   {"name":"mt","kind":"marginal_transfer","set_family":"mmd","sigma_p":0.4,"sigma_x":0.3,"features":128}]}`

const pointsTopic = "points.features"

// TestWorkerPointFeatures: with PointsTopic, every point of every window arrives on the
// per-point topic keyed by its set, in order with its index, cut into records within the
// output limit, and each row is bit-identical to the library's per-point features of the
// produced point against the window's delivered features (what embed --points computes).
// The input offsets are committed once all of it is acknowledged.
func TestWorkerPointFeatures(t *testing.T) {
	env := testbroker.ForTestExtra(t, 2, pointsTopic)
	sp, err := spec.ParseSpec([]byte(pointsSpec))
	if err != nil {
		t.Fatal(err)
	}
	emb, err := embedding.New(sp, embedding.WithPointRetention(embedding.NewPointBudget(32<<20)))
	if err != nil {
		t.Fatal(err)
	}
	tr := &kafka.Transport{}
	t.Cleanup(tr.CloseIdleConnections)
	h := &harness{t: t, env: env, emb: emb, out: schema.NewOutput(sp, emb.Columns()), tr: tr}
	cfg := h.config("points", window.Config{})
	cfg.PointsTopic = env.Extra[pointsTopic]
	cfg.MaxOutputBytes = 64 << 10 // 128 features: about 120 points per record
	rw := h.start(cfg, nil)

	sets := randomSets(3, "mt", 6, 400, 1_732_000_000_000)
	want := map[string][]float64{}
	total := 0
	for _, s := range sets {
		want[s.Set] = s.Points
		total += s.N
	}
	feats, pts := h.collect(env.Features), h.collect(env.Extra[pointsTopic])
	h.produce("json", 90, sets...)

	windows := feats.waitFor(t, 60*time.Second, "6 windows", func(ms []kafka.Message) bool { return distinctWindows(ms) >= 6 })
	byWin := map[string]schema.FeatureRecord{}
	for _, m := range windows {
		rs, _, err := schema.DecodeFeatures(m.Value)
		if err != nil {
			t.Fatal(err)
		}
		byWin[rs[0].Set+"/"+strconv.FormatUint(rs[0].Seq, 10)] = rs[0]
	}
	rowsOf := func(ms []kafka.Message) int {
		n := 0
		for _, m := range ms {
			rows, _, err := schema.DecodePoints(m.Value)
			if err != nil {
				t.Fatal(err)
			}
			n += len(rows)
		}
		return n
	}
	msgs := pts.waitFor(t, 60*time.Second, "every point's row", func(ms []kafka.Message) bool { return rowsOf(ms) >= total })
	next := map[string]int64{}
	pm := emb.PointMaps()[0]
	for _, m := range msgs {
		if len(m.Value) > cfg.MaxOutputBytes {
			t.Fatalf("per-point record of %d bytes over the limit %d", len(m.Value), cfg.MaxOutputBytes)
		}
		rows, _, err := schema.DecodePoints(m.Value)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range rows {
			if string(m.Key) != r.Set || r.Index != next[r.Set] {
				t.Fatalf("record key %q row %s/%d: want key = set and index %d (order within the set's partition)", m.Key, r.Set, r.Index, next[r.Set])
			}
			next[r.Set]++
			win, ok := byWin[r.Set+"/"+strconv.FormatUint(r.Seq, 10)]
			if !ok {
				t.Fatalf("row %s/%d names window seq %d, which was not delivered", r.Set, r.Index, r.Seq)
			}
			x := want[r.Set][2*r.Index : 2*r.Index+2]
			u := make([]float64, 2)
			if _, err := emb.Normalize(u, x); err != nil {
				t.Fatal(err)
			}
			exp := make([]float32, pm.Len())
			pm.Points(pm.SetPart(win.Vectors, nil), u, exp)
			for j, v := range r.Features["mt"] {
				if math.Float32bits(v) != math.Float32bits(exp[j]) {
					t.Fatalf("set %s point %d feature %d: %v, library %v", r.Set, r.Index, j, v, exp[j])
				}
			}
		}
	}
	for name, p := range want {
		if int(next[name]) != len(p)/2 {
			t.Errorf("set %s: %d rows, want %d", name, next[name], len(p)/2)
		}
	}
	if got := testutilCounter(rw.metrics.PointFeatures); got != float64(total) {
		t.Errorf("point_features_total %v, want %d", got, total)
	}
	ends := h.topicEnds(env.Points)
	waitCommitted(t, h, "points", ends)
}

// waitCommitted waits until the group has committed every partition's end offset.
func waitCommitted(t *testing.T, h *harness, group string, ends map[int]int64) {
	t.Helper()
	client := &kafka.Client{Addr: kafka.TCP(h.env.Brokers...), Transport: h.tr}
	deadline := time.Now().Add(60 * time.Second)
	for {
		parts := make([]int, 0, len(ends))
		for p := range ends {
			parts = append(parts, p)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		resp, err := client.OffsetFetch(ctx, &kafka.OffsetFetchRequest{GroupID: group, Topics: map[string][]int{h.env.Points: parts}})
		cancel()
		done := err == nil
		if err == nil {
			for _, p := range resp.Topics[h.env.Points] {
				if p.CommittedOffset < ends[p.Partition] {
					done = false
				}
			}
		}
		if done {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the group did not commit the input's end offsets %v (last error %v)", ends, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestWorkerPointFeaturesConfig: per-point output without a marginal_transfer family, or
// with an embedder that does not retain points, is refused at start-up naming the setting.
func TestWorkerPointFeaturesConfig(t *testing.T) {
	h := newHarness(t, 1, smallSpec)
	cfg := h.config("cfg", window.Config{})
	cfg.PointsTopic = pointsTopic
	if _, err := NewWorker(cfg, h.emb, h.out, metricsForTest(), nil, nil); err == nil || !containsAll(err.Error(), "DISTFEAT_POINT_FEATURES_TOPIC", "marginal_transfer") {
		t.Errorf("no marginal_transfer family: %v", err)
	}
	sp, _ := spec.ParseSpec([]byte(pointsSpec))
	emb, _ := embedding.New(sp)
	if _, err := NewWorker(cfg, emb, schema.NewOutput(sp, emb.Columns()), metricsForTest(), nil, nil); err == nil || !containsAll(err.Error(), "WithPointRetention") {
		t.Errorf("no point retention: %v", err)
	}
	emb, _ = embedding.New(sp, embedding.WithPointRetention(embedding.NewPointBudget(1<<20)))
	cfg.PointsTopic = cfg.OutputTopic
	if _, err := NewWorker(cfg, emb, schema.NewOutput(sp, emb.Columns()), metricsForTest(), nil, nil); err == nil || !containsAll(err.Error(), "must differ") {
		t.Errorf("points topic = output topic: %v", err)
	}
}

func metricsForTest() *metrics.Metrics { return metrics.New(prometheus.NewRegistry(), "test") }

func containsAll(s string, parts ...string) bool {
	for _, p := range parts {
		if !strings.Contains(s, p) {
			return false
		}
	}
	return true
}
