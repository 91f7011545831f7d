package spec

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
)

// Spec is a resolved feature spec (docs/spec.md): every default filled in.
//
// Parse specs with ParseSpec or LoadSpec (strict: unknown fields, fields that do not apply
// to a family's kind and bad values are *SpecError naming the field). A Spec built in Go is
// validated by Validate (and by embedding.New), which reads a zero value as "absent"
// (there are no defaults there, except that an empty Projection means the version's
// default: "gaussian" in version 1, "orthogonal" from version 2).
// The JSON encoding of a Spec (MarshalJSON) is its CanonicalJSON.
//
// FieldReference documents every field: its type, whether it is required or its default
// per kind (some depend on dim: hdd mode is "joint" for dim ≤ 3 and "marginal" above, and
// hdd basis is 100 in joint and 10 in marginal mode), allowed values and meaning. Optional
// stages come in pairs: mmd rbf_sigma with rbf_features, l2 sigma with features (both or
// neither).
type Spec struct {
	// Version of the spec format: 1, or 2, where every random Fourier stage defaults to
	// projection "orthogonal" (version 1: "gaussian"). Nothing else differs.
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

// Family configures one feature family. Which fields apply depends on Kind (see
// FieldReference).
type Family struct {
	// Name is the output column name: [a-z0-9_]+, unique, and the RNG stream of its draws.
	Name string `json:"name"`
	// Kind is the name of a registered kind (KindNames): "mmd", "l2", "hdd" or
	// "marginal_transfer".
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
	// Projection is how the random Fourier stage draws its frequencies: "gaussian"
	// (i.i.d. normal) or "orthogonal" (structured orthogonal random features); "" is the
	// spec version's default (gaussian in version 1, orthogonal from version 2). It applies
	// to hdd, and to mmd and l2 when their optional stage is on.
	Projection string `json:"projection,omitempty"`
	// Method is how mmd evaluates its mean embedding: "direct", "nufft" or "auto"; "" is
	// the spec version's default (direct in versions 1 and 2, auto from version 3).
	Method string `json:"method,omitempty"`

	// The remaining fields are hdd only (docs/math.md).

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

	// The fields from here to Pooling are marginal_transfer only (per-point features, see
	// docs/marginal-transfer.md).

	// SetFamily names the mmd family (without its rbf stage) whose window features are the
	// set's mean embedding Ψ(P).
	SetFamily string `json:"set_family,omitempty"`
	// SigmaP is the bandwidth of the Gaussian kernel on Ψ(P) (the set kernel).
	SigmaP float64 `json:"sigma_p,omitempty"`
	// SigmaX is the bandwidth of the Gaussian kernel on points, in normalised units.
	SigmaX float64 `json:"sigma_x,omitempty"`
	// Pooling selects the constant set kernel (σ_P = ∞): set_family and sigma_p absent.
	Pooling bool `json:"pooling,omitempty"`

	// The remaining fields are two_sample only (docs/drift.md).

	// Reference is the reference sample's file as written in the spec: JSON lines of sets
	// in the format embed reads, relative to the spec file's directory (or the working
	// directory for ParseSpec) or absolute.
	Reference string `json:"reference,omitempty"`
	// Bands is K, the number of dyadic bandwidths bandwidth·2⁻ᵏ, k = 0…K−1.
	Bands int `json:"bands,omitempty"`
	// Frequencies is F, the random frequencies per band.
	Frequencies int `json:"frequencies,omitempty"`
	// Ridge is λ of the omnibus statistic's whitening (correlation scale).
	Ridge float64 `json:"ridge,omitempty"`
	// Alpha is the level at which windows are counted as flagged (metrics).
	Alpha float64 `json:"alpha,omitempty"`
	// MomentWeight is w of the aggregation weights 0.5, w, 0.5 − w of T_mean, T_mom, T_rff;
	// 0 (absent) is the default 0.05 (docs/drift.md).
	MomentWeight float64 `json:"moment_weight,omitempty"`
	// ERT turns on sequential detection (docs/drift.md): the expected number of windows
	// between false alarms of the key's CUSUM while nothing changes; 0 (absent): off.
	ERT float64 `json:"ert,omitempty"`
	// CusumK is the CUSUM's reference value K (0: sequential.DefaultK).
	CusumK float64 `json:"cusum_k,omitempty"`
	// BetweenWindows: the reference file's lines are consecutive windows of the stream, and
	// a window is ranked against them rather than against windows resampled from their
	// pooled points (docs/drift.md, Correlated windows).
	BetweenWindows bool `json:"between_windows,omitempty"`
	// ReferenceFile is Reference resolved (ResolveReferences); ReferenceDigest the hex
	// SHA-256 of its content, which the canonical JSON (and so the spec_id) holds in place
	// of the path.
	ReferenceFile   string `json:"-"`
	ReferenceDigest string `json:"-"`
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
	maxSpecStageWeights     = 1 << 27 // a random Fourier matrix (1 GiB of float64)
	maxSpecFamilyNameLen    = 64
	// maxHDDCells bounds the binning nodes of one hdd grid ((G+2)^gd ≤ 2·maxHDDCells):
	// 2²⁴ cells is 128 MiB of sketch.
	maxHDDCells = 1 << 24
	// defaultSpecJSONSource is the built-in default: the version-1 default's families at spec
	// version 3 (orthogonal random features, mmd method auto: the non-uniform FFT at dim 2).
	defaultSpecJSONSource = `{
  "version": 3,
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
	// defaultSpecV1JSONSource is the built-in default of releases before spec version 3 became
	// the default (docs/spec.md, docs/upgrading.md). Its spec_id (fc09ef581b8b4ac2) and bytes
	// are pinned by the golden tests; examples/default-spec-v1.json holds the same spec.
	defaultSpecV1JSONSource = `{
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

// reservedColumns are the output columns a family name may not take (docs/input-output.md).
var reservedColumns = [...]string{"set", "window_start", "window_end", "seq", "n", "spec_id"}

// Column is one output vector column of a spec's records: a family's features, or an hdd
// family's `<name>_coef` (embedding.Embedder.Columns lists them).
type Column struct {
	Name   string // column name in the output schema
	Family string // the family that produces it
	Len    int    // vector length
}

// NewestVersion is the newest spec version: the built-in default's (TestDefaultSpecIsNewest),
// and what calibrate proposes without a base spec.
const NewestVersion = 3

// DefaultSpec returns the spec used when none is configured, resolved: the version-1
// default's families (dim 2 on the unit square; mmd, hdd_js and l2 with its parameters) at
// the newest spec version, 3 (orthogonal random features; mmd method auto). Releases before
// it used DefaultSpecV1; docs/upgrading.md says how a running group moves on.
func DefaultSpec() *Spec {
	return mustParseBuiltin(defaultSpecJSONSource)
}

// DefaultSpecV1 returns the built-in default spec of releases before version 3 became the
// default (spec version 1: Gaussian random features, direct mmd; docs/spec.md), resolved. Its features never change; pin it (examples/default-spec-v1.json) to keep
// a group's features across the upgrade.
func DefaultSpecV1() *Spec {
	return mustParseBuiltin(defaultSpecV1JSONSource)
}

func mustParseBuiltin(src string) *Spec {
	s, err := ParseSpec([]byte(src))
	if err != nil {
		panic("spec: a built-in spec does not parse: " + err.Error())
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
	s, err := parseSpec(data, filepath.Dir(path))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return s, nil
}

// ParseSpec decodes, defaults and validates a JSON spec. It is strict: unknown fields,
// duplicate fields, fields that do not apply to a family's kind, wrong JSON types and bad
// values are all errors of type *SpecError naming the field.
//
// A two_sample family's reference file is read to take its digest (SHA-256); a relative
// path is relative to the working directory (LoadSpec: to the spec file's directory).
func ParseSpec(data []byte) (*Spec, error) { return parseSpec(data, "") }

// parseSpec is ParseSpec with relative reference paths resolved against dir.
func parseSpec(data []byte, dir string) (*Spec, error) {
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
		tf := findTopField(kv.key)
		if tf == nil {
			return nil, &SpecError{Field: kv.key, Msg: "unknown field"}
		}
		has[kv.key] = true
		if p, ok := tf.ref(s).(*[]Family); ok {
			*p, famPresent, err = readFamilies(kv.val)
		} else {
			err = readValue(tf.ref(s), kv.val, kv.key)
		}
		if err != nil {
			return nil, err
		}
	}
	for _, tf := range topFields {
		if tf.required && !has[tf.name] {
			return nil, &SpecError{Field: tf.name, Msg: "required"}
		}
	}
	for _, tf := range topFields {
		if tf.setDefault != nil && !has[tf.name] {
			tf.setDefault(s)
		}
	}
	for i := range s.Families {
		if err := s.fillDefaults(i, famPresent[i]); err != nil {
			return nil, err
		}
	}
	if err := s.ResolveReferences(dir); err != nil {
		return nil, err
	}
	if err := s.validate(famPresent); err != nil {
		return nil, err
	}
	return s, nil
}

// fillDefaults sets family i's absent fields to their defaults and checks required ones,
// in table order (a default may depend on fields before it, or compute theirs).
func (s *Spec) fillDefaults(i int, present map[string]bool) error {
	f := &s.Families[i]
	for _, ff := range familyFields {
		u, ok := ff.use(f.Kind)
		if !ok || present[ff.name] {
			continue
		}
		switch u.role {
		case roleRequired:
			return &SpecError{Field: fmt.Sprintf("families[%d].%s", i, ff.name), Msg: "required"}
		case roleDefault:
			setValue(ff.ref(f), u.def.resolve(s.Dim, f))
		}
	}
	return nil
}

// setFields lists the fields of f that hold non-zero values: the presence information
// for a Spec built in Go.
func (f *Family) setFields() map[string]bool {
	m := map[string]bool{}
	for _, ff := range familyFields {
		if v := valueOf(ff.ref(f)); v != zeroOf(v) {
			m[ff.name] = true
		}
	}
	return m
}

// zeroOf is the zero value of v's type.
func zeroOf(v any) any {
	switch v.(type) {
	case int:
		return 0
	case float64:
		return 0.0
	case string:
		return ""
	case bool:
		return false
	}
	panic(fmt.Sprintf("spec: unsupported spec field type %T", v))
}

// CanonicalJSON is the resolved spec as compact JSON with sorted keys. Every field that
// applies to a family's kind is present (coefficients: false included); an optional stage's
// pair (mmd rbf_sigma/rbf_features, l2 sigma/features) only when the stage is on; an
// optional field (projection) only when it is not the spec version's default; fields of other
// kinds never.
// spec_id is derived from these bytes.
func (s *Spec) CanonicalJSON() []byte {
	doc := map[string]any{}
	for _, tf := range topFields {
		doc[tf.name] = tf.canonical(s)
	}
	b, err := json.Marshal(doc)
	if err != nil { // unreachable: only maps, strings, ints and finite floats
		panic("spec: CanonicalJSON: " + err.Error())
	}
	return b
}

// canonical is family f of a spec of the given version as CanonicalJSON writes it.
func (f *Family) canonical(version int) map[string]any {
	m := map[string]any{}
	stageOn := false
	if st := stageOf(f.Kind); st != nil {
		stageOn = !st.optional || valueOf(findFamilyField(st.sigma).ref(f)) != 0.0 ||
			valueOf(findFamilyField(st.features).ref(f)) != 0
	}
	for _, ff := range familyFields {
		u, ok := ff.use(f.Kind)
		if !ok {
			continue
		}
		if ff.name == "reference" { // the content, not the path
			m[ff.name] = "sha256:" + f.ReferenceDigest
			continue
		}
		v := valueOf(ff.ref(f))
		if u.role == roleOption && v == zeroOf(v) {
			v = u.def.at(version) // absent: the version's default
		}
		switch {
		case u.role == roleStage && !stageOn:
		case u.role == roleOption && (v == u.def.at(version) || u.withStage && !stageOn):
		default:
			m[ff.name] = canonicalValue(v)
		}
	}
	return m
}

// ProjectionOf is family f's effective projection: its own, or the spec version's default.
func (s *Spec) ProjectionOf(f *Family) string {
	if f.Projection != "" {
		return f.Projection
	}
	u, _ := findFamilyField("projection").use(f.Kind)
	return u.def.at(s.Version).(string)
}

// MethodOf is mmd family f's method as the spec gives it: its own, or the spec version's
// default (MethodDirect, MethodNUFFT or MethodAuto; embedding resolves auto).
func (s *Spec) MethodOf(f *Family) string {
	if f.Method != "" {
		return f.Method
	}
	u, ok := findFamilyField("method").use(f.Kind)
	if !ok {
		return MethodDirect
	}
	return u.def.at(s.Version).(string)
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

// Clone is a deep copy.
func (s *Spec) Clone() *Spec {
	c := *s
	c.Bounds.Lo = slices.Clone(s.Bounds.Lo)
	c.Bounds.Hi = slices.Clone(s.Bounds.Hi)
	c.Families = slices.Clone(s.Families)
	return &c
}

// fileKind names the type of a file that is not a regular one.
func fileKind(m os.FileMode) string {
	switch {
	case m.IsDir():
		return "a directory"
	case m&os.ModeNamedPipe != 0:
		return "a FIFO"
	case m&os.ModeCharDevice != 0:
		return "a character device"
	case m&os.ModeDevice != 0:
		return "a device"
	case m&os.ModeSocket != 0:
		return "a socket"
	}
	return "mode " + m.String()
}

// ResolveReferences resolves every two_sample family's reference file (relative paths
// against dir, "" for the working directory) and takes the SHA-256 of its content, which
// the spec_id covers. A missing, unreadable or empty file is a *SpecError naming the
// family's reference field and the file. ParseSpec and LoadSpec call it; a Spec built in Go
// must call it before Validate.
func (s *Spec) ResolveReferences(dir string) error {
	for i := range s.Families {
		f := &s.Families[i]
		if f.Kind != KindTwoSample || f.Reference == "" {
			continue
		}
		path := f.Reference
		if !filepath.IsAbs(path) {
			path = filepath.Join(dir, path)
		}
		// A device or FIFO would never end (/dev/urandom) or block the open until a writer
		// comes; its content could not be pinned by a digest either.
		if st, err := os.Stat(path); err == nil && !st.Mode().IsRegular() {
			return familyErr(i, "reference", "%s is not a regular file (%s): the reference must be a file whose content stays as it is", path, fileKind(st.Mode()))
		}
		file, err := os.Open(path)
		if err != nil {
			return familyErr(i, "reference", "%v", err)
		}
		if st, err := file.Stat(); err == nil && !st.Mode().IsRegular() { // replaced since the check above
			file.Close()
			return familyErr(i, "reference", "%s is not a regular file (%s): the reference must be a file whose content stays as it is", path, fileKind(st.Mode()))
		}
		h := sha256.New()
		n, err := io.Copy(h, file)
		file.Close()
		if err != nil {
			return familyErr(i, "reference", "read %s: %v", path, err)
		}
		if n == 0 {
			return familyErr(i, "reference", "%s is empty", path)
		}
		f.ReferenceFile, f.ReferenceDigest = path, hex.EncodeToString(h.Sum(nil))
	}
	return nil
}
