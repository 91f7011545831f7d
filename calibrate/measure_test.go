package calibrate

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/distfeat/distfeat/internal/synth"
	"github.com/distfeat/distfeat/spec"
)

// The measurements behind issue 20's before/after tables (docs/calibrate.md), for specs
// written by any calibrate binary. They run only when asked (they assert nothing beyond
// loading the specs):
//
//	CALIBRATE_MEASURE=1 CALIBRATE_DUMP=/tmp/gmm.jsonl go test -run TestMeasureGMM ./calibrate/
//	distfeat calibrate --in /tmp/gmm.jsonl --families hdd_js,hdd_hellinger,hdd_tv --out after.json
//	CALIBRATE_MEASURE=1 CALIBRATE_SPECS=after.json,… go test -v -run TestMeasureGMM ./calibrate/
//
// and the same with TestMeasureDigits (the dump carries the class in the field "digit", for
// --label digit; the accuracies are on the 500 digits after the 900 dumped).

// TestMeasureGMM dumps the 40 mixtures of TestTruthR2Synthetic as JSON lines, or logs the
// true R² of every family of the given specs against the exact kernels.
func TestMeasureGMM(t *testing.T) {
	if os.Getenv("CALIBRATE_MEASURE") == "" {
		t.Skip("a measurement tool: set CALIBRATE_MEASURE=1 (see the comment above)")
	}
	sets := synth.Sets(2020, 40, 2000, 2)
	if os.Getenv("CALIBRATE_DUMP") != "" {
		var b strings.Builder
		for _, s := range sets {
			var pts [][]float64
			for i := 0; i < len(s.Points); i += 2 {
				pts = append(pts, []float64{s.Points[i], s.Points[i+1]})
			}
			line, err := json.Marshal(map[string]any{"set": s.ID, "points": pts})
			if err != nil {
				t.Fatal(err)
			}
			b.Write(line)
			b.WriteByte('\n')
		}
		if err := os.WriteFile(os.Getenv("CALIBRATE_DUMP"), []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	exact := exactRho2(sets)
	for _, path := range strings.Split(os.Getenv("CALIBRATE_SPECS"), ",") {
		sp, err := spec.LoadSpec(path)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, f := range sp.Families {
			var truth []float64
			sigma := f.Sigma
			switch f.Kind {
			case "hdd":
				truth = exact[f.Divergence]
			case "mmd":
				truth, sigma = exactMMK(sets, sp.Bounds, f.Bandwidth), 0
			case "l2":
				truth, sigma = exact["l2"], 0
			}
			out = append(out, fmt.Sprintf("%s %.4f", f.Name, trueR2(t, sp, f.Name, sets, truth, sigma)))
		}
		t.Logf("%s: true R² %s", path, strings.Join(out, ", "))
	}
}

// TestMeasureDigits dumps the first 900 digit point sets with their class, or logs the
// cross-validated accuracy of every family of the given specs on the next 500.
func TestMeasureDigits(t *testing.T) {
	if os.Getenv("CALIBRATE_MEASURE") == "" {
		t.Skip("a measurement tool: set CALIBRATE_MEASURE=1 (see the comment above TestMeasureGMM)")
	}
	sets := loadDigits(t)
	if p := os.Getenv("CALIBRATE_DUMP"); p != "" {
		var b strings.Builder
		for _, s := range sets[:900] {
			var pts [][]float64
			for i := 0; i < len(s.Points); i += 2 {
				pts = append(pts, []float64{s.Points[i], s.Points[i+1]})
			}
			line, err := json.Marshal(map[string]any{"set": s.ID, "points": pts, "digit": s.Label})
			if err != nil {
				t.Fatal(err)
			}
			b.Write(line)
			b.WriteByte('\n')
		}
		if err := os.WriteFile(p, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	for _, path := range strings.Split(os.Getenv("CALIBRATE_SPECS"), ",") {
		sp, err := spec.LoadSpec(path)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, f := range sp.Families {
			out = append(out, fmt.Sprintf("%s %.3f", f.Name, specAccuracy(t, sp, f.Name, sets[900:1400])))
		}
		t.Logf("%s: accuracy %s", path, strings.Join(out, ", "))
	}
}
