package consumer

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/segmentio/kafka-go"

	"github.com/distfeat/distfeat/schema"
	"github.com/distfeat/distfeat/window"
)

// exampleSets reads the first n sets of a JSON-lines file of examples/drift as batches.
func exampleSets(t *testing.T, file string, n int) []schema.Batch {
	t.Helper()
	f, err := os.Open(filepath.Join("..", "examples", "drift", file))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []schema.Batch
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<22)
	for sc.Scan() && len(out) < n {
		var rec struct {
			Set    string      `json:"set"`
			Points [][]float64 `json:"points"`
		}
		if err := json.Unmarshal(sc.Bytes(), &rec); err != nil {
			t.Fatal(err)
		}
		b := schema.Batch{Set: rec.Set, N: len(rec.Points), EventTime: 1_700_000_000_000, End: true}
		for _, p := range rec.Points {
			b.Points = append(b.Points, p...)
		}
		out = append(out, b)
	}
	return out
}

// TestTwoSampleWorker runs the drift example through the worker: each window's two_sample
// vector is bit-identical to `distfeat embed`'s, and the p-values reach the metrics: every
// window in distfeat_two_sample_p_value, the three shifted windows (p ≤ 0.001) and none of
// the three steady ones (p = 0.055, 0.107, 0.380 by the fixed files) in
// distfeat_two_sample_flagged_total at the family's alpha 0.05.
func TestTwoSampleWorker(t *testing.T) {
	t.Parallel()
	ref, err := filepath.Abs(filepath.Join("..", "examples", "drift", "reference.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	refJSON, _ := json.Marshal(ref)
	h := newHarness(t, 2, `{"version": 2, "seed": 7, "dim": 2, "bounds": {"lo": [0, 0], "hi": [10, 10]},
		"families": [{"name": "drift", "kind": "two_sample", "reference": `+string(refJSON)+`}]}`)
	features := h.collect(h.env.Features)
	rw := h.start(h.config("drift", window.Config{}), nil)
	sets := append(exampleSets(t, "steady.jsonl", 3), exampleSets(t, "shifted.jsonl", 3)...)
	h.produce("json", 100, sets...)
	msgs := features.waitFor(t, 60*time.Second, "6 windows", func(m []kafka.Message) bool { return distinctWindows(m) >= len(sets) })
	got := windowsBySet(t, msgs)
	want := map[string][]float64{}
	for _, b := range sets {
		want[b.Set] = b.Points
	}
	h.checkWindowsExact(t, got, want)

	reg := prometheus.NewRegistry()
	reg.MustRegister(rw.metrics.TwoSamplePValue)
	var count uint64
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		mfs, err := reg.Gather()
		if err != nil {
			t.Fatal(err)
		}
		if len(mfs) == 1 && len(mfs[0].GetMetric()) == 1 {
			count = mfs[0].GetMetric()[0].GetHistogram().GetSampleCount()
		}
		if count >= uint64(len(sets)) {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if count != uint64(len(sets)) {
		t.Errorf("distfeat_two_sample_p_value counted %d windows, want %d", count, len(sets))
	}
	if f := testutilCounter(rw.metrics.TwoSampleFlagged.WithLabelValues("drift")); f != 3 {
		t.Errorf("distfeat_two_sample_flagged_total = %v, want 3 (the shifted windows)", f)
	}
}
