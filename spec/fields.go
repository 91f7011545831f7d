package spec

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strings"
)

// The spec's field table. Every family field is described once, in familyFields: its JSON
// name, the Family field it fills, its value check and a one-line doc; each kind (kinds.go)
// lists the fields it takes with their role there (required, defaulted, part of an optional
// RFF stage, option) and default. Parsing, defaulting, validation, canonical JSON and
// FieldReference all read these tables, so a new field is one entry here (and a Family
// struct field) plus one line in each kind that takes it. The document's top-level fields
// are in topFields.

// role is how a family field behaves in one kind.
type role uint8

const (
	// roleRequired fields must be given.
	roleRequired role = iota + 1
	// roleDefault fields are filled in with their default when absent, and always written
	// to the canonical JSON.
	roleDefault
	// roleStage fields are the pair (sigma, features) of a kind's optional RFF stage: both
	// or neither; written to the canonical JSON only when the stage is on.
	roleStage
	// roleOption fields may be given; absent, they keep the zero value, which means the
	// documented default, and a value equal to the default is not written to the canonical
	// JSON (so adding such a field keeps every existing spec_id).
	roleOption
)

// defaultValue is a field's default in one kind: a fixed value, or one computed from the
// spec's dim and the family's other fields.
type defaultValue struct {
	value any                          // the fixed default (nil if of is set)
	of    func(dim int, f *Family) any // a default that depends on dim or another field
	doc   string                       // how `of` decides, for the field reference
	v2    any                          // the default from spec version 2 on, when it differs from value (nil: the same)
	v3    any                          // the default from spec version 3 on, when it differs from the version-2 one (nil: the same)
}

// fixed is a default that is always v.
func fixed(v any) defaultValue { return defaultValue{value: v} }

// versioned is a default that is v1 in spec version 1 and v2 from version 2 on: how a new
// version changes a default without changing the meaning (or spec_id) of any version-1 spec.
func versioned(v1, v2 any) defaultValue { return defaultValue{value: v1, v2: v2} }

// versioned3 is a default that is v12 in spec versions 1 and 2 and v3 from version 3 on.
func versioned3(v12, v3 any) defaultValue { return defaultValue{value: v12, v3: v3} }

// at is the fixed default in spec version version.
func (d defaultValue) at(version int) any {
	if version >= 3 && d.v3 != nil {
		return d.v3
	}
	if version >= 2 && d.v2 != nil {
		return d.v2
	}
	return d.value
}

// resolve is the default for a family of a spec with dimension dim.
func (d defaultValue) resolve(dim int, f *Family) any {
	if d.of != nil {
		return d.of(dim, f)
	}
	return d.value
}

// String is the default as the field reference shows it.
func (d defaultValue) String() string {
	if d.of != nil {
		return d.doc
	}
	show := func(v any) string {
		b, err := json.Marshal(v) // as the canonical JSON writes it
		if err != nil {
			panic("spec: unprintable default: " + err.Error())
		}
		return string(b)
	}
	switch {
	case d.v2 != nil && d.v3 != nil:
		return show(d.value) + " in version 1, " + show(d.v2) + " in version 2, " + show(d.v3) + " from version 3"
	case d.v2 != nil:
		return show(d.value) + " in version 1, " + show(d.v2) + " from version 2"
	case d.v3 != nil:
		return show(d.value) + " in versions 1 and 2, " + show(d.v3) + " from version 3"
	}
	return show(d.value)
}

// use is a field's role in one kind: which field, how the kind takes it.
type use struct {
	field string
	role  role
	def   defaultValue // roleDefault and roleOption
	// withStage: the field applies only when the kind's optional RFF stage is on.
	withStage bool
}

// valueCheck validates a field's value (after the JSON type, which parsing checks).
type valueCheck struct {
	doc string             // the rule, for the field reference
	fn  func(v any) string // "" if v is valid, else the error message
}

// familyField is one row of the family field table.
type familyField struct {
	name   string
	doc    string
	ref    func(*Family) any // the Family field: *string, *int, *float64 or *bool
	values []string          // the allowed values of a string field (nil: any)
	check  valueCheck        // further value check (zero: none)
}

// use returns the field's role in kind, or false if the field does not apply to it (or
// kind is not a registered kind). name and kind apply to every kind.
func (ff *familyField) use(kind string) (use, bool) {
	if ff.name == "name" || ff.name == "kind" {
		return use{field: ff.name, role: roleRequired}, true
	}
	k := kindOf(kind)
	if k == nil {
		return use{}, false
	}
	for _, u := range k.fields {
		if u.field == ff.name {
			return u, true
		}
	}
	return use{}, false
}

// validate checks v, the field's value: one of values if set, then check.
func (ff *familyField) validate(v any) string {
	if ff.values != nil {
		if s := v.(string); !slices.Contains(ff.values, s) {
			return fmt.Sprintf("must be %s, not %q", orList(ff.values), s)
		}
	}
	if ff.check.fn != nil {
		return ff.check.fn(v)
	}
	return ""
}

// Allowed values of the projection field. The zero value "" is the spec version's default:
// ProjectionGaussian in version 1, ProjectionOrthogonal from version 2 (Spec.ProjectionOf).
const (
	// ProjectionGaussian draws i.i.d. Gaussian frequencies.
	ProjectionGaussian = "gaussian"
	// ProjectionOrthogonal draws structured orthogonal random features (SORF).
	ProjectionOrthogonal = "orthogonal"
)

// Allowed values of the mmd method field (how the mean embedding is evaluated). The zero
// value "" is the spec version's default: MethodDirect in versions 1 and 2, MethodAuto from
// version 3 (Spec.MethodOf).
const (
	// MethodDirect evaluates every sine and cosine of every point.
	MethodDirect = "direct"
	// MethodNUFFT spreads the points onto a grid and evaluates the frequencies at window
	// close with a type-3 non-uniform FFT (dim ≤ 3; error ≤ 1e-6 of the feature scale).
	MethodNUFFT = "nufft"
	// MethodAuto is nufft where its cost model says it is cheaper for windows of a few
	// hundred points and more, direct otherwise (a fixed rule of dim, features, bandwidth).
	MethodAuto = "auto"
)

// familyFields is the family field table, in the order of the field reference: what each
// field is (its name, Family field, allowed values, check and doc). Which kinds take a field,
// and how, is each kind's fields list (kinds.go). Within a kind, values are checked in this
// order (an optional stage's fields after the others),
// so a spec with several errors reports the first one in this order.
var familyFields = []familyField{
	{name: "name", doc: "Output column name and RNG stream of the family's draws; unique.",
		ref: func(f *Family) any { return &f.Name }, check: nameCheck},
	{name: "kind", doc: "Feature family: " + kindDocs() + ".",
		ref: func(f *Family) any { return &f.Kind }, values: kindNames()},
	{name: "divergence", doc: "The homogeneous divergence whose kernel is approximated.",
		ref: func(f *Family) any { return &f.Divergence }, values: []string{"js", "hellinger", "tv"}},
	{name: "features", doc: "D, the output length of the family's (last) random Fourier stage.",
		ref: func(f *Family) any { return &f.Features }, check: featuresCheck},
	{name: "bandwidth", doc: "Bandwidth of the Gaussian kernel on points, in normalised units.",
		ref: func(f *Family) any { return &f.Bandwidth }, check: positiveCheck},
	{name: "sigma", doc: "Bandwidth σ of the outer Gaussian kernel (the random Fourier stage).",
		ref: func(f *Family) any { return &f.Sigma }, check: positiveCheck},
	{name: "lambdas", doc: "M, the number of λ values sampled from the divergence's Fuglede measure.",
		ref: func(f *Family) any { return &f.Lambdas }, check: intInCheck(1, maxSpecLambdas)},
	{name: "lambda_sampling", doc: "λ values at quantiles of the measure (stratified) or seeded i.i.d. draws (iid).",
		ref: func(f *Family) any { return &f.LambdaSampling }, values: []string{"stratified", "iid"}},
	{name: "basis", doc: "|V|, the number of cosine basis functions (per dimension in hdd marginal mode).",
		ref: func(f *Family) any { return &f.Basis }, check: intInCheck(1, maxSpecBasis)},
	{name: "grid", doc: "G, the KDE grid cells per axis; must resolve the basis (cosine index < G).",
		ref: func(f *Family) any { return &f.Grid }, check: atLeastCheck(2)},
	{name: "kde_bandwidth", doc: "Bandwidth of the Gaussian KDE of each window's density, in normalised units.",
		ref: func(f *Family) any { return &f.KDEBandwidth }, check: positiveCheck},
	{name: "boundary", doc: "KDE mass reflected at the faces of the unit cube (reflect) or lost (none).",
		ref: func(f *Family) any { return &f.Boundary }, values: []string{"reflect", "none"}},
	{name: "density_floor", doc: "Lower clamp of the estimated density.",
		ref: func(f *Family) any { return &f.DensityFloor }, check: positiveCheck},
	{name: "mode", doc: "One grid over all dimensions (joint, grid^dim ≤ 2^20 cells) or one per dimension (marginal).",
		ref: func(f *Family) any { return &f.Mode }, values: []string{"joint", "marginal"}},
	{name: "rbf_sigma", doc: "Bandwidth of mmd's optional second stage: a Gaussian kernel on the mean embeddings.",
		ref: func(f *Family) any { return &f.RBFSigma }, check: positiveCheck},
	{name: "rbf_features", doc: "Output length of mmd's optional second stage.",
		ref: func(f *Family) any { return &f.RBFFeatures }, check: featuresCheck},
	{name: "projection", doc: "Random Fourier frequencies: i.i.d. Gaussian, or structured orthogonal (SORF).",
		ref: func(f *Family) any { return &f.Projection }, values: []string{ProjectionGaussian, ProjectionOrthogonal}},
	{name: "method", doc: "How mmd evaluates its mean embedding: every sine and cosine per point (direct), a type-3 non-uniform FFT at window close (nufft, dim ≤ 3, error ≤ 1e-6 of the feature scale), or the cheaper of the two by a fixed cost model (auto).",
		ref: func(f *Family) any { return &f.Method }, values: []string{MethodDirect, MethodNUFFT, MethodAuto}},
	{name: "coefficients", doc: "Also output the coefficient vector A before the RFF stage, as column <name>_coef.",
		ref: func(f *Family) any { return &f.Coefficients }},
	{name: "set_family", doc: "The mmd family (without rbf_sigma) whose window features are the set's mean embedding Ψ(P).",
		ref: func(f *Family) any { return &f.SetFamily }},
	{name: "sigma_p", doc: "Bandwidth σ_P of the Gaussian kernel on Ψ(P), the set kernel (‖Ψ‖ ≤ 1).",
		ref: func(f *Family) any { return &f.SigmaP }, check: positiveCheck},
	{name: "sigma_x", doc: "Bandwidth σ_X of the Gaussian kernel on a set's points, in normalised units.",
		ref: func(f *Family) any { return &f.SigmaX }, check: positiveCheck},
	{name: "pooling", doc: "The constant set kernel (σ_P = ∞): per-point features of the point alone.",
		ref: func(f *Family) any { return &f.Pooling }},
	{name: "reference", doc: "Reference sample: JSON lines of sets (the embed input format), relative to the spec file or absolute; its content (SHA-256), not its path, is in the spec_id.",
		ref: func(f *Family) any { return &f.Reference }, check: nonEmptyCheck},
	{name: "bands", doc: "K, the number of dyadic bandwidths bandwidth·2⁻ᵏ of the two-sample test's random features.",
		ref: func(f *Family) any { return &f.Bands }, check: intInCheck(1, 16)},
	{name: "frequencies", doc: "F, the random frequencies per band of the two-sample test.",
		ref: func(f *Family) any { return &f.Frequencies }, check: intInCheck(1, 512)},
	{name: "ridge", doc: "λ of the two-sample omnibus statistic's whitening (relative to the features' correlation matrix).",
		ref: func(f *Family) any { return &f.Ridge }, check: positiveCheck},
	{name: "moment_weight", doc: "Aggregation weight of the two-sample test's moment statistic T_mom, taken from the omnibus T_rff's share: T_mean, T_mom, T_rff weighted 0.5, w, 0.5 − w. calibrate --two-sample proposes 0.25 (more power on a change of spread).",
		ref: func(f *Family) any { return &f.MomentWeight }, check: valueCheck{doc: "in (0, 0.5)", fn: func(v any) string {
			if x := v.(float64); !(x > 0 && x < 0.5) {
				return fmt.Sprintf("must be in (0, 0.5), not %v", x)
			}
			return ""
		}}},
	{name: "alpha", doc: "Level at which a window is counted as drifted (metrics distfeat_two_sample_flagged_total).",
		ref: func(f *Family) any { return &f.Alpha }, check: valueCheck{doc: "in (0, 1)", fn: func(v any) string {
			if x := v.(float64); !(x > 0 && x < 1) {
				return fmt.Sprintf("must be in (0, 1), not %v", x)
			}
			return ""
		}}},
	{name: "ert", doc: "Sequential detection: the expected run time, in windows of one key, between false alarms while nothing changes (absent: off); adds the column <name>_seq.",
		ref: func(f *Family) any { return &f.ERT }, check: valueCheck{doc: "10 … 1e6", fn: func(v any) string {
			if x := v.(float64); !(x >= 10 && x <= 1e6) {
				return fmt.Sprintf("must be in [10, 1e6] windows, not %v", x)
			}
			return ""
		}}},
	{name: "between_windows", doc: "The reference file's lines are consecutive windows of the stream (at least 20, in arrival order, of about the stream's window size): each window is ranked against them, so a stream that wanders from window to window as its reference did is not flagged for it; with ert, the CUSUM's threshold also allows for the persistence of their evidence.",
		ref: func(f *Family) any { return &f.BetweenWindows }},
	{name: "cusum_k", doc: "Reference value K of the sequential detector's CUSUM on −ln p: windows with more evidence push it up; needs ert.",
		ref: func(f *Family) any { return &f.CusumK }, check: valueCheck{doc: "1.05 … 6", fn: func(v any) string {
			if x := v.(float64); !(x >= 1.05 && x <= 6) {
				return fmt.Sprintf("must be in [1.05, 6], not %v", x)
			}
			return ""
		}}},
}

// nonEmptyCheck refuses the empty string.
var nonEmptyCheck = valueCheck{doc: "non-empty", fn: func(v any) string {
	if v.(string) == "" {
		return "must not be empty"
	}
	return ""
}}

// findFamilyField returns the table row of the JSON field name, or nil.
func findFamilyField(name string) *familyField {
	for i := range familyFields {
		if familyFields[i].name == name {
			return &familyFields[i]
		}
	}
	return nil
}

// rffStage describes a kind's random Fourier stage: its bandwidth and size fields, whether
// it is optional (on when both fields are set) and the input width of its frequency matrix.
type rffStage struct {
	sigma, features string
	optional        bool
	inputs          func(s *Spec, f *Family) int
	// limitHint ends the error message of a frequency matrix over maxSpecStageWeights.
	limitHint string
}

// ---- value checks ----

var positiveCheck = valueCheck{doc: "> 0, finite", fn: func(v any) string {
	if x := v.(float64); !(x > 0) || math.IsInf(x, 0) {
		return fmt.Sprintf("must be > 0 and finite, got %v", x)
	}
	return ""
}}

var featuresCheck = valueCheck{doc: fmt.Sprintf("even, 2 … %d", maxSpecFeatures), fn: func(v any) string {
	switch x := v.(int); {
	case x <= 0 || x%2 != 0:
		return fmt.Sprintf("must be even and > 0, got %d", x)
	case x > maxSpecFeatures:
		return fmt.Sprintf("must be ≤ %d, got %d", maxSpecFeatures, x)
	}
	return ""
}}

func intInCheck(lo, hi int) valueCheck {
	return valueCheck{doc: fmt.Sprintf("%d … %d", lo, hi), fn: func(v any) string {
		if x := v.(int); x < lo || x > hi {
			return fmt.Sprintf("must be in [%d, %d], got %d", lo, hi, x)
		}
		return ""
	}}
}

func atLeastCheck(lo int) valueCheck {
	return valueCheck{doc: fmt.Sprintf("≥ %d", lo), fn: func(v any) string {
		if x := v.(int); x < lo {
			return fmt.Sprintf("must be ≥ %d, got %d", lo, x)
		}
		return ""
	}}
}

var nameCheck = valueCheck{doc: fmt.Sprintf("[a-z0-9_]{1,%d}, not an output column", maxSpecFamilyNameLen), fn: func(v any) string {
	name := v.(string)
	switch {
	case name == "":
		return "required"
	case len(name) > maxSpecFamilyNameLen:
		return fmt.Sprintf("longer than %d characters", maxSpecFamilyNameLen)
	case strings.ContainsFunc(name, func(c rune) bool { return !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_') }):
		return fmt.Sprintf("%q: only lower-case letters, digits and _ are allowed", name)
	case slices.Contains(reservedColumns[:], name):
		return fmt.Sprintf("%q is an output column of every record", name)
	}
	return ""
}}

// orList joins values as "a, b or c".
func orList(values []string) string {
	if len(values) == 1 {
		return values[0]
	}
	return strings.Join(values[:len(values)-1], ", ") + " or " + values[len(values)-1]
}
