package numeric

import (
	"fmt"
	"math"
)

// MMDPath selects an implementation of the mmd accumulation kernel. Every polynomial path
// (portable, AVX2, AVX-512) produces bit-identical accumulators; MMDPathExact exists only
// for families whose frequencies are too large for the polynomial kernel (see SincosMaxArg).
type MMDPath int

const (
	MMDPathPortable MMDPath = iota // pure Go (mmdAccumulateGo), sincosPoly's operations inlined
	MMDPathAVX2                    // amd64 AVX2+FMA, 4 frequencies per instruction
	MMDPathAVX512                  // amd64 AVX-512F, 8 frequencies per instruction
	MMDPathExact                   // pure Go with sincos (math.Sincos beyond SincosMaxArg)
)

// String names the path (portable, avx2, avx512, exact).
func (p MMDPath) String() string {
	switch p {
	case MMDPathPortable:
		return "portable"
	case MMDPathAVX2:
		return "avx2"
	case MMDPathAVX512:
		return "avx512"
	case MMDPathExact:
		return "exact"
	}
	return fmt.Sprintf("MMDPath(%d)", int(p))
}

// MMDLanes is the padding unit of the frequency axis: the widest SIMD path's lane count.
// Padded frequencies have ω = 0 and their accumulators are never read.
const MMDLanes = 8

// mmdChunkBytes bounds the slice of points one kernel call streams over once per block of
// frequencies, so that it stays in L1 while every block re-reads it.
const mmdChunkBytes = 16 << 10

// MMDAccumulate adds Σ_i ToFixed(sin ω_r·u_i) to acc[r] and Σ_i ToFixed(cos ω_r·u_i) to
// acc[hp+r] for the n = len(u)/d points u_i and the frequencies r < hp, where omega holds
// ω in column layout (ω_jr at omega[j*hp+r], hp a multiple of MMDLanes). Integer sums are
// associative, so how points are chunked (or which path runs) never changes the result.
func MMDAccumulate(path MMDPath, omega, u []float64, d, hp int, acc []int64) {
	n := len(u) / d
	if n == 0 {
		return
	}
	if hp%MMDLanes != 0 || len(omega) < d*hp || len(acc) < 2*hp || len(u) != n*d {
		panic("numeric: MMDAccumulate: inconsistent dimensions")
	}
	chunk := mmdChunkBytes / (8 * d)
	if chunk < 16 {
		chunk = 16
	}
	for start := 0; start < n; start += chunk {
		m := min(chunk, n-start)
		part := u[start*d : (start+m)*d]
		switch path {
		case MMDPathAVX512, MMDPathAVX2:
			mmdAccumulateSIMD(path, omega, part, m, d, hp, acc)
		case MMDPathExact:
			mmdAccumulateExact(omega, part, m, d, hp, acc)
		default:
			mmdAccumulateGo(omega, part, m, d, hp, acc)
		}
	}
}

// mmdThetaMax bounds the points of one mmdAccumulateGo pass: their arguments θ for one
// frequency live in a stack buffer (2048 points = 16 KiB, MMDAccumulate's largest chunk).
const mmdThetaMax = 2048

// mmdAccumulateGo is the portable kernel: the exact operation sequence of the SIMD paths
// (and of sincosPoly and ToFixed per term), written for the compiler. For d = 2 one loop per
// frequency computes θ_i = ω·u_i and sums the fixed-point sines and cosines
// (mmdSinCosSum2); for other d, one pass computes the arguments of up to mmdThetaMax points
// into a stack buffer (mmdThetas) and a second sums them (mmdSinCosSum). Both sums inline
// the polynomial, keep several points in flight and apply the quadrant without branches;
// no call per (point, frequency) pair, bounds checks outside the inner loops.
func mmdAccumulateGo(omega, u []float64, n, d, hp int, acc []int64) {
	acc = acc[:2*hp]
	if d == 2 {
		u = u[:2*n]
		for r := 0; r < hp; r++ {
			s, c := mmdSinCosSum2(u, omega[r], omega[hp+r])
			acc[r] += s
			acc[hp+r] += c
		}
		return
	}
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
// Four points share each iteration of the coordinate loop (four independent chains).
func mmdThetas(w []float64, hp int, u []float64, d int, th []float64) {
	u = u[:len(th)*d]
	if d == 1 {
		w0 := w[0]
		for i := range th {
			th[i] = float64(w0 * u[i])
		}
		return
	}
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
	i := 0
	for ; i+4 <= len(th); i += 4 {
		x0 := u[i*d : i*d+4*d : i*d+4*d]
		x1, x2, x3 := x0[d:], x0[2*d:], x0[3*d:]
		x0, x1, x2, x3 = x0[:len(col)], x1[:len(col)], x2[:len(col)], x3[:len(col)]
		t0, t1 := float64(col[0]*x0[0]), float64(col[0]*x1[0])
		t2, t3 := float64(col[0]*x2[0]), float64(col[0]*x3[0])
		for j := 1; j < len(col); j++ {
			c := col[j]
			t0, t1 = math.FMA(c, x0[j], t0), math.FMA(c, x1[j], t1)
			t2, t3 = math.FMA(c, x2[j], t2), math.FMA(c, x3[j], t3)
		}
		t := th[i : i+4 : i+4]
		t[0], t[1], t[2], t[3] = t0, t1, t2, t3
	}
	for ; i < len(th); i++ {
		x := u[i*d : i*d+d : i*d+d]
		x = x[:len(col)]
		t := float64(col[0] * x[0])
		for j := 1; j < len(col); j++ {
			t = math.FMA(col[j], x[j], t)
		}
		th[i] = t
	}
}

// The two sums below are sincosFixed written out for several arguments at once, with three
// changes of bookkeeping that leave every integer unchanged:
//
//   - Quadrant sums. With a = ToFixed(sin r), b = ToFixed(cos r) of the reduced argument,
//     quadrant 0 contributes (a, b), 1 (b, −a), 2 (−a, −b), 3 (−b, a) (ToFixed(−x) =
//     −ToFixed(x): it rounds half to even). Each lane adds a to acc[q] and b to acc[4+q]
//     (its own array, so two lanes never update one slot in the same iteration), and the
//     eight sums are combined once (mmdQuadrantSums): no per-term sign logic.
//   - Software pipelining. Each iteration runs stage 1 (θ, its quadrant and the reduced
//     argument r, z = r²) for the current group of points interleaved with stage 2 (both
//     polynomials, ToFixed, the quadrant sums) for the previous group, whose inputs are
//     then ready: the processor overlaps the two dependency chains instead of waiting
//     out each argument's ~60-cycle chain. The measured gain is ~10% at d = 2.
//   - Phantom arguments instead of scalar tails. Stage 2 of the first iteration sees the
//     zero state (r = z = 0, quadrant 0), and the last, partial group is padded with zeros
//     (θ = ±0); each such phantom argument contributes exactly (ToFixed(0), ToFixed(1)) =
//     (0, 2³²) to quadrant 0, which mmdQuadrantSums subtracts. The extra iteration's
//     stage 1 (on the padding) is discarded.

// mmdSinCosSum returns Σ ToFixed(sin θ) and Σ ToFixed(cos θ) over th (any length), two
// arguments per iteration, software-pipelined (see above).
func mmdSinCosSum(th []float64) (sAcc, cAcc int64) {
	const lanes = 2
	n := len(th)
	var acc0, acc1 [8]int64    // per lane: Σ a at [q], Σ b at [4+q]
	var r0, r1, z0, z1 float64 // stage 1 → 2: the previous pair (the zero state at first)
	var n0, n1 uint64
	full := n / lanes
	var pad [lanes]float64
	copy(pad[:], th[full*lanes:])
	groups := (n + lanes - 1) / lanes
	for g := 0; g <= groups; g++ {
		t := pad[:]
		if g < full {
			t = th[g*lanes : g*lanes+lanes : g*lanes+lanes]
		}
		ps0, ps1 := math.FMA(sinC0, z0, sinC1), math.FMA(sinC0, z1, sinC1)
		pc0, pc1 := math.FMA(cosC0, z0, cosC1), math.FMA(cosC0, z1, cosC1)
		t0, t1 := t[0], t[1]
		ps0, ps1 = math.FMA(ps0, z0, sinC2), math.FMA(ps1, z1, sinC2)
		pc0, pc1 = math.FMA(pc0, z0, cosC2), math.FMA(pc1, z1, cosC2)
		q0, q1 := math.FMA(t0, twoOverPi, fixedMagic), math.FMA(t1, twoOverPi, fixedMagic)
		ps0, ps1 = math.FMA(ps0, z0, sinC3), math.FMA(ps1, z1, sinC3)
		pc0, pc1 = math.FMA(pc0, z0, cosC3), math.FMA(pc1, z1, cosC3)
		k0, k1 := float64(q0-fixedMagic), float64(q1-fixedMagic)
		ps0, ps1 = math.FMA(ps0, z0, sinC4), math.FMA(ps1, z1, sinC4)
		pc0, pc1 = math.FMA(pc0, z0, cosC4), math.FMA(pc1, z1, cosC4)
		nr0, nr1 := math.FMA(k0, -pio2Hi, t0), math.FMA(k1, -pio2Hi, t1) // = fma(−k, π/2, θ) exactly
		ps0, ps1 = math.FMA(ps0, z0, sinC5), math.FMA(ps1, z1, sinC5)
		pc0, pc1 = math.FMA(pc0, z0, cosC5), math.FMA(pc1, z1, cosC5)
		nr0, nr1 = math.FMA(k0, -pio2Lo, nr0), math.FMA(k1, -pio2Lo, nr1)
		pc0, pc1 = math.FMA(pc0, z0, -0.5), math.FMA(pc1, z1, -0.5)
		s0, s1 := math.FMA(ps0, float64(r0*z0), r0), math.FMA(ps1, float64(r1*z1), r1)
		c0, c1 := math.FMA(pc0, z0, 1), math.FMA(pc1, z1, 1)
		s0, s1 = math.FMA(s0, FixedScale, fixedMagic), math.FMA(s1, FixedScale, fixedMagic)
		c0, c1 = math.FMA(c0, FixedScale, fixedMagic), math.FMA(c1, FixedScale, fixedMagic)
		acc0[n0] += int64(math.Float64bits(s0) - FixedMagicBits)
		acc0[4+n0] += int64(math.Float64bits(c0) - FixedMagicBits)
		acc1[n1] += int64(math.Float64bits(s1) - FixedMagicBits)
		acc1[4+n1] += int64(math.Float64bits(c1) - FixedMagicBits)
		r0, r1 = nr0, nr1
		z0, z1 = float64(r0*r0), float64(r1*r1)
		n0, n1 = math.Float64bits(q0)&3, math.Float64bits(q1)&3
	}
	return mmdQuadrantSums(&acc0, &acc1, &[8]int64{}, lanes+groups*lanes-n)
}

// mmdSinCosSum2 is mmdSinCosSum for d = 2 with the argument pass fused in: it sums over the
// points u_i = (u[2i], u[2i+1]) with θ_i = fma(w1, u[2i+1], w0·u[2i]), as mmdThetas would
// compute them, three points per iteration (measured faster than two here, at every
// GOAMD64 level).
func mmdSinCosSum2(u []float64, w0, w1 float64) (sAcc, cAcc int64) {
	const lanes = 3
	n := len(u) / 2
	var acc0, acc1, acc2 [8]int64
	var r0, r1, r2, z0, z1, z2 float64
	var n0, n1, n2 uint64
	full := n / lanes
	var pad [2 * lanes]float64
	copy(pad[:], u[2*full*lanes:2*n])
	groups := (n + lanes - 1) / lanes
	for g := 0; g <= groups; g++ {
		x := pad[:]
		if g < full {
			x = u[2*lanes*g : 2*lanes*g+2*lanes : 2*lanes*g+2*lanes]
		}
		ps0, ps1, ps2 := math.FMA(sinC0, z0, sinC1), math.FMA(sinC0, z1, sinC1), math.FMA(sinC0, z2, sinC1)
		pc0, pc1, pc2 := math.FMA(cosC0, z0, cosC1), math.FMA(cosC0, z1, cosC1), math.FMA(cosC0, z2, cosC1)
		t0 := math.FMA(w1, x[1], float64(w0*x[0]))
		t1 := math.FMA(w1, x[3], float64(w0*x[2]))
		t2 := math.FMA(w1, x[5], float64(w0*x[4]))
		ps0, ps1, ps2 = math.FMA(ps0, z0, sinC2), math.FMA(ps1, z1, sinC2), math.FMA(ps2, z2, sinC2)
		pc0, pc1, pc2 = math.FMA(pc0, z0, cosC2), math.FMA(pc1, z1, cosC2), math.FMA(pc2, z2, cosC2)
		q0, q1, q2 := math.FMA(t0, twoOverPi, fixedMagic), math.FMA(t1, twoOverPi, fixedMagic), math.FMA(t2, twoOverPi, fixedMagic)
		ps0, ps1, ps2 = math.FMA(ps0, z0, sinC3), math.FMA(ps1, z1, sinC3), math.FMA(ps2, z2, sinC3)
		pc0, pc1, pc2 = math.FMA(pc0, z0, cosC3), math.FMA(pc1, z1, cosC3), math.FMA(pc2, z2, cosC3)
		k0, k1, k2 := float64(q0-fixedMagic), float64(q1-fixedMagic), float64(q2-fixedMagic)
		ps0, ps1, ps2 = math.FMA(ps0, z0, sinC4), math.FMA(ps1, z1, sinC4), math.FMA(ps2, z2, sinC4)
		pc0, pc1, pc2 = math.FMA(pc0, z0, cosC4), math.FMA(pc1, z1, cosC4), math.FMA(pc2, z2, cosC4)
		nr0, nr1, nr2 := math.FMA(k0, -pio2Hi, t0), math.FMA(k1, -pio2Hi, t1), math.FMA(k2, -pio2Hi, t2)
		ps0, ps1, ps2 = math.FMA(ps0, z0, sinC5), math.FMA(ps1, z1, sinC5), math.FMA(ps2, z2, sinC5)
		pc0, pc1, pc2 = math.FMA(pc0, z0, cosC5), math.FMA(pc1, z1, cosC5), math.FMA(pc2, z2, cosC5)
		nr0, nr1, nr2 = math.FMA(k0, -pio2Lo, nr0), math.FMA(k1, -pio2Lo, nr1), math.FMA(k2, -pio2Lo, nr2)
		pc0, pc1, pc2 = math.FMA(pc0, z0, -0.5), math.FMA(pc1, z1, -0.5), math.FMA(pc2, z2, -0.5)
		s0, s1, s2 := math.FMA(ps0, float64(r0*z0), r0), math.FMA(ps1, float64(r1*z1), r1), math.FMA(ps2, float64(r2*z2), r2)
		c0, c1, c2 := math.FMA(pc0, z0, 1), math.FMA(pc1, z1, 1), math.FMA(pc2, z2, 1)
		s0, s1, s2 = math.FMA(s0, FixedScale, fixedMagic), math.FMA(s1, FixedScale, fixedMagic), math.FMA(s2, FixedScale, fixedMagic)
		c0, c1, c2 = math.FMA(c0, FixedScale, fixedMagic), math.FMA(c1, FixedScale, fixedMagic), math.FMA(c2, FixedScale, fixedMagic)
		acc0[n0] += int64(math.Float64bits(s0) - FixedMagicBits)
		acc0[4+n0] += int64(math.Float64bits(c0) - FixedMagicBits)
		acc1[n1] += int64(math.Float64bits(s1) - FixedMagicBits)
		acc1[4+n1] += int64(math.Float64bits(c1) - FixedMagicBits)
		acc2[n2] += int64(math.Float64bits(s2) - FixedMagicBits)
		acc2[4+n2] += int64(math.Float64bits(c2) - FixedMagicBits)
		r0, r1, r2 = nr0, nr1, nr2
		z0, z1, z2 = float64(r0*r0), float64(r1*r1), float64(r2*r2)
		n0, n1, n2 = math.Float64bits(q0)&3, math.Float64bits(q1)&3, math.Float64bits(q2)&3
	}
	return mmdQuadrantSums(&acc0, &acc1, &acc2, lanes+groups*lanes-n)
}

// mmdQuadrantSums combines the per-lane quadrant sums of mmdSinCosSum and mmdSinCosSum2 (Σ a
// at [q], Σ b at [4+q]) into Σ ToFixed(sin θ) and Σ ToFixed(cos θ), less the (0, 2³²) of
// each of the phantom arguments.
func mmdQuadrantSums(l0, l1, l2 *[8]int64, phantom int) (sAcc, cAcc int64) {
	var a [8]int64
	for j := range a {
		a[j] = l0[j] + l1[j] + l2[j]
	}
	sAcc = a[0] + a[5] - a[2] - a[7]
	cAcc = a[4] - a[1] - a[6] + a[3] - int64(phantom)<<32
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
			s, c := Sincos(theta)
			sAcc += ToFixed(s)
			cAcc += ToFixed(c)
		}
		acc[r] += sAcc
		acc[hp+r] += cAcc
	}
}

// MMDAccumulateSincos is the straightforward reference with math.Sincos, used only by the
// comparison benchmark (it is not bit-identical to the kernel paths).
func MMDAccumulateSincos(omega, u []float64, n, d, hp int, acc []int64) {
	for i := 0; i < n; i++ {
		x := u[i*d : i*d+d]
		for r := 0; r < hp; r++ {
			theta := float64(omega[r] * x[0])
			for j := 1; j < d; j++ {
				theta = math.FMA(omega[j*hp+r], x[j], theta)
			}
			s, c := math.Sincos(theta)
			acc[r] += ToFixed(s)
			acc[hp+r] += ToFixed(c)
		}
	}
}

// MMDBestPath is the fastest kernel this machine supports.
func MMDBestPath() MMDPath {
	for _, p := range []MMDPath{MMDPathAVX512, MMDPathAVX2} {
		if MMDPathSupported(p) {
			return p
		}
	}
	return MMDPathPortable
}
