package twosample

import "math"

// Feature sums are fixed-point int64, as in distfeat's other sketches: each term t
// (|t| ≤ 1) is rounded to a multiple of 2⁻³² with one exact operation and added as an
// integer, so sums do not depend on the order or grouping of the points. A sum may hold
// up to MaxPoints terms without overflow.
const (
	fixedScale     = 0x1p32
	fixedInv       = 0x1p-32
	fixedMagic     = 0x1.8p52
	fixedMagicBits = 0x4338000000000000
)

// MaxPoints is the most points a Window or a reference part may hold.
const MaxPoints = 1 << 31

// toFixed rounds t·2³² to the nearest integer (ties to even) with one fused multiply-add,
// which is exactly specified (one rounding), so it is the same on every architecture.
func toFixed(t float64) int64 {
	return int64(math.Float64bits(math.FMA(t, fixedScale, fixedMagic)) - fixedMagicBits)
}

// fromFixed converts a sum back to float64 (rounded: a caller subtracting from it must not
// get a fused multiply-subtract).
func fromFixed(a int64) float64 { return float64(float64(a) * fixedInv) }
