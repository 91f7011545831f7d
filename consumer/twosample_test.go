package consumer

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/segmentio/kafka-go"

	"github.com/distfeat/distfeat/embedding"
	"github.com/distfeat/distfeat/processor"
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

// TestSequentialWorker runs one set's windows through the worker with sequential detection
// (ert 100): 5 steady windows of the drift example, then 10 shifted ones, each its own
// window of the set "s". The worker's <name>_seq vectors are those the detector computes
// from the records' p-values in order (what `distfeat embed` writes), the shifted windows
// alarm, and the alarms reach the metrics.
func TestSequentialWorker(t *testing.T) {
	t.Parallel()
	ref, err := filepath.Abs(filepath.Join("..", "examples", "drift", "reference.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	refJSON, _ := json.Marshal(ref)
	h := newHarness(t, 2, `{"version": 2, "seed": 7, "dim": 2, "bounds": {"lo": [0, 0], "hi": [10, 10]},
		"families": [{"name": "drift", "kind": "two_sample", "reference": `+string(refJSON)+`, "ert": 100}]}`)
	features := h.collect(h.env.Features)
	rw := h.start(h.config("seq", window.Config{}), nil)
	sets := append(exampleSets(t, "steady.jsonl", 5), exampleSets(t, "shifted.jsonl", 10)...)
	for i := range sets {
		sets[i].Set = "s"
	}
	for _, b := range sets { // one at a time: a set's windows in order
		h.produce("json", 100, b)
	}
	msgs := features.waitFor(t, 60*time.Second, "15 windows", func(m []kafka.Message) bool { return distinctWindows(m) >= len(sets) })
	got := windowsBySet(t, msgs)["s"]
	if len(got) != len(sets) {
		t.Fatalf("%d windows of set s, want %d", len(got), len(sets))
	}
	seq := processor.NewSequential(h.emb)
	alarms := 0
	for i, w := range got {
		rec := w.rec
		rec.Vectors = [][]float32{slices.Clone(rec.Vectors[0]), make([]float32, len(rec.Vectors[1]))}
		seq.Apply(&rec, 0)
		rec.Vectors[1][embedding.SeqThreshold], rec.Vectors[1][embedding.SeqERT] = w.rec.Vectors[1][embedding.SeqThreshold], w.rec.Vectors[1][embedding.SeqERT]
		if !slices.Equal(rec.Vectors[1], w.rec.Vectors[1]) {
			t.Errorf("window %d: drift_seq %v, the detector over the records gives %v", i, w.rec.Vectors[1], rec.Vectors[1])
		}
		alarm := w.rec.Vectors[1][embedding.SeqAlarm] == 1
		if alarm {
			alarms++
		}
		if i >= 5 && !alarm {
			t.Errorf("shifted window %d: no alarm (drift_seq %v, p %v)", i, w.rec.Vectors[1], w.rec.Vectors[0][embedding.TwoSamplePValue])
		}
	}
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) && testutilCounter(rw.metrics.SequentialWindows.WithLabelValues("drift")) < float64(len(sets)) {
		time.Sleep(20 * time.Millisecond)
	}
	if n := testutilCounter(rw.metrics.SequentialWindows.WithLabelValues("drift")); n != float64(len(sets)) {
		t.Errorf("distfeat_sequential_windows_total = %v, want %d", n, len(sets))
	}
	if a := testutilCounter(rw.metrics.SequentialAlarms.WithLabelValues("drift")); a != float64(alarms) {
		t.Errorf("distfeat_sequential_alarms_total = %v, want %d (the records' alarms)", a, alarms)
	}
	if e := testutilCounter(rw.metrics.SequentialERT.WithLabelValues("drift")); e != 100 {
		t.Errorf("distfeat_sequential_ert = %v, want 100", e)
	}
}
