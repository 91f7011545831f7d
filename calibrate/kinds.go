package calibrate

import "github.com/distfeat/distfeat/spec"

// The kinds calibrate knows, by the spec's kind names (spec.Kind…): kindTuners tunes a
// window family of the kind (Calibrate); the other two kinds have calibrations of their own
// — marginal_transfer by cross-validation over per-point labels (MarginalTransfer,
// AddMarginalFamily), two_sample by the estimated power against an alternative (TwoSample,
// TwoSampleSpec). A base spec's family of a kind in neither is refused ("unknown kind").
// Adding a kind that calibrate should tune is one entry here and its tuner's file
// (docs/adding-a-kind.md).

// kindTuners proposes family i's fields and returns its result and the truth its self-check
// compares against.
var kindTuners = map[string]func(c *calibration, i int) (FamilyResult, familyTruth, error){
	spec.KindMMD: (*calibration).mmd,
	spec.KindHDD: (*calibration).hdd,
	spec.KindL2:  (*calibration).l2,
}

// SplitMarginalFamilies removes the marginal_transfer families from a base spec (Calibrate
// tunes the window families; the per-point ones are chosen by AddMarginalFamily) and
// returns them.
func SplitMarginalFamilies(base *spec.Spec) []spec.Family {
	var kept, rest []spec.Family
	for _, f := range base.Families {
		if f.Kind == spec.KindMarginal {
			kept = append(kept, f)
		} else {
			rest = append(rest, f)
		}
	}
	base.Families = rest
	return kept
}
