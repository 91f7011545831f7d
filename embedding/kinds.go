package embedding

import (
	"fmt"

	"github.com/distfeat/distfeat/spec"
)

// The registry of families. The spec package knows each kind's fields, defaults and
// validation (spec/kind_*.go); this package knows how a validated family of that kind
// becomes a compiled family: its columns (names and output widths), its sketch (how points
// are added and merged) and its finalisation (family.finalizeBatch, sketch.finalize).
// kinds lists one compile function per kind of the spec, built once and never changed;
// TestKindRegistriesAgree checks that both registries name the same kinds. Adding a kind is
// described in docs/adding-a-kind.md.

// kind is how one kind of the spec is compiled.
type kind struct {
	name string
	// compile builds family idx of a validated spec; it may trust validation.
	compile func(s *spec.Spec, idx int) (family, error)
}

// kinds is the registry, one entry per spec kind (spec.KindNames).
var kinds = [...]kind{
	{name: spec.KindMMD, compile: func(s *spec.Spec, idx int) (family, error) { return compileMMD(s, idx) }},
	{name: spec.KindL2, compile: func(s *spec.Spec, idx int) (family, error) { return compileL2(s, idx) }},
	{name: spec.KindHDD, compile: compileHDD},
	{name: spec.KindMarginal, compile: compileMarginal},
	{name: spec.KindTwoSample, compile: compileTwoSample},
}

// compileFamily compiles the idx-th family of a validated spec through the registry.
func compileFamily(s *spec.Spec, idx int) (family, error) {
	name := s.Families[idx].Kind
	for _, k := range kinds {
		if k.name == name {
			return k.compile(s, idx)
		}
	}
	// Unreachable while the registries agree (TestKindRegistriesAgree): validation admits
	// only the spec's kinds.
	return nil, &spec.SpecError{Field: fmt.Sprintf("families[%d].kind", idx), Msg: fmt.Sprintf("no family compiles kind %q", name)}
}
