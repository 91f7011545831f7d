package schema

import (
	"math"
	"math/bits"
)

//go:generate go run pow10gen.go

// eiselLemire converts mant·10^exp10 (mant ≠ 0, exact: no digit dropped) to the correctly
// rounded float64, or reports false when it cannot decide cheaply (a result too close to a
// rounding boundary, subnormal, overflowing, or exp10 outside the table); the caller then
// falls back to strconv.ParseFloat. This is the Eisel–Lemire algorithm as in Go's strconv
// (https://nigeltao.github.io/blog/2020/eisel-lemire.html), which strconv.ParseFloat runs
// itself after its own scan of the digits: calling it on the digits numberScan already has
// saves that second scan. TestEiselLemireMatchesParseFloat checks it against ParseFloat.
func eiselLemire(mant uint64, exp10 int, neg bool) (float64, bool) {
	const (
		mantBits = 52
		bias     = -1023
	)
	if exp10 < pow10Min || exp10 > pow10Max {
		return 0, false
	}
	pow := &pow10Tab[exp10-pow10Min]
	exp2 := 1 + (exp10*108853)>>15 // 1 + ⌊exp10·log₂10⌋ for |exp10| ≤ 500
	// Normalisation.
	clz := bits.LeadingZeros64(mant)
	mant <<= uint(clz)
	retExp2 := uint64(exp2+63-bias) - uint64(clz)
	// Multiplication.
	xHi, xLo := bits.Mul64(mant, pow[0])
	// Wider approximation.
	if xHi&0x1FF == 0x1FF && xLo+mant < mant {
		yHi, yLo := bits.Mul64(mant, pow[1])
		mergedHi, mergedLo := xHi, xLo+yHi
		if mergedLo < xLo {
			mergedHi++
		}
		if mergedHi&0x1FF == 0x1FF && mergedLo+1 == 0 && yLo+mant < mant {
			return 0, false
		}
		xHi, xLo = mergedHi, mergedLo
	}
	// Shifting to 54 bits.
	msb := xHi >> 63
	retMant := xHi >> (msb + 9)
	retExp2 -= 1 ^ msb
	// Half-way ambiguity.
	if xLo == 0 && xHi&0x1FF == 0 && retMant&3 == 1 {
		return 0, false
	}
	// From 54 to 53 bits.
	retMant += retMant & 1
	retMant >>= 1
	if retMant>>53 > 0 {
		retMant >>= 1
		retExp2++
	}
	// Subnormal, Inf or NaN range: leave it to ParseFloat.
	if retExp2-1 >= 0x7FF-1 {
		return 0, false
	}
	b := retExp2<<mantBits | retMant&(1<<mantBits-1)
	if neg {
		b |= 1 << 63
	}
	return math.Float64frombits(b), true
}
