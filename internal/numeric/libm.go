package numeric

import (
	"math"

	"github.com/distfeat/distfeat/internal/quadrature"
)

// Portable elementary functions for the feature path.
//
// Features must be the same bits on every architecture, but Go's math library is not: Log,
// Exp and others have assembly on some architectures and not on others (math.Log is
// assembly on amd64 and s390x, pure Go elsewhere), and the pure-Go ones are compiled with
// whatever multiply-add fusion the target allows (arm64, ppc64le, s390x, riscv64, and amd64
// from GOAMD64=v3 on fuse x*y+z; amd64 v1 does not). So every transcendental function whose
// result reaches a feature is one of the functions below (or sincos/SincosFlat and
// Exp): the algorithms of Go's math package (the Cephes/FreeBSD code of Go 1.26),
// with every product that feeds a sum rounded by an explicit float64 conversion, so that no
// compiler may fuse it. That is exactly the operation sequence amd64 (GOAMD64=v1) executes
// for math.Log, math.Sincos, math.Cos and math.Tan, so features computed before these
// functions existed keep their bits there, and every other build now agrees with it.
// TestDeterministicMath compares them with the library on amd64 and with committed
// checksums everywhere; TestNoImplicitFusion checks that nothing in the package fuses.

// Log is the natural logarithm: Go's math.log (FreeBSD's e_log.c) with every
// operation separately rounded; bit-identical to math.Log on amd64 for every positive
// normal x (its assembly performs the same operations; for subnormal x it mis-scales the
// exponent, which this function does not). NaN and +Inf return x, x < 0 NaN, ±0 −Inf.
func Log(x float64) float64 {
	switch {
	case math.IsNaN(x) || math.IsInf(x, 1):
		return x
	case x < 0:
		return math.NaN()
	case x == 0:
		return math.Inf(-1)
	}
	f1, ki := math.Frexp(x) // exact
	return logFrexp(f1, ki)
}

// logFrexp is ln(f1·2^ki) for f1 in [½, 1): the reduction and polynomial of Log, shared with
// the normal draws' logUnit (rng.go).
func logFrexp(f1 float64, ki int) float64 {
	const (
		ln2Hi = 6.93147180369123816490e-01 // 0x3fe62e42fee00000
		ln2Lo = 1.90821492927058770002e-10 // 0x3dea39ef35793c76
		l1    = 6.666666666666735130e-01   // 0x3FE5555555555593
		l2    = 3.999999999940941908e-01   // 0x3FD999999997FA04
		l3    = 2.857142874366239149e-01   // 0x3FD2492494229359
		l4    = 2.222219843214978396e-01   // 0x3FCC71C51D8E78AF
		l5    = 1.818357216161805012e-01   // 0x3FC7466496CB03DE
		l6    = 1.531383769920937332e-01   // 0x3FC39A09D078C69F
		l7    = 1.479819860511658591e-01   // 0x3FC2F112DF3E5244
	)
	if f1 < math.Sqrt2/2 {
		f1 *= 2
		ki--
	}
	f := f1 - 1
	k := float64(ki)

	s := f / (2 + f)
	s2 := float64(s * s)
	s4 := float64(s2 * s2)
	t1 := float64(s2 * (l1 + float64(s4*(l3+float64(s4*(l5+float64(s4*l7)))))))
	t2 := float64(s4 * (l2 + float64(s4*(l4+float64(s4*l6)))))
	r := t1 + t2
	hfsq := float64(float64(0.5*f) * f)
	return float64(k*ln2Hi) - ((hfsq - (float64(s*(hfsq+r)) + float64(k*ln2Lo))) - f)
}

// Coefficients of Go's sin.go and tan.go (Cephes), and π/4 in three parts for the
// Cody–Waite reduction of those functions (a different reduction from sincosOctant's).
var (
	stdSin = [...]float64{
		1.58962301576546568060e-10, // 0x3de5d8fd1fd19ccd
		-2.50507477628578072866e-8, // 0xbe5ae5e5a9291f5d
		2.75573136213857245213e-6,  // 0x3ec71de3567d48a1
		-1.98412698295895385996e-4, // 0xbf2a01a019bfdf03
		8.33333333332211858878e-3,  // 0x3f8111111110f7d0
		-1.66666666666666307295e-1, // 0xbfc5555555555548
	}
	stdCos = [...]float64{
		-1.13585365213876817300e-11, // 0xbda8fa49a0861a9b
		2.08757008419747316778e-9,   // 0x3e21ee9d7b4e3f05
		-2.75573141792967388112e-7,  // 0xbe927e4f7eac4bc6
		2.48015872888517045348e-5,   // 0x3efa01a019c844f5
		-1.38888888888730564116e-3,  // 0xbf56c16c16c14f91
		4.16666666666665929218e-2,   // 0x3fa555555555554b
	}
	stdTanP = [...]float64{
		-1.30936939181383777646e4, // 0xc0c992d8d24f3f38
		1.15351664838587416140e6,  // 0x413199eca5fc9ddd
		-1.79565251976484877988e7, // 0xc1711fead3299176
	}
	stdTanQ = [...]float64{
		1.00000000000000000000e0,
		1.36812963470692954678e4,  // 0x40cab8a5eeb36572
		-1.32089234440210967447e6, // 0xc13427bc582abc96
		2.50083801823357915839e7,  // 0x4177d98fc2ead8ef
		-5.38695755929454629881e7, // 0xc189afe03cbe5a31
	}
)

const (
	stdPi4A = 7.85398125648498535156e-1  // 0x3fe921fb40000000
	stdPi4B = 3.77489470793079817668e-8  // 0x3e64442d00000000
	stdPi4C = 2.69515142907905952645e-15 // 0x3ce8469898cc5170
	// stdReduceMax is the bound of the three-part reduction (Go's reduceThreshold, 2²⁹).
	// Beyond it Go switches to Payne–Hanek reduction, which these functions do not port:
	// they fall back to the library, whose last bit may then depend on the architecture.
	// Their callers (Box–Muller's 2πu, Gauss–Legendre's initial guesses, tv's tan(πq/2))
	// stay below 2π.
	stdReduceMax = 1 << 29
)

// stdOctant is the shared argument reduction of sincosPortable and Tan for
// 0 ≤ x < stdReduceMax: the octant j (mapped to an even number) and the reduced argument z.
func stdOctant(x float64) (j uint64, z float64) {
	j = uint64(float64(x * (4 / math.Pi))) // rounded first: ppc64 may fuse it into the conversion
	y := float64(j)
	if j&1 == 1 {
		j++
		y++
	}
	z = ((x - float64(y*stdPi4A)) - float64(y*stdPi4B)) - float64(y*stdPi4C)
	return j, z
}

// sincosPortable is Go's math.Sincos with every operation separately rounded:
// bit-identical to math.Sincos (and its cosine to math.Cos) on amd64 with GOAMD64=v1 for
// |x| < 2²⁹. It is the Box–Muller sine and cosine of the frozen RNG.
func sincosPortable(x float64) (sin, cos float64) {
	switch {
	case x == 0:
		return x, 1
	case math.IsNaN(x) || math.IsInf(x, 0):
		return math.NaN(), math.NaN()
	case math.Abs(x) >= stdReduceMax:
		return math.Sincos(x)
	}
	sinSign, cosSign := false, false
	if x < 0 {
		x = -x
		sinSign = true
	}
	j, z := stdOctant(x)
	j &= 7
	if j > 3 {
		j -= 4
		sinSign, cosSign = !sinSign, !cosSign
	}
	if j > 1 {
		cosSign = !cosSign
	}
	zz := float64(z * z)
	pc := float64(stdCos[0]*zz) + stdCos[1]
	ps := float64(stdSin[0]*zz) + stdSin[1]
	for i := 2; i < len(stdCos); i++ {
		pc = float64(pc*zz) + stdCos[i]
		ps = float64(ps*zz) + stdSin[i]
	}
	cos = (1.0 - float64(0.5*zz)) + float64(float64(zz*zz)*pc)
	sin = z + float64(float64(z*zz)*ps)
	if j == 1 || j == 2 {
		sin, cos = cos, sin
	}
	if cosSign {
		cos = -cos
	}
	if sinSign {
		sin = -sin
	}
	return sin, cos
}

// cosPortable is the cosine of sincosPortable (bit-identical to math.Cos on amd64 v1).
func cosPortable(x float64) float64 {
	_, c := sincosPortable(x)
	return c
}

// Tan is Go's math.Tan with every operation separately rounded: bit-identical to
// math.Tan on amd64 with GOAMD64=v1 for |x| < 2²⁹.
func Tan(x float64) float64 {
	switch {
	case x == 0 || math.IsNaN(x):
		return x
	case math.IsInf(x, 0):
		return math.NaN()
	case math.Abs(x) >= stdReduceMax:
		return math.Tan(x)
	}
	sign := false
	if x < 0 {
		x = -x
		sign = true
	}
	j, z := stdOctant(x)
	zz := float64(z * z)
	y := z
	if zz > 1e-14 {
		p := float64(stdTanP[0]*zz) + stdTanP[1]
		p = float64(p*zz) + stdTanP[2]
		q := zz + stdTanQ[1]
		q = float64(q*zz) + stdTanQ[2]
		q = float64(q*zz) + stdTanQ[3]
		q = float64(q*zz) + stdTanQ[4]
		num, den := float64(zz*p), q
		y = z + float64(z*(num/den))
	}
	if j&2 == 2 {
		y = -1 / y
	}
	if sign {
		y = -y
	}
	return y
}

// GaussLegendre is the n-point Gauss–Legendre rule on [−1, 1] (see quadrature.GaussLegendre).
// Its initial guesses use the portable cosine, so the nodes are the same on every architecture.
func GaussLegendre(n int) (x, w []float64) { return quadrature.GaussLegendreCos(n, cosPortable) }

// Exp is eˣ computed in pure Go (the fdlibm algorithm of Go's portable math.exp).
// math.Exp on amd64 uses an assembly kernel that switches to FMA instructions when the CPU
// has them, so its last bit can differ between machines; compile-time quantities that
// enter features (KDE weights, js λ quantiles) use this function instead.
func Exp(x float64) float64 {
	const (
		ln2Hi     = 6.93147180369123816490e-01
		ln2Lo     = 1.90821492927058770002e-10
		log2e     = 1.44269504088896338700e+00
		overflow  = 7.09782712893383973096e+02
		underflow = -7.45133219101941108420e+02
		nearZero  = 1.0 / (1 << 28)

		p1 = 1.66666666666666657415e-01
		p2 = -2.77777777770155933842e-03
		p3 = 6.61375632143793436117e-05
		p4 = -1.65339022054652515390e-06
		p5 = 4.13813679705723846039e-08
	)
	switch {
	case math.IsNaN(x) || math.IsInf(x, 1):
		return x
	case math.IsInf(x, -1):
		return 0
	case x > overflow:
		return math.Inf(1)
	case x < underflow:
		return 0
	case -nearZero < x && x < nearZero:
		return 1 + x
	}
	var k int
	switch {
	case x < 0:
		k = int(float64(log2e*x) - 0.5)
	case x > 0:
		k = int(float64(log2e*x) + 0.5)
	}
	hi := x - float64(float64(k)*ln2Hi)
	lo := float64(float64(k) * ln2Lo)
	r := hi - lo
	t := float64(r * r)
	c := r - float64(t*(p1+float64(t*(p2+float64(t*(p3+float64(t*(p4+float64(t*p5)))))))))
	y := 1 - ((lo - float64(r*c)/(2-c)) - hi)
	return math.Ldexp(y, k)
}
