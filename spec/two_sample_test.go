package spec

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestTwoSampleReferenceInSpecID: a two_sample family's spec_id follows its reference's
// content, not its path; relative paths are relative to the spec file's directory.
func TestTwoSampleReferenceInSpecID(t *testing.T) {
	dir := t.TempDir()
	write := func(path, content string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ref := `{"points": [[0.1, 0.2], [0.3, 0.4]]}` + "\n"
	write(filepath.Join(dir, "a", "ref.jsonl"), ref)
	write(filepath.Join(dir, "b", "data", "other.jsonl"), ref)
	write(filepath.Join(dir, "c", "ref.jsonl"), ref+`{"points": [[0.5, 0.5]]}`+"\n")
	load := func(specDir, refPath string) *Spec {
		t.Helper()
		p := filepath.Join(dir, specDir, "spec.json")
		write(p, `{"dim": 2, "families": [{"name": "drift", "kind": "two_sample", "reference": "`+refPath+`"}]}`)
		s, err := LoadSpec(p)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	a, b, c := load("a", "ref.jsonl"), load("b", "data/other.jsonl"), load("c", "ref.jsonl")
	if a.ID() != b.ID() {
		t.Errorf("same reference content at two paths: spec_ids %s and %s differ", a.ID(), b.ID())
	}
	if a.ID() == c.ID() {
		t.Errorf("different reference content: same spec_id %s", a.ID())
	}
	if want := filepath.Join(dir, "b", "data", "other.jsonl"); b.Families[0].ReferenceFile != want {
		t.Errorf("reference resolved to %s, want %s (relative to the spec file)", b.Families[0].ReferenceFile, want)
	}
	if !strings.Contains(string(a.CanonicalJSON()), `"reference":"sha256:`) || strings.Contains(string(a.CanonicalJSON()), "ref.jsonl") {
		t.Errorf("canonical JSON %s: want the reference's digest, not its path", a.CanonicalJSON())
	}
	_, err := ParseSpec([]byte(`{"dim": 2, "families": [{"name": "drift", "kind": "two_sample", "reference": "` + filepath.Join(dir, "nope.jsonl") + `"}]}`))
	if err == nil || !strings.Contains(err.Error(), "families[0].reference") || !strings.Contains(err.Error(), "nope.jsonl") {
		t.Errorf("missing reference: error %v, want one naming families[0].reference and the file", err)
	}
}

// TestTwoSampleMomentWeightKeepsSpecIDs: moment_weight (issue #38) is an option whose
// default, 0.05, is the aggregation every earlier two_sample spec ran: absent or 0.05 the
// spec_id (and so the output, pinned by embedding's goldens) is unchanged; another value
// is a new spec; out of (0, 0.5) is refused.
func TestTwoSampleMomentWeightKeepsSpecIDs(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "ref.jsonl"), []byte(`{"points": [[0.1, 0.2], [0.3, 0.4]]}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	load := func(extra string) (*Spec, error) {
		p := filepath.Join(dir, "spec.json")
		if err := os.WriteFile(p, []byte(`{"dim": 2, "families": [{"name": "drift", "kind": "two_sample", "reference": "ref.jsonl"`+extra+`}]}`), 0o644); err != nil {
			t.Fatal(err)
		}
		return LoadSpec(p)
	}
	ids := map[string]string{}
	for _, extra := range []string{"", `, "moment_weight": 0.05`, `, "moment_weight": 0.25`} {
		s, err := load(extra)
		if err != nil {
			t.Fatal(err)
		}
		ids[extra] = s.ID()
	}
	if ids[""] != ids[`, "moment_weight": 0.05`] {
		t.Errorf("moment_weight 0.05 (the default) changed the spec_id: %s vs %s", ids[`, "moment_weight": 0.05`], ids[""])
	}
	if ids[""] == ids[`, "moment_weight": 0.25`] {
		t.Errorf("moment_weight 0.25 kept the default's spec_id %s", ids[""])
	}
	for _, bad := range []string{`, "moment_weight": 0.5`, `, "moment_weight": -0.1`} {
		if _, err := load(bad); err == nil || !strings.Contains(err.Error(), "moment_weight") {
			t.Errorf("%s: error %v, want one naming moment_weight", bad, err)
		}
	}
}

// TestTwoSampleReferenceNotRegular: a reference that is not a regular file (a device that
// never ends, a FIFO that blocks the open until a writer comes, a directory) is refused at
// once with an error naming the field, the file and what it is; it used to hang.
func TestTwoSampleReferenceNotRegular(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ path, kind string }{
		{"/dev/urandom", "a character device"},
		{"/dev/null", "a character device"},
		{fifo, "a FIFO"},
		{dir, "a directory"},
	} {
		_, err := ParseSpec([]byte(`{"dim": 2, "families": [{"name": "drift", "kind": "two_sample", "reference": "` + tc.path + `"}]}`))
		if err == nil || !strings.Contains(err.Error(), "families[0].reference") || !strings.Contains(err.Error(), tc.path) || !strings.Contains(err.Error(), "not a regular file ("+tc.kind+")") {
			t.Errorf("%s: error %v, want one naming families[0].reference, the file and %s", tc.path, err, tc.kind)
		}
	}
}
