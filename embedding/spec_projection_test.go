package embedding

import (
	"errors"
	"strings"
	"testing"

	"github.com/distfeat/distfeat/spec"
)

// TestProjectionField: projection applies to every RFF stage (hdd; mmd and l2 when their
// optional stage is on); its default "gaussian" is never written to the canonical JSON, so
// every spec without the field keeps its spec_id, and writing the default changes nothing.
func TestProjectionField(t *testing.T) {
	const (
		hdd = `{"name": "h", "kind": "hdd", "divergence": "js", "sigma": 0.5%s}`
		mmd = `{"name": "m", "kind": "mmd", "bandwidth": 0.1, "rbf_sigma": 1, "rbf_features": 64%s}`
		l2  = `{"name": "l", "kind": "l2", "sigma": 1, "features": 64%s}`
	)
	for _, fam := range []string{hdd, mmd, l2} {
		doc := func(extra string) string { return specJSON("", strings.Replace(fam, "%s", extra, 1)) }
		absent := mustParse(t, doc(""))
		gaussian := mustParse(t, doc(`, "projection": "gaussian"`))
		orthogonal := mustParse(t, doc(`, "projection": "orthogonal"`))
		if absent.Families[0].Projection != "" || gaussian.Families[0].Projection != spec.ProjectionGaussian ||
			orthogonal.Families[0].Projection != spec.ProjectionOrthogonal {
			t.Errorf("%s: Projection %q, %q, %q", fam, absent.Families[0].Projection,
				gaussian.Families[0].Projection, orthogonal.Families[0].Projection)
		}
		if gaussian.ID() != absent.ID() || strings.Contains(string(gaussian.CanonicalJSON()), "projection") {
			t.Errorf("%s: the default projection changed the canonical JSON: %s", fam, gaussian.CanonicalJSON())
		}
		canon := string(orthogonal.CanonicalJSON())
		if !strings.Contains(canon, `"projection":"orthogonal"`) || orthogonal.ID() == absent.ID() {
			t.Errorf("%s: orthogonal canonical JSON %s, ID %s (gaussian %s)", fam, canon, orthogonal.ID(), absent.ID())
		}
		if again := mustParse(t, canon); again.ID() != orthogonal.ID() || string(again.CanonicalJSON()) != canon {
			t.Errorf("%s: the orthogonal sp does not round-trip: %s", fam, again.CanonicalJSON())
		}
	}
}

func TestProjectionErrors(t *testing.T) {
	for _, tc := range []struct{ name, doc, msg string }{
		{"bad value", specJSON("", `{"name": "h", "kind": "hdd", "divergence": "js", "sigma": 0.5, "projection": "sorf"}`),
			`spec: families[0].projection: must be gaussian or orthogonal, not "sorf"`},
		{"not a string", specJSON("", `{"name": "h", "kind": "hdd", "divergence": "js", "sigma": 0.5, "projection": 1}`),
			`spec: families[0].projection: must be a string, got number`},
		{"empty", specJSON("", `{"name": "h", "kind": "hdd", "divergence": "js", "sigma": 0.5, "projection": ""}`),
			`spec: families[0].projection: must be gaussian or orthogonal, not ""`},
		{"mmd without its stage", specJSON("", `{"name": "m", "kind": "mmd", "bandwidth": 0.1, "projection": "orthogonal"}`),
			`spec: families[0].projection: applies only with rbf_sigma and rbf_features (the optional random Fourier stage)`},
		{"l2 without its stage", specJSON("", `{"name": "l", "kind": "l2", "projection": "gaussian"}`),
			`spec: families[0].projection: applies only with sigma and features (the optional random Fourier stage)`},
		{"stage value first", specJSON("", `{"name": "l", "kind": "l2", "sigma": -1, "features": 64, "projection": "x"}`),
			`spec: families[0].sigma: must be > 0 and finite, got -1`},
		{"l2 stage bad value", specJSON("", `{"name": "l", "kind": "l2", "sigma": 1, "features": 64, "projection": "x"}`),
			`spec: families[0].projection: must be gaussian or orthogonal, not "x"`},
	} {
		_, err := spec.ParseSpec([]byte(tc.doc))
		var se *spec.SpecError
		if !errors.As(err, &se) || err.Error() != tc.msg {
			t.Errorf("%s: got %v, want %s", tc.name, err, tc.msg)
		}
	}
	// A Spec built in Go: the zero value means gaussian; the stage rule holds as well.
	s := mmdSpec(2, 64, 0.1, 1)
	s.Families[0].Projection = spec.ProjectionOrthogonal
	if _, err := New(s); err == nil || !strings.Contains(err.Error(), "families[0].projection: applies only with") {
		t.Errorf("New, mmd projection without the stage: %v", err)
	}
}

func mustParse(t *testing.T, doc string) *spec.Spec {
	t.Helper()
	s, err := spec.ParseSpec([]byte(doc))
	if err != nil {
		t.Fatalf("%s: %v", doc, err)
	}
	return s
}

// TestSpecVersion2: version 2 changes one thing, the default projection, to orthogonal.
// A version-2 family without the field computes exactly the features of the version-1
// family with "projection": "orthogonal" (same draws: the streams are the family names),
// and with "projection": "gaussian" exactly those of the version-1 default; writing the
// version's default changes neither the canonical JSON nor the spec_id; a Spec built in Go
// reads an empty Projection as its version's default too.
func TestSpecVersion2(t *testing.T) {
	const (
		hdd = `{"name": "h", "kind": "hdd", "divergence": "js", "sigma": 0.5, "features": 96, "grid": 12, "basis": 10, "lambdas": 2%s}`
		mmd = `{"name": "m", "kind": "mmd", "bandwidth": 0.1, "features": 32, "rbf_sigma": 1, "rbf_features": 64%s}`
		l2  = `{"name": "l", "kind": "l2", "basis": 12, "sigma": 1, "features": 64%s}`
	)
	u := uniformPoints(NewRNG(9, "spec-v2"), 200, 2)
	for _, fam := range []string{hdd, mmd, l2} {
		doc := func(version, projection string) string {
			extra := ""
			if projection != "" {
				extra = `, "projection": "` + projection + `"`
			}
			return specJSON(`"dim": 2, "version": `+version, strings.Replace(fam, "%s", extra, 1))
		}
		v2 := mustParse(t, doc("2", ""))
		v2orth := mustParse(t, doc("2", spec.ProjectionOrthogonal))
		v2gauss := mustParse(t, doc("2", spec.ProjectionGaussian))
		v1orth := mustParse(t, doc("1", spec.ProjectionOrthogonal))
		v1 := mustParse(t, doc("1", ""))
		if v2.ID() != v2orth.ID() || string(v2.CanonicalJSON()) != string(v2orth.CanonicalJSON()) {
			t.Errorf("%s: writing version 2's default changed the spec: %s vs %s", fam, v2.CanonicalJSON(), v2orth.CanonicalJSON())
		}
		if strings.Contains(string(v2.CanonicalJSON()), "projection") || !strings.Contains(string(v2gauss.CanonicalJSON()), `"projection":"gaussian"`) {
			t.Errorf("%s: version 2 canonical JSON %s and, with gaussian, %s", fam, v2.CanonicalJSON(), v2gauss.CanonicalJSON())
		}
		if again := mustParse(t, string(v2gauss.CanonicalJSON())); again.ID() != v2gauss.ID() {
			t.Errorf("%s: the version-2 gaussian sp does not round-trip: %s", fam, again.CanonicalJSON())
		}
		if ids := map[string]bool{v2.ID(): true, v2gauss.ID(): true, v1orth.ID(): true, v1.ID(): true}; len(ids) != 4 {
			t.Errorf("%s: spec_ids of different specs collide", fam)
		}
		for _, pair := range []struct {
			name   string
			a, b   *spec.Spec
			differ bool
		}{{"v2 default = v1 orthogonal", v2, v1orth, false}, {"v2 gaussian = v1 default", v2gauss, v1, false},
			{"v2 default ≠ v1 default", v2, v1, true}} {
			same := equalVectors(mustNew(t, pair.a).Embed(u), mustNew(t, pair.b).Embed(u))
			if same == pair.differ {
				t.Errorf("%s: %s: features equal = %v", fam, pair.name, same)
			}
		}
	}
	// Built in Go: an empty Projection is the version's default.
	s := mustParse(t, specJSON(`"dim": 2, "version": 1`, strings.Replace(hdd, "%s", "", 1)))
	s.Version = 2
	if got, want := mustNew(t, s).Embed(u), mustNew(t, mustParse(t, specJSON(`"dim": 2, "version": 2`, strings.Replace(hdd, "%s", "", 1)))).Embed(u); !equalVectors(got, want) {
		t.Error("a Go-built version-2 sp without projection is not orthogonal")
	}
}
