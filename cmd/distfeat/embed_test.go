package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/distfeat/distfeat/embedding"
	"github.com/distfeat/distfeat/offline"
	"github.com/distfeat/distfeat/schema"
)

// embedInput is three sets in JSON lines, the second of the wrong dimension.
const embedInput = `{"set":"a","points":[[0.1,0.2],[0.3,0.4],[0.5,0.5]]}
{"set":"b","points":[[0.1]]}

{"set":"c","points":[[0.9,0.1],[0.2,0.8]],"t":1732000000123}
`

// runCLI runs a distfeat command in process with stdin from a file.
func runCLI(t *testing.T, stdin string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	in := filepath.Join(t.TempDir(), "in.jsonl")
	if err := os.WriteFile(in, []byte(stdin), 0o644); err != nil {
		t.Fatal(err)
	}
	args = append(args, "--in", in)
	var out, errb bytes.Buffer
	code = run(context.Background(), args, &out, &errb)
	return code, out.String(), errb.String()
}

// TestEmbedCommand: embed reports a bad line by number and stops; --skip-invalid reports and
// continues; both output formats carry vectors bit-identical to the library's embedding.
func TestEmbedCommand(t *testing.T) {
	specPath, emb := writeSpec(t)
	code, _, stderr := runCLI(t, embedInput, "embed", "--spec", specPath)
	if code == 0 || !strings.Contains(stderr, "line 2") || !strings.Contains(stderr, "dim") {
		t.Errorf("bad line: exit %d, stderr %q; want a non-zero exit naming line 2 and the reason", code, stderr)
	}

	code, stdout, stderr := runCLI(t, embedInput, "embed", "--spec", specPath, "--skip-invalid")
	if code != 0 || !strings.Contains(stderr, "line 2: skipped") {
		t.Fatalf("--skip-invalid: exit %d, stderr %q", code, stderr)
	}
	lines := strings.Split(strings.TrimSpace(stdout), "\n")
	if len(lines) != 2 {
		t.Fatalf("%d output lines, want 2 (a and c):\n%s", len(lines), stdout)
	}
	want := map[string][]float64{"a": {0.1, 0.2, 0.3, 0.4, 0.5, 0.5}, "c": {0.9, 0.1, 0.2, 0.8}}
	for _, l := range lines {
		var fl schema.FeatureLine
		if err := json.Unmarshal([]byte(l), &fl); err != nil {
			t.Fatal(err)
		}
		pts := want[fl.Set]
		if fl.N != int64(len(pts)/2) || fl.SpecID != emb.Spec().ID() {
			t.Errorf("set %s: n=%d spec=%s", fl.Set, fl.N, fl.SpecID)
		}
		checkVectors(t, emb, fl.Set, pts, func(col string) []float32 { return fl.Features[col] })
	}

	code, stdout, _ = runCLI(t, embedInput, "embed", "--spec", specPath, "--skip-invalid", "--format", "arrow")
	if code != 0 {
		t.Fatalf("arrow output: exit %d", code)
	}
	recs, cols, err := schema.DecodeFeatures([]byte(stdout))
	if err != nil || len(recs) != 2 {
		t.Fatalf("arrow output: %v, %d records", err, len(recs))
	}
	for _, r := range recs {
		if r.Set == "c" && r.WindowStart != 1732000000123 {
			t.Errorf("set c: window_start %d, want the record's t", r.WindowStart)
		}
		checkVectors(t, emb, r.Set, want[r.Set], func(col string) []float32 {
			for i, c := range cols {
				if c == col {
					return r.Vectors[i]
				}
			}
			return nil
		})
	}
}

func checkVectors(t *testing.T, emb *embedding.Embedder, set string, pts []float64, got func(col string) []float32) {
	t.Helper()
	u := make([]float64, len(pts))
	if _, err := emb.Normalize(u, pts); err != nil {
		t.Fatal(err)
	}
	wantVecs := emb.Embed(u)
	for i, c := range emb.Columns() {
		g := got(c.Name)
		if len(g) != len(wantVecs[i]) {
			t.Fatalf("set %s column %s: %d values, want %d", set, c.Name, len(g), len(wantVecs[i]))
		}
		for j := range g {
			if math.Float32bits(g[j]) != math.Float32bits(wantVecs[i][j]) {
				t.Fatalf("set %s column %s[%d]: %v, want %v", set, c.Name, j, g[j], wantVecs[i][j])
			}
		}
	}
}

// TestEmbedFailFast: a positional argument is a usage error (embed reads --in or stdin);
// a run that embeds nothing exits non-zero; a set without points is skipped with a note,
// as the worker emits no window for it.
func TestEmbedFailFast(t *testing.T) {
	specPath, _ := writeSpec(t)
	var out, errb bytes.Buffer
	if code := run(context.Background(), []string{"embed", "--spec", specPath, "pts.csv"}, &out, &errb); code != 2 ||
		!strings.Contains(errb.String(), `"pts.csv"`) || !strings.Contains(errb.String(), "--in") {
		t.Errorf("positional argument: exit %d, stderr %q; want exit 2 naming the argument and --in", code, errb.String())
	}
	cases := []struct {
		name, input string
		args        []string
		code        int
		stderr      string
		sets        []string
	}{
		{"empty input", "", nil, 1, "nothing embedded", nil},
		{"only blank lines", "\n\n", nil, 1, "nothing embedded", nil},
		{"only invalid lines, skipped", "{\n[]\n", []string{"--skip-invalid"}, 1, "nothing embedded (2 invalid lines", nil},
		{"only sets without points", `{"set":"e","points":[]}` + "\n" + `{"set":"f"}` + "\n", nil, 1, "2 sets without points", nil},
		{"sets without points are skipped", `{"set":"e","points":[]}` + "\n" + `{"set":"a","points":[[0.1,0.2]]}` + "\n", nil, 0,
			"line 1: skipped: set \"e\": no points", []string{"a"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			code, stdout, stderr := runCLI(t, tc.input, append([]string{"embed", "--spec", specPath}, tc.args...)...)
			if code != tc.code || !strings.Contains(stderr, tc.stderr) {
				t.Errorf("exit %d, stderr %q; want exit %d and %q", code, stderr, tc.code, tc.stderr)
			}
			var sets []string
			for _, l := range strings.Split(strings.TrimSpace(stdout), "\n") {
				var fl schema.FeatureLine
				if l != "" && json.Unmarshal([]byte(l), &fl) == nil {
					sets = append(sets, fl.Set)
				}
			}
			if strings.Join(sets, ",") != strings.Join(tc.sets, ",") {
				t.Errorf("emitted sets %v, want %v", sets, tc.sets)
			}
		})
	}
}

// TestEmbedOutputFile: --out is written whole or not at all: a failed run leaves no file
// (and no temporary file) behind, a successful one the complete output and nothing else.
func TestEmbedOutputFile(t *testing.T) {
	specPath, _ := writeSpec(t)
	for _, format := range []string{"jsonl", "arrow"} {
		dir := t.TempDir()
		outPath := filepath.Join(dir, "features."+format)
		code, _, stderr := runCLI(t, embedInput, "embed", "--spec", specPath, "--format", format, "--out", outPath)
		if code == 0 {
			t.Fatalf("%s: a bad line without --skip-invalid exited 0", format)
		}
		if ents, _ := os.ReadDir(dir); len(ents) != 0 {
			t.Errorf("%s: failed run left %d files (%s) in the output directory; stderr %q", format, len(ents), ents[0].Name(), stderr)
		}
		if code, _, stderr = runCLI(t, embedInput, "embed", "--spec", specPath, "--format", format, "--out", outPath, "--skip-invalid"); code != 0 {
			t.Fatalf("%s: exit %d: %s", format, code, stderr)
		}
		data, err := os.ReadFile(outPath)
		if err != nil {
			t.Fatal(err)
		}
		n := strings.Count(string(data), "\n")
		if format == "arrow" {
			recs, _, err := schema.DecodeFeatures(data)
			if err != nil {
				t.Fatalf("arrow file: %v", err)
			}
			n = len(recs)
		}
		if ents, _ := os.ReadDir(dir); n != 2 || len(ents) != 1 {
			t.Errorf("%s: %d records in the file and %d files in the directory, want 2 and 1", format, n, len(ents))
		}
	}
}

// TestEmbedBatches: embed finalises consecutive lines in batches (offline.LinesBatch); across
// batch boundaries, with bad lines and empty sets in the middle of batches, every record
// still comes out in input order, bit-identical to embedding each set alone, and the bytes
// do not depend on the number of workers.
func TestEmbedBatches(t *testing.T) {
	specPath, emb := writeSpec(t)
	var in strings.Builder
	want := map[string][]float64{}
	var order []string
	n := 2*offline.LinesBatch + 5
	for i := 0; i < n; i++ {
		switch {
		case i%7 == 3:
			in.WriteString(`{"set":"bad","points":[[0.1]]}` + "\n") // wrong dimension
			continue
		case i%11 == 5:
			in.WriteString(`{"set":"empty","points":[]}` + "\n")
			continue
		}
		set := fmt.Sprintf("s%02d", i)
		pts := make([]float64, 2*(1+i%5))
		for j := range pts {
			pts[j] = float64((i*31+j*17)%97) / 97
		}
		b, err := json.Marshal(map[string]any{"set": set, "points": pairs(pts)})
		if err != nil {
			t.Fatal(err)
		}
		in.Write(append(b, '\n'))
		want[set] = pts
		order = append(order, set)
	}
	var outputs []string
	for _, workers := range []string{"1", "3"} {
		code, stdout, stderr := runCLI(t, in.String(), "embed", "--spec", specPath, "--skip-invalid", "--workers", workers)
		if code != 0 {
			t.Fatalf("--workers %s: exit %d, stderr %q", workers, code, stderr)
		}
		var got []string
		for _, l := range strings.Split(strings.TrimSpace(stdout), "\n") {
			var fl schema.FeatureLine
			if err := json.Unmarshal([]byte(l), &fl); err != nil {
				t.Fatal(err)
			}
			got = append(got, fl.Set)
			checkVectors(t, emb, fl.Set, want[fl.Set], func(col string) []float32 { return fl.Features[col] })
		}
		if strings.Join(got, ",") != strings.Join(order, ",") {
			t.Errorf("--workers %s: sets %v, want input order %v", workers, got, order)
		}
		outputs = append(outputs, stdout)
	}
	if outputs[0] != outputs[1] {
		t.Error("output differs between --workers 1 and --workers 3")
	}
}

// pairs turns flat 2-d coordinates into JSON point pairs.
func pairs(flat []float64) [][2]float64 {
	p := make([][2]float64, len(flat)/2)
	for i := range p {
		p[i] = [2]float64{flat[2*i], flat[2*i+1]}
	}
	return p
}
