package calibrate

import "testing"

// TestTruthIntervalShapes is issue #38's regression check of the truth estimate on data
// calibrate was not tuned on: ten cases (seven generators — truncated mixtures of 1, 3 and
// 12 components with hard edges inside the unit cube, Student t₂ peaks, uniform
// rectangles, 1-D and 3-D — with their own seeds, three divergences), 20 sets of 800 points
// each, exact kernels by Gauss–Legendre quadrature. The self-check's interval for the
// features' R² must contain the true R² in at least 9 of the 10 cases (the requirement: an
// interval that holds 9 times in 10), and the lower end of the ceiling's interval, which
// the feature count aims under, must not exceed the true ceiling by more than 0.002 (the
// random-feature-free part of the estimate's own noise at this size) in 9 of 10.
func TestTruthIntervalShapes(t *testing.T) {
	if testing.Short() {
		t.Skip("about 20 s of calibration on ten generated samples (run without -short)")
	}
	cases := []struct {
		shape int
		div   string
	}{{0, "js"}, {1, "js"}, {2, "hellinger"}, {3, "js"}, {4, "js"}, {5, "tv"}, {6, "js"}, {3, "tv"}, {4, "hellinger"}, {0, "tv"}}
	shapes := shapeCases()
	covered, ceilingOK := 0, 0
	for k, tc := range cases {
		sc := shapes[tc.shape]
		dists, sets := shapeSets(sc, uint64(3900+k), 20, 800)
		exact := shapeExactRho2(dists, sc.dim)
		o, err := fixedShapeTruth(sets, sc.dim, tc.div, exact[tc.div], 2048)
		if err != nil {
			t.Fatal(err)
		}
		in := o.truth >= o.lo && o.truth <= o.hi
		if in {
			covered++
		}
		if o.ceiling <= o.ceilingTrue+0.002 {
			ceilingOK++
		}
		t.Logf("%-55s %-9s printed %.4f [%.4f, %.4f] true %.4f (in: %v); ceiling's lower end %.4f, true %.4f",
			sc.name, tc.div, o.printed, o.lo, o.hi, o.truth, in, o.ceiling, o.ceilingTrue)
	}
	if covered < 9 {
		t.Errorf("the printed interval holds the true R² in %d of %d cases, want ≥ 9", covered, len(cases))
	}
	if ceilingOK < 9 {
		t.Errorf("the ceiling's lower end is at most the true ceiling (+0.002) in %d of %d cases, want ≥ 9", ceilingOK, len(cases))
	}
}
