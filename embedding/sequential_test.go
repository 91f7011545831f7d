package embedding

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/distfeat/distfeat/sequential"
	"github.com/distfeat/distfeat/spec"
)

// TestTwoSampleSequentialColumn: with ert, a two_sample family has the column <name>_seq
// (SequentialLen values) after its test vector, holding the calibrated threshold and the
// ERT (the caller that sees a set's windows in order fills in the rest); without it, the
// family's columns are unchanged.
func TestTwoSampleSequentialColumn(t *testing.T) {
	ref := filepath.Join("..", "examples", "drift", "reference.jsonl")
	for _, tc := range []struct {
		doc  string
		ert  float64
		cols int
	}{
		{`{"dim": 2, "bounds": {"lo": [0, 0], "hi": [10, 10]}, "families": [{"name": "d", "kind": "two_sample", "reference": "` + ref + `", "bands": 2, "frequencies": 4}]}`, 0, 1},
		{`{"dim": 2, "bounds": {"lo": [0, 0], "hi": [10, 10]}, "families": [{"name": "d", "kind": "two_sample", "reference": "` + ref + `", "bands": 2, "frequencies": 4, "ert": 500}]}`, 500, 2},
	} {
		sp, err := spec.ParseSpec([]byte(tc.doc))
		if err != nil {
			t.Fatal(err)
		}
		e, err := New(sp)
		if err != nil {
			t.Fatal(err)
		}
		cols := e.Columns()
		if len(cols) != tc.cols || cols[0].Name != "d" || cols[0].Len != TwoSampleColumns(2) {
			t.Fatalf("ert %v: columns %+v", tc.ert, cols)
		}
		sc := e.SequentialColumns()
		if tc.ert == 0 {
			if len(sc) != 0 {
				t.Errorf("no ert: sequential columns %+v", sc)
			}
			if w := e.SequentialWarnings(); len(w) != 0 {
				t.Errorf("no ert: warnings %q", w)
			}
			continue
		}
		if cols[1].Name != "d_seq" || cols[1].Len != SequentialLen || len(sc) != 1 || sc[0].PValue != 0 || sc[0].Column != 1 {
			t.Fatalf("ert %v: columns %+v, sequential %+v", tc.ert, cols, sc)
		}
		want, err := sequential.Calibrate(tc.ert, 0)
		if err != nil {
			t.Fatal(err)
		}
		// The start-up warning: the example's 2000-point reference is far from the size that
		// keeps one deployment's run time within ±20%; its numbers are Advise's.
		adv := want.Advise(2000)
		warns := e.SequentialWarnings()
		for _, part := range []string{`family "d"`, "reference of 2000 points",
			fmt.Sprintf("±%.2f", adv.Spread), fmt.Sprintf("between about %.0f and %.0f windows", adv.Short, adv.Long),
			fmt.Sprintf("about %d points", adv.Points)} {
			if len(warns) != 1 || !strings.Contains(warns[0], part) {
				t.Errorf("ert %v: warnings %q, want one containing %q", tc.ert, warns, part)
			}
		}
		sk := e.NewSketch()
		sk.Add([]float64{0.3, 0.4, 0.5, 0.6, 0.7, 0.2})
		v := sk.Finalize(nil)[1]
		if v[SeqThreshold] != float32(want.Threshold()) || v[SeqERT] != float32(tc.ert) ||
			v[SeqStatistic] != 0 || v[SeqAlarm] != 0 || v[SeqRun] != 0 || sc[0].Detector.Threshold() != want.Threshold() {
			t.Errorf("ert %v: seq vector %v, want threshold %v", tc.ert, v, want.Threshold())
		}
	}
}

// TestTwoSampleBetweenWindows: between_windows reads each reference line as one window (part
// B's windows are the null: 7 of every 10), changes the spec_id, refuses a reference of fewer
// than 20 lines by name, raises the CUSUM's threshold by the reference's measured
// persistence, and — on a reference whose windows wander persistently (an AR(1) mean with
// φ = 0.98 across 200 windows), not on independent windows — says so at start-up.
func TestTwoSampleBetweenWindows(t *testing.T) {
	dir := t.TempDir()
	r := rand.New(rand.NewPCG(3, 7))
	write := func(name string, lines int, phi float64) string {
		var b strings.Builder
		mu := 0.0
		for range lines {
			mu = phi*mu + math.Sqrt(1-phi*phi)*0.3*r.NormFloat64()
			pts := make([][2]float64, 50)
			for i := range pts {
				pts[i] = [2]float64{5 + mu + r.NormFloat64(), 5 + r.NormFloat64()}
			}
			line, _ := json.Marshal(map[string]any{"set": "ref", "points": pts})
			b.Write(append(line, '\n'))
		}
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	doc := func(ref, extra string) string {
		return `{"dim": 2, "bounds": {"lo": [0, 0], "hi": [10, 10]}, "families": [{"name": "d", "kind": "two_sample", "reference": "` + ref +
			`", "bands": 2, "frequencies": 4, "ert": 500` + extra + `}]}`
	}
	compile := func(t *testing.T, d string) (*spec.Spec, *Embedder, error) {
		t.Helper()
		sp, err := spec.ParseSpec([]byte(d))
		if err != nil {
			t.Fatal(err)
		}
		e, err := New(sp)
		return sp, e, err
	}
	independent, wandering, short := write("independent.jsonl", 200, 0), write("wandering.jsonl", 200, 0.98), write("short.jsonl", 19, 0)

	pooledSpec, _, err := compile(t, doc(independent, ""))
	if err != nil {
		t.Fatal(err)
	}
	falseSpec, _, err := compile(t, doc(independent, `, "between_windows": false`))
	if err != nil {
		t.Fatal(err)
	}
	sp, e, err := compile(t, doc(independent, `, "between_windows": true`))
	if err != nil {
		t.Fatal(err)
	}
	if falseSpec.ID() != pooledSpec.ID() || sp.ID() == pooledSpec.ID() {
		t.Errorf("spec_ids: absent %s, false %s, true %s: want false = absent ≠ true", pooledSpec.ID(), falseSpec.ID(), sp.ID())
	}
	plain, err := sequential.CalibrateRanks(500, 0, 140) // ranks among part B's 140 windows
	if err != nil {
		t.Fatal(err)
	}
	fam := e.fams[0].(*twoSampleFamily)
	if b := fam.ref.Between(); b.Windows != 140 || b.Size != 50 || persistent(b) {
		t.Errorf("independent windows: Between() = %+v, want 140 part B windows of 50 points and no persistence", b)
	}
	if got, want := e.SequentialColumns()[0].Detector.Threshold(), plain.Persistent(fam.ref.Between().Persistence).Threshold(); got != want || len(e.SequentialWarnings()) != 0 {
		t.Errorf("independent windows: threshold %v (want %v: the plug-in raise, none at or below 1), warnings %q (want none)", got, want, e.SequentialWarnings())
	}

	_, e, err = compile(t, doc(wandering, `, "between_windows": true`))
	if err != nil {
		t.Fatal(err)
	}
	b := e.fams[0].(*twoSampleFamily).ref.Between()
	if !persistent(b) {
		t.Fatalf("wandering windows (φ = 0.98): Between() = %+v, want a persistence beyond noise", b)
	}
	want := plain.Persistent(b.Persistence).Threshold()
	warns := e.SequentialWarnings()
	if got := e.SequentialColumns()[0].Detector.Threshold(); got != want || len(warns) != 1 ||
		!strings.Contains(warns[0], fmt.Sprintf("raised ×%.2f", b.Persistence)) {
		t.Errorf("wandering windows: threshold %v (want %v), warnings %q (want one naming the raise ×%.2f)", got, want, warns, b.Persistence)
	}
	sk := e.NewSketch()
	sk.Add([]float64{5, 5, 6, 4})
	if v := sk.Finalize(nil)[1]; v[SeqThreshold] != float32(want) {
		t.Errorf("wandering windows: the seq column's threshold %v, want %v", v[SeqThreshold], float32(want))
	}

	_, _, err = compile(t, doc(short, `, "between_windows": true`))
	var se *spec.SpecError
	if !errors.As(err, &se) || se.Field != "families[0].reference" || !strings.Contains(err.Error(), "at least 20") {
		t.Errorf("19 reference lines: %v, want a SpecError on families[0].reference naming the minimum", err)
	}
}
