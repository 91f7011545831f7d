package spec

import (
	"fmt"
	"strings"
)

// FieldReference is the spec's field reference as Markdown: one table of the document's
// fields and one of the family fields, with each field's JSON type, whether it is required
// or its default per kind (including the defaults that depend on dim), its allowed values
// and its meaning, followed by the rules that involve several fields. It is generated from
// the same table that parses and validates specs; `distfeat spec --fields` prints it and
// docs/spec.md quotes it.
func FieldReference() string {
	var b strings.Builder
	b.WriteString("| field | type | required / default | allowed values | meaning |\n|---|---|---|---|---|\n")
	for _, tf := range topFields {
		need := "default " + tf.defDoc
		if tf.required {
			need = "required"
		}
		fmt.Fprintf(&b, "| `%s` | %s | %s | %s | %s |\n", tf.name, jsonTypeName(tf.ref(&Spec{})), need, cell(tf.rule), cell(tf.doc))
	}
	b.WriteString("\nFamily fields (— : not a field of that kind, an error if given):\n\n")
	b.WriteString("| field | type |")
	for _, k := range kinds {
		fmt.Fprintf(&b, " `%s` |", k.name)
	}
	b.WriteString(" allowed values | meaning |\n|---|---|" + strings.Repeat("---|", len(kinds)) + "---|---|\n")
	for _, ff := range familyFields {
		fmt.Fprintf(&b, "| `%s` | %s |", ff.name, jsonTypeName(ff.ref(&Family{})))
		for _, k := range kinds {
			fmt.Fprintf(&b, " %s |", ff.kindCell(k.name))
		}
		fmt.Fprintf(&b, " %s | %s |\n", cell(ff.allowed()), cell(ff.doc))
	}
	b.WriteString("\n")
	for _, k := range kinds {
		if st := k.stage; st != nil && st.optional {
			fmt.Fprintf(&b, "- `%s`: the optional random Fourier stage is on when `%s` and `%s` are both set; one without the other is an error.\n",
				k.name, st.sigma, st.features)
		}
	}
	for _, k := range kinds {
		for _, rule := range k.rules {
			fmt.Fprintf(&b, "- `%s`: %s\n", k.name, rule)
		}
	}
	fmt.Fprintf(&b, "- Memory limits: every random Fourier matrix (features/2 × its input width) and the `l2` cosine index table (basis × dim) hold at most %d entries.\n",
		maxSpecStageWeights)
	fmt.Fprintf(&b, "- All the families' random Fourier matrices together hold at most %d entries (%s of float64), however many families there are.\n",
		maxSpecTotalWeights, bytesText(8*maxSpecTotalWeights))
	fmt.Fprintf(&b, "- Memory limits of `hdd`, from `grid`, `kde_bandwidth`, `basis`, `lambdas`, `mode` and `dim`, checked before anything is allocated: the KDE operator (grid × min(grid + 2, 2⌈%d·kde_bandwidth·grid⌉ + 3) weights, twice in joint 2-D, counted three times for its construction), the projection tables, one open window's counts (8 bytes × grids × (grid + 2)^axes) and one finalisation's workspace are each at most %s; the operator's construction evaluates grid × (grid + 2) ≤ %d kernel pairs. The error names the field, the memory needed and the limit.\n",
		kdeCutoff, bytesText(maxSpecBufferBytes), maxSpecKDEPairs)
	b.WriteString("- Family names are unique and differ from every `hdd` family's `<name>_coef` column and every `two_sample` family's `<name>_seq` column.\n")
	return b.String()
}

// cell escapes the Markdown table separator in s.
func cell(s string) string { return strings.ReplaceAll(s, "|", `\|`) }

// kindCell is the field's role in kind, for the reference.
func (ff *familyField) kindCell(kind string) string {
	u, ok := ff.use(kind)
	if !ok {
		return "—"
	}
	switch u.role {
	case roleRequired:
		return "required"
	case roleStage:
		st := stageOf(kind)
		other := st.sigma
		if other == ff.name {
			other = st.features
		}
		return fmt.Sprintf("optional, with `%s`", other)
	}
	cell := "default " + u.def.String()
	if u.withStage {
		cell += " (only with the stage)"
	}
	return cell
}

// allowed is the field's allowed values, for the reference.
func (ff *familyField) allowed() string {
	switch {
	case ff.values != nil:
		return "`" + strings.Join(ff.values, "`, `") + "`"
	case ff.check.doc != "":
		return ff.check.doc
	}
	if _, ok := ff.ref(&Family{}).(*bool); ok {
		return "`true`, `false`"
	}
	return "any"
}
