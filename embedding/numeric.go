package embedding

import "github.com/distfeat/distfeat/internal/numeric"

// MaxWindowPoints is the most points one sketch may hold: with |term| ≤ 1 the int64
// fixed-point accumulators (internal/numeric) cannot overflow below it.
const MaxWindowPoints = numeric.MaxWindowPoints

// RNG is the deterministic random source of the families' parameters (internal/numeric):
// the same seed and stream give the same draws on every architecture.
type RNG = numeric.RNG

// NewRNG returns the RNG of a seed and a named stream (see numeric.NewRNG).
func NewRNG(seed uint64, stream string) *RNG { return numeric.NewRNG(seed, stream) }
