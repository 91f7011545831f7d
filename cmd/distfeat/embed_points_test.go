package main

import (
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
	"github.com/distfeat/distfeat/spec"
)

const pointTestSpec = `{"version":1,"seed":11,"dim":2,"bounds":{"lo":[0,0],"hi":[10,10]},
 "families":[{"name":"mmd","kind":"mmd","features":64,"bandwidth":0.1},{"name":"l2","kind":"l2","basis":8},
   {"name":"mt","kind":"marginal_transfer","set_family":"mmd","sigma_p":0.3,"sigma_x":0.2,"features":32},
   {"name":"pooled","kind":"marginal_transfer","pooling":true,"sigma_x":0.2,"features":16}]}`

// pointInput is n sets of sizes 1, 3, 5, … points (one over offline.PointChunk) in the raw
// units of pointTestSpec.
func pointInput(n int) (string, map[string][]float64) {
	var b strings.Builder
	sets := map[string][]float64{}
	rng := embedding.NewRNG(3, "embed-points")
	for s := 0; s < n; s++ {
		name := fmt.Sprintf("s%02d", s)
		k := 2*s + 1
		if s == n-1 {
			k = offline.PointChunk + 7
		}
		var pts []string
		for i := 0; i < k; i++ {
			x, y := 10*rng.Float64(), 10*rng.Float64()
			sets[name] = append(sets[name], x, y)
			pts = append(pts, fmt.Sprintf("[%v,%v]", x, y))
		}
		fmt.Fprintf(&b, `{"set":%q,"points":[%s]}`+"\n", name, strings.Join(pts, ","))
	}
	return b.String(), sets
}

func writeFile(t *testing.T, name, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestEmbedPoints: `embed --points` writes one row per point, in input order with its index,
// with a column per marginal_transfer family, bit-identical to the library (window
// features → PointMap.SetPart → Points), in both formats and for any --workers; the window
// records are those of the spec without per-point output.
func TestEmbedPoints(t *testing.T) {
	specPath := writeFile(t, "spec.json", pointTestSpec)
	input, sets := pointInput(5)
	sp, err := spec.ParseSpec([]byte(pointTestSpec))
	if err != nil {
		t.Fatal(err)
	}
	emb, err := embedding.New(sp)
	if err != nil {
		t.Fatal(err)
	}
	maps := emb.PointMaps()
	if len(maps) != 2 || maps[0].Name() != "mt" || maps[1].Name() != "pooled" {
		t.Fatalf("PointMaps: %v", maps)
	}
	if cols := emb.Columns(); len(cols) != 2 || cols[0].Name != "mmd" || cols[1].Name != "l2" {
		t.Fatalf("window columns %v: a marginal_transfer family adds none", cols)
	}
	want := map[string]map[string][]float32{}
	for name, x := range sets {
		u := make([]float64, len(x))
		if _, err := emb.Normalize(u, x); err != nil {
			t.Fatal(err)
		}
		want[name] = map[string][]float32{}
		for _, pm := range maps {
			out := make([]float32, len(u)/2*pm.Len())
			pm.Points(pm.SetPart(emb.Embed(u), nil), u, out)
			want[name][pm.Name()] = out
		}
	}
	dir := t.TempDir()
	var arrowBytes []byte
	for _, tc := range []struct{ format, workers string }{{"arrow", "1"}, {"arrow", "3"}, {"jsonl", "2"}} {
		pointsPath := filepath.Join(dir, "points."+tc.format+tc.workers)
		code, _, stderr := runCLI(t, input, "embed", "--spec", specPath, "--out", filepath.Join(dir, "w"),
			"--points", pointsPath, "--format", tc.format, "--workers", tc.workers)
		if code != 0 {
			t.Fatalf("%+v: exit %d: %s", tc, code, stderr)
		}
		data, err := os.ReadFile(pointsPath)
		if err != nil {
			t.Fatal(err)
		}
		var rows []schema.PointLine
		if tc.format == "arrow" {
			if arrowBytes == nil {
				arrowBytes = data
			} else if string(arrowBytes) != string(data) {
				t.Errorf("--workers %s: the Arrow bytes differ from --workers 1", tc.workers)
			}
			if rows, _, err = schema.DecodePoints(data); err != nil {
				t.Fatal(err)
			}
		} else {
			for _, l := range strings.Split(strings.TrimSpace(string(data)), "\n") {
				var r schema.PointLine
				if err := json.Unmarshal([]byte(l), &r); err != nil {
					t.Fatal(err)
				}
				rows = append(rows, r)
			}
		}
		next := map[string]int64{}
		for _, r := range rows {
			if r.Index != next[r.Set] {
				t.Fatalf("%+v: set %s: index %d, want %d (input order)", tc, r.Set, r.Index, next[r.Set])
			}
			next[r.Set]++
			if r.SpecID != sp.ID() || len(r.Features) != 2 {
				t.Fatalf("row %+v: want spec_id %s and 2 columns", r, sp.ID())
			}
			for _, pm := range maps {
				w := want[r.Set][pm.Name()][int(r.Index)*pm.Len() : int(r.Index+1)*pm.Len()]
				for j, v := range r.Features[pm.Name()] {
					if math.Float32bits(v) != math.Float32bits(w[j]) {
						t.Fatalf("%+v: set %s point %d %s[%d]: %v, library %v", tc, r.Set, r.Index, pm.Name(), j, v, w[j])
					}
				}
			}
		}
		for name, x := range sets {
			if int(next[name]) != len(x)/2 {
				t.Errorf("%+v: set %s: %d rows, want %d", tc, name, next[name], len(x)/2)
			}
		}
	}
}

func TestEmbedPointsErrors(t *testing.T) {
	specPath := writeFile(t, "spec.json", pointTestSpec)
	plain := writeFile(t, "plain.json", `{"version":1,"dim":2,"families":[{"name":"mmd","kind":"mmd","bandwidth":0.1}]}`)
	bad := writeFile(t, "bad.json", `{"version":1,"dim":2,"families":[{"name":"l2","kind":"l2"},
	  {"name":"mt","kind":"marginal_transfer","set_family":"l2","sigma_p":1,"sigma_x":0.2}]}`)
	input, _ := pointInput(2)
	dir := t.TempDir()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--spec", specPath, "--points", "-"}, "must be different files"},
		{[]string{"--spec", plain, "--out", filepath.Join(dir, "o"), "--points", filepath.Join(dir, "p")}, "no marginal_transfer family"},
		{[]string{"--spec", bad, "--out", filepath.Join(dir, "o"), "--points", filepath.Join(dir, "p")}, `families[1].set_family: "l2" is a l2 family`},
	} {
		code, _, stderr := runCLI(t, input, append([]string{"embed"}, tc.args...)...)
		if code == 0 || !strings.Contains(stderr, tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want an error containing %q", tc.args, code, stderr, tc.want)
		}
	}
}
