package spec

import (
	"fmt"
	"math"
	"slices"
)

// topField is one row of the document-level field table.
type topField struct {
	name, doc  string
	ref        func(*Spec) any // *int, *uint64, *string, *Bounds or *[]Family
	required   bool
	setDefault func(*Spec) // fills the default in when the field is absent (nil: none)
	defDoc     string      // the default, for the field reference
	rule       string      // the allowed values, for the field reference
	check      func(*Spec) error
}

// topFields is the document-level field table, in the order of the field reference and of
// validation.
var topFields = []topField{
	{name: "version", doc: "Version of the spec format. Version 2 makes `projection` default to `orthogonal` (lower kernel error, a far cheaper random Fourier stage); version 3 also makes mmd's `method` default to `auto` (the non-uniform FFT where it is cheaper). Nothing else differs, and a version-1 or -2 spec keeps its meaning and spec_id.",
		ref:        func(s *Spec) any { return &s.Version },
		setDefault: func(s *Spec) { s.Version = 1 }, defDoc: "1", rule: "`1`, `2`, `3`", check: func(s *Spec) error {
			if s.Version < 1 || s.Version > NewestVersion {
				return &SpecError{Field: "version", Msg: fmt.Sprintf("must be 1, 2 or 3, not %d", s.Version)}
			}
			return nil
		}},
	{name: "seed", doc: "Seed of every random draw (each family draws from its own stream, its name).",
		ref: func(s *Spec) any { return &s.Seed }, setDefault: func(s *Spec) { s.Seed = defaultSeed },
		defDoc: fmt.Sprint(defaultSeed), rule: "0 … 2^64 − 1"},
	{name: "dim", doc: "Dimension of the points.", ref: func(s *Spec) any { return &s.Dim }, required: true,
		rule: fmt.Sprintf("1 … %d", maxSpecDim), check: func(s *Spec) error {
			if s.Dim < 1 {
				return &SpecError{Field: "dim", Msg: "must be ≥ 1"}
			}
			if s.Dim > maxSpecDim {
				return &SpecError{Field: "dim", Msg: fmt.Sprintf("must be ≤ %d", maxSpecDim)}
			}
			return nil
		}},
	{name: "bounds", doc: "Box of the raw points, mapped to the unit cube: u = (x − lo)/(hi − lo).",
		ref: func(s *Spec) any { return &s.Bounds }, setDefault: unitCube, defDoc: "the unit cube [0, 1]^dim",
		rule:  `{"lo": [dim numbers], "hi": [dim numbers]}, lo < hi, finite`,
		check: func(s *Spec) error { return s.Bounds.validate(s.Dim) }},
	{name: "out_of_bounds", doc: "A point outside the bounds is clamped into them (clip) or dead-letters its record (reject). Clipping is counted and reported: `distfeat embed` fails above `--max-clipped` (1% of the points by default) and the worker warns (docs/input-output.md).",
		ref: func(s *Spec) any { return &s.OutOfBounds }, setDefault: func(s *Spec) { s.OutOfBounds = "clip" },
		defDoc: `"clip"`, rule: "`clip`, `reject`", check: func(s *Spec) error {
			if s.OutOfBounds != "clip" && s.OutOfBounds != "reject" {
				return &SpecError{Field: "out_of_bounds", Msg: fmt.Sprintf("must be clip or reject, not %q", s.OutOfBounds)}
			}
			return nil
		}},
	{name: "families", doc: "The feature families, in output order (fields below).",
		ref: func(s *Spec) any { return &s.Families }, required: true, rule: "at least one"},
}

// findTopField returns the table row of the top-level JSON field name, or nil.
func findTopField(name string) *topField {
	for i := range topFields {
		if topFields[i].name == name {
			return &topFields[i]
		}
	}
	return nil
}

// unitCube sets the default bounds [0, 1]^dim (when dim is valid; else validation fails on dim).
func unitCube(s *Spec) {
	if s.Dim < 1 || s.Dim > maxSpecDim {
		return
	}
	s.Bounds = Bounds{Lo: make([]float64, s.Dim), Hi: make([]float64, s.Dim)}
	for j := range s.Bounds.Hi {
		s.Bounds.Hi[j] = 1
	}
}

// canonical is the field's value as CanonicalJSON writes it.
func (tf *topField) canonical(s *Spec) any {
	switch p := tf.ref(s).(type) {
	case *Bounds:
		return map[string]any{"lo": finites(p.Lo), "hi": finites(p.Hi)}
	case *[]Family:
		fams := make([]map[string]any, len(*p))
		for i := range *p {
			fams[i] = (*p)[i].canonical(s.Version)
		}
		return fams
	default:
		return canonicalValue(valueOf(p))
	}
}

// Validate checks a Spec built in Go, where a zero value means "absent" (there are no
// defaults there, except that an empty Projection means the version's default): the rules
// ParseSpec applies, with the same *SpecError.
func (s *Spec) Validate() error { return s.validate(nil) }

// validate checks a resolved spec. present[i] holds the fields family i set explicitly
// (from JSON); nil means "every non-zero field" (a Spec built in Go).
func (s *Spec) validate(present []map[string]bool) error {
	for _, tf := range topFields {
		if tf.check == nil {
			continue
		}
		if err := tf.check(s); err != nil {
			return err
		}
	}
	if len(s.Families) == 0 {
		return &SpecError{Field: "families", Msg: "must list at least one family"}
	}
	coefNames := map[string]int{}
	for i := range s.Families {
		if k := kindOf(s.Families[i].Kind); k != nil && k.extraColumns != nil {
			for _, c := range k.extraColumns(&s.Families[i]) {
				coefNames[c] = i
			}
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
			return &SpecError{Field: fmt.Sprintf("families[%d].name", i), Msg: fmt.Sprintf("%q clashes with an output column (<name>_coef or <name>_seq) of families[%d]", name, j)}
		}
	}
	return totalWeights(s)
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

// familyErr is a *SpecError on field name of family i.
func familyErr(i int, name, format string, args ...any) error {
	return &SpecError{Field: fmt.Sprintf("families[%d].%s", i, name), Msg: fmt.Sprintf(format, args...)}
}

// validateFamily checks family i; present holds its explicitly set fields. Order: the
// kind, the fields that apply to it, each field's value in table order, an optional RFF
// stage, the checks that involve several fields, and last the size of an always-on stage.
func (s *Spec) validateFamily(i int, present map[string]bool) error {
	f := &s.Families[i]
	if f.Kind == "" {
		return familyErr(i, "kind", "%s", kindRequired())
	}
	if msg := findFamilyField("kind").validate(f.Kind); msg != "" {
		return familyErr(i, "kind", "%s", msg)
	}
	keys := make([]string, 0, len(present))
	for k := range present {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		ff := findFamilyField(k)
		if ff == nil {
			return familyErr(i, k, "unknown field")
		}
		if _, ok := ff.use(f.Kind); !ok {
			return familyErr(i, k, "not a field of kind %q", f.Kind)
		}
	}
	for _, ff := range familyFields {
		u, ok := ff.use(f.Kind)
		// An absent option keeps its zero value, which means its default.
		if ok && u.role != roleStage && !u.withStage && (u.role != roleOption || present[ff.name]) {
			if err := checkField(i, f, &ff); err != nil {
				return err
			}
		}
	}
	st := stageOf(f.Kind)
	if st != nil && st.optional {
		if err := s.validateOptionalStage(i, st, present); err != nil {
			return err
		}
	}
	if k := kindOf(f.Kind); k.check != nil {
		if err := k.check(s, i); err != nil {
			return err
		}
	}
	if st != nil && !st.optional {
		return s.validateStageSize(i, st)
	}
	return nil
}

// checkField checks the value of one field of family i.
func checkField(i int, f *Family, ff *familyField) error {
	if msg := ff.validate(valueOf(ff.ref(f))); msg != "" {
		return familyErr(i, ff.name, "%s", msg)
	}
	return nil
}

// validateOptionalStage checks family i's optional RFF stage: on with both its fields, off
// with neither; when on, its bandwidth, its size, its frequency matrix and the fields that
// apply only with it (which are errors when it is off).
func (s *Spec) validateOptionalStage(i int, st *rffStage, present map[string]bool) error {
	f := &s.Families[i]
	if present[st.sigma] && !present[st.features] {
		return familyErr(i, st.features, "required when %s is set", st.sigma)
	}
	if present[st.features] && !present[st.sigma] {
		return familyErr(i, st.sigma, "required when %s is set", st.features)
	}
	on := present[st.sigma]
	if on {
		for _, name := range []string{st.sigma, st.features} {
			if err := checkField(i, f, findFamilyField(name)); err != nil {
				return err
			}
		}
		if err := s.validateStageSize(i, st); err != nil {
			return err
		}
	}
	for _, ff := range familyFields {
		if u, ok := ff.use(f.Kind); !ok || !u.withStage || !present[ff.name] {
			continue
		}
		if !on {
			return familyErr(i, ff.name, "applies only with %s and %s (the optional random Fourier stage)", st.sigma, st.features)
		}
		if err := checkField(i, f, &ff); err != nil {
			return err
		}
	}
	return nil
}

// validateStageSize bounds the frequency matrix of family i's RFF stage.
func (s *Spec) validateStageSize(i int, st *rffStage) error {
	f := &s.Families[i]
	out := valueOf(findFamilyField(st.features).ref(f)).(int)
	return stageSizeErr(i, st.features, out/2, st.inputs(s, f), st.limitHint)
}

// stageSizeErr is an error on field name if a rows×cols random Fourier matrix is too big.
func stageSizeErr(i int, name string, rows, cols int, hint string) error {
	if int64(rows)*int64(cols) > maxSpecStageWeights {
		return familyErr(i, name, "the random Fourier matrix would hold %d×%d weights (limit %d)%s", rows, cols, maxSpecStageWeights, hint)
	}
	return nil
}
