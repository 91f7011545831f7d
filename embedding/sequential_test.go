package embedding

import (
	"fmt"
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
