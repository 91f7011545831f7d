// Package spec is the feature spec document: its model (Spec, Family, Bounds), the field
// table every parse, default, check, canonical JSON and field reference reads (fields.go,
// validate.go, json.go, doc.go), spec_id, and the registry of kinds (kinds.go, one
// kind_<name>.go per kind: the fields it takes, its defaults, its random Fourier stage and
// its checks). It knows nothing of how a family computes features: package embedding
// compiles each kind by name (docs/adding-a-kind.md).
package spec
