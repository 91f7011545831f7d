package embedding

import (
	"fmt"
	"math"
)

// mmdPath selects an implementation of the mmd accumulation kernel. Every polynomial path
// (portable, AVX2, AVX-512) produces bit-identical accumulators; mmdPathExact exists only
// for families whose frequencies are too large for the polynomial kernel (see sincosMaxArg).
type mmdPath int

const (
	mmdPathPortable mmdPath = iota // pure Go (mmdAccumulateGo), sincosPoly's operations inlined
	mmdPathAVX2                    // amd64 AVX2+FMA, 4 frequencies per instruction
	mmdPathAVX512                  // amd64 AVX-512F, 8 frequencies per instruction
	mmdPathExact                   // pure Go with sincos (math.Sincos beyond sincosMaxArg)
)

func (p mmdPath) String() string {
	switch p {
	case mmdPathPortable:
		return "portable"
	case mmdPathAVX2:
		return "avx2"
	case mmdPathAVX512:
		return "avx512"
	case mmdPathExact:
		return "exact"
	}
	return fmt.Sprintf("mmdPath(%d)", int(p))
}

// mmdLanes is the padding unit of the frequency axis: the widest SIMD path's lane count.
// Padded frequencies have ω = 0 and their accumulators are never read.
const mmdLanes = 8

// mmdChunkBytes bounds the slice of points one kernel call streams over once per block of
// frequencies, so that it stays in L1 while every block re-reads it.
const mmdChunkBytes = 16 << 10

// mmdAccumulate adds Σ_i toFixed(sin ω_r·u_i) to acc[r] and Σ_i toFixed(cos ω_r·u_i) to
// acc[hp+r] for the n = len(u)/d points u_i and the frequencies r < hp, where omega holds
// ω in column layout (ω_jr at omega[j*hp+r], hp a multiple of mmdLanes). Integer sums are
// associative, so how points are chunked (or which path runs) never changes the result.
func mmdAccumulate(path mmdPath, omega, u []float64, d, hp int, acc []int64) {
	n := len(u) / d
	if n == 0 {
		return
	}
	if hp%mmdLanes != 0 || len(omega) < d*hp || len(acc) < 2*hp || len(u) != n*d {
		panic("embedding: mmdAccumulate: inconsistent dimensions")
	}
	chunk := mmdChunkBytes / (8 * d)
	if chunk < 16 {
		chunk = 16
	}
	for start := 0; start < n; start += chunk {
		m := min(chunk, n-start)
		part := u[start*d : (start+m)*d]
		switch path {
		case mmdPathAVX512, mmdPathAVX2:
			mmdAccumulateSIMD(path, omega, part, m, d, hp, acc)
		case mmdPathExact:
			mmdAccumulateExact(omega, part, m, d, hp, acc)
		default:
			mmdAccumulateGo(omega, part, m, d, hp, acc)
		}
	}
}

// fixedMagicSum is n·fixedMagicBits modulo 2⁶⁴: the kernels add the raw bit patterns of
// fma(t, 2³², 1.5·2⁵²) and subtract the magic once per accumulator and call instead of once
// per term. Two's-complement arithmetic makes both orders give the same int64.
func fixedMagicSum(n int) int64 {
	return int64(uint64(n) * fixedMagicBits)
}

// mmdThetaMax bounds the points of one mmdAccumulateGo pass: their arguments θ for one
// frequency live in a stack buffer (2048 points = 16 KiB, mmdAccumulate's largest chunk).
const mmdThetaMax = 2048

// mmdAccumulateGo is the portable kernel: the exact operation sequence of the SIMD paths
// (and of sincosPoly and toFixed per term), written for the compiler. Per frequency, one
// pass computes the arguments θ_i = ω·u_i of up to mmdThetaMax points into a stack buffer
// (mmdThetas), a second sums their fixed-point sines and cosines (mmdSinCosSum) with the
// polynomial inlined, several points per iteration and the quadrant applied without
// branches; no call per (point, frequency) pair, bounds checks outside the inner loops.
func mmdAccumulateGo(omega, u []float64, n, d, hp int, acc []int64) {
	acc = acc[:2*hp]
	var th [mmdThetaMax]float64
	for start := 0; start < n; start += mmdThetaMax {
		m := min(mmdThetaMax, n-start)
		part, t := u[start*d:(start+m)*d], th[:m]
		for r := 0; r < hp; r++ {
			mmdThetas(omega[r:], hp, part, d, t)
			s, c := mmdSinCosSum(t)
			acc[r] += s
			acc[hp+r] += c
		}
	}
}

// mmdColMax is the largest d whose frequency column mmdThetas gathers into a contiguous
// stack buffer; larger d read it strided.
const mmdColMax = 64

// mmdThetas sets th[i] = ω·u_i for the points u_i = u[i·d : (i+1)·d], where ω_j = w[j·hp]:
// the product for j = 0, then one math.FMA per further coordinate, as every path does.
func mmdThetas(w []float64, hp int, u []float64, d int, th []float64) {
	u = u[:len(th)*d]
	switch d {
	case 1:
		w0 := w[0]
		for i := range th {
			th[i] = float64(w0 * u[i])
		}
	case 2:
		w0, w1 := w[0], w[hp]
		for i := range th {
			x := u[2*i : 2*i+2 : 2*i+2]
			th[i] = math.FMA(w1, x[1], float64(w0*x[0]))
		}
	default:
		if d > mmdColMax { // read ω in place, strided: no allocation for any d
			for i := range th {
				x := u[i*d : i*d+d : i*d+d]
				t := float64(w[0] * x[0])
				for j := 1; j < d; j++ {
					t = math.FMA(w[j*hp], x[j], t)
				}
				th[i] = t
			}
			return
		}
		var buf [mmdColMax]float64 // the frequency column, contiguous
		col := buf[:d]
		for j := range col {
			col[j] = w[j*hp]
		}
		for i := range th {
			x := u[i*d : i*d+d : i*d+d]
			x = x[:len(col)]
			t := float64(col[0] * x[0])
			for j := 1; j < len(col); j++ {
				t = math.FMA(col[j], x[j], t)
			}
			th[i] = t
		}
	}
}

// mmdSinCosSum returns Σ toFixed(sin θ) and Σ toFixed(cos θ) over th: sincosFixed written
// out for two arguments per iteration (independent dependency chains), with its quadrant
// step replaced by sums per quadrant. With a = toFixed(sin r), b = toFixed(cos r) of the
// reduced argument, quadrant 0 contributes (a, b), 1 (b, −a), 2 (−a, −b), 3 (−b, a)
// (toFixed(−x) = −toFixed(x): it rounds half to even), so summing a and b per quadrant
// and combining the four sums once gives the same integers with no per-term sign logic.
// An odd last argument goes through sincosFixed itself.
func mmdSinCosSum(th []float64) (sAcc, cAcc int64) {
	var sa4, cb4 [4]int64 // Σ a and Σ b per quadrant
	i := 0
	for ; i+2 <= len(th); i += 2 {
		t := th[i : i+2 : i+2]
		ta, tb := t[0], t[1]
		qa, qb := math.FMA(ta, twoOverPi, fixedMagic), math.FMA(tb, twoOverPi, fixedMagic)
		ka, kb := float64(qa-fixedMagic), float64(qb-fixedMagic)
		ra, rb := math.FMA(ka, -pio2Hi, ta), math.FMA(kb, -pio2Hi, tb) // = fma(−k, π/2, θ) exactly
		ra, rb = math.FMA(ka, -pio2Lo, ra), math.FMA(kb, -pio2Lo, rb)
		za, zb := float64(ra*ra), float64(rb*rb)
		psa, psb := math.FMA(sinC0, za, sinC1), math.FMA(sinC0, zb, sinC1)
		pca, pcb := math.FMA(cosC0, za, cosC1), math.FMA(cosC0, zb, cosC1)
		psa, psb = math.FMA(psa, za, sinC2), math.FMA(psb, zb, sinC2)
		pca, pcb = math.FMA(pca, za, cosC2), math.FMA(pcb, zb, cosC2)
		psa, psb = math.FMA(psa, za, sinC3), math.FMA(psb, zb, sinC3)
		pca, pcb = math.FMA(pca, za, cosC3), math.FMA(pcb, zb, cosC3)
		psa, psb = math.FMA(psa, za, sinC4), math.FMA(psb, zb, sinC4)
		pca, pcb = math.FMA(pca, za, cosC4), math.FMA(pcb, zb, cosC4)
		psa, psb = math.FMA(psa, za, sinC5), math.FMA(psb, zb, sinC5)
		pca, pcb = math.FMA(pca, za, cosC5), math.FMA(pcb, zb, cosC5)
		pca, pcb = math.FMA(pca, za, -0.5), math.FMA(pcb, zb, -0.5)
		ca, cb := math.FMA(pca, za, 1), math.FMA(pcb, zb, 1)
		sa, sb := math.FMA(psa, float64(ra*za), ra), math.FMA(psb, float64(rb*zb), rb)
		sa, sb = math.FMA(sa, fixedScale, fixedMagic), math.FMA(sb, fixedScale, fixedMagic)
		ca, cb = math.FMA(ca, fixedScale, fixedMagic), math.FMA(cb, fixedScale, fixedMagic)
		na, nb := math.Float64bits(qa)&3, math.Float64bits(qb)&3
		sa4[na] += int64(math.Float64bits(sa) - fixedMagicBits)
		cb4[na] += int64(math.Float64bits(ca) - fixedMagicBits)
		sa4[nb] += int64(math.Float64bits(sb) - fixedMagicBits)
		cb4[nb] += int64(math.Float64bits(cb) - fixedMagicBits)
	}
	sAcc = sa4[0] + cb4[1] - sa4[2] - cb4[3]
	cAcc = cb4[0] - sa4[1] - cb4[2] + sa4[3]
	if i < len(th) {
		s, c := sincosFixed(th[i])
		sAcc += s
		cAcc += c
	}
	return sAcc, cAcc
}

// mmdAccumulateExact is mmdAccumulateGo with sincos instead of sincosPoly, for families whose
// arguments may leave the polynomial kernel's range.
func mmdAccumulateExact(omega, u []float64, n, d, hp int, acc []int64) {
	for r := 0; r < hp; r++ {
		var sAcc, cAcc int64
		for i := 0; i < n; i++ {
			x := u[i*d : i*d+d]
			theta := float64(omega[r] * x[0])
			for j := 1; j < d; j++ {
				theta = math.FMA(omega[j*hp+r], x[j], theta)
			}
			s, c := sincos(theta)
			sAcc += toFixed(s)
			cAcc += toFixed(c)
		}
		acc[r] += sAcc
		acc[hp+r] += cAcc
	}
}

// mmdAccumulateSincos is the straightforward reference with math.Sincos, used only by the
// comparison benchmark (it is not bit-identical to the kernel paths).
func mmdAccumulateSincos(omega, u []float64, n, d, hp int, acc []int64) {
	for i := 0; i < n; i++ {
		x := u[i*d : i*d+d]
		for r := 0; r < hp; r++ {
			theta := float64(omega[r] * x[0])
			for j := 1; j < d; j++ {
				theta = math.FMA(omega[j*hp+r], x[j], theta)
			}
			s, c := math.Sincos(theta)
			acc[r] += toFixed(s)
			acc[hp+r] += toFixed(c)
		}
	}
}
