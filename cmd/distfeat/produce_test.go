package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/distfeat/distfeat/internal/synth"
	"github.com/distfeat/distfeat/schema"
)

// TestProduceOut: `produce --synthetic gmm --out FILE` writes one JSON line per set, which
// decodes to the synthetic set's points (end=true), is the same file for the same seed, and
// is what `embed --in` reads.
func TestProduceOut(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "sets.jsonl")
	produce := func(path string, seed string) string {
		t.Helper()
		var out, errb strings.Builder
		code := run(context.Background(), []string{"produce", "--synthetic", "gmm", "--sets", "3", "--points", "7", "--seed", seed, "--out", path}, &out, &errb)
		if code != 0 {
			t.Fatalf("produce --out: exit %d\n%s", code, errb.String())
		}
		if !strings.Contains(out.String(), "wrote 3 sets, 21 points to "+path) {
			t.Errorf("summary %q", out.String())
		}
		return out.String()
	}
	produce(path, "5")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
	if len(lines) != 3 {
		t.Fatalf("%d lines, want 3:\n%s", len(lines), data)
	}
	want := synth.Sets(5, 3, 7, 2)
	for i, l := range lines {
		bs, err := schema.DecodeRecord(nil, []byte(l), schema.ContentTypeJSON, 0, schema.DecodeOptions{Dim: 2, MaxPoints: 100})
		if err != nil || len(bs) != 1 {
			t.Fatalf("line %d: %v (%d batches)", i+1, err, len(bs))
		}
		b := bs[0]
		if b.Set != want[i].ID || b.N != 7 || !b.End || b.EventTime != int64(i) {
			t.Errorf("line %d: set %q n %d end %v t %d; want %q 7 true %d", i+1, b.Set, b.N, b.End, b.EventTime, want[i].ID, i)
		}
		for j, v := range b.Points {
			if v != want[i].Points[j] {
				t.Fatalf("line %d coordinate %d: %v, want %v (JSON must round-trip)", i+1, j, v, want[i].Points[j])
			}
		}
	}

	again := filepath.Join(dir, "again.jsonl")
	produce(again, "5")
	if b, _ := os.ReadFile(again); !bytes.Equal(b, data) {
		t.Error("the same seed wrote a different file")
	}
	other := filepath.Join(dir, "other.jsonl")
	produce(other, "6")
	if b, _ := os.ReadFile(other); bytes.Equal(b, data) {
		t.Error("another seed wrote the same file")
	}

	var out, errb strings.Builder
	if code := run(context.Background(), []string{"embed", "--in", path}, &out, &errb); code != 0 {
		t.Fatalf("embed --in the produced file: exit %d\n%s", code, errb.String())
	}
	if n := strings.Count(out.String(), "\n"); n != 3 {
		t.Errorf("embed wrote %d lines, want one per set (3)", n)
	}
	if matches, _ := filepath.Glob(filepath.Join(dir, ".*.tmp-*")); len(matches) > 0 {
		t.Errorf("temporary files left behind: %v", matches)
	}
}

// TestProduceOutErrors: --out refuses --format (it always writes JSON lines), and a failed
// write leaves no file.
func TestProduceOutErrors(t *testing.T) {
	dir := t.TempDir()
	var out, errb strings.Builder
	code := run(context.Background(), []string{"produce", "--synthetic", "gmm", "--format", "arrow", "--out", filepath.Join(dir, "x.jsonl")}, &out, &errb)
	if code != 2 || !strings.Contains(errb.String(), "--out always writes JSON lines") {
		t.Errorf("--format with --out: exit %d, %q", code, errb.String())
	}
	missing := filepath.Join(dir, "no-such-dir", "x.jsonl")
	errb.Reset()
	if code := run(context.Background(), []string{"produce", "--synthetic", "gmm", "--sets", "1", "--points", "1", "--out", missing}, &out, &errb); code != 1 {
		t.Errorf("unwritable --out: exit %d, want 1 (%s)", code, errb.String())
	}
	if _, err := os.Stat(missing); err == nil {
		t.Error("a failed write left a file")
	}
}
