package calibrate

// The compositions of `distfeat calibrate` around Calibrate: the base spec's families that
// are kept, the sample's checks, the marginal-transfer family added or kept, and the
// two_sample proposal.

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/distfeat/distfeat/embedding"
	"github.com/distfeat/distfeat/spec"
)

// KeepUntouchedFamilies puts the base spec's families that --families did not name back
// into the proposed spec, unchanged and in the base spec's order (order: its family names;
// nil when every family was tuned), and returns a note naming them.
func KeepUntouchedFamilies(res *Result, base *spec.Spec, order []string) (string, error) {
	if len(order) == 0 {
		return "", nil
	}
	byName := map[string]spec.Family{}
	for _, fam := range res.Spec.Families {
		byName[fam.Name] = fam
	}
	var untouched []string
	for _, fam := range base.Families {
		if _, tuned := byName[fam.Name]; !tuned && slices.Contains(order, fam.Name) {
			byName[fam.Name] = fam
			untouched = append(untouched, fam.Name)
		}
	}
	if len(untouched) == 0 {
		return "", nil
	}
	fams := make([]spec.Family, 0, len(order))
	for _, name := range order {
		fams = append(fams, byName[name])
	}
	res.Spec.Families = fams
	if err := res.Spec.Validate(); err != nil {
		return "", fmt.Errorf("calibrate: the base spec's families not in --families do not fit the proposed spec (calibrate them too): %w", err)
	}
	return fmt.Sprintf("\nfamilies kept from the base spec unchanged (not in --families): %s; their bandwidths are in units of the bounds, which the proposal sets anew: calibrate them too unless the bounds did not move\n",
		strings.Join(untouched, ", ")), nil
}

// CheckSample refuses a sample calibrate cannot calibrate on: fewer than two sets with
// points (the kernels are between sets), or sets that are each one point repeated (no
// within-set spread: every bandwidth rule would divide by zero).
func CheckSample(sets []Set, dim int) error {
	withPoints, spread := 0, 0
	for _, s := range sets {
		if len(s.Points) < dim {
			continue
		}
		withPoints++
		first := s.Points[:dim]
		for i := dim; i+dim <= len(s.Points); i += dim {
			if !slices.Equal(s.Points[i:i+dim], first) {
				spread++
				break
			}
		}
	}
	switch {
	case withPoints < 2:
		return fmt.Errorf("%d set(s) with points: calibrate needs two or more (its kernels and bandwidths are between sets)", withPoints)
	case spread == 0:
		return fmt.Errorf("each of the %d sets is one point repeated: no set has two distinct points, so there is no spread to calibrate bandwidths on", withPoints)
	}
	return nil
}

// KeepMarginalFamilies appends the base spec's marginal_transfer families, unchanged, to the
// proposed spec (without a marginal-transfer calibration), and returns a note saying so. Their sigma_p was
// chosen for the old set family: re-tune them with --point-label.
func KeepMarginalFamilies(res *Result, kept []spec.Family) (string, error) {
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

// AddMarginalFamily chooses a marginal_transfer family called name for the proposed spec by
// cross-validation over the labelled sets (MarginalTransfer), appends it to the spec's
// families and keeps the search in res.Marginal (for the report); it returns the grid's
// summary.
func AddMarginalFamily(ctx context.Context, res *Result, labelled []LabelledSet, name string) (string, error) {
	emb, err := embedding.New(res.Spec)
	if err != nil {
		return "", err
	}
	mr, err := MarginalTransfer(ctx, emb, labelled, MarginalOptions{Name: name})
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

// twoSampleDoc is the document TwoSampleSpec writes: the fields it sets, in the order of
// their names (as the spec's canonical JSON orders them).
type twoSampleDoc struct {
	Bounds struct {
		Hi []float64 `json:"hi"`
		Lo []float64 `json:"lo"`
	} `json:"bounds"`
	Dim      int                  `json:"dim"`
	Families []twoSampleFamilyDoc `json:"families"`
	Version  int                  `json:"version"`
}

type twoSampleFamilyDoc struct {
	Alpha        float64 `json:"alpha"`
	Bands        int     `json:"bands"`
	Bandwidth    float64 `json:"bandwidth"`
	Frequencies  int     `json:"frequencies"`
	Kind         string  `json:"kind"`
	MomentWeight float64 `json:"moment_weight"`
	Name         string  `json:"name"`
	Reference    string  `json:"reference"`
}

// TwoSampleSpec is the proposed spec of `calibrate --two-sample`: dim, the bounds lo, hi and
// one two_sample family named drift with res's bandwidth, bands, frequencies and moment
// weight at level alpha, its reference the file reference; it must load.
func TwoSampleSpec(res *TwoSampleResult, dim int, lo, hi []float64, reference string, alpha float64) ([]byte, error) {
	doc := twoSampleDoc{Dim: dim, Version: NewestVersion, Families: []twoSampleFamilyDoc{{
		Name: "drift", Kind: spec.KindTwoSample, Reference: reference, Bandwidth: res.Bandwidth, Bands: res.Bands,
		Frequencies: res.Frequencies, Alpha: alpha, MomentWeight: res.MomentWeight}}}
	doc.Bounds.Lo, doc.Bounds.Hi = lo, hi
	b, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		return nil, err
	}
	b = append(b, '\n')
	if _, err := spec.ParseSpec(b); err != nil {
		return nil, fmt.Errorf("proposed spec: %w", err)
	}
	return b, nil
}

// PointBounds is the points' box widened by 5% of its width on each side (±0.5 when flat).
func PointBounds(pts []float64, dim int) (lo, hi []float64) {
	lo, hi = make([]float64, dim), make([]float64, dim)
	for j := range lo {
		lo[j], hi[j] = math.Inf(1), math.Inf(-1)
	}
	for i, v := range pts {
		lo[i%dim], hi[i%dim] = min(lo[i%dim], v), max(hi[i%dim], v)
	}
	for j := range lo {
		pad := 0.05 * (hi[j] - lo[j])
		if pad == 0 {
			pad = 0.5
		}
		lo[j], hi[j] = lo[j]-pad, hi[j]+pad
	}
	return lo, hi
}

// Normalise maps points (row-major, of dimension len(lo)) into the unit cube of the bounds
// lo, hi, clipped, as the worker does with out_of_bounds: clip.
func Normalise(x, lo, hi []float64) []float64 {
	dim := len(lo)
	u := make([]float64, len(x))
	for i, v := range x {
		j := i % dim
		u[i] = min(max((v-lo[j])/(hi[j]-lo[j]), 0), 1)
	}
	return u
}
