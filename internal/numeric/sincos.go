package numeric

import "math"

// Deterministic sine and cosine.
//
// The mmd sketch evaluates D/2 sines and cosines per point, and math.Sincos is far too slow
// for that (and, being compiled Go, may fuse multiply-adds differently on other
// architectures or GOAMD64 levels, so its last bit is not portable). distfeat therefore uses
// its own kernel, written once in Go (this file) and once in amd64 assembly (AVX2+FMA and
// AVX-512): every path performs the same IEEE operations in the same order, with fused
// multiply-adds exactly where the assembly uses VFMADD (math.FMA here) and plain rounded
// operations elsewhere (explicit float64 conversions forbid implicit fusion), so all paths
// agree bit for bit on every machine.
//
// Algorithm, for an argument θ:
//
//  1. Quadrant: t = fma(θ, 2/π, 1.5·2⁵²) rounds θ·2/π to the nearest integer k, held in the
//     low mantissa bits of t (so q = bits(t) mod 4 is k mod 4); k = t − 1.5·2⁵² exactly.
//  2. Cody–Waite reduction by π/2 with a two-part constant: r = fma(−k, P1, θ) (exact for
//     the arguments we see, see below), r = fma(−k, P2, r). |r| ≤ π/4 (+ a hair for huge θ).
//  3. z = r², sin r = r + (r·z)·S(z), cos r = 1 + z·(−½ + z·C(z)) with the Cephes minimax
//     coefficients (those of Go's math.sin), Horner with FMA.
//  4. Quadrant fix-up: swap when q is odd, negate sin when q&2, negate cos when (q+1)&2.
//
// Accuracy: ≤ 2e-16 absolute on the reduced range; overall ≲ 1e-15 absolute against the
// correctly rounded sin/cos of the same float64 θ for |θ| ≤ SincosMaxArg (2⁴⁰ ≈ 1.1e12),
// verified by TestSincosAccuracy up to that bound. The mmd features only ever see
// |θ| ≤ Σ_j |ω_j| for u ∈ [0,1]^d, which is < 100 for bandwidth 0.1; a family whose
// draws could exceed SincosMaxArg (an absurdly small bandwidth) is compiled to the scalar
// path that calls sincos, which falls back to math.Sincos beyond the bound. Past 2⁵¹·π/2 the
// quadrant rounding of step 1 breaks down, so the polynomial path must never see such θ.
const SincosMaxArg = 1 << 40

// Constants of the kernel. The assembly (mmd_amd64.s) holds the same bit patterns; the
// bit-identity test fails if they ever differ.
const (
	twoOverPi = 0.636619772367581343075535053490057448 // 2/π, 0x3FE45F306DC9C883
	pio2Hi    = 1.57079632679489655800e+00             // π/2 rounded, 0x3FF921FB54442D18
	pio2Lo    = 6.12323399573676603587e-17             // π/2 − pio2Hi, 0x3C91A62633145C07

	sinC0 = 1.58962301576546568060e-10  // 0x3DE5D8FD1FD19CCD
	sinC1 = -2.50507477628578072866e-8  // 0xBE5AE5E5A9291F5D
	sinC2 = 2.75573136213857245213e-6   // 0x3EC71DE3567D48A1
	sinC3 = -1.98412698295895385996e-4  // 0xBF2A01A019BFDF03
	sinC4 = 8.33333333332211858878e-3   // 0x3F8111111110F7D0
	sinC5 = -1.66666666666666307295e-1  // 0xBFC5555555555548
	cosC0 = -1.13585365213876817300e-11 // 0xBDA8FA49A0861A9B
	cosC1 = 2.08757008419747316778e-9   // 0x3E21EE9D7B4E3F05
	cosC2 = -2.75573141792967388112e-7  // 0xBE927E4F7EAC4BC6
	cosC3 = 2.48015872888517045348e-5   // 0x3EFA01A019C844F5
	cosC4 = -1.38888888888730564116e-3  // 0xBF56C16C16C14F91
	cosC5 = 4.16666666666665929218e-2   // 0x3FA555555555554B
)

// sincosPoly is the kernel of every path: sin θ and cos θ for |θ| ≤ SincosMaxArg. It must
// stay operation-for-operation identical to the assembly in mmd_amd64.s.
func sincosPoly(theta float64) (sin, cos float64) {
	s, c, q := sincosOctant(theta)
	if q&1 != 0 {
		s, c = c, s
	}
	if q&2 != 0 {
		s = -s
	}
	if (q+1)&2 != 0 {
		c = -c
	}
	return s, c
}

// sincosOctant is the shared core of sincosPoly and SincosFlat: the Cody–Waite reduction by
// π/2 and the two polynomials on the reduced argument. It returns sin r, cos r and the
// quadrant bits q (the low bits of the rounded θ·2/π); the callers apply the quadrant.
func sincosOctant(theta float64) (s, c float64, q uint64) {
	t := math.FMA(theta, twoOverPi, fixedMagic)
	q = math.Float64bits(t)
	k := float64(t - fixedMagic)
	r := math.FMA(-k, pio2Hi, theta)
	r = math.FMA(-k, pio2Lo, r)
	z := float64(r * r)

	ps := math.FMA(sinC0, z, sinC1)
	ps = math.FMA(ps, z, sinC2)
	ps = math.FMA(ps, z, sinC3)
	ps = math.FMA(ps, z, sinC4)
	ps = math.FMA(ps, z, sinC5)

	pc := math.FMA(cosC0, z, cosC1)
	pc = math.FMA(pc, z, cosC2)
	pc = math.FMA(pc, z, cosC3)
	pc = math.FMA(pc, z, cosC4)
	pc = math.FMA(pc, z, cosC5)
	pc = math.FMA(pc, z, -0.5)
	c = math.FMA(pc, z, 1)

	rz := float64(r * z)
	s = math.FMA(ps, rz, r)
	return s, c, q
}

// sincos returns sin θ and cos θ, deterministically on every platform for |θ| ≤
// SincosMaxArg (the polynomial kernel); beyond it, math.Sincos (accurate, but its last bit
// may depend on the architecture). NaN and ±Inf give NaN.
func Sincos(theta float64) (sin, cos float64) {
	if math.Abs(theta) <= SincosMaxArg {
		return sincosPoly(theta)
	}
	return math.Sincos(theta)
}

// cosPi returns cos(π·x) through the deterministic kernel.
func CosPi(x float64) float64 {
	_, c := Sincos(float64(math.Pi * x))
	return c
}

// sincosFixed is (ToFixed(sin θ), ToFixed(cos θ)) for |θ| ≤ SincosMaxArg, bit-identical to
// ToFixed of sincosPoly: sincosOctant's operations, then the quadrant applied to the
// fixed-point integers with masks (a swap when q is odd, negations when q&2 and (q+1)&2),
// which is exact because ToFixed rounds half to even (ToFixed(−x) = −ToFixed(x)). It is the
// one-argument form of the portable mmd kernel's sums (mmdSinCosSum, mmdSinCosSum2), which
// the tests check against it and against sincosPoly.
func sincosFixed(theta float64) (sin, cos int64) {
	t := math.FMA(theta, twoOverPi, fixedMagic)
	k := float64(t - fixedMagic)
	r := math.FMA(-k, pio2Hi, theta)
	r = math.FMA(-k, pio2Lo, r)
	z := float64(r * r)
	ps := math.FMA(math.FMA(math.FMA(math.FMA(math.FMA(sinC0, z, sinC1), z, sinC2), z, sinC3), z, sinC4), z, sinC5)
	pc := math.FMA(math.FMA(math.FMA(math.FMA(math.FMA(cosC0, z, cosC1), z, cosC2), z, cosC3), z, cosC4), z, cosC5)
	c := math.FMA(math.FMA(pc, z, -0.5), z, 1)
	s := math.FMA(ps, float64(r*z), r)
	return fixedQuadrant(math.Float64bits(t), math.FMA(s, FixedScale, fixedMagic), math.FMA(c, FixedScale, fixedMagic))
}

// fixedQuadrant applies the quadrant bits q of sincosOctant to fixed-point values: fs and
// fc are fma(sin r, 2³², 1.5·2⁵²) and fma(cos r, 2³², 1.5·2⁵²) of the reduced argument
// (ToFixed before its integer subtraction). The swap and negations act on the integers,
// which is exact because ToFixed rounds half to even (ToFixed(−x) = −ToFixed(x)), and
// need no branches.
func fixedQuadrant(q uint64, fs, fc float64) (sin, cos int64) {
	a := int64(math.Float64bits(fs) - FixedMagicBits)
	b := int64(math.Float64bits(fc) - FixedMagicBits)
	sw := (a ^ b) & (int64(q<<63) >> 63)             // all ones when q is odd
	ns, nc := int64(q<<62)>>63, int64((q+1)<<62)>>63 // all ones when q&2, (q+1)&2
	return (a ^ sw ^ ns) - ns, (b ^ sw ^ nc) - nc
}

// SincosFlat is sincos with a branch-free quadrant fix-up: the same operations as
// sincosPoly, then the swap and the sign flips applied with integer masks instead of
// data-dependent branches (which mispredict about half the time on random arguments and
// cost more than the polynomial). Bit-identical to sincos for every argument
// (TestSincosFlat); beyond SincosMaxArg and for NaN or ±Inf it calls sincos.
func SincosFlat(theta float64) (sin, cos float64) {
	if !(math.Abs(theta) <= SincosMaxArg) {
		return Sincos(theta)
	}
	s, c, q := sincosOctant(theta)
	sb, cb := math.Float64bits(s), math.Float64bits(c)
	swap := (sb ^ cb) & -(q & 1) // all ones when q is odd
	sb ^= swap
	cb ^= swap
	sb ^= (q & 2) << 62       // negate sin when q&2
	cb ^= ((q + 1) & 2) << 62 // negate cos when (q+1)&2
	return math.Float64frombits(sb), math.Float64frombits(cb)
}

// CosPiFlat is cosPi through SincosFlat: bit-identical, without the quadrant branches.
func CosPiFlat(x float64) float64 {
	_, c := SincosFlat(float64(math.Pi * x))
	return c
}
