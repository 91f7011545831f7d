package embedding

import (
	"errors"
	"testing"

	"github.com/distfeat/distfeat/spec"
)

// specJSON builds a spec document from a top-level template with one family object.
func specJSON(top, families string) string {
	if top == "" {
		top = `"dim": 2`
	}
	return `{` + top + `, "families": [` + families + `]}`
}

func TestNewValidatesGoSpecs(t *testing.T) {
	s := spec.DefaultSpec()
	s.Families[0].Grid = 8 // not a field of mmd
	_, err := New(s)
	var se *spec.SpecError
	if !errors.As(err, &se) || se.Field != "families[0].grid" {
		t.Errorf("New with mmd grid: %v", err)
	}
	s = spec.DefaultSpec()
	s.Families[0].Features = 7
	if _, err := New(s); !errors.As(err, &se) || se.Field != "families[0].features" {
		t.Errorf("New with odd features: %v", err)
	}
	s = spec.DefaultSpec()
	s.Families[2].Sigma = 1 // l2 sigma without features
	if _, err := New(s); !errors.As(err, &se) || se.Field != "families[2].features" {
		t.Errorf("New with l2 sigma only: %v", err)
	}
	if _, err := New(nil); err == nil {
		t.Error("New(nil) succeeded")
	}
	// New copies the spec: mutating the caller's copy later changes nothing.
	s = mmdSpec(2, 64, 0.1, 1)
	id := s.ID()
	e, err := New(s)
	if err != nil {
		t.Fatal(err)
	}
	s.Families[0].Bandwidth = 5
	s.Bounds.Lo[0] = -1
	if e.Spec().ID() != id {
		t.Error("Embedder's sp changed with the caller's")
	}
	e.Spec().Families[0].Name = "changed"
	if e.Spec().Families[0].Name != "mmd" {
		t.Error("Spec() exposes the embedder's copy")
	}
}

// TestHighDimensionalDefaults: with dim > 3 an hdd family defaults to marginal mode with a
// basis its grid can resolve, so the defaults always compile; an unresolvable basis is a
// spec error naming basis.
func TestHighDimensionalDefaults(t *testing.T) {
	s, err := spec.ParseSpec([]byte(`{"dim":16,"families":[{"name":"h","kind":"hdd","divergence":"js","sigma":0.5,"features":512}]}`))
	if err != nil {
		t.Fatal(err)
	}
	if f := s.Families[0]; f.Mode != "marginal" || f.Basis != 10 { // the documented marginal-mode default (docs: spec field reference)
		t.Errorf("dim 16 hdd defaults: mode %q basis %d, want marginal 10", f.Mode, f.Basis)
	}
	e, err := New(s)
	if err != nil {
		t.Fatalf("New on the defaults: %v", err)
	}
	if got := e.Columns()[0].Len; got != 512 {
		t.Errorf("feature length %d, want 512", got)
	}
	_, err = spec.ParseSpec([]byte(`{"dim":1,"families":[{"name":"h","kind":"hdd","divergence":"js","sigma":0.5,"grid":16,"basis":40}]}`))
	var se *spec.SpecError
	if !errors.As(err, &se) || se.Field != "families[0].basis" {
		t.Errorf("basis beyond the grid: got %v, want a spec.SpecError on families[0].basis", err)
	}
}
