package exampledata

import (
	"bytes"
	"flag"
	"math"
	"os"
	"testing"
)

var update = flag.Bool("update", false, "rewrite examples/sets.jsonl")

// Example file parameters: 12 sets per class of 200 points.
const (
	fileSeed     = 1
	filePerClass = 12
	filePoints   = 200
	filePath     = "../sets.jsonl"
)

// TestExampleFile: examples/sets.jsonl is exactly what the generator writes (regenerate with
// go test ./examples/exampledata -update).
func TestExampleFile(t *testing.T) {
	var b bytes.Buffer
	if err := WriteJSONL(&b, Sets(fileSeed, filePerClass, filePoints)); err != nil {
		t.Fatal(err)
	}
	if *update {
		if err := os.WriteFile(filePath, b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := os.ReadFile(filePath)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, b.Bytes()) {
		t.Fatalf("%s differs from the generator's output; run go test ./examples/exampledata -update", filePath)
	}
}

// TestClassesShareMoments: the three classes have the same mean and per-axis variance
// (within sampling error), so that mean/covariance features cannot separate them.
func TestClassesShareMoments(t *testing.T) {
	sets := Sets(3, 1, 200_000)
	for _, s := range sets {
		var mx, vx float64
		n := float64(len(s.Points) / 2)
		for i := 0; i < len(s.Points); i += 2 {
			mx += s.Points[i]
		}
		mx /= n
		for i := 0; i < len(s.Points); i += 2 {
			vx += (s.Points[i] - mx) * (s.Points[i] - mx)
		}
		vx /= n
		// Centre within ±0.5 of 50; variance (r²+w²)/2·scale² with scale in [0.85, 1.15].
		want := (ringRadius*ringRadius + ringWidth*ringWidth) / 2
		if math.Abs(mx-centreX) > centreJitter+0.05 || vx < want*0.85*0.85*0.97 || vx > want*1.15*1.15*1.03 {
			t.Errorf("%s: mean %.3f variance %.3f (class variance %.3f before scaling)", s.ID, mx, vx, want)
		}
		if ClassOf(s.ID) != s.Class {
			t.Errorf("ClassOf(%q) = %q", s.ID, ClassOf(s.ID))
		}
	}
}
