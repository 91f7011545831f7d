package embedding

// Column is one output vector: a family's features, or an hdd family's `<name>_coef`.
type Column struct {
	Name   string // column name in the output schema
	Family string // the family that produces it
	Len    int    // vector length
}
