package spec

import (
	"errors"
	"testing"
)

// FuzzParseSpec: ParseSpec never panics; it either accepts (and then the canonical JSON
// parses back to the same spec_id, and validation is stable) or returns a *SpecError naming
// a field. The seed corpus is in testdata/fuzz/FuzzParseSpec.
func FuzzParseSpec(f *testing.F) {
	f.Add([]byte(defaultSpecJSONSource))
	f.Add(DefaultSpec().CanonicalJSON())
	f.Add([]byte(`{"dim":16,"families":[{"name":"h","kind":"hdd","divergence":"js","sigma":0.5,"features":512}]}`))
	f.Add([]byte(`{"dim":1,"families":[{"name":"m","kind":"mmd","bandwidth":0.1,"rbf_sigma":1,"rbf_features":64}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := ParseSpec(data)
		if err != nil {
			var se *SpecError
			if !errors.As(err, &se) {
				t.Fatalf("error %v (%T) is not a *SpecError", err, err)
			}
			if se.Field == "" && se.Msg == "" {
				t.Fatalf("empty SpecError for %q", data)
			}
			return
		}
		canon := s.CanonicalJSON()
		s2, err := ParseSpec(canon)
		if err != nil {
			t.Fatalf("canonical JSON of an accepted spec does not parse: %v\n%s", err, canon)
		}
		if s2.ID() != s.ID() {
			t.Fatalf("spec_id changed through canonical JSON: %s → %s", s.ID(), s2.ID())
		}
		if string(s2.CanonicalJSON()) != string(canon) {
			t.Fatalf("canonical JSON is not a fixed point")
		}
	})
}
