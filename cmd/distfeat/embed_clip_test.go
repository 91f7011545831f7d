package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestEmbedClipping (issue 32): `embed --in examples/sets.jsonl` with the built-in default
// spec ([0, 1]² bounds, the data in its own units) exited 0 with 36 identical mmd vectors.
// Clipping more than --max-clipped (default 1%) of the points now fails, writes no --out
// file, and says how many points, which sets and what to do; the calibrated spec clips a few
// outliers, which are reported and accepted; --max-clipped 1 accepts anything, loudly.
func TestEmbedClipping(t *testing.T) {
	data, err := os.ReadFile(exampleSets)
	if err != nil {
		t.Fatal(err)
	}
	outPath := filepath.Join(t.TempDir(), "f.jsonl")
	for _, tc := range []struct {
		name   string
		args   []string
		code   int
		stderr []string
		lines  int
	}{
		{"default spec", []string{"--out", outPath}, 1, []string{"7200 of 7200 points (100%) were outside the spec's bounds", `"ring-000" (200 of 200)`, "distfeat calibrate", "--max-clipped 1"}, 0},
		{"calibrated spec", []string{"--spec", exampleSpec}, 0, []string{"points (0.1%) were outside the spec's bounds", "within --max-clipped 0.01"}, 36},
		{"calibrated spec, nothing accepted", []string{"--spec", exampleSpec, "--max-clipped", "0"}, 1, []string{"more than the 0% accepted"}, 36},
		{"accepted", []string{"--max-clipped", "1"}, 0, []string{"7200 of 7200 points (100%)", "within --max-clipped 1"}, 36},
		{"not a fraction", []string{"--max-clipped", "5"}, 2, []string{"--max-clipped 5: want a fraction in [0, 1]"}, 0},
		{"NaN", []string{"--max-clipped", "NaN"}, 2, []string{"want a fraction"}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out, errb bytes.Buffer
			code := run(context.Background(), append([]string{"embed", "--in", exampleSets}, tc.args...), &out, &errb)
			if code != tc.code {
				t.Errorf("exit %d, want %d (stderr %q)", code, tc.code, errb.String())
			}
			for _, w := range tc.stderr {
				if !strings.Contains(errb.String(), w) {
					t.Errorf("stderr %q lacks %q", errb.String(), w)
				}
			}
			if n := strings.Count(out.String(), "\n"); n != tc.lines {
				t.Errorf("%d feature lines on stdout, want %d", n, tc.lines)
			}
		})
	}
	if _, err := os.Stat(outPath); !os.IsNotExist(err) {
		t.Errorf("--out %s written by a failed run (stat: %v)", outPath, err)
	}
	if strings.Count(string(data), "\n") != 36 {
		t.Fatalf("%s: want 36 sets", exampleSets)
	}
}
