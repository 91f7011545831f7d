package calibrate

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/distfeat/distfeat/embedding"
	"github.com/distfeat/distfeat/examples/exampledata"
)

// TestMMDBandwidthInterior: the unlabelled mmd bandwidth is a maximum of its criterion
// inside the searched grid, never the grid's edge. Two cases: the example classes (their
// optimum is near the median heuristic), and sets whose differences live at a scale far
// below it (three tight clusters at the corners of a triangle, the clusters' width 0.004 or
// 0.016 by set: the median within-set distance is the clusters' separation, ≈ 0.6), where
// the grid must be extended downwards to reach the turn.
func TestMMDBandwidthInterior(t *testing.T) {
	clusters := func() []Set {
		var out []Set
		centres := [][2]float64{{0.1, 0.1}, {0.9, 0.1}, {0.5, 0.8}}
		for k := 0; k < 24; k++ {
			rng := embedding.NewRNG(7, fmt.Sprintf("test/clusters/%d", k))
			sd := 0.004
			if k%2 == 1 {
				sd = 0.016
			}
			var pts []float64
			for p := 0; p < 90; p++ {
				c := centres[p%3]
				pts = append(pts, c[0]+sd*rng.Normal(), c[1]+sd*rng.Normal())
			}
			out = append(out, Set{ID: fmt.Sprintf("s%02d", k), Points: pts})
		}
		return out
	}
	for _, tc := range []struct {
		name     string
		sets     []Set
		extended bool
	}{
		{"example classes", exampleCalibSets(), false},
		{"fine structure", clusters(), true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := Calibrate(context.Background(), tc.sets, 2, nil, Options{Families: []string{"mmd"}})
			if err != nil {
				t.Fatal(err)
			}
			fr := res.Families[0]
			h := res.Spec.Families[0].Bandwidth
			k := slices.Index(fr.Grid, h)
			t.Logf("grid %v\ncriterion %v\nchosen %g", fr.Grid, fr.Spread, h)
			if k <= 0 || k >= len(fr.Grid)-1 {
				t.Fatalf("bandwidth %g at index %d of a %d-point grid: an edge, not a maximum", h, k, len(fr.Grid))
			}
			if !(fr.Spread[k] > fr.Spread[k-1] && fr.Spread[k] > fr.Spread[k+1]) {
				t.Errorf("criterion at the chosen %g (%g) is not above its neighbours (%g, %g)", h, fr.Spread[k], fr.Spread[k-1], fr.Spread[k+1])
			}
			var note string
			for _, n := range res.Notes {
				if strings.Contains(n.Field, "].bandwidth") {
					note = n.Rule
				}
			}
			if got := len(fr.Grid) > len(refineSteps); got != tc.extended {
				t.Errorf("grid extended %v, want %v (%d points); rule: %s", got, tc.extended, len(fr.Grid), note)
			}
			if tc.extended && !strings.Contains(note, "extended down") {
				t.Errorf("the rule does not say the grid was extended: %s", note)
			}
		})
	}
}

// exampleCalibSets is the unlabelled calibration draw of TestAccuracyGain.
func exampleCalibSets() []Set {
	var out []Set
	for _, s := range exampledata.Sets(13, 16, 40) {
		out = append(out, Set{ID: s.ID, Points: s.Points})
	}
	return out
}
