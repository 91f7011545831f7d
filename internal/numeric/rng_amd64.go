//go:build amd64 && !purego

package numeric

import (
	"math"

	"golang.org/x/sys/cpu"
)

// boxMullerAVX2 is NormalFill's vector kernel (rng_amd64.s): for i < n, n a positive
// multiple of 4, cosOut[i] = rad·cos 2πu2[i] and sinOut[i] = rad·sin 2πu2[i] with
// rad = √(−2·logUnit(u1[i])), bit for bit as the Go code computes them.
//
//go:noescape
func boxMullerAVX2(u1, u2 *float64, n int, cosOut, sinOut *float64, k *[40]float64)

// boxMullerConsts is boxMullerAVX2's constant table (offsets K_* in rng_amd64.s).
var boxMullerConsts = func() (k [40]float64) {
	bits := math.Float64frombits
	copy(k[:], []float64{
		fixedMagic, math.Sqrt2 / 2, 1, 2, 0.5,
		6.666666666666735130e-01, 3.999999999940941908e-01, 2.857142874366239149e-01,
		2.222219843214978396e-01, 1.818357216161805012e-01, 1.531383769920937332e-01,
		1.479819860511658591e-01,
		6.93147180369123816490e-01, 1.90821492927058770002e-10,
		-2, 2 * math.Pi, 4 / math.Pi, stdPi4A, stdPi4B, stdPi4C,
		stdSin[0], stdSin[1], stdSin[2], stdSin[3], stdSin[4], stdSin[5],
		stdCos[0], stdCos[1], stdCos[2], stdCos[3], stdCos[4], stdCos[5],
		bits(1<<52 - 1), bits(1022 << 52), bits(1022), bits(1), bits(4), bits(2), bits(1 << 63),
	})
	return k
}()

// boxMullerSIMD computes the first n&^3 pairs with the vector kernel when the CPU has
// AVX2, and returns how many it did.
func boxMullerSIMD(u1, u2, c, s []float64) int {
	n := len(u1) &^ 3
	if n == 0 || !cpu.X86.HasAVX2 {
		return 0
	}
	_, _, _ = u2[n-1], c[n-1], s[n-1]
	boxMullerAVX2(&u1[0], &u2[0], n, &c[0], &s[0], &boxMullerConsts)
	return n
}
