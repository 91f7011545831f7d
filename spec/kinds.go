package spec

// The registry of kinds. A kind is what the spec knows of one kind of family: its name, the
// family fields it takes (with each one's role and default), its random Fourier stage, the
// checks that involve several of its fields, and the output columns it adds beside its
// own. kinds lists every kind once, in the order of the field reference; it is built from
// the kind_*.go files' values when the package is initialised and never changed after.
// The embedding package compiles each kind into a family, by name (embedding/kinds.go), and
// its tests check that the two lists name the same kinds. Adding a kind is a kind_<name>.go
// file here, one entry in kinds, and the family's files and one entry in embedding
// (docs/adding-a-kind.md).

// kindDef is one kind of family as the spec sees it; each kind's file sets its fields.
type kindDef struct {
	name string
	// doc is the kind in a few words ("mean embedding"), for the kind field's doc.
	doc string
	// fields are the family fields the kind takes besides name and kind, with their role
	// and default; any other field is an error in a family of this kind.
	fields []use
	// stage is the kind's random Fourier stage, or nil.
	stage *rffStage
	// check validates what involves several fields of family i of s (the tables the
	// family would allocate), after every field's own check; nil: nothing.
	check func(s *Spec, i int) error
	// extraColumns are the output columns a family f of this kind may add beside its own
	// (no other family may take their names); nil: none.
	extraColumns func(f *Family) []string
	// rules are the kind's multi-field rules, one line each, for the field reference.
	rules []string
	// weights is the size (entries) of the random Fourier matrices a family f of this kind
	// holds besides its stage's (which validation adds), for the spec's total; nil: none.
	weights func(s *Spec, f *Family) int64
}

// kinds is the registry: every kind, in the order of the field reference.
var kinds = [...]*kindDef{&mmdKind, &l2Kind, &hddKind, &marginalKind, &twoSampleKind}

// KindNames lists the registered kinds' names, in the order of the field reference.
func KindNames() []string { return kindNames() }

// Names of the built-in kinds, the values of a family's kind field.
const (
	KindMMD = "mmd"
	KindL2  = "l2"
	KindHDD = "hdd"
	// KindMarginal is the per-point marginal-transfer kind (no window columns).
	KindMarginal = "marginal_transfer"
	// KindTwoSample is the streaming two-sample test against a reference (docs/drift.md).
	KindTwoSample = "two_sample"
)

// kindOf is the registered kind called name, or nil.
func kindOf(name string) *kindDef {
	for _, k := range kinds {
		if k.name == name {
			return k
		}
	}
	return nil
}

// kindNames lists the registered kinds' names.
func kindNames() []string {
	names := make([]string, len(kinds))
	for i, k := range kinds {
		names[i] = k.name
	}
	return names
}

// kindDocs describes the kinds as "mean embedding (mmd), … or … (hdd)".
func kindDocs() string {
	docs := make([]string, len(kinds))
	for i, k := range kinds {
		docs[i] = k.doc + " (" + k.name + ")"
	}
	return orList(docs)
}

// kindRequired is the message of a family without a kind.
func kindRequired() string { return "required (" + orList(kindNames()) + ")" }

// stageOf returns kind's RFF stage, or nil.
func stageOf(kind string) *rffStage {
	if k := kindOf(kind); k != nil {
		return k.stage
	}
	return nil
}

// versionedProjection is the projection option of a kind: gaussian in version 1,
// orthogonal from version 2; withStage if it applies only with the kind's optional stage.
func versionedProjection(withStage bool) use {
	return use{field: "projection", role: roleOption, def: versioned(ProjectionGaussian, ProjectionOrthogonal), withStage: withStage}
}
