package embedding

import (
	"slices"
	"testing"

	"github.com/distfeat/distfeat/spec"
)

// TestKindRegistriesAgree: every kind the spec accepts compiles here, and this package
// compiles no kind the spec does not know, in the same order.
func TestKindRegistriesAgree(t *testing.T) {
	var names []string
	for _, k := range kinds {
		names = append(names, k.name)
	}
	if want := spec.KindNames(); !slices.Equal(names, want) {
		t.Errorf("embedding compiles kinds %v, the spec registers %v", names, want)
	}
}
