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
	mmdPathPortable mmdPath = iota // pure Go, sincosPoly per (point, frequency)
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

// mmdAccumulateGo is the portable kernel: the exact operation sequence of the SIMD paths.
func mmdAccumulateGo(omega, u []float64, n, d, hp int, acc []int64) {
	bias := fixedMagicSum(n)
	for r := 0; r < hp; r++ {
		var sAcc, cAcc int64
		for i := 0; i < n; i++ {
			x := u[i*d : i*d+d]
			theta := float64(omega[r] * x[0])
			for j := 1; j < d; j++ {
				theta = math.FMA(omega[j*hp+r], x[j], theta)
			}
			s, c := sincosPoly(theta)
			sAcc += int64(math.Float64bits(math.FMA(s, fixedScale, fixedMagic)))
			cAcc += int64(math.Float64bits(math.FMA(c, fixedScale, fixedMagic)))
		}
		acc[r] += sAcc - bias
		acc[hp+r] += cAcc - bias
	}
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
