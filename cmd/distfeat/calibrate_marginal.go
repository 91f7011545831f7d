package main

import (
	"context"
	"fmt"

	"github.com/distfeat/distfeat/calibrate"
	"github.com/distfeat/distfeat/offline"
	"github.com/distfeat/distfeat/spec"
)

// marginalFlags are calibrate's marginal-transfer settings (docs/marginal-transfer.md).
type marginalFlags struct {
	label string        // per-point label array field of the input lines
	name  string        // name of the proposed marginal_transfer family
	kept  []spec.Family // the base spec's marginal_transfer families (calibrate.SplitMarginalFamilies)
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
