package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"html"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/distfeat/distfeat/embedding"
	"github.com/distfeat/distfeat/examples/exampledata"
	"github.com/distfeat/distfeat/internal/testbroker"
	"github.com/distfeat/distfeat/offline"
	"github.com/distfeat/distfeat/schema"
	"github.com/distfeat/distfeat/spec"
)

const (
	exampleSets = "../../examples/sets.jsonl"
	exampleSpec = "../../examples/spec.json"
	exampleJS   = "../../examples/downstream-js"
)

// runArgs runs a distfeat command in process.
func runArgs(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	code = run(context.Background(), args, &out, &errb)
	return code, out.String(), errb.String()
}

// TestCalibrateCommand: calibrate on examples/sets.jsonl writes exactly examples/spec.json
// (deterministic, and the checked-in example is current), prints every rule and the
// self-check, writes the report; usage errors exit 2, bad input exits 1.
func TestCalibrateCommand(t *testing.T) {
	dir := t.TempDir()
	out, report := filepath.Join(dir, "spec.json"), filepath.Join(dir, "report.html")
	code, stdout, stderr := runArgs(t, "calibrate", "--in", exampleSets, "--out", out, "--report", report)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	got, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile(exampleSpec)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("calibrate output differs from %s (regenerate it with: distfeat calibrate --in examples/sets.jsonl --out examples/spec.json):\n%s", exampleSpec, got)
	}
	if _, err := spec.LoadSpec(out); err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"bounds.lo", "families[0].bandwidth (mmd)", "families[1].kde_bandwidth (hdd_js)", "families[1].sigma", "R²"} {
		if !strings.Contains(stdout, s) {
			t.Errorf("summary lacks %q:\n%s", s, stdout)
		}
	}
	html, err := os.ReadFile(report)
	if err != nil || !bytes.Contains(html, []byte("data:image/png;base64,")) {
		t.Fatalf("report: %v, %d bytes without plots", err, len(html))
	}
	// --out - writes only the spec to stdout.
	if code, stdout, _ := runArgs(t, "calibrate", "--in", exampleSets, "--out", "-"); code != 0 || stdout != string(want) {
		t.Fatalf("--out -: exit %d, stdout is not the spec", code)
	}
	if code, _, stderr := runArgs(t, "calibrate", "--in", exampleSets, "--out", out, "extra"); code != 2 || !strings.Contains(stderr, "unexpected argument") {
		t.Errorf("a positional argument: exit %d, stderr %q", code, stderr)
	}
	for _, tc := range []struct {
		args []string
		code int
	}{
		{[]string{"calibrate", "-h"}, 0},
		{[]string{"calibrate", "--in", exampleSets}, 2},
		{[]string{"calibrate", "--out", out}, 2},
		{[]string{"calibrate", "--nope"}, 2},
		{[]string{"calibrate", "--in", exampleSets, "--out", out, "--families", "kl"}, 1},
		{[]string{"calibrate", "--in", exampleSets, "--out", out, "--dim", "3"}, 1},
	} {
		if code, _, stderr := runArgs(t, tc.args...); code != tc.code {
			t.Errorf("%v: exit %d, want %d (%s)", tc.args, code, tc.code, stderr)
		}
	}
}

// TestCalibrateFromTopic: the same sets read from a points topic (split into several
// records per set, spread over partitions, as JSON or Arrow) give the same spec as the
// file; Arrow records need --dim (or --spec).
func TestCalibrateFromTopic(t *testing.T) {
	want, err := os.ReadFile(exampleSpec)
	if err != nil {
		t.Fatal(err)
	}
	for _, format := range []string{"json", "arrow"} {
		t.Run(format, func(t *testing.T) {
			env := testbroker.ForTest(t, 3)
			brokers := strings.Join(env.Brokers, ",")
			if code, _, stderr := runArgs(t, "produce", "--in", exampleSets, "--brokers", brokers, "--topic", env.Points, "--chunk", "70", "--format", format); code != 0 {
				t.Fatalf("produce: exit %d: %s", code, stderr)
			}
			out := filepath.Join(t.TempDir(), "spec.json")
			args := []string{"calibrate", "--from-topic", env.Points, "--brokers", brokers, "--out", out}
			if format == "arrow" {
				if code, _, stderr := runArgs(t, args...); code != 1 || !strings.Contains(stderr, "--dim") {
					t.Fatalf("Arrow without --dim: exit %d, %s", code, stderr)
				}
				args = append(args, "--dim", "2")
			}
			code, _, stderr := runArgs(t, args...)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			got, _ := os.ReadFile(out)
			if !bytes.Equal(got, want) {
				t.Fatalf("spec from the topic differs from the file's:\n%s\nstderr: %s", got, stderr)
			}
		})
	}
}

// TestDownstreamJSExample runs examples/downstream-js against a real worker: the embedded
// broker, a `distfeat worker` process with examples/spec.json, the example sets produced as
// input; then `node index.js` reads the feature topic, builds K = Z Zᵀ, lists nearest sets
// and fits ridge. Its nearest set for every set must equal the one computed here from the
// offline embedding (the worker's features are bit-identical to it), and the classes must
// be recovered.
func TestDownstreamJSExample(t *testing.T) {
	node, err := exec.LookPath("node")
	if err == nil {
		_, err = os.Stat(filepath.Join(exampleJS, "node_modules", "kafkajs"))
	}
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("node and the example's node_modules are needed (.ci/run runs npm ci in %s): %v", exampleJS, err)
		}
		t.Skipf("node or %s/node_modules missing (run npm ci there): %v", exampleJS, err)
	}
	env := testbroker.ForTest(t, 4)
	startWorkerProc(t, env, exampleSpec, "downstream-js")
	fr := readFeatures(t, env)
	if code, _, stderr := runArgs(t, "produce", "--in", exampleSets, "--brokers", strings.Join(env.Brokers, ","), "--topic", env.Points); code != 0 {
		t.Fatalf("produce: exit %d: %s", code, stderr)
	}
	sets := readExampleSets(t)
	fr.waitWindows(t, len(sets), 2*time.Minute)

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, "index.js")
	cmd.Dir = exampleJS
	cmd.Env = append(os.Environ(), "BROKERS="+strings.Join(env.Brokers, ","), "TOPIC="+env.Features, "COLUMN=mmd", "KAFKAJS_NO_PARTITIONER_WARNING=1")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("node index.js: %v\nstdout:\n%s\nstderr:\n%s", err, stdout.String(), stderr.String())
	}
	t.Logf("node index.js:\n%s", stdout.String())
	lines := strings.Split(strings.TrimSpace(stdout.String()), "\n")
	var res struct {
		Sets             int               `json:"sets"`
		Features         int               `json:"features"`
		NearestSameClass float64           `json:"nearest_same_class"`
		RidgeLOOAccuracy float64           `json:"ridge_loo_accuracy"`
		Nearest          map[string]string `json:"nearest"`
	}
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &res); err != nil {
		t.Fatalf("last line is not the JSON result: %v", err)
	}
	want := nearestFromEmbedding(t, sets, "mmd")
	if res.Sets != len(sets) || len(res.Nearest) != len(want) {
		t.Fatalf("node saw %d sets, want %d", res.Sets, len(sets))
	}
	for id, nn := range want {
		if res.Nearest[id] != nn {
			t.Errorf("%s: node's nearest set %q, offline embedding's %q", id, res.Nearest[id], nn)
		}
	}
	// The classes are recovered. Ridge: calibrate's accuracy test (TestAccuracyGain)
	// reaches 0.93 test accuracy already at 40 points per set, these have 200; 0.9 leaves
	// room for leave-one-out on only 36 sets (one error is 0.028). Nearest set: the raw
	// feature distance also feels each set's own shift (±0.5) and scale (±15%), as large as
	// the class differences, which ridge learns to discount and nearest-neighbour does not;
	// by chance 11 of 35 neighbours share a class (0.31, binomial sd 0.08 over 36 sets), so
	// 0.6 is more than 3.5 sd above chance.
	if res.NearestSameClass < 0.6 || res.RidgeLOOAccuracy < 0.9 {
		t.Fatalf("nearest same class %.3f (want ≥ 0.6), ridge LOO accuracy %.3f (want ≥ 0.9)", res.NearestSameClass, res.RidgeLOOAccuracy)
	}
}

func readExampleSets(t *testing.T) []schema.Batch {
	t.Helper()
	b, err := readInputLines(context.Background(), exampleSets, 2, &offline.OtherFields{})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// nearestFromEmbedding computes each set's nearest other set by ‖zᵢ − zⱼ‖² = Kᵢᵢ + Kⱼⱼ − 2Kᵢⱼ
// from the offline embedding, in the example's arithmetic (float64 sums in index order, ties
// to the smaller set ID).
func nearestFromEmbedding(t *testing.T, sets []schema.Batch, col string) map[string]string {
	t.Helper()
	sp, err := spec.LoadSpec(exampleSpec)
	if err != nil {
		t.Fatal(err)
	}
	emb, err := embedding.New(sp)
	if err != nil {
		t.Fatal(err)
	}
	ci := slices.IndexFunc(emb.Columns(), func(c embedding.Column) bool { return c.Name == col })
	ids := make([]string, len(sets))
	z := map[string][]float32{}
	for i, s := range sets {
		u := make([]float64, len(s.Points))
		if _, err := emb.Normalize(u, s.Points); err != nil {
			t.Fatal(err)
		}
		ids[i] = s.Set
		z[s.Set] = emb.Embed(u)[ci]
	}
	slices.Sort(ids)
	k := func(a, b string) float64 { // float64 sum in index order, as index.js does
		var s float64
		for i, v := range z[a] {
			s += float64(v) * float64(z[b][i])
		}
		return s
	}
	out := map[string]string{}
	for _, a := range ids {
		best, bd := "", 0.0
		for _, b := range ids {
			if b == a {
				continue
			}
			if d := k(a, a) + k(b, b) - 2*k(a, b); best == "" || d < bd {
				best, bd = b, d
			}
		}
		out[a] = best
		if exampledata.ClassOf(best) != exampledata.ClassOf(a) {
			t.Logf("offline: %s's nearest set %s is of another class", a, best)
		}
	}
	return out
}

// TestCalibrateLabel: --label FIELD takes each line's class from that field, compared as a
// value (1 and 1.0 are one class); labelled sets make calibrate choose by cross-validated
// accuracy, which the summary reports, each proposed field once; sets without a label are
// counted and said; the report carries the summary's warnings. Without --label the field
// is skipped like any field a set file may carry, and named on stderr.
func TestCalibrateLabel(t *testing.T) {
	dir := t.TempDir()
	in, out, report := filepath.Join(dir, "labelled.jsonl"), filepath.Join(dir, "spec.json"), filepath.Join(dir, "report.html")
	var b bytes.Buffer
	for i, s := range exampledata.Sets(31, 12, 40) {
		var pts [][]float64
		for i := 0; i+1 < len(s.Points); i += 2 {
			pts = append(pts, []float64{s.Points[i], s.Points[i+1]})
		}
		line, err := json.Marshal(map[string]any{"set": s.ID, "points": pts})
		if err != nil {
			t.Fatal(err)
		}
		// The class as a JSON number, written as 2 or as 2.0: one class.
		class := strconv.Itoa(slices.Index(exampledata.Classes, s.Class))
		if i%2 == 1 {
			class += ".0"
		}
		b.Write(append(line[:len(line)-1], `,"class":`+class+"}\n"...))
	}
	for i := 0; i < 3; i++ { // sets without a class
		fmt.Fprintf(&b, `{"set":"unlabelled-%d","points":[[50,20],[51,21],[49,19.5]],"class":null}`+"\n", i)
	}
	if err := os.WriteFile(in, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := runArgs(t, "calibrate", "--in", in, "--label", "class", "--families", "mmd,hdd_js", "--out", out, "--report", report)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, s := range []string{"labelled: 36 sets (0: 12, 1: 12, 2: 12)", "cross-validated accuracy", "alternatives tried"} {
		if !strings.Contains(stdout, s) {
			t.Errorf("summary lacks %q:\n%s", s, stdout)
		}
	}
	if want := `--label "class": 3 of 39 sets have no label`; !strings.Contains(stderr, want) {
		t.Errorf("stderr %q lacks %q", stderr, want)
	}
	if strings.Contains(stderr, "ignored fields") {
		t.Errorf("stderr %q: the --label field is read, not ignored", stderr)
	}
	seen := map[string]bool{}
	for _, line := range strings.Split(stdout, "\n") {
		if field, _, ok := strings.Cut(line, " = "); ok && strings.HasPrefix(field, "families[") {
			if seen[field] {
				t.Errorf("summary lists %s twice:\n%s", field, stdout)
			}
			seen[field] = true
		}
	}
	if _, err := spec.LoadSpec(out); err != nil {
		t.Fatal(err)
	}
	page, err := os.ReadFile(report)
	if err != nil {
		t.Fatal(err)
	}
	// 40 points per set: hdd_js is data-limited, so the summary has warnings.
	_, warnings, ok := strings.Cut(stdout, "\nwarnings:\n")
	if !ok || !strings.Contains(warnings, "hdd_js: data-limited") {
		t.Errorf("summary has no data-limited warning for hdd_js:\n%s", stdout)
	}
	for _, w := range strings.Split(strings.TrimSpace(warnings), "\n") {
		if w = strings.TrimSpace(w); w != "" && !strings.Contains(string(page), html.EscapeString(w)) {
			t.Errorf("report lacks the summary's warning %q", w)
		}
	}
	// Without --label the field is one a set file may carry: skipped, and said so.
	if code, _, stderr := runArgs(t, "calibrate", "--in", in, "--families", "mmd", "--out", out); code != 0 || !strings.Contains(stderr, `ignored fields "class" (39 lines)`) {
		t.Errorf("without --label: exit %d, stderr %q; want 0 and the field named as ignored", code, stderr)
	}
}

// TestCalibrateRefusals: calibrate refuses, with a message naming what is wrong, input it
// cannot calibrate on and a --label it cannot use (it used to exit 0 with sigma 2e-8, NaN
// R², or the labels silently ignored).
func TestCalibrateRefusals(t *testing.T) {
	out := filepath.Join(t.TempDir(), "spec.json")
	repeated := strings.Repeat(`{"set":"s","points":[[0.5,0.5],[0.5,0.5],[0.5,0.5]]}`+"\n", 10)
	var oneClass, noLabel strings.Builder
	for i := 0; i < 6; i++ {
		pts := fmt.Sprintf(`[[%d,1],[2,%d],[3,3]]`, i, i+1)
		fmt.Fprintf(&oneClass, `{"set":"s%d","points":%s,"c":%s}`+"\n", i, pts, []string{"1", "1.0", "1e0"}[i%3])
		fmt.Fprintf(&noLabel, `{"set":"s%d","points":%s,"c":null}`+"\n", i, pts)
	}
	for _, tc := range []struct {
		name, in string
		args     []string
		want     string
	}{
		{"one repeated point", repeated, nil, "each of the 10 sets is one point repeated"},
		{"one set", `{"set":"a","points":[[0.1,0.2],[0.3,0.4],[0.5,0.1],[0.9,0.7]]}` + "\n", nil, "1 set(s) with points: calibrate needs two or more"},
		{"one class", oneClass.String(), []string{"--label", "c"}, `--label "c": all 6 labelled sets are of the one class "1"`},
		{"null labels", noLabel.String(), []string{"--label", "c"}, `--label "c": none of the 6 sets has this field (or only null)`},
		{"absent label", noLabel.String(), []string{"--label", "class"}, `--label "class": none of the 6 sets has this field`},
		{"object label", `{"set":"a","points":[[1,2]],"c":{"x":1}}` + "\n", []string{"--label", "c"}, `line 1: --label "c": label {"x":1}: want a string, number or boolean`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, _, stderr := runCLI(t, tc.in, append([]string{"calibrate", "--out", out}, tc.args...)...)
			if code != 1 || !strings.Contains(stderr, tc.want) {
				t.Errorf("exit %d, stderr %q; want 1 and %q", code, stderr, tc.want)
			}
		})
	}
}

// TestCalibrateTinySets: with sets of a few points the within-set distances are drawn with
// repetition, and the summary says from how many distinct pairs (it used to report "65536
// pairs" for 4 points without a word).
func TestCalibrateTinySets(t *testing.T) {
	in := `{"set":"a","points":[[0.1,0.2],[0.3,0.4],[0.5,0.1],[0.9,0.7]]}` + "\n" +
		`{"set":"b","points":[[0.2,0.2],[0.3,0.6],[0.5,0.3],[0.8,0.7]]}` + "\n"
	code, stdout, stderr := runCLI(t, in, "calibrate", "--out", filepath.Join(t.TempDir(), "spec.json"))
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	// 2 sets of 4 points: 2·(4·3/2) = 12 distinct pairs.
	if want := "drawn with repetition from the sets' 12 distinct pairs"; !strings.Contains(stdout, want) {
		t.Errorf("summary lacks %q:\n%s", want, stdout)
	}
}

// TestCalibrateKeepsFamilies: --spec base --families names tunes those families and keeps
// the base spec's others unchanged, in its order (they used to be dropped), and says so.
func TestCalibrateKeepsFamilies(t *testing.T) {
	base, err := spec.LoadSpec(exampleSpec)
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "spec.json")
	code, stdout, stderr := runArgs(t, "calibrate", "--in", exampleSets, "--spec", exampleSpec, "--families", "l2", "--out", out)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	got, err := spec.LoadSpec(out)
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Families) != len(base.Families) {
		t.Fatalf("%d families, want the base spec's %d", len(got.Families), len(base.Families))
	}
	var kept []string
	for i, f := range got.Families {
		if f.Name != base.Families[i].Name {
			t.Errorf("family %d is %s, want %s (the base spec's order)", i, f.Name, base.Families[i].Name)
		}
		if f.Name != "l2" {
			if !reflect.DeepEqual(f, base.Families[i]) {
				t.Errorf("%s changed: %+v, want the base spec's %+v", f.Name, f, base.Families[i])
			}
			kept = append(kept, f.Name)
		}
	}
	if want := "families kept from the base spec unchanged (not in --families): " + strings.Join(kept, ", "); !strings.Contains(stdout, want) {
		t.Errorf("summary lacks %q:\n%s", want, stdout)
	}
}
