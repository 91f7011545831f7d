// Package calibrate proposes a feature spec from a sample of the user's own point sets and
// checks the proposal on that sample (issue 11, `distfeat calibrate`).
//
// Every proposed value comes with the rule that produced it (Result.Notes) and the
// alternatives tried with their scores (Result.Trials), so the printed summary explains the
// spec: bounds from robust per-axis quantiles; the mmd bandwidth that maximises the
// estimated variance, over pairs of sets, of the true mean-map kernel (its sampling noise
// measured by halves and subtracted); the hdd KDE bandwidth, basis,
// λ count and D, and the l2 basis, by the estimated R² of the features against the kernel
// between the true distributions (truth.go: a fine reference, its noise measured by
// splitting each set in halves), saying so when the data cannot reach the target; outer RBF
// widths from the median distance between sets. With labelled sets (Set.Label) the choices
// that decide downstream accuracy are made by cross-validated ridge accuracy (labelled.go).
// The self-check reports, per family, the estimated R² against the true kernel.
//
// The package is pure: no Kafka, no files. All sub-sampling uses the frozen seeded RNG of
// package embedding, so the same sets and options give the same spec bytes.
package calibrate

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"strings"

	"github.com/distfeat/distfeat/spec"
)

// Set is one sample set: its ID and raw (not normalised) points, row-major.
type Set struct {
	ID     string
	Points []float64
	// Label is the set's class, when the input carries one (--label); labelled sets make
	// calibrate choose by cross-validated accuracy (labelled.go).
	Label string
}

// Options tune the calibration. The zero value of a field means its default.
type Options struct {
	// Families names the families to calibrate (from the base spec, or built from the names
	// mmd, l2, hdd_js, hdd_hellinger, hdd_tv without one). Empty: every base family, or
	// mmd, hdd_js, l2 without a base spec.
	Families []string
	// MaxSets bounds the sets used for Gram matrices (default 48); more are sub-sampled.
	MaxSets int
	// MaxPoints bounds the points per set in exact mean-map kernels (default 128).
	MaxPoints int
	// Error is the target standard deviation ε of one approximate kernel value (default 0.03).
	Error float64
	// TargetR2 is the R² of the approximate against the true kernel that the choices aim
	// for (default 0.99). When the data cannot support it (too few points per set for the
	// density estimates), hdd families aim just below the best reachable R² instead.
	TargetR2 float64
	// MaxFeatures caps every proposed D (default 16384).
	MaxFeatures int
	// MaxLabelled bounds the labelled sets the accuracies are measured on (default
	// DefaultMaxLabelled); more are sub-sampled.
	MaxLabelled int
	// Workers is the parallelism of the exact kernels (default GOMAXPROCS).
	Workers int
	// Progress, if set, is called as long stages advance.
	Progress func(stage string, done, total int)
}

// Defaults of Options.
const (
	DefaultMaxSets     = 48
	DefaultMaxPoints   = 128
	DefaultError       = 0.03
	DefaultTargetR2    = 0.99
	DefaultMaxFeatures = 16384
)

// ErrNoData reports a sample with no usable sets.
var ErrNoData = errors.New("calibrate: no sets with points")

// Note is one proposed value and the rule that produced it, for the summary.
type Note struct {
	Field string // spec field, e.g. "families[0].bandwidth"
	Value string // the proposed value as written in the spec
	Rule  string // how it was chosen, with the numbers that went in
}

// Check is the self-check of one family: approximate vs exact kernel over sample pairs.
type Check struct {
	Family string
	Kernel string // what the exact kernel is
	Pairs  int    // set pairs i < j compared
	// R2 is the squared Pearson correlation of approximate vs the true kernel between the
	// distributions the sets were drawn from, as estimated from the data (truth.go); where
	// no estimate applies, vs the exact kernel on the sample.
	R2 float64
	// R2Smoothed is the R² against the exact kernel of the spec's own estimate (the
	// random-feature error alone); Ceiling the estimated R² of that exact kernel against
	// the true one (what any D approaches). NaN when not measured.
	R2Smoothed, Ceiling float64
	// R2Lo, R2Hi and CeilingLo, CeilingHi are the intervals of R2 and Ceiling allowing for
	// the reference's smoothing and the sample's noise (hdd; truth.go), NaN elsewhere. The
	// feature count aims below CeilingLo.
	R2Lo, R2Hi, CeilingLo, CeilingHi float64
	MaxErr                           float64   // largest |approximate − reference|
	Exact                            bool      // the family has no random stage: its inner products are exact
	Approx                           []float64 // approximate kernel values, pair order (i<j, row-major)
	Truth                            []float64 // exact kernel values, same order
}

// Result is a calibrated spec with everything needed to explain and plot it.
type Result struct {
	Spec  *spec.Spec
	Notes []Note
	// Sets is the number of input sets, Sampled the number used for Gram matrices.
	Sets, Sampled int
	Points        int // points in the sampled sets
	Bounds        BoundsProposal
	// WithinDist is a sample of within-set distances in normalised units (the histogram).
	WithinDist []float64
	// Families holds per-family details in spec order.
	Families []FamilyResult
	Checks   []Check
	// Trials are the alternatives tried, per family, with their scores.
	Trials []Trial
	// Labelled is the number of labelled sets the accuracies were measured on (0: none)
	// and Labels their classes with counts.
	Labelled int
	Labels   string
	// TargetR2 is the R² the choices aimed for (Options.TargetR2); Warnings compares the
	// self-check's ceilings with it.
	TargetR2 float64
	// Marginal is the marginal-transfer search of --point-label (nil without it); the report shows it.
	Marginal *MarginalResult
}

// FamilyResult is what the report shows about one family.
type FamilyResult struct {
	Name, Kind string
	// Gram is the exact kernel between the sampled sets (row-major, Sampled²).
	Gram []float64
	// Between holds the set-to-set distances the outer width was taken from (ρ, MMD or
	// ‖a−a′‖), pair order; empty when there is no outer stage.
	Between []float64
	// Marks are values to draw on the distance histograms (label → value).
	Marks []Mark
	// Grid and Spread: the mmd bandwidth refinement (candidates and their criterion).
	Grid, Spread []float64
}

// Mark is a labelled value on a plot axis.
type Mark struct {
	Label string
	Value float64
}

func (o Options) withDefaults() Options {
	if o.MaxSets <= 0 {
		o.MaxSets = DefaultMaxSets
	}
	if o.MaxPoints <= 0 {
		o.MaxPoints = DefaultMaxPoints
	}
	if o.Error <= 0 {
		o.Error = DefaultError
	}
	if o.TargetR2 <= 0 || o.TargetR2 >= 1 {
		o.TargetR2 = DefaultTargetR2
	}
	if o.MaxFeatures <= 0 {
		o.MaxFeatures = DefaultMaxFeatures
	}
	if o.MaxLabelled <= 0 {
		o.MaxLabelled = DefaultMaxLabelled
	}
	if o.Workers <= 0 {
		o.Workers = runtime.GOMAXPROCS(0)
	}
	return o
}

func (o Options) progress(stage string, done, total int) {
	if o.Progress != nil {
		o.Progress(stage, done, total)
	}
}

// Calibrate proposes a spec for sets of dimension dim (the input order does not matter:
// sets are taken in ID order). base supplies the families to tune,
// the seed and out_of_bounds (nil: built from opts.Families); its bounds and tuned fields
// are replaced, every other field is kept.
func Calibrate(ctx context.Context, sets []Set, dim int, base *spec.Spec, opts Options) (*Result, error) {
	opts = opts.withDefaults()
	tmpl, err := specTemplate(base, dim, opts.Families)
	if err != nil {
		return nil, err
	}
	// Sorted by ID, so the sample (and the spec) do not depend on the order the sets
	// arrived in: a file and a topic holding the same sets give the same spec.
	sets = nonEmpty(sets)
	slices.SortStableFunc(sets, func(a, b Set) int { return strings.Compare(a.ID, b.ID) })
	if len(sets) == 0 {
		return nil, ErrNoData
	}
	res := &Result{Sets: len(sets), TargetR2: opts.TargetR2}
	smp, err := newSample(sets, dim, tmpl.Seed, opts)
	if err != nil {
		return nil, err
	}
	res.Sampled, res.Points = len(smp.raw), smp.points()
	res.Bounds = proposeBounds(smp.raw, dim)
	tmpl.Bounds = spec.Bounds{Lo: res.Bounds.Lo, Hi: res.Bounds.Hi}
	res.Notes = append(res.Notes, res.Bounds.notes()...)
	smp.normalise(res.Bounds)
	smp.splitHalves(tmpl.Seed)
	res.WithinDist = withinDistances(smp, tmpl.Seed)

	c := &calibration{ctx: ctx, opts: opts, smp: smp, spec: tmpl, res: res, lab: newLabelled(sets, tmpl.Seed, opts.MaxLabelled)}
	if c.lab != nil {
		res.Labelled, res.Labels = len(c.lab.raw), c.lab.summary()
	}
	for i := range tmpl.Families {
		if err := c.family(i); err != nil {
			return nil, err
		}
	}
	if err := c.selfCheck(); err != nil {
		return nil, err
	}
	// Round trip through the strict parser: the written spec must be exactly what loads.
	proposed, err := spec.ParseSpec(tmpl.CanonicalJSON())
	if err != nil {
		return nil, fmt.Errorf("calibrate: proposed spec does not validate: %w", err)
	}
	res.Spec = proposed
	return res, nil
}

// calibration is the state of one Calibrate run.
type calibration struct {
	ctx  context.Context
	opts Options
	smp  *sample
	spec *spec.Spec
	res  *Result
	lab  *labelled // nil without labels
	// truths holds, per family, the exact kernel over the sample pairs the self-check
	// compares against (filled by the family calibrations).
	truths []familyTruth
}

// familyTruth is what the self-check needs about one family.
type familyTruth struct {
	name   string
	kernel string
	exact  bool      // no random stage
	pairs  []float64 // exact kernel, pair order
	// hddRef is the reference of an hdd family (the self-check estimates the R² against
	// the true kernel from it); ceiling the estimated R² of its coefficient kernel.
	hddRef  *hddReference
	ceiling float64
	// mmd: pairs is the exact mean-map-based kernel of the sub-samples, halfA and halfB
	// the same from their halves (the noise of the reference).
	mmd bool
	// halfAB, halfBA the kernel between set i's half A and set j's half B and the
	// reverse (the second-order noise, halvesNoise).
	halfA, halfB, halfAB, halfBA []float64
	// estimate, when set, is the estimated R² of kernel values x (pair order) against the
	// true kernel (l2).
	estimate func(x []float64) float64
}

func (c *calibration) family(i int) error {
	f := &c.spec.Families[i]
	var (
		fr  FamilyResult
		ft  familyTruth
		err error
	)
	if tune := kindTuners[f.Kind]; tune != nil {
		fr, ft, err = tune(c, i)
	} else {
		err = fmt.Errorf("calibrate: families[%d]: unknown kind %q", i, f.Kind)
	}
	if err != nil {
		return err
	}
	fr.Name, fr.Kind = f.Name, f.Kind
	ft.name = f.Name
	c.res.Families = append(c.res.Families, fr)
	c.truths = append(c.truths, ft)
	return nil
}

func (c *calibration) note(i int, field, value, rule string) {
	c.res.Notes = append(c.res.Notes, Note{Field: fmt.Sprintf("families[%d].%s (%s)", i, field, c.spec.Families[i].Name), Value: value, Rule: rule})
}

// replaceNote replaces family i's note on field (or adds it).
func (c *calibration) replaceNote(i int, field, value, rule string) {
	name := fmt.Sprintf("families[%d].%s (%s)", i, field, c.spec.Families[i].Name)
	for k := range c.res.Notes {
		if c.res.Notes[k].Field == name {
			c.res.Notes[k] = Note{Field: name, Value: value, Rule: rule}
			return
		}
	}
	c.note(i, field, value, rule)
}

// amendNote replaces the value of family i's note on field by a later rule's (labels),
// keeping the earlier rule after it, so the summary lists each field once.
func (c *calibration) amendNote(i int, field, value, rule string) {
	name := fmt.Sprintf("families[%d].%s (%s)", i, field, c.spec.Families[i].Name)
	for _, n := range c.res.Notes {
		if n.Field == name {
			rule = fmt.Sprintf("%s; the unlabelled rule gave %s: %s", rule, n.Value, n.Rule)
			break
		}
	}
	c.replaceNote(i, field, value, rule)
}

// nonEmpty drops sets without points (a window needs at least one).
func nonEmpty(sets []Set) []Set {
	return slices.DeleteFunc(slices.Clone(sets), func(s Set) bool { return len(s.Points) == 0 })
}
