package calibrate

import (
	"os"
	"strconv"
	"testing"
)

// TestTruthStudy is the larger study of issue #38 (opt-in: CALIBRATE_TRUTH_STUDY=1,
// STUDY_SETS sets of STUDY_POINTS points, default 40 × 2000, STUDY_SEEDS seeds per shape,
// default 2): per shape, seed and divergence, the self-check's printed R² (and its
// interval) and estimated ceiling against the true ones.
func TestTruthStudy(t *testing.T) {
	if os.Getenv("CALIBRATE_TRUTH_STUDY") == "" {
		t.Skip("the truth study is opt-in: CALIBRATE_TRUTH_STUDY=1 (minutes)")
	}
	S, n, seeds := envInt("STUDY_SETS", 40), envInt("STUDY_POINTS", 2000), envInt("STUDY_SEEDS", 2)
	divs := []string{"js", "hellinger", "tv"}
	if v := os.Getenv("STUDY_DIV"); v != "" {
		divs = []string{v}
	}
	covered, total := 0, 0
	for ci, sc := range shapeCases() {
		if v := os.Getenv("STUDY_CASE"); v != "" && v != strconv.Itoa(ci) {
			continue
		}
		for s := 0; s < seeds; s++ {
			dists, sets := shapeSets(sc, uint64(3800+s), S, n)
			exact := shapeExactRho2(dists, sc.dim)
			for _, div := range divs {
				o, err := runShapeTruth(sets, sc.dim, div, exact[div])
				if err != nil {
					t.Fatal(err)
				}
				in := o.truth >= o.lo-1e-9 && o.truth <= o.hi+1e-9
				total++
				if in {
					covered++
				}
				t.Logf("%-55s seed %d %-9s h %.3g D %5d: printed %.4f [%.4f, %.4f] true %.4f (%+.4f, in %v); ceiling %.4f true %.4f (%+.4f)",
					sc.name, s, div, o.kde, o.features, o.printed, o.lo, o.hi, o.truth, o.printed-o.truth, in, o.ceiling, o.ceilingTrue, o.ceiling-o.ceilingTrue)
			}
		}
	}
	t.Logf("interval holds the truth in %d of %d cases", covered, total)
}

func envInt(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil && v > 0 {
		return v
	}
	return def
}
