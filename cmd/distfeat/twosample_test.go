package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/distfeat/distfeat/spec"
)

// TestEmbedTwoSampleExample runs the drift example of docs/drift.md end to end: the spec in
// examples/drift names its reference relative to its own directory; 20 windows of 300
// points from the reference's distribution and 20 shifted by 0.5 in x (about 2/3 of a
// cluster's standard deviation) are tested. The shifted windows must all have p ≤ 0.01; the
// steady ones are flagged at α = 0.05 with probability 0.05 each, so at most 4 of 20
// (binomial tail P(X ≥ 5) = 0.3%; the files are fixed, so the outcome is too: 2).
func TestEmbedTwoSampleExample(t *testing.T) {
	spec := filepath.Join("..", "..", "examples", "drift", "spec.json")
	pvalues := func(in string) []float64 {
		t.Helper()
		data, err := os.ReadFile(filepath.Join("..", "..", "examples", "drift", in))
		if err != nil {
			t.Fatal(err)
		}
		code, stdout, stderr := runCLI(t, string(data), "embed", "--spec", spec)
		if code != 0 {
			t.Fatalf("embed %s: exit %d: %s", in, code, stderr)
		}
		var ps []float64
		for _, line := range strings.Split(strings.TrimSpace(stdout), "\n") {
			var rec struct {
				Features map[string][]float64 `json:"features"`
			}
			if err := json.Unmarshal([]byte(line), &rec); err != nil {
				t.Fatal(err)
			}
			v := rec.Features["drift"]
			if len(v) != 15 {
				t.Fatalf("drift vector of length %d, want 10 + 5 bands", len(v))
			}
			ps = append(ps, v[2])
		}
		return ps
	}
	steady, shifted := pvalues("steady.jsonl"), pvalues("shifted.jsonl")
	if len(steady) != 20 || len(shifted) != 20 {
		t.Fatalf("%d steady and %d shifted windows, want 20 each", len(steady), len(shifted))
	}
	flagged := 0
	for _, p := range steady {
		if p <= 0.05 {
			flagged++
		}
	}
	if flagged > 4 {
		t.Errorf("%d of 20 steady windows flagged at 0.05, want at most 4: %v", flagged, steady)
	}
	for i, p := range shifted {
		if p > 0.01 {
			t.Errorf("shifted window %d: p-value %v, want ≤ 0.01", i, p)
		}
	}
}

// TestEmbedTwoSampleReferenceErrors: a reference that is missing, empty, of the wrong
// dimension or not JSON stops embed at start-up with an error naming the field, the file
// and the line.
func TestEmbedTwoSampleReferenceErrors(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("empty.jsonl", "")
	write("wrongdim.jsonl", `{"points": [[0.1, 0.2]]}`+"\n\n"+`{"points": [[0.1, 0.2, 0.3]]}`+"\n")
	write("notjson.jsonl", `{"points": [[0.1, 0.2]]}`+"\n"+`{"points": [[0.1,`+"\n")
	write("nopoints.jsonl", `{"set": "a", "points": []}`+"\n")
	for _, c := range []struct{ ref, want string }{
		{"missing.jsonl", "missing.jsonl"},
		{"empty.jsonl", "empty.jsonl is empty"},
		{"wrongdim.jsonl", "wrongdim.jsonl line 3: point 0 has 3 coordinates, the spec's dim is 2"},
		{"notjson.jsonl", "notjson.jsonl line 2"},
		{"nopoints.jsonl", "nopoints.jsonl holds no points"},
	} {
		t.Run(c.ref, func(t *testing.T) {
			spec := filepath.Join(dir, "spec-"+c.ref+".json")
			write(filepath.Base(spec), `{"dim": 2, "families": [{"name": "drift", "kind": "two_sample", "reference": "`+c.ref+`"}]}`)
			code, _, stderr := runCLI(t, `{"set": "a", "points": [[0.1, 0.2]]}`+"\n", "embed", "--spec", spec)
			if code == 0 {
				t.Fatal("embed succeeded with an unusable reference")
			}
			for _, want := range []string{"families[0].reference", c.want} {
				if !strings.Contains(stderr, want) {
					t.Errorf("stderr %q does not contain %q", stderr, want)
				}
			}
		})
	}
}

// TestCalibrateTwoSample: calibrate --two-sample proposes a spec that loads (the reference by
// path) and, given the shifted example stream as the alternative, prints and reports the power
// curve with the chosen bandwidth, whose estimated power on the held-out half is high (the
// example's shift is caught in every window).
func TestCalibrateTwoSample(t *testing.T) {
	dir := t.TempDir()
	ex := filepath.Join("..", "..", "examples", "drift")
	out, report := filepath.Join(dir, "spec.json"), filepath.Join(dir, "report.html")
	var stdout, stderr strings.Builder
	code := run(t.Context(), []string{"calibrate", "--two-sample", "--in", filepath.Join(ex, "reference.jsonl"),
		"--alternative", filepath.Join(ex, "shifted.jsonl"), "--window", "300", "--out", out, "--report", report}, &stdout, &stderr)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	if _, err := spec.LoadSpec(out); err != nil {
		t.Fatalf("the proposed spec does not load: %v", err)
	}
	if !strings.Contains(stdout.String(), "← best") {
		t.Errorf("summary has no chosen bandwidth:\n%s", stdout.String())
	}
	page, err := os.ReadFile(report)
	if err != nil || !strings.Contains(string(page), "Power curve") {
		t.Errorf("report: %v, %d bytes without the power curve", err, len(page))
	}
	for _, line := range strings.Split(stdout.String(), "\n") {
		if strings.Contains(line, "← best") {
			var bw, ratio, mmd2, tt, power, check float64
			if _, err := fmt.Sscan(line, &bw, &ratio, &mmd2, &tt, &power, &check); err != nil {
				t.Fatalf("%q: %v", line, err)
			}
			if check < 0.9 {
				t.Errorf("held-out power at the chosen bandwidth %.3f, want ≥ 0.9 (every example window is caught)", check)
			}
		}
	}
}

// TestEmbedSequentialExample runs the sequential example of docs/drift.md: one set's 120
// windows of 100 points, the mean moved by 0.2σ from window 60 on. The detector (ERT 1000
// windows) stays quiet over the 60 steady windows and alarms within 30 windows of the change,
// with its change-point estimate within 10 windows of it, while no window's own p-value
// reaches 1/ERT — the change is visible only accumulated. The files are fixed, so the outcome
// is too (docs/drift.md quotes it).
func TestEmbedSequentialExample(t *testing.T) {
	dir := filepath.Join("..", "..", "examples", "sequential")
	data, err := os.ReadFile(filepath.Join(dir, "stream.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := runCLI(t, string(data), "embed", "--spec", filepath.Join(dir, "spec.json"))
	if code != 0 {
		t.Fatalf("embed: exit %d: %s", code, stderr)
	}
	first, minP := -1, 1.0
	var run float64
	lines := strings.Split(strings.TrimSpace(stdout), "\n")
	for i, line := range lines {
		var rec struct {
			Features map[string][]float64 `json:"features"`
		}
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatal(err)
		}
		seq, p := rec.Features["drift_seq"], rec.Features["drift"][2]
		if len(seq) != 5 || seq[2] != 1000 {
			t.Fatalf("window %d: drift_seq %v, want 5 values with ert 1000", i, seq)
		}
		minP = min(minP, p)
		if seq[3] == 1 && first < 0 {
			first, run = i, seq[4]
		}
	}
	t.Logf("%d windows; first alarm at window %d, change estimated %v windows back (window %v); smallest p-value %.4f",
		len(lines), first, run, float64(first+1)-run, minP)
	if len(lines) != 120 || first < 60 || first >= 90 {
		t.Fatalf("%d windows, first alarm at window %d: want 120 windows and an alarm in 60…89", len(lines), first)
	}
	if est := float64(first+1) - run; est < 50 || est > 70 {
		t.Errorf("change estimated at window %v, want 60 ± 10", est)
	}
	if minP <= 1.0/1000 {
		t.Errorf("a window's p-value is %v ≤ 1/ERT: the example should need accumulation", minP)
	}
}

// TestEmbedWanderingExample runs the correlated-windows example of docs/drift.md: a sensor
// whose mean wanders from window to window (an AR(1)), a reference of 300 of its past
// windows, and a stream of 150 windows whose y spread grows by half from window 100 on. With
// the pooled null (pooled.json) the detector (ERT 1000) alarms repeatedly over the 100
// windows that only wander; with between_windows (spec.json) it stays quiet there, says at
// start-up that it raised its threshold for the reference's persistence, and alarms within
// 30 windows of the change, its change-point estimate within 10 windows of it. The files are
// fixed, so the outcome is too (docs/drift.md quotes it).
func TestEmbedWanderingExample(t *testing.T) {
	dir := filepath.Join("..", "..", "examples", "wandering")
	data, err := os.ReadFile(filepath.Join(dir, "stream.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	alarms := func(specFile string) (at []int, runs []float64, stderr string) {
		code, stdout, stderr := runCLI(t, string(data), "embed", "--spec", filepath.Join(dir, specFile))
		if code != 0 {
			t.Fatalf("embed --spec %s: exit %d: %s", specFile, code, stderr)
		}
		lines := strings.Split(strings.TrimSpace(stdout), "\n")
		if len(lines) != 150 {
			t.Fatalf("embed --spec %s: %d windows, want 150", specFile, len(lines))
		}
		for i, line := range lines {
			var rec struct {
				Features map[string][]float64 `json:"features"`
			}
			if err := json.Unmarshal([]byte(line), &rec); err != nil {
				t.Fatal(err)
			}
			if seq := rec.Features["drift_seq"]; seq[3] == 1 {
				at, runs = append(at, i), append(runs, seq[4])
			}
		}
		return at, runs, stderr
	}
	pooled, _, _ := alarms("pooled.json")
	between, runs, stderr := alarms("spec.json")
	t.Logf("alarms, pooled null: %v; between_windows: %v (runs %v)", pooled, between, runs)
	if len(pooled) < 3 || pooled[2] >= 100 {
		t.Errorf("pooled null: alarms at %v, want at least 3 in the 100 windows that only wander (the example no longer shows the problem)", pooled)
	}
	if len(between) == 0 || between[0] < 100 || between[0] >= 130 {
		t.Fatalf("between_windows: alarms at %v, want none before window 100 and the first in 100…129", between)
	}
	if est := float64(between[0]+1) - runs[0]; est < 90 || est > 110 {
		t.Errorf("between_windows: change estimated at window %v, want 100 ± 10", est)
	}
	if !strings.Contains(stderr, "persists") || !strings.Contains(stderr, "raised") {
		t.Errorf("between_windows: stderr %q, want the start-up warning that the threshold was raised for persistence", stderr)
	}
}

// TestEmbedTwoSampleLabelledReference: a reference is a set file like any other, so its
// lines may carry labels or ids (calibrate --two-sample proposes whatever set file it read
// as the reference): the drift features are those of the same reference without them.
func TestEmbedTwoSampleLabelledReference(t *testing.T) {
	ex := filepath.Join("..", "..", "examples", "drift")
	ref, err := os.ReadFile(filepath.Join(ex, "reference.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	var labelled strings.Builder
	for i, line := range strings.Split(strings.TrimSpace(string(ref)), "\n") {
		fmt.Fprintf(&labelled, `{"source":"sensor-%d",%s`+"\n", i%3, strings.TrimPrefix(line, "{"))
	}
	base, err := os.ReadFile(filepath.Join(ex, "spec.json"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "reference.jsonl"), []byte(labelled.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	specPath := filepath.Join(dir, "spec.json")
	if err := os.WriteFile(specPath, base, 0o644); err != nil {
		t.Fatal(err)
	}
	shifted, err := os.ReadFile(filepath.Join(ex, "shifted.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	in := strings.Join(strings.SplitAfter(string(shifted), "\n")[:3], "") // three windows suffice
	drift := func(spec string) []string {
		t.Helper()
		code, stdout, stderr := runCLI(t, in, "embed", "--spec", spec)
		if code != 0 {
			t.Fatalf("embed --spec %s: exit %d: %s", spec, code, stderr)
		}
		var out []string
		for _, line := range strings.Split(strings.TrimSpace(stdout), "\n") {
			var rec struct {
				Features map[string]json.RawMessage `json:"features"`
			}
			if err := json.Unmarshal([]byte(line), &rec); err != nil {
				t.Fatal(err)
			}
			out = append(out, string(rec.Features["drift"]))
		}
		return out
	}
	want, got := drift(filepath.Join(ex, "spec.json")), drift(specPath)
	if len(got) != 3 || strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("drift features with a labelled reference differ from the plain reference's (%d windows)", len(got))
	}
}
