package spec

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// specJSON builds a spec document from a top-level template with one family object.
func specJSON(top, families string) string {
	if top == "" {
		top = `"dim": 2`
	}
	return `{` + top + `, "families": [` + families + `]}`
}

func TestParseSpecErrorsNameTheField(t *testing.T) {
	const mmd = `{"name": "m", "kind": "mmd", "bandwidth": 0.1}`
	cases := []struct {
		name, doc, field, msg string
	}{
		{"not json", `{"dim": 2,`, "", "invalid JSON"},
		{"not an object", `[1, 2]`, "", "must be a JSON object"},
		{"unknown top field", `{"dim": 2, "dimm": 3, "families": [` + mmd + `]}`, "dimm", "unknown field"},
		{"duplicate field", `{"dim": 2, "dim": 3, "families": [` + mmd + `]}`, "dim", "duplicate"},
		{"case matters", `{"Dim": 2, "families": [` + mmd + `]}`, "Dim", "unknown field"},
		{"dim missing", `{"families": [` + mmd + `]}`, "dim", "required"},
		{"dim zero", specJSON(`"dim": 0`, mmd), "dim", "≥ 1"},
		{"dim float", specJSON(`"dim": 2.5`, mmd), "dim", "integer"},
		{"dim string", specJSON(`"dim": "2"`, mmd), "dim", "integer"},
		{"version 4", specJSON(`"dim": 2, "version": 4`, mmd), "version", "must be 1, 2 or 3"},
		{"nufft above dim 3", specJSON(`"dim": 4`, `{"name": "m", "kind": "mmd", "bandwidth": 0.1, "method": "nufft"}`), "families[0].method", "nufft needs dim ≤ 3"},
		{"unknown method", specJSON(`"dim": 2`, `{"name": "m", "kind": "mmd", "bandwidth": 0.1, "method": "fast"}`), "families[0].method", "must be"},
		{"seed negative", specJSON(`"dim": 2, "seed": -1`, mmd), "seed", "integer"},
		{"seed too big", specJSON(`"dim": 2, "seed": 18446744073709551616`, mmd), "seed", "integer"},
		{"families missing", `{"dim": 2}`, "families", "required"},
		{"families empty", specJSON("", ""), "families", "at least one"},
		{"families not array", `{"dim": 2, "families": {}}`, "families", "array"},
		{"bounds lo length", specJSON(`"dim": 2, "bounds": {"lo": [0], "hi": [1, 1]}`, mmd), "bounds.lo", "dim is 2"},
		{"bounds hi length", specJSON(`"dim": 2, "bounds": {"lo": [0, 0], "hi": [1, 1, 1]}`, mmd), "bounds.hi", "dim is 2"},
		{"bounds lo ≥ hi", specJSON(`"dim": 2, "bounds": {"lo": [0, 1], "hi": [1, 1]}`, mmd), "bounds.hi[1]", "must be >"},
		{"bounds hi missing", specJSON(`"dim": 2, "bounds": {"lo": [0, 0]}`, mmd), "bounds.hi", "required"},
		{"bounds unknown", specJSON(`"dim": 2, "bounds": {"lo": [0, 0], "hi": [1, 1], "mid": [0]}`, mmd), "bounds.mid", "unknown field"},
		{"bounds overflow", specJSON(`"dim": 1, "bounds": {"lo": [-1e308], "hi": [1e308]}`, mmd), "bounds.hi[0]", "overflows"},
		{"bounds not number", specJSON(`"dim": 1, "bounds": {"lo": ["a"], "hi": [1]}`, mmd), "bounds.lo[0]", "number"},
		{"bounds huge literal", specJSON(`"dim": 1, "bounds": {"lo": [0], "hi": [1e999]}`, mmd), "bounds.hi[0]", "out of range"},
		{"out_of_bounds", specJSON(`"dim": 2, "out_of_bounds": "drop"`, mmd), "out_of_bounds", "clip or reject"},
		{"kind missing", specJSON("", `{"name": "m", "bandwidth": 0.1}`), "families[0].kind", "required"},
		{"kind unknown", specJSON("", `{"name": "m", "kind": "rff"}`), "families[0].kind", "mmd, l2, hdd, marginal_transfer or two_sample"},
		{"name missing", specJSON("", `{"kind": "mmd", "bandwidth": 0.1}`), "families[0].name", "required"},
		{"name empty", specJSON("", `{"name": "", "kind": "mmd", "bandwidth": 0.1}`), "families[0].name", "required"},
		{"name upper case", specJSON("", `{"name": "MMD", "kind": "mmd", "bandwidth": 0.1}`), "families[0].name", "lower-case"},
		{"name dash", specJSON("", `{"name": "a-b", "kind": "mmd", "bandwidth": 0.1}`), "families[0].name", "lower-case"},
		{"name reserved", specJSON("", `{"name": "spec_id", "kind": "mmd", "bandwidth": 0.1}`), "families[0].name", "output column"},
		{"name reserved n", specJSON("", `{"name": "n", "kind": "mmd", "bandwidth": 0.1}`), "families[0].name", "output column"},
		{"name duplicate", specJSON("", mmd+`, {"name": "m", "kind": "l2"}`), "families[1].name", "already"},
		{"name clashes with coef", specJSON("", `{"name": "h", "kind": "hdd", "divergence": "js", "sigma": 1}, {"name": "h_coef", "kind": "l2"}`), "families[1].name", "output column"},
		{"unknown family field", specJSON("", `{"name": "m", "kind": "mmd", "bandwidth": 0.1, "bandwith": 0.2}`), "families[0].bandwith", "unknown field"},
		{"marginal sigma_x missing", specJSON("", mmd+`, {"name": "mt", "kind": "marginal_transfer", "set_family": "m", "sigma_p": 1}`), "families[1].sigma_x", "required"},
		{"marginal sigma_p missing", specJSON("", mmd+`, {"name": "mt", "kind": "marginal_transfer", "set_family": "m", "sigma_x": 1}`), "families[1].sigma_p", "required unless pooling"},
		{"marginal sigma_p negative", specJSON("", mmd+`, {"name": "mt", "kind": "marginal_transfer", "set_family": "m", "sigma_p": -1, "sigma_x": 1}`), "families[1].sigma_p", "> 0"},
		{"marginal set_family missing", specJSON("", mmd+`, {"name": "mt", "kind": "marginal_transfer", "sigma_p": 1, "sigma_x": 1}`), "families[1].set_family", "required unless pooling"},
		{"marginal set_family unknown", specJSON("", mmd+`, {"name": "mt", "kind": "marginal_transfer", "set_family": "x", "sigma_p": 1, "sigma_x": 1}`), "families[1].set_family", "no family of that name"},
		{"marginal pooling with sigma_p", specJSON("", mmd+`, {"name": "mt", "kind": "marginal_transfer", "pooling": true, "sigma_p": 1, "sigma_x": 1}`), "families[1].sigma_p", "not allowed with pooling"},
		{"marginal field of another kind", specJSON("", mmd+`, {"name": "mt", "kind": "marginal_transfer", "pooling": true, "sigma_x": 1, "bandwidth": 1}`), "families[1].bandwidth", "not a field of kind"},
		{"sigma_x on mmd", specJSON("", `{"name": "m", "kind": "mmd", "bandwidth": 0.1, "sigma_x": 0.2}`), "families[0].sigma_x", "not a field of kind"},
		{"grid on mmd", specJSON("", `{"name": "m", "kind": "mmd", "bandwidth": 0.1, "grid": 8}`), "families[0].grid", `not a field of kind "mmd"`},
		{"bandwidth on l2", specJSON("", `{"name": "l", "kind": "l2", "bandwidth": 0.1}`), "families[0].bandwidth", `not a field of kind "l2"`},
		{"rbf on hdd", specJSON("", `{"name": "h", "kind": "hdd", "divergence": "js", "sigma": 1, "rbf_sigma": 1}`), "families[0].rbf_sigma", `not a field of kind "hdd"`},
		{"duplicate family field", specJSON("", `{"name": "m", "kind": "mmd", "bandwidth": 0.1, "bandwidth": 0.2}`), "families[0].bandwidth", "duplicate"},
		{"mmd bandwidth missing", specJSON("", `{"name": "m", "kind": "mmd"}`), "families[0].bandwidth", "required"},
		{"mmd bandwidth zero", specJSON("", `{"name": "m", "kind": "mmd", "bandwidth": 0}`), "families[0].bandwidth", "> 0"},
		{"mmd bandwidth negative", specJSON("", `{"name": "m", "kind": "mmd", "bandwidth": -1}`), "families[0].bandwidth", "> 0"},
		{"mmd bandwidth null", specJSON("", `{"name": "m", "kind": "mmd", "bandwidth": null}`), "families[0].bandwidth", "number"},
		{"mmd features odd", specJSON("", `{"name": "m", "kind": "mmd", "bandwidth": 0.1, "features": 1023}`), "families[0].features", "even"},
		{"mmd features zero", specJSON("", `{"name": "m", "kind": "mmd", "bandwidth": 0.1, "features": 0}`), "families[0].features", "even"},
		{"mmd features huge", specJSON("", `{"name": "m", "kind": "mmd", "bandwidth": 0.1, "features": 1073741824}`), "families[0].features", "≤"},
		{"mmd rbf_features alone", specJSON("", `{"name": "m", "kind": "mmd", "bandwidth": 0.1, "rbf_features": 64}`), "families[0].rbf_sigma", "required when rbf_features"},
		{"mmd rbf_sigma alone", specJSON("", `{"name": "m", "kind": "mmd", "bandwidth": 0.1, "rbf_sigma": 1}`), "families[0].rbf_features", "required when rbf_sigma"},
		{"mmd rbf_sigma zero", specJSON("", `{"name": "m", "kind": "mmd", "bandwidth": 0.1, "rbf_sigma": 0, "rbf_features": 64}`), "families[0].rbf_sigma", "> 0"},
		{"mmd rbf_features odd", specJSON("", `{"name": "m", "kind": "mmd", "bandwidth": 0.1, "rbf_sigma": 1, "rbf_features": 63}`), "families[0].rbf_features", "even"},
		{"mmd rbf too big", specJSON("", `{"name": "m", "kind": "mmd", "bandwidth": 0.1, "features": 262144, "rbf_sigma": 1, "rbf_features": 262144}`), "families[0].rbf_features", "random Fourier matrix"},
		{"l2 basis zero", specJSON("", `{"name": "l", "kind": "l2", "basis": 0}`), "families[0].basis", "[1,"},
		{"l2 sigma alone", specJSON("", `{"name": "l", "kind": "l2", "sigma": 1}`), "families[0].features", "required when sigma"},
		{"l2 features alone", specJSON("", `{"name": "l", "kind": "l2", "features": 64}`), "families[0].sigma", "required when features"},
		{"l2 sigma inf", specJSON("", `{"name": "l", "kind": "l2", "sigma": 1e400, "features": 64}`), "families[0].sigma", "out of range"},
		{"hdd divergence missing", specJSON("", `{"name": "h", "kind": "hdd", "sigma": 1}`), "families[0].divergence", "required"},
		{"hdd sigma missing", specJSON("", `{"name": "h", "kind": "hdd", "divergence": "js"}`), "families[0].sigma", "required"},
		{"hdd divergence bad", specJSON("", `{"name": "h", "kind": "hdd", "divergence": "kl", "sigma": 1}`), "families[0].divergence", "js, hellinger or tv"},
		{"hdd lambdas zero", specJSON("", `{"name": "h", "kind": "hdd", "divergence": "js", "sigma": 1, "lambdas": 0}`), "families[0].lambdas", "[1,"},
		{"hdd lambda_sampling", specJSON("", `{"name": "h", "kind": "hdd", "divergence": "js", "sigma": 1, "lambda_sampling": "random"}`), "families[0].lambda_sampling", "stratified or iid"},
		{"hdd grid 1", specJSON("", `{"name": "h", "kind": "hdd", "divergence": "js", "sigma": 1, "grid": 1}`), "families[0].grid", "≥ 2"},
		{"hdd kde_bandwidth", specJSON("", `{"name": "h", "kind": "hdd", "divergence": "js", "sigma": 1, "kde_bandwidth": 0}`), "families[0].kde_bandwidth", "> 0"},
		{"hdd boundary", specJSON("", `{"name": "h", "kind": "hdd", "divergence": "js", "sigma": 1, "boundary": "wrap"}`), "families[0].boundary", "reflect or none"},
		{"hdd density_floor", specJSON("", `{"name": "h", "kind": "hdd", "divergence": "js", "sigma": 1, "density_floor": 0}`), "families[0].density_floor", "> 0"},
		{"hdd mode", specJSON("", `{"name": "h", "kind": "hdd", "divergence": "js", "sigma": 1, "mode": "both"}`), "families[0].mode", "joint or marginal"},
		{"hdd coefficients type", specJSON("", `{"name": "h", "kind": "hdd", "divergence": "js", "sigma": 1, "coefficients": "yes"}`), "families[0].coefficients", "true or false"},
		{"hdd joint too big", specJSON(`"dim": 4`, `{"name": "h", "kind": "hdd", "divergence": "js", "sigma": 1, "mode": "joint", "grid": 64}`), "families[0].grid", "joint mode"},
		{"hdd sigma string", specJSON("", `{"name": "h", "kind": "hdd", "divergence": "js", "sigma": "1"}`), "families[0].sigma", "number"},
		{"second family", specJSON("", `{"name": "a", "kind": "l2"}, {"name": "b", "kind": "l2", "basis": -3}`), "families[1].basis", "[1,"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s, err := ParseSpec([]byte(tc.doc))
			if err == nil {
				t.Fatalf("ParseSpec accepted %s: %s", tc.doc, s.CanonicalJSON())
			}
			var se *SpecError
			if !errors.As(err, &se) {
				t.Fatalf("error %v (%T) is not a *SpecError", err, err)
			}
			if se.Field != tc.field {
				t.Errorf("error %q names field %q, want %q", err, se.Field, tc.field)
			}
			if !strings.Contains(se.Msg, tc.msg) {
				t.Errorf("error %q: message does not contain %q", err, tc.msg)
			}
			if want := "spec: "; !strings.HasPrefix(err.Error(), want) {
				t.Errorf("error %q does not start with %q", err, want)
			}
		})
	}
}

func TestSpecErrorFormat(t *testing.T) {
	_, err := ParseSpec([]byte(specJSON("", `{"name": "m", "kind": "mmd", "bandwidth": 0.1, "grid": 8}`)))
	if got, want := err.Error(), `spec: families[0].grid: not a field of kind "mmd"`; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

func TestParseSpecDefaults(t *testing.T) {
	s, err := ParseSpec([]byte(`{"dim": 4, "families": [
		{"name": "m", "kind": "mmd", "bandwidth": 0.2},
		{"name": "l", "kind": "l2"},
		{"name": "h", "kind": "hdd", "divergence": "tv", "sigma": 2}]}`))
	if err != nil {
		t.Fatal(err)
	}
	if s.Version != 1 || s.Seed != 42 || s.OutOfBounds != "clip" {
		t.Errorf("top-level defaults: version %d seed %d out_of_bounds %q", s.Version, s.Seed, s.OutOfBounds)
	}
	for j := 0; j < 4; j++ {
		if s.Bounds.Lo[j] != 0 || s.Bounds.Hi[j] != 1 {
			t.Errorf("default bounds: lo %v hi %v, want the unit cube", s.Bounds.Lo, s.Bounds.Hi)
		}
	}
	m, l, h := s.Families[0], s.Families[1], s.Families[2]
	if m.Features != 1024 || m.RBFFeatures != 0 || m.RBFSigma != 0 {
		t.Errorf("mmd defaults: %+v", m)
	}
	if l.Basis != 100 || l.Features != 0 || l.Sigma != 0 {
		t.Errorf("l2 defaults: %+v", l)
	}
	// dim 4 → marginal mode, whose basis default is 10 per dimension.
	want := Family{Name: "h", Kind: "hdd", Divergence: "tv", Sigma: 2, Features: 4096, Lambdas: 5,
		LambdaSampling: "stratified", Basis: 10, Grid: 64, KDEBandwidth: 0.02, Boundary: "reflect",
		DensityFloor: 1e-6, Mode: "marginal"}
	if h != want {
		t.Errorf("hdd defaults:\n got %+v\nwant %+v", h, want)
	}
	// mode defaults to joint for dim ≤ 3.
	s3, err := ParseSpec([]byte(`{"dim": 3, "families": [{"name": "h", "kind": "hdd", "divergence": "js", "sigma": 1, "grid": 16}]}`))
	if err != nil {
		t.Fatal(err)
	}
	if s3.Families[0].Mode != "joint" {
		t.Errorf("dim 3: mode %q, want joint", s3.Families[0].Mode)
	}
	// An explicit seed of 0 is kept (only an absent seed defaults to 42).
	s0, err := ParseSpec([]byte(`{"dim": 1, "seed": 0, "families": [{"name": "l", "kind": "l2"}]}`))
	if err != nil || s0.Seed != 0 {
		t.Errorf("seed 0: %v, %v", s0, err)
	}
	big, err := ParseSpec([]byte(`{"dim": 1, "seed": 18446744073709551615, "families": [{"name": "l", "kind": "l2"}]}`))
	if err != nil || big.Seed != 1<<64-1 {
		t.Errorf("seed 2^64-1: %v, %v", big, err)
	}
}

// TestDefaultSpecIsNewestVersion: the built-in default is the version-1 default's families
// and parameters at the newest spec version (a version added later fails this test
// until the default moves to it, with its measurements and docs/upgrading.md).
func TestDefaultSpecIsNewestVersion(t *testing.T) {
	s, v1 := DefaultSpec(), DefaultSpecV1()
	if s.Version != 3 {
		t.Errorf("DefaultSpec version %d, want 3", s.Version)
	}
	next := DefaultSpec()
	next.Version++
	if err := next.Validate(); err == nil {
		t.Errorf("spec version %d is valid but the default is still version %d: move the default to the newest version", next.Version, s.Version)
	}
	// Only the version differs from the former default (same families and parameters).
	same := DefaultSpecV1()
	same.Version = s.Version
	if string(same.CanonicalJSON()) != string(s.CanonicalJSON()) {
		t.Errorf("DefaultSpec differs from DefaultSpecV1 in more than the version:\n got %s\nwant %s", s.CanonicalJSON(), same.CanonicalJSON())
	}
	if s.ID() == v1.ID() {
		t.Errorf("DefaultSpec and DefaultSpecV1 share spec_id %s", s.ID())
	}
}

// TestDefaultSpecV1Pinned: the former built-in default keeps its spec_id forever (running
// groups pin it to keep their features), and examples/default-spec-v1.json, the file
// docs/upgrading.md and the worker's refusal message point to, is that spec.
func TestDefaultSpecV1Pinned(t *testing.T) {
	const id = "fc09ef581b8b4ac2" // the spec_id of the built-in default up to this change
	if got := DefaultSpecV1().ID(); got != id {
		t.Errorf("DefaultSpecV1 spec_id %s, want %s", got, id)
	}
	f, err := LoadSpec(filepath.Join("..", "examples", "default-spec-v1.json"))
	if err != nil {
		t.Fatal(err)
	}
	if f.ID() != id {
		t.Errorf("examples/default-spec-v1.json has spec_id %s, want %s\n%s", f.ID(), id, f.CanonicalJSON())
	}
}

// TestDefaultSpecV1Families: the former built-in default is the documented version-1 spec
// (examples/default-spec-v1.json, docs/spec.md): dim 2 on the unit square, mmd, hdd_js and
// l2 with these parameters.
func TestDefaultSpecV1Families(t *testing.T) {
	s := DefaultSpecV1()
	want := &Spec{Version: 1, Seed: 42, Dim: 2, Bounds: Bounds{Lo: []float64{0, 0}, Hi: []float64{1, 1}},
		OutOfBounds: "clip", Families: []Family{
			{Name: "mmd", Kind: "mmd", Features: 1024, Bandwidth: 0.1},
			{Name: "hdd_js", Kind: "hdd", Divergence: "js", Features: 4096, Sigma: 0.5, Lambdas: 5,
				LambdaSampling: "stratified", Basis: 100, Grid: 64, KDEBandwidth: 0.02, Boundary: "reflect",
				DensityFloor: 1e-6, Mode: "joint"},
			{Name: "l2", Kind: "l2", Basis: 100},
		}}
	if string(s.CanonicalJSON()) != string(want.CanonicalJSON()) {
		t.Errorf("DefaultSpecV1:\n got %s\nwant %s", s.CanonicalJSON(), want.CanonicalJSON())
	}
}

func TestCanonicalJSON(t *testing.T) {
	s, err := ParseSpec([]byte(`{"families": [
		{"kind": "l2", "name": "l", "sigma": 0.5, "features": 64},
		{"name": "h", "kind": "hdd", "divergence": "hellinger", "sigma": 1, "grid": 8, "basis": 5},
		{"bandwidth": 0.25, "name": "m", "kind": "mmd", "rbf_features": 32, "rbf_sigma": 1.5}],
		"dim": 1, "seed": 7, "out_of_bounds": "reject", "bounds": {"hi": [10], "lo": [-10]}}`))
	if err != nil {
		t.Fatal(err)
	}
	got := string(s.CanonicalJSON())
	want := `{"bounds":{"hi":[10],"lo":[-10]},"dim":1,"families":[` +
		`{"basis":100,"features":64,"kind":"l2","name":"l","sigma":0.5},` +
		`{"basis":5,"boundary":"reflect","coefficients":false,"density_floor":0.000001,"divergence":"hellinger","features":4096,"grid":8,"kde_bandwidth":0.02,"kind":"hdd","lambda_sampling":"stratified","lambdas":5,"mode":"joint","name":"h","sigma":1},` +
		`{"bandwidth":0.25,"features":1024,"kind":"mmd","name":"m","rbf_features":32,"rbf_sigma":1.5}],` +
		`"out_of_bounds":"reject","seed":7,"version":1}`
	if got != want {
		t.Errorf("canonical JSON\n got %s\nwant %s", got, want)
	}
	// Round trip: the canonical form parses to the same spec and ID, and is a fixed point.
	again, err := ParseSpec(s.CanonicalJSON())
	if err != nil {
		t.Fatalf("canonical JSON does not parse: %v", err)
	}
	if again.ID() != s.ID() || string(again.CanonicalJSON()) != got {
		t.Errorf("round trip changed the spec: %s vs %s", again.CanonicalJSON(), got)
	}
	// json.Marshal and json.Unmarshal use the canonical form and the strict parser.
	b, err := json.Marshal(s)
	if err != nil || string(b) != got {
		t.Errorf("json.Marshal = %s, %v", b, err)
	}
	var u Spec
	if err := json.Unmarshal(b, &u); err != nil || u.ID() != s.ID() {
		t.Errorf("json.Unmarshal: %v", err)
	}
	if err := json.Unmarshal([]byte(`{"dim": 1, "families": [{"name":"x","kind":"l2","grid":3}]}`), &u); err == nil {
		t.Error("json.Unmarshal accepted a field of the wrong kind")
	}
}

func TestSpecID(t *testing.T) {
	s := DefaultSpec()
	id := s.ID()
	if !regexp.MustCompile(`^[0-9a-f]{16}$`).MatchString(id) {
		t.Fatalf("ID %q is not 16 hex digits", id)
	}
	if DefaultSpec().ID() != id {
		t.Error("ID is not stable across calls")
	}
	// Writing a default explicitly, reordering keys or changing whitespace keeps the ID.
	same, err := ParseSpec([]byte(`{"families": [
		{"bandwidth": 0.1, "kind": "mmd", "name": "mmd"},
		{"name": "hdd_js", "kind": "hdd", "divergence": "js", "sigma": 0.5},
		{"name": "l2", "kind": "l2"}], "dim": 2, "version": 3, "seed": 42}`))
	if err != nil {
		t.Fatal(err)
	}
	if same.ID() != id {
		t.Errorf("equivalent spec has ID %s, default %s\n%s\n%s", same.ID(), id, same.CanonicalJSON(), s.CanonicalJSON())
	}
	// Any change to a feature-relevant value changes the ID.
	for _, mutate := range []func(*Spec){
		func(s *Spec) { s.Seed = 43 },
		func(s *Spec) { s.Families[0].Bandwidth = 0.11 },
		func(s *Spec) { s.Families[1].Coefficients = true },
		func(s *Spec) { s.OutOfBounds = "reject" },
		func(s *Spec) { s.Bounds.Hi[1] = 2 },
		func(s *Spec) { s.Families[2].Name = "l2b" },
	} {
		c := DefaultSpec()
		mutate(c)
		if c.ID() == id {
			t.Errorf("mutated spec %s kept the ID", c.CanonicalJSON())
		}
	}
}

func TestLoadSpec(t *testing.T) {
	s, err := LoadSpec("")
	if err != nil || s.ID() != DefaultSpec().ID() {
		t.Fatalf("LoadSpec(\"\") = %v, %v", s, err)
	}
	dir := t.TempDir()
	good := filepath.Join(dir, "good.json")
	if err := os.WriteFile(good, []byte(`{"dim": 3, "families": [{"name": "l", "kind": "l2", "basis": 10}]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	s, err = LoadSpec(good)
	if err != nil || s.Dim != 3 || s.Families[0].Basis != 10 {
		t.Fatalf("LoadSpec(good) = %v, %v", s, err)
	}
	bad := filepath.Join(dir, "bad.json")
	if err := os.WriteFile(bad, []byte(`{"dim": 3, "families": [{"name": "l", "kind": "l2", "grid": 10}]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err = LoadSpec(bad)
	var se *SpecError
	if !errors.As(err, &se) || se.Field != "families[0].grid" || !strings.Contains(err.Error(), bad) {
		t.Errorf("LoadSpec(bad) = %v", err)
	}
	if _, err := LoadSpec(filepath.Join(dir, "missing.json")); err == nil {
		t.Error("LoadSpec of a missing file succeeded")
	}
}

// TestDefaultSpecIsNewest: the built-in default is always the newest spec version (the
// README's promise, and what calibrate proposes), and no newer version parses.
func TestDefaultSpecIsNewest(t *testing.T) {
	if v := DefaultSpec().Version; v != NewestVersion {
		t.Fatalf("the built-in default spec is version %d, NewestVersion is %d", v, NewestVersion)
	}
	src := fmt.Sprintf(`{"version": %d, "dim": 1, "families": [{"name": "m", "kind": "mmd", "features": 8, "bandwidth": 1}]}`, NewestVersion+1)
	if _, err := ParseSpec([]byte(src)); err == nil {
		t.Fatalf("version %d parsed; the validation's newest version and NewestVersion disagree", NewestVersion+1)
	}
}
