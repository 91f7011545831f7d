package calibrate

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/distfeat/distfeat/spec"
)

// TestTwoSampleSpecDocument: the proposal is the document of its fields in name order (what
// a map of them marshals to), loads as a spec, and its family is the result's.
func TestTwoSampleSpecDocument(t *testing.T) {
	res := &TwoSampleResult{Bandwidth: 0.299, Bands: 5, Frequencies: 20, MomentWeight: 0.25}
	lo, hi := []float64{0.1, -2}, []float64{9.5, 3.25}
	ref, err := filepath.Abs("../examples/drift/reference.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	b, err := TwoSampleSpec(res, 2, lo, hi, ref, 0.05)
	if err != nil {
		t.Fatal(err)
	}
	want, err := json.MarshalIndent(map[string]any{
		"version": NewestVersion, "dim": 2, "bounds": map[string]any{"lo": lo, "hi": hi},
		"families": []any{map[string]any{"name": "drift", "kind": "two_sample", "reference": ref,
			"bandwidth": 0.299, "bands": 5, "frequencies": 20, "alpha": 0.05, "moment_weight": 0.25}},
	}, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	if string(b) != string(want)+"\n" {
		t.Errorf("document\n%s\nwant\n%s", b, want)
	}
	sp, err := spec.ParseSpec(b)
	if err != nil {
		t.Fatal(err)
	}
	if f := sp.Families[0]; f.Kind != spec.KindTwoSample || f.Bandwidth != 0.299 || f.Bands != 5 || f.Alpha != 0.05 {
		t.Errorf("family %+v", f)
	}
	if _, err := TwoSampleSpec(&TwoSampleResult{Bandwidth: -1, Bands: 5, Frequencies: 20}, 2, lo, hi, ref, 0.05); err == nil || !strings.HasPrefix(err.Error(), "proposed spec: ") {
		t.Errorf("invalid proposal: %v", err)
	}
}

// TestCheckSample: a sample needs two sets with points and some spread.
func TestCheckSample(t *testing.T) {
	for _, tc := range []struct {
		name string
		sets []Set
		want string
	}{
		{"two spread sets", []Set{{Points: []float64{0, 0, 1, 1}}, {Points: []float64{0, 1}}}, ""},
		{"one set", []Set{{Points: []float64{0, 0, 1, 1}}, {}}, "1 set(s) with points"},
		{"no spread", []Set{{Points: []float64{1, 1, 1, 1}}, {Points: []float64{2, 2}}}, "each of the 2 sets is one point repeated"},
	} {
		err := CheckSample(tc.sets, 2)
		if (tc.want == "") != (err == nil) || err != nil && !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.name, err, tc.want)
		}
	}
}

// TestPointBoundsNormalise: the box is widened by 5% a side (±0.5 when flat), and Normalise
// maps it into [0.05/1.1, 1.05/1.1] and clips outside points.
func TestPointBoundsNormalise(t *testing.T) {
	lo, hi := PointBounds([]float64{0, 3, 10, 3}, 2)
	if lo[0] != -0.5 || hi[0] != 10.5 || lo[1] != 2.5 || hi[1] != 3.5 {
		t.Fatalf("bounds %v %v", lo, hi)
	}
	u := Normalise([]float64{-0.5, 3, 10.5, 99}, lo, hi)
	if u[0] != 0 || u[1] != 0.5 || u[2] != 1 || u[3] != 1 {
		t.Errorf("normalised %v", u)
	}
}

// TestKindTunersRegistered: every kind calibrate tunes is a kind of the spec's registry.
func TestKindTunersRegistered(t *testing.T) {
	known := map[string]bool{}
	for _, k := range spec.KindNames() {
		known[k] = true
	}
	for k := range kindTuners {
		if !known[k] {
			t.Errorf("calibrate tunes kind %q, which the spec does not register", k)
		}
	}
	if len(kindTuners) == 0 {
		t.Error("no kind tuners")
	}
}
