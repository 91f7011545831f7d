package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/distfeat/distfeat/calibrate"
	"github.com/distfeat/distfeat/embedding"
	"github.com/distfeat/distfeat/offline"
	"github.com/distfeat/distfeat/spec"
)

// marginalFlags are calibrate's marginal-transfer settings (docs/marginal-transfer.md).
type marginalFlags struct {
	label string        // per-point label array field of the input lines
	name  string        // name of the proposed marginal_transfer family
	kept  []spec.Family // the base spec's marginal_transfer families (splitMarginalFamilies)
}

// splitMarginalFamilies removes the marginal_transfer families from a base spec (calibrate
// tunes the window families; the per-point ones are chosen by --point-label) and returns
// them.
func splitMarginalFamilies(base *spec.Spec) []spec.Family {
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

// keepMarginalFamilies appends the base spec's marginal_transfer families, unchanged, to the
// proposed spec (without --point-label), and returns a note saying so. Their sigma_p was
// chosen for the old set family: re-tune them with --point-label.
func keepMarginalFamilies(res *calibrate.Result, kept []spec.Family) (string, error) {
	if len(kept) == 0 {
		return "", nil
	}
	res.Spec.Families = append(res.Spec.Families, kept...)
	if err := res.Spec.Validate(); err != nil {
		return "", fmt.Errorf("calibrate: the base spec's marginal_transfer families do not fit the proposed spec (give --point-label to choose new ones): %w", err)
	}
	var names []string
	for _, f := range kept {
		names = append(names, f.Name)
	}
	return fmt.Sprintf("\nmarginal_transfer families kept from the base spec unchanged: %s (their sigma_p, sigma_x were chosen for the base spec's set family and bounds; re-tune with --point-label FIELD)\n",
		strings.Join(names, ", ")), nil
}

// readLabelledLines is readCalibrationLines for input lines that carry a per-point label
// array in field (parallel to points; strings, numbers or booleans, compared as values:
// offline.LabelValue). A set whose line has no such field is used for the spec but not for
// the marginal-transfer search.
func readLabelledLines(ctx context.Context, path string, dim, maxSets int, field string, other *offline.OtherFields) ([]calibrate.Set, []calibrate.LabelledSet, int, error) {
	sets, dim, err := offline.ReadSets(ctx, path, offline.ReadOptions{Dim: dim, MaxSets: maxSets, PointLabel: field, Other: other})
	switch {
	case err != nil:
		return nil, nil, 0, err
	case len(sets) == 0:
		return nil, nil, 0, offline.ErrNoSets
	}
	labelled := offline.LabelledSets(sets)
	if len(labelled) == 0 {
		return nil, nil, 0, fmt.Errorf("--point-label %q: no input line has this field", field)
	}
	return offline.CalibrationSets(sets), labelled, dim, nil
}

// addMarginalFamily chooses a marginal_transfer family for the proposed spec by
// cross-validation over the labelled sets, appends it to the spec's families and keeps the
// search in res.Marginal (for the report); it returns the grid's summary.
func addMarginalFamily(ctx context.Context, res *calibrate.Result, labelled []calibrate.LabelledSet, mf marginalFlags) (string, error) {
	emb, err := embedding.New(res.Spec)
	if err != nil {
		return "", err
	}
	mr, err := calibrate.MarginalTransfer(ctx, emb, labelled, calibrate.MarginalOptions{Name: mf.name})
	if err != nil {
		return "", err
	}
	if mr.SetFamilySpec != nil {
		res.Spec.Families = append(res.Spec.Families, *mr.SetFamilySpec)
	}
	res.Spec.Families = append(res.Spec.Families, mr.Family)
	if err := res.Spec.Validate(); err != nil {
		return "", fmt.Errorf("calibrate: the proposed marginal_transfer family: %w", err)
	}
	res.Marginal = mr
	return "\n" + mr.Summary(), nil
}
