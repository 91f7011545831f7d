package embedding

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"
)

// Spec is a resolved feature spec (DESIGN §2): every default filled in.
//
// Parse specs with ParseSpec or LoadSpec (strict: unknown fields, fields that do not apply
// to a family's kind and bad values are *SpecError naming the field). A Spec built in Go is
// validated by New, which reads a zero value as "absent" (there are no defaults there).
// The JSON encoding of a Spec (MarshalJSON) is its CanonicalJSON.
//
// Defaults: version 1, seed 42, bounds the unit cube [0,1]^dim, out_of_bounds "clip";
// mmd: features 1024; l2: basis 100; hdd: features 4096, lambdas 5, lambda_sampling
// "stratified", basis 100, grid 64, kde_bandwidth 0.02, boundary "reflect",
// density_floor 1e-6, mode "joint" for dim ≤ 3 and "marginal" above, coefficients false.
// Required: dim, families, and each family's name and kind; mmd's bandwidth; hdd's
// divergence and sigma. Optional stages come in pairs: mmd rbf_sigma with rbf_features,
// l2 sigma with features (both or neither).
type Spec struct {
	// Version of the spec format; must be 1.
	Version int `json:"version"`
	// Seed of every random draw (with the family name as the stream, see RNG).
	Seed uint64 `json:"seed"`
	// Dim is the dimension of the points.
	Dim int `json:"dim"`
	// Bounds of the raw points, mapped to the unit cube.
	Bounds Bounds `json:"bounds"`
	// OutOfBounds is "clip" (clamp into the bounds) or "reject" (dead-letter the record).
	OutOfBounds string `json:"out_of_bounds"`
	// Families are the feature families, in output order.
	Families []Family `json:"families"`
}

// Bounds maps raw points into the unit cube: u = (x − lo)/(hi − lo).
type Bounds struct {
	Lo []float64 `json:"lo"` // lower bound per dimension
	Hi []float64 `json:"hi"` // upper bound per dimension, > Lo
}

// Family configures one feature family. Which fields apply depends on Kind.
type Family struct {
	// Name is the output column name: [a-z0-9_]+, unique, and the RNG stream of its draws.
	Name string `json:"name"`
	// Kind is "mmd", "l2" or "hdd".
	Kind string `json:"kind"`

	// Features is D, the output length of the (last) random Fourier stage (mmd, hdd, l2 with Sigma).
	Features int `json:"features,omitempty"`
	// Bandwidth is the mmd base Gaussian kernel bandwidth in normalised units.
	Bandwidth float64 `json:"bandwidth,omitempty"`
	// RBFSigma and RBFFeatures configure mmd's optional second stage.
	RBFSigma    float64 `json:"rbf_sigma,omitempty"`
	RBFFeatures int     `json:"rbf_features,omitempty"`
	// Basis is |V|, the number of cosine basis functions (l2, hdd).
	Basis int `json:"basis,omitempty"`
	// Sigma is the outer RBF bandwidth (hdd; l2's optional RFF stage).
	Sigma float64 `json:"sigma,omitempty"`

	// The remaining fields are hdd only (DESIGN §3.3).

	// Divergence is "js", "hellinger" or "tv".
	Divergence string `json:"divergence,omitempty"`
	// Lambdas is M, the number of λ values of the Fuglede integral.
	Lambdas int `json:"lambdas,omitempty"`
	// LambdaSampling is "stratified" (quantiles of μ) or "iid" (seeded draws).
	LambdaSampling string `json:"lambda_sampling,omitempty"`
	// Grid is G, the KDE grid cells per axis.
	Grid int `json:"grid,omitempty"`
	// KDEBandwidth is the Gaussian KDE bandwidth in normalised units.
	KDEBandwidth float64 `json:"kde_bandwidth,omitempty"`
	// Boundary is "reflect" (mass reflected at the faces of the cube) or "none".
	Boundary string `json:"boundary,omitempty"`
	// DensityFloor is the lower clamp of the estimated density.
	DensityFloor float64 `json:"density_floor,omitempty"`
	// Mode is "joint" (one grid over all dimensions) or "marginal" (one per dimension).
	Mode string `json:"mode,omitempty"`
	// Coefficients adds the column "<name>_coef" with the vector A before the RFF stage.
	Coefficients bool `json:"coefficients,omitempty"`
}

// SpecError is a spec problem found at start-up; Field names the offending field in JSON
// path notation (e.g. "families[1].bandwidth"), or is empty for the document as a whole.
type SpecError struct {
	Field string
	Msg   string
}

// Error formats the error as "spec: <field>: <msg>".
func (e *SpecError) Error() string {
	if e.Field == "" {
		return "spec: " + e.Msg
	}
	return "spec: " + e.Field + ": " + e.Msg
}

const (
	kindMMD = "mmd"
	kindL2  = "l2"
	kindHDD = "hdd"
)

// Defaults and limits of the spec (see Spec).
const (
	defaultSeed        = 42
	defaultMMDFeatures = 1024
	defaultL2Basis     = 100
	defaultHDDFeatures = 4096
	defaultHDDLambdas  = 5
	defaultHDDBasis    = 100
	// defaultHDDMarginalBasis is the hdd basis default in marginal mode.
	defaultHDDMarginalBasis = 10
	defaultHDDGrid          = 64
	defaultHDDKDEBW         = 0.02
	defaultHDDFloor         = 1e-6
	maxSpecDim              = 1 << 16
	maxSpecFeatures         = 1 << 18
	maxSpecBasis            = 1 << 16
	maxSpecLambdas          = 1 << 10
	maxSpecJointCells       = 1 << 20 // hdd joint grid^dim: the sketch holds ~8 bytes per cell
	maxSpecStageWeights     = 1 << 27 // random Fourier matrix of a second stage (1 GiB of float64)
	maxSpecFamilyNameLen    = 64
	defaultSpecJSONSource   = `{
  "version": 1,
  "seed": 42,
  "dim": 2,
  "bounds": {"lo": [0, 0], "hi": [1, 1]},
  "out_of_bounds": "clip",
  "families": [
    {"name": "mmd", "kind": "mmd", "features": 1024, "bandwidth": 0.1},
    {"name": "hdd_js", "kind": "hdd", "divergence": "js", "features": 4096, "sigma": 0.5,
     "lambdas": 5, "lambda_sampling": "stratified", "basis": 100, "grid": 64,
     "kde_bandwidth": 0.02, "boundary": "reflect", "density_floor": 1e-6, "mode": "joint",
     "coefficients": false},
    {"name": "l2", "kind": "l2", "basis": 100}
  ]
}`
)

// reservedColumns are the output columns a family name may not take (DESIGN §4).
var reservedColumns = [...]string{"set", "window_start", "window_end", "seq", "n", "spec_id"}

// DefaultSpec returns the spec used when none is configured: exactly the DESIGN §2 example
// (dim 2 on the unit square; families mmd, hdd_js and l2), resolved.
func DefaultSpec() *Spec {
	s, err := ParseSpec([]byte(defaultSpecJSONSource))
	if err != nil {
		panic("embedding: the default spec does not parse: " + err.Error())
	}
	return s
}

// LoadSpec reads and parses the spec file at path; an empty path gives DefaultSpec.
// Parse errors are *SpecError (wrapped with the path).
func LoadSpec(path string) (*Spec, error) {
	if path == "" {
		return DefaultSpec(), nil
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read spec: %w", err)
	}
	s, err := ParseSpec(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return s, nil
}

// ParseSpec decodes, defaults and validates a JSON spec. It is strict: unknown fields,
// duplicate fields, fields that do not apply to a family's kind, wrong JSON types and bad
// values are all errors of type *SpecError naming the field.
func ParseSpec(data []byte) (*Spec, error) {
	var probe json.RawMessage
	if err := json.Unmarshal(data, &probe); err != nil {
		return nil, &SpecError{Msg: "invalid JSON: " + err.Error()}
	}
	top, err := readObject(probe, "")
	if err != nil {
		return nil, err
	}
	s := &Spec{}
	has := map[string]bool{}
	var famPresent []map[string]bool
	for _, kv := range top {
		has[kv.key] = true
		var err error
		switch kv.key {
		case "version":
			s.Version, err = readInt(kv.val, "version")
		case "seed":
			s.Seed, err = readUint64(kv.val, "seed")
		case "dim":
			s.Dim, err = readInt(kv.val, "dim")
		case "bounds":
			s.Bounds, err = readBounds(kv.val)
		case "out_of_bounds":
			s.OutOfBounds, err = readString(kv.val, "out_of_bounds")
		case "families":
			s.Families, famPresent, err = readFamilies(kv.val)
		default:
			err = &SpecError{Field: kv.key, Msg: "unknown field"}
		}
		if err != nil {
			return nil, err
		}
	}
	if !has["dim"] {
		return nil, &SpecError{Field: "dim", Msg: "required"}
	}
	if !has["families"] {
		return nil, &SpecError{Field: "families", Msg: "required"}
	}
	if !has["version"] {
		s.Version = 1
	}
	if !has["seed"] {
		s.Seed = defaultSeed
	}
	if !has["out_of_bounds"] {
		s.OutOfBounds = "clip"
	}
	if !has["bounds"] && s.Dim >= 1 && s.Dim <= maxSpecDim {
		s.Bounds = Bounds{Lo: make([]float64, s.Dim), Hi: make([]float64, s.Dim)}
		for j := range s.Bounds.Hi {
			s.Bounds.Hi[j] = 1
		}
	}
	for i := range s.Families {
		if err := s.fillDefaults(i, famPresent[i]); err != nil {
			return nil, err
		}
	}
	if err := s.validate(famPresent); err != nil {
		return nil, err
	}
	return s, nil
}

// fillDefaults sets family i's absent fields to their defaults and checks required ones.
func (s *Spec) fillDefaults(i int, present map[string]bool) error {
	f := &s.Families[i]
	field := func(name string) string { return fmt.Sprintf("families[%d].%s", i, name) }
	required := func(name string) error {
		if !present[name] {
			return &SpecError{Field: field(name), Msg: "required"}
		}
		return nil
	}
	setDefault := func(name string, apply func()) {
		if !present[name] {
			apply()
		}
	}
	switch f.Kind {
	case kindMMD:
		setDefault("features", func() { f.Features = defaultMMDFeatures })
		return required("bandwidth")
	case kindL2:
		setDefault("basis", func() { f.Basis = defaultL2Basis })
	case kindHDD:
		if err := required("divergence"); err != nil {
			return err
		}
		if err := required("sigma"); err != nil {
			return err
		}
		setDefault("features", func() { f.Features = defaultHDDFeatures })
		setDefault("lambdas", func() { f.Lambdas = defaultHDDLambdas })
		setDefault("lambda_sampling", func() { f.LambdaSampling = "stratified" })
		setDefault("grid", func() { f.Grid = defaultHDDGrid })
		setDefault("kde_bandwidth", func() { f.KDEBandwidth = defaultHDDKDEBW })
		setDefault("boundary", func() { f.Boundary = "reflect" })
		setDefault("density_floor", func() { f.DensityFloor = defaultHDDFloor })
		setDefault("mode", func() {
			f.Mode = "marginal"
			if s.Dim <= 3 {
				f.Mode = "joint"
			}
		})
		// Marginal mode embeds each 1-D marginal: 100 one-dimensional cosines would need
		// frequencies a 64-cell grid cannot resolve, and d×100 coefficients per λ blow up the
		// RFF stage. 10 per dimension is what the paper used for its marginal embeddings.
		setDefault("basis", func() {
			f.Basis = defaultHDDBasis
			if f.Mode == "marginal" {
				f.Basis = defaultHDDMarginalBasis
			}
		})
	}
	return nil
}

// fieldKinds lists the family kinds a family field applies to; nil for unknown fields.
func fieldKinds(key string) []string {
	switch key {
	case "name", "kind", "features":
		return []string{kindMMD, kindL2, kindHDD}
	case "bandwidth", "rbf_sigma", "rbf_features":
		return []string{kindMMD}
	case "basis", "sigma":
		return []string{kindL2, kindHDD}
	case "divergence", "lambdas", "lambda_sampling", "grid", "kde_bandwidth", "boundary",
		"density_floor", "mode", "coefficients":
		return []string{kindHDD}
	}
	return nil
}

// setFields lists the fields of f that hold non-zero values: the presence information
// for a Spec built in Go.
func (f *Family) setFields() map[string]bool {
	m := map[string]bool{
		"name":            f.Name != "",
		"kind":            f.Kind != "",
		"features":        f.Features != 0,
		"bandwidth":       f.Bandwidth != 0,
		"rbf_sigma":       f.RBFSigma != 0,
		"rbf_features":    f.RBFFeatures != 0,
		"basis":           f.Basis != 0,
		"sigma":           f.Sigma != 0,
		"divergence":      f.Divergence != "",
		"lambdas":         f.Lambdas != 0,
		"lambda_sampling": f.LambdaSampling != "",
		"grid":            f.Grid != 0,
		"kde_bandwidth":   f.KDEBandwidth != 0,
		"boundary":        f.Boundary != "",
		"density_floor":   f.DensityFloor != 0,
		"mode":            f.Mode != "",
		"coefficients":    f.Coefficients,
	}
	for k, v := range m {
		if !v {
			delete(m, k)
		}
	}
	return m
}

// validate checks a resolved spec. present[i] holds the fields family i set explicitly
// (from JSON); nil means "every non-zero field" (a Spec built in Go).
func (s *Spec) validate(present []map[string]bool) error {
	if s.Version != 1 {
		return &SpecError{Field: "version", Msg: fmt.Sprintf("must be 1, not %d", s.Version)}
	}
	if s.Dim < 1 {
		return &SpecError{Field: "dim", Msg: "must be ≥ 1"}
	}
	if s.Dim > maxSpecDim {
		return &SpecError{Field: "dim", Msg: fmt.Sprintf("must be ≤ %d", maxSpecDim)}
	}
	if err := s.Bounds.validate(s.Dim); err != nil {
		return err
	}
	if s.OutOfBounds != "clip" && s.OutOfBounds != "reject" {
		return &SpecError{Field: "out_of_bounds", Msg: fmt.Sprintf("must be clip or reject, not %q", s.OutOfBounds)}
	}
	if len(s.Families) == 0 {
		return &SpecError{Field: "families", Msg: "must list at least one family"}
	}
	coefNames := map[string]int{}
	for i, f := range s.Families {
		if f.Kind == kindHDD {
			coefNames[f.Name+"_coef"] = i
		}
	}
	seen := map[string]int{}
	for i := range s.Families {
		var p map[string]bool
		if present != nil {
			p = present[i]
		} else {
			p = s.Families[i].setFields()
		}
		if err := s.validateFamily(i, p); err != nil {
			return err
		}
		name := s.Families[i].Name
		if j, ok := seen[name]; ok {
			return &SpecError{Field: fmt.Sprintf("families[%d].name", i), Msg: fmt.Sprintf("%q is already the name of families[%d]", name, j)}
		}
		seen[name] = i
		if j, ok := coefNames[name]; ok {
			return &SpecError{Field: fmt.Sprintf("families[%d].name", i), Msg: fmt.Sprintf("%q clashes with the coefficient column of families[%d]", name, j)}
		}
	}
	return nil
}

func (b *Bounds) validate(dim int) error {
	for _, side := range []struct {
		name string
		v    []float64
	}{{"bounds.lo", b.Lo}, {"bounds.hi", b.Hi}} {
		if len(side.v) != dim {
			return &SpecError{Field: side.name, Msg: fmt.Sprintf("has %d values, dim is %d", len(side.v), dim)}
		}
		for j, v := range side.v {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return &SpecError{Field: fmt.Sprintf("%s[%d]", side.name, j), Msg: "must be finite"}
			}
		}
	}
	for j := range b.Lo {
		if !(b.Lo[j] < b.Hi[j]) {
			return &SpecError{Field: fmt.Sprintf("bounds.hi[%d]", j), Msg: fmt.Sprintf("must be > bounds.lo[%d] (%v), got %v", j, b.Lo[j], b.Hi[j])}
		}
		if w := b.Hi[j] - b.Lo[j]; math.IsInf(w, 0) {
			return &SpecError{Field: fmt.Sprintf("bounds.hi[%d]", j), Msg: "hi − lo overflows float64"}
		}
	}
	return nil
}

// validateFamily checks family i; present holds its explicitly set fields.
func (s *Spec) validateFamily(i int, present map[string]bool) error {
	f := &s.Families[i]
	field := func(name string) string { return fmt.Sprintf("families[%d].%s", i, name) }
	bad := func(name, format string, args ...any) error {
		return &SpecError{Field: field(name), Msg: fmt.Sprintf(format, args...)}
	}
	switch f.Kind {
	case kindMMD, kindL2, kindHDD:
	case "":
		return bad("kind", "required (mmd, l2 or hdd)")
	default:
		return bad("kind", "must be mmd, l2 or hdd, not %q", f.Kind)
	}
	keys := make([]string, 0, len(present))
	for k := range present {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		kinds := fieldKinds(k)
		if kinds == nil {
			return bad(k, "unknown field")
		}
		if !slices.Contains(kinds, f.Kind) {
			return bad(k, "not a field of kind %q", f.Kind)
		}
	}
	if f.Name == "" {
		return bad("name", "required")
	}
	if len(f.Name) > maxSpecFamilyNameLen {
		return bad("name", "longer than %d characters", maxSpecFamilyNameLen)
	}
	for _, c := range f.Name {
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_') {
			return bad("name", "%q: only lower-case letters, digits and _ are allowed", f.Name)
		}
	}
	if slices.Contains(reservedColumns[:], f.Name) {
		return bad("name", "%q is an output column of every record", f.Name)
	}
	positive := func(name string, v float64) error {
		if !(v > 0) || math.IsInf(v, 0) {
			return bad(name, "must be > 0 and finite, got %v", v)
		}
		return nil
	}
	features := func(name string, v int) error {
		if v <= 0 || v%2 != 0 {
			return bad(name, "must be even and > 0, got %d", v)
		}
		if v > maxSpecFeatures {
			return bad(name, "must be ≤ %d, got %d", maxSpecFeatures, v)
		}
		return nil
	}
	basis := func(v int) error {
		if v < 1 || v > maxSpecBasis {
			return bad("basis", "must be in [1, %d], got %d", maxSpecBasis, v)
		}
		return nil
	}
	// pair checks an optional second stage: both fields or neither.
	pair := func(a, b string) error {
		if present[a] && !present[b] {
			return bad(b, "required when %s is set", a)
		}
		if present[b] && !present[a] {
			return bad(a, "required when %s is set", b)
		}
		return nil
	}
	stageSize := func(name string, outFeatures, in int) error {
		if int64(outFeatures/2)*int64(in) > maxSpecStageWeights {
			return bad(name, "the random Fourier matrix would hold %d×%d weights (limit %d)", outFeatures/2, in, maxSpecStageWeights)
		}
		return nil
	}

	switch f.Kind {
	case kindMMD:
		if err := features("features", f.Features); err != nil {
			return err
		}
		if err := positive("bandwidth", f.Bandwidth); err != nil {
			return err
		}
		if err := pair("rbf_sigma", "rbf_features"); err != nil {
			return err
		}
		if present["rbf_sigma"] {
			if err := positive("rbf_sigma", f.RBFSigma); err != nil {
				return err
			}
			if err := features("rbf_features", f.RBFFeatures); err != nil {
				return err
			}
			if err := stageSize("rbf_features", f.RBFFeatures, f.Features); err != nil {
				return err
			}
		}
	case kindL2:
		if err := basis(f.Basis); err != nil {
			return err
		}
		if err := pair("sigma", "features"); err != nil {
			return err
		}
		if present["sigma"] {
			if err := positive("sigma", f.Sigma); err != nil {
				return err
			}
			if err := features("features", f.Features); err != nil {
				return err
			}
			if err := stageSize("features", f.Features, f.Basis); err != nil {
				return err
			}
		}
	case kindHDD:
		switch f.Divergence {
		case "js", "hellinger", "tv":
		default:
			return bad("divergence", "must be js, hellinger or tv, not %q", f.Divergence)
		}
		if err := features("features", f.Features); err != nil {
			return err
		}
		if err := positive("sigma", f.Sigma); err != nil {
			return err
		}
		if f.Lambdas < 1 || f.Lambdas > maxSpecLambdas {
			return bad("lambdas", "must be in [1, %d], got %d", maxSpecLambdas, f.Lambdas)
		}
		if f.LambdaSampling != "stratified" && f.LambdaSampling != "iid" {
			return bad("lambda_sampling", "must be stratified or iid, not %q", f.LambdaSampling)
		}
		if err := basis(f.Basis); err != nil {
			return err
		}
		if f.Grid < 2 {
			return bad("grid", "must be ≥ 2, got %d", f.Grid)
		}
		if err := positive("kde_bandwidth", f.KDEBandwidth); err != nil {
			return err
		}
		if f.Boundary != "reflect" && f.Boundary != "none" {
			return bad("boundary", "must be reflect or none, not %q", f.Boundary)
		}
		if err := positive("density_floor", f.DensityFloor); err != nil {
			return err
		}
		switch f.Mode {
		case "joint":
			cells := 1
			for j := 0; j < s.Dim; j++ {
				if cells > maxSpecJointCells/f.Grid {
					return bad("grid", "joint mode needs grid^dim = %d^%d cells (limit %d); lower grid or use mode marginal", f.Grid, s.Dim, maxSpecJointCells)
				}
				cells *= f.Grid
			}
		case "marginal":
			if f.Grid > maxSpecJointCells {
				return bad("grid", "must be ≤ %d", maxSpecJointCells)
			}
		default:
			return bad("mode", "must be joint or marginal, not %q", f.Mode)
		}
		// The midpoint rule on G cells resolves cosines up to index G−1 only.
		gridDim := 1
		if f.Mode == "joint" {
			gridDim = s.Dim
		}
		if k := maxIndex(cosineIndices(gridDim, f.Basis)); k >= f.Grid {
			return bad("basis", "%d basis functions need cosine index %d, but a grid of %d cells resolves indices up to %d; lower basis or raise grid", f.Basis, k, f.Grid, f.Grid-1)
		}
	}
	return nil
}

// CanonicalJSON is the resolved spec as compact JSON with sorted keys. Every field that
// applies to a family's kind is present (coefficients: false included); an optional stage's
// pair (mmd rbf_sigma/rbf_features, l2 sigma/features) only when the stage is on; fields of
// other kinds never. spec_id is derived from these bytes.
func (s *Spec) CanonicalJSON() []byte {
	fams := make([]map[string]any, len(s.Families))
	for i, f := range s.Families {
		m := map[string]any{"name": f.Name, "kind": f.Kind}
		switch f.Kind {
		case kindMMD:
			m["features"] = f.Features
			m["bandwidth"] = finite(f.Bandwidth)
			if f.RBFFeatures != 0 || f.RBFSigma != 0 {
				m["rbf_sigma"] = finite(f.RBFSigma)
				m["rbf_features"] = f.RBFFeatures
			}
		case kindL2:
			m["basis"] = f.Basis
			if f.Features != 0 || f.Sigma != 0 {
				m["sigma"] = finite(f.Sigma)
				m["features"] = f.Features
			}
		case kindHDD:
			m["divergence"] = f.Divergence
			m["features"] = f.Features
			m["sigma"] = finite(f.Sigma)
			m["lambdas"] = f.Lambdas
			m["lambda_sampling"] = f.LambdaSampling
			m["basis"] = f.Basis
			m["grid"] = f.Grid
			m["kde_bandwidth"] = finite(f.KDEBandwidth)
			m["boundary"] = f.Boundary
			m["density_floor"] = finite(f.DensityFloor)
			m["mode"] = f.Mode
			m["coefficients"] = f.Coefficients
		}
		fams[i] = m
	}
	doc := map[string]any{
		"version":       s.Version,
		"seed":          s.Seed,
		"dim":           s.Dim,
		"bounds":        map[string]any{"lo": finites(s.Bounds.Lo), "hi": finites(s.Bounds.Hi)},
		"out_of_bounds": s.OutOfBounds,
		"families":      fams,
	}
	b, err := json.Marshal(doc)
	if err != nil { // unreachable: only maps, strings, ints and finite floats
		panic("embedding: CanonicalJSON: " + err.Error())
	}
	return b
}

// finite maps a non-finite float (only possible in an invalid Spec built in Go) to null.
func finite(v float64) any {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return nil
	}
	return v
}

func finites(v []float64) []any {
	out := make([]any, len(v))
	for i, x := range v {
		out[i] = finite(x)
	}
	return out
}

// ID is the spec_id: the first 16 hex digits of the SHA-256 of CanonicalJSON.
func (s *Spec) ID() string {
	sum := sha256.Sum256(s.CanonicalJSON())
	return hex.EncodeToString(sum[:8])
}

// MarshalJSON encodes the spec as its CanonicalJSON.
func (s *Spec) MarshalJSON() ([]byte, error) { return s.CanonicalJSON(), nil }

// UnmarshalJSON parses data strictly, exactly like ParseSpec.
func (s *Spec) UnmarshalJSON(data []byte) error {
	p, err := ParseSpec(data)
	if err != nil {
		return err
	}
	*s = *p
	return nil
}

// clone is a deep copy.
func (s *Spec) clone() *Spec {
	c := *s
	c.Bounds.Lo = slices.Clone(s.Bounds.Lo)
	c.Bounds.Hi = slices.Clone(s.Bounds.Hi)
	c.Families = slices.Clone(s.Families)
	return &c
}

// ---- strict JSON reading ----

type keyValue struct {
	key string
	val json.RawMessage
}

// readObject splits a JSON object into its fields in document order, rejecting duplicates.
func readObject(raw json.RawMessage, field string) ([]keyValue, error) {
	if jsonType(raw) != "object" {
		return nil, &SpecError{Field: field, Msg: "must be a JSON object, got " + jsonType(raw)}
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	if _, err := dec.Token(); err != nil { // '{'
		return nil, &SpecError{Field: field, Msg: err.Error()}
	}
	var out []keyValue
	seen := map[string]bool{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, &SpecError{Field: field, Msg: err.Error()}
		}
		key, _ := tok.(string)
		var val json.RawMessage
		if err := dec.Decode(&val); err != nil {
			return nil, &SpecError{Field: join(field, key), Msg: err.Error()}
		}
		if seen[key] {
			return nil, &SpecError{Field: join(field, key), Msg: "duplicate field"}
		}
		seen[key] = true
		out = append(out, keyValue{key, val})
	}
	return out, nil
}

func join(parent, key string) string {
	if parent == "" {
		return key
	}
	return parent + "." + key
}

// jsonType names the JSON type of a raw value.
func jsonType(raw json.RawMessage) string {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return "nothing"
	}
	switch raw[0] {
	case '{':
		return "object"
	case '[':
		return "array"
	case '"':
		return "string"
	case 't', 'f':
		return "boolean"
	case 'n':
		return "null"
	}
	return "number"
}

func readInt(raw json.RawMessage, field string) (int, error) {
	lit := string(bytes.TrimSpace(raw))
	if jsonType(raw) != "number" {
		return 0, &SpecError{Field: field, Msg: "must be an integer, got " + jsonType(raw)}
	}
	if strings.ContainsAny(lit, ".eE") {
		return 0, &SpecError{Field: field, Msg: "must be an integer, got " + lit}
	}
	v, err := strconv.ParseInt(lit, 10, 64)
	if err != nil || v != int64(int(v)) {
		return 0, &SpecError{Field: field, Msg: "integer out of range: " + lit}
	}
	return int(v), nil
}

func readUint64(raw json.RawMessage, field string) (uint64, error) {
	lit := string(bytes.TrimSpace(raw))
	if jsonType(raw) != "number" || strings.ContainsAny(lit, ".eE-") {
		return 0, &SpecError{Field: field, Msg: "must be an integer in [0, 2^64), got " + lit}
	}
	v, err := strconv.ParseUint(lit, 10, 64)
	if err != nil {
		return 0, &SpecError{Field: field, Msg: "must be an integer in [0, 2^64), got " + lit}
	}
	return v, nil
}

func readFloat(raw json.RawMessage, field string) (float64, error) {
	if jsonType(raw) != "number" {
		return 0, &SpecError{Field: field, Msg: "must be a number, got " + jsonType(raw)}
	}
	lit := string(bytes.TrimSpace(raw))
	v, err := strconv.ParseFloat(lit, 64)
	if err != nil {
		return 0, &SpecError{Field: field, Msg: "number out of range: " + lit}
	}
	return v, nil
}

func readString(raw json.RawMessage, field string) (string, error) {
	var v string
	if jsonType(raw) != "string" || json.Unmarshal(raw, &v) != nil {
		return "", &SpecError{Field: field, Msg: "must be a string, got " + jsonType(raw)}
	}
	return v, nil
}

func readBool(raw json.RawMessage, field string) (bool, error) {
	var v bool
	if jsonType(raw) != "boolean" || json.Unmarshal(raw, &v) != nil {
		return false, &SpecError{Field: field, Msg: "must be true or false, got " + jsonType(raw)}
	}
	return v, nil
}

func readFloats(raw json.RawMessage, field string) ([]float64, error) {
	if jsonType(raw) != "array" {
		return nil, &SpecError{Field: field, Msg: "must be an array of numbers, got " + jsonType(raw)}
	}
	var elems []json.RawMessage
	if err := json.Unmarshal(raw, &elems); err != nil {
		return nil, &SpecError{Field: field, Msg: err.Error()}
	}
	out := make([]float64, len(elems))
	for i, e := range elems {
		v, err := readFloat(e, fmt.Sprintf("%s[%d]", field, i))
		if err != nil {
			return nil, err
		}
		out[i] = v
	}
	return out, nil
}

func readBounds(raw json.RawMessage) (Bounds, error) {
	var b Bounds
	fields, err := readObject(raw, "bounds")
	if err != nil {
		return b, err
	}
	has := map[string]bool{}
	for _, kv := range fields {
		has[kv.key] = true
		switch kv.key {
		case "lo":
			b.Lo, err = readFloats(kv.val, "bounds.lo")
		case "hi":
			b.Hi, err = readFloats(kv.val, "bounds.hi")
		default:
			err = &SpecError{Field: "bounds." + kv.key, Msg: "unknown field"}
		}
		if err != nil {
			return b, err
		}
	}
	for _, k := range []string{"lo", "hi"} {
		if !has[k] {
			return b, &SpecError{Field: "bounds." + k, Msg: "required"}
		}
	}
	return b, nil
}

// readFamilies decodes the families array; present[i] records family i's explicit fields.
func readFamilies(raw json.RawMessage) ([]Family, []map[string]bool, error) {
	if jsonType(raw) != "array" {
		return nil, nil, &SpecError{Field: "families", Msg: "must be an array of objects, got " + jsonType(raw)}
	}
	var elems []json.RawMessage
	if err := json.Unmarshal(raw, &elems); err != nil {
		return nil, nil, &SpecError{Field: "families", Msg: err.Error()}
	}
	fams := make([]Family, len(elems))
	present := make([]map[string]bool, len(elems))
	for i, e := range elems {
		prefix := fmt.Sprintf("families[%d]", i)
		fields, err := readObject(e, prefix)
		if err != nil {
			return nil, nil, err
		}
		f := &fams[i]
		p := map[string]bool{}
		present[i] = p
		// The kind decides which fields apply, so read it first.
		for _, kv := range fields {
			if kv.key == "kind" {
				if f.Kind, err = readString(kv.val, prefix+".kind"); err != nil {
					return nil, nil, err
				}
				switch f.Kind {
				case kindMMD, kindL2, kindHDD:
				default:
					return nil, nil, &SpecError{Field: prefix + ".kind", Msg: fmt.Sprintf("must be mmd, l2 or hdd, not %q", f.Kind)}
				}
			}
		}
		if f.Kind == "" {
			return nil, nil, &SpecError{Field: prefix + ".kind", Msg: "required (mmd, l2 or hdd)"}
		}
		for _, kv := range fields {
			name := prefix + "." + kv.key
			kinds := fieldKinds(kv.key)
			if kinds == nil {
				return nil, nil, &SpecError{Field: name, Msg: "unknown field"}
			}
			if !slices.Contains(kinds, f.Kind) {
				return nil, nil, &SpecError{Field: name, Msg: fmt.Sprintf("not a field of kind %q", f.Kind)}
			}
			p[kv.key] = true
			var err error
			switch kv.key {
			case "kind":
			case "name":
				f.Name, err = readString(kv.val, name)
			case "features":
				f.Features, err = readInt(kv.val, name)
			case "bandwidth":
				f.Bandwidth, err = readFloat(kv.val, name)
			case "rbf_sigma":
				f.RBFSigma, err = readFloat(kv.val, name)
			case "rbf_features":
				f.RBFFeatures, err = readInt(kv.val, name)
			case "basis":
				f.Basis, err = readInt(kv.val, name)
			case "sigma":
				f.Sigma, err = readFloat(kv.val, name)
			case "divergence":
				f.Divergence, err = readString(kv.val, name)
			case "lambdas":
				f.Lambdas, err = readInt(kv.val, name)
			case "lambda_sampling":
				f.LambdaSampling, err = readString(kv.val, name)
			case "grid":
				f.Grid, err = readInt(kv.val, name)
			case "kde_bandwidth":
				f.KDEBandwidth, err = readFloat(kv.val, name)
			case "boundary":
				f.Boundary, err = readString(kv.val, name)
			case "density_floor":
				f.DensityFloor, err = readFloat(kv.val, name)
			case "mode":
				f.Mode, err = readString(kv.val, name)
			case "coefficients":
				f.Coefficients, err = readBool(kv.val, name)
			}
			if err != nil {
				return nil, nil, err
			}
		}
		if !p["name"] {
			return nil, nil, &SpecError{Field: prefix + ".name", Msg: "required"}
		}
	}
	return fams, present, nil
}
