package offline

import (
	"context"
	"fmt"

	"github.com/distfeat/distfeat/calibrate"
	"github.com/distfeat/distfeat/spec"
)

// Calibration is what Calibrate returns: the proposed spec and the reasons and checks that
// `distfeat calibrate` prints.
type Calibration struct {
	Spec   *spec.Spec
	Notes  []calibrate.Note
	Checks []CheckSummary
}

// CheckSummary is one family's self-check without the per-pair values.
type CheckSummary struct {
	Family string  `json:"family"`
	Kernel string  `json:"kernel"`
	Pairs  int     `json:"pairs"`
	R2     float64 `json:"r2"`
	MaxErr float64 `json:"max_err"`
	Exact  bool    `json:"exact"`
}

// Calibrate proposes a spec for the sets (calibrate.Calibrate, as `distfeat calibrate`
// runs it): labels, if not nil, gives each set's class (labelled calibration chooses by
// cross-validated accuracy); base, if not nil, the families to tune. Sets are named by their
// index, so calibrate's ID order is the input order.
func Calibrate(ctx context.Context, sets Sets, labels []string, base *spec.Spec, opts calibrate.Options) (*Calibration, error) {
	if base != nil && base.Dim != sets.Dim {
		return nil, fmt.Errorf("points have dimension %d, the base spec's dim is %d", sets.Dim, base.Dim)
	}
	if err := sets.Check(sets.Dim); err != nil {
		return nil, err
	}
	if labels != nil && len(labels) != sets.Len() {
		return nil, fmt.Errorf("%d labels for %d sets", len(labels), sets.Len())
	}
	in := make([]calibrate.Set, sets.Len())
	for i := range in {
		in[i] = calibrate.Set{ID: fmt.Sprintf("%012d", i), Points: sets.Set(i)}
		if labels != nil {
			in[i].Label = labels[i]
		}
	}
	res, err := calibrate.Calibrate(ctx, in, sets.Dim, base, opts)
	if err != nil {
		return nil, err
	}
	out := &Calibration{Spec: res.Spec, Notes: res.Notes}
	for _, c := range res.Checks {
		out.Checks = append(out.Checks, CheckSummary{Family: c.Family, Kernel: c.Kernel, Pairs: c.Pairs, R2: c.R2, MaxErr: c.MaxErr, Exact: c.Exact})
	}
	return out, nil
}

// CalibrationSets are set-file sets as calibrate takes them: ID, points and class.
func CalibrationSets(sets []FileSet) []calibrate.Set {
	out := make([]calibrate.Set, len(sets))
	for i, s := range sets {
		out[i] = calibrate.Set{ID: s.Set, Points: s.Points, Label: s.Label}
	}
	return out
}

// LabelledSets are the sets with per-point labels (ReadOptions.PointLabel) as calibrate's
// marginal-transfer search takes them; sets without the field are left out.
func LabelledSets(sets []FileSet) []calibrate.LabelledSet {
	var out []calibrate.LabelledSet
	for _, s := range sets {
		if s.PointLabels != nil {
			out = append(out, calibrate.LabelledSet{ID: s.Set, Points: s.Points, Labels: s.PointLabels})
		}
	}
	return out
}
