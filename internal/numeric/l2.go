package numeric

import "math"

// fixedBlockBias is L2Block·FixedMagicBits modulo 2⁶⁴: the specialised paths add the raw
// bits of fma(ψ, 2³², 1.5·2⁵²) for a block of points and subtract the magic once per block
// (as the mmd kernels do); two's-complement wrap-around gives the same int64 as ToFixed
// per term.
const (
	fixedBlockBias = L2Block * FixedMagicBits % (1 << 64)
	FixedBias4     = 4 * FixedMagicBits % (1 << 64)
)

// FixedBits is the raw bit pattern whose sum, minus FixedMagicBits per term, is Σ ToFixed(t).
func FixedBits(t float64) uint64 {
	return math.Float64bits(math.FMA(t, FixedScale, fixedMagic))
}

// l2ProductsGo is the portable L2Products: for every basis function m, the L2Block
// products ψ = T0[k0]·T1[k1] (d = 2) or (T0[k0]·T1[k1])·T2[k2] (d = 3), each rounded, their
// fixed-point bits summed, and the block's magic bias subtracted once.
func l2ProductsGo(d int, tab []float64, flat *[3][]int32, acc []int64) {
	ix0 := flat[0]
	ix1 := flat[1][:len(ix0)]
	acc = acc[:len(ix0)]
	if d == 2 {
		for m, o0 := range ix0 {
			a := (*[L2Block]float64)(tab[o0:])
			b := (*[L2Block]float64)(tab[ix1[m]:])
			sum := FixedBits(float64(a[0]*b[0])) + FixedBits(float64(a[1]*b[1])) +
				FixedBits(float64(a[2]*b[2])) + FixedBits(float64(a[3]*b[3])) +
				FixedBits(float64(a[4]*b[4])) + FixedBits(float64(a[5]*b[5])) +
				FixedBits(float64(a[6]*b[6])) + FixedBits(float64(a[7]*b[7]))
			acc[m] += int64(sum - fixedBlockBias)
		}
		return
	}
	ix2 := flat[2][:len(ix0)]
	for m, o0 := range ix0 {
		a := (*[L2Block]float64)(tab[o0:])
		b := (*[L2Block]float64)(tab[ix1[m]:])
		c := (*[L2Block]float64)(tab[ix2[m]:])
		sum := FixedBits(float64(float64(a[0]*b[0])*c[0])) + FixedBits(float64(float64(a[1]*b[1])*c[1])) +
			FixedBits(float64(float64(a[2]*b[2])*c[2])) + FixedBits(float64(float64(a[3]*b[3])*c[3])) +
			FixedBits(float64(float64(a[4]*b[4])*c[4])) + FixedBits(float64(float64(a[5]*b[5])*c[5])) +
			FixedBits(float64(float64(a[6]*b[6])*c[6])) + FixedBits(float64(float64(a[7]*b[7])*c[7]))
		acc[m] += int64(sum - fixedBlockBias)
	}
}

// L2Block is the number of points the specialised add paths evaluate together: their
// tables hold row k of every axis for L2Block points side by side, so that each basis
// function's products for a block are L2Block independent operations on adjacent values.
const L2Block = 8
