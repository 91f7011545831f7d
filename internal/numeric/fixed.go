package numeric

import "math"

// Sketch accumulators are fixed-point int64 sums, not float64 sums. Each term t (|t| ≤ 1
// after family-specific scaling) is rounded to a multiple of 2⁻³² with one exact operation,
// then added as an integer. Integer addition is associative, so a window's features do not
// depend on how its points were split across records, panes or merged partial sketches:
// streaming = batch = merged halves, bit for bit. The rounding error per term is ≤ 2⁻³³
// (≈1.2e-10), far below float32 output precision. A window may hold up to MaxWindowPoints
// points before an accumulator could overflow.

const (
	// FixedScale is the weight of one unit of an accumulator: 2³².
	FixedScale = 0x1p32
	// fixedInv converts an accumulator back to float64.
	fixedInv = 0x1p-32
	// fixedMagic is 1.5·2⁵²: adding it to a float64 of magnitude < 2⁵¹ rounds it to an
	// integer held in the low mantissa bits (round to nearest even).
	fixedMagic = 0x1.8p52
)

// MaxWindowPoints is the most points one sketch may hold: with |term| ≤ 1 the int64
// accumulators cannot overflow below it.
const MaxWindowPoints = 1 << 31

// FixedMagicBits is the bit pattern of fixedMagic.
const FixedMagicBits = 0x4338000000000000

// ToFixed rounds t·2³² to the nearest integer with a single fused multiply-add, exactly as
// the SIMD kernels do (VFMADD then integer subtract), so both paths agree bit for bit.
func ToFixed(t float64) int64 {
	return int64(math.Float64bits(math.FMA(t, FixedScale, fixedMagic)) - FixedMagicBits)
}

// FromFixed converts an accumulator to float64.
func FromFixed(a int64) float64 { return float64(a) * fixedInv }
