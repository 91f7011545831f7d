package numeric

import (
	"fmt"
	"math"
	"slices"
	"testing"
)

// TestMMDKernelPathsBitIdentical forces every kernel path on the same random inputs and
// requires identical accumulators, bit for bit: the portable Go code is the specification of
// the assembly. Inputs cover d = 1..17 (the dot loop), several block counts, chunk
// boundaries, large arguments (bandwidth 1e-3 → |θ| up to ~1e4) and points outside [0,1].
func TestMMDKernelPathsBitIdentical(t *testing.T) {
	paths := []MMDPath{MMDPathPortable, MMDPathAVX2, MMDPathAVX512}
	for _, p := range paths[1:] {
		if !MMDPathSupported(p) {
			t.Logf("path %v is not supported on this machine; compared paths exclude it", p)
		}
	}
	rng := NewRNG(3, "kernel-bits")
	cases := []struct {
		d, hp, n      int
		scale, spread float64
	}{
		{1, 8, 1, 10, 1},
		{2, 512, 3000, 10, 1},
		{2, 16, 257, 1000, 1},
		{3, 24, 100, 1e4, 1},
		{5, 8, 33, 10, 3},
		{16, 64, 300, 10, 1},
		{17, 40, 50, 100, 1},
		{1, 16, 5001, 10, 1}, // several chunks of the largest size (mmdThetaMax)
		{40, 16, 77, 10, 1},  // d above the d = 1, 2 special cases, odd n
		{70, 8, 33, 10, 1},   // d above mmdColMax: the strided path
	}
	for _, tc := range cases {
		t.Run(fmt.Sprintf("d=%d,hp=%d,n=%d,scale=%g", tc.d, tc.hp, tc.n, tc.scale), func(t *testing.T) {
			omega := make([]float64, tc.d*tc.hp)
			for i := range omega {
				omega[i] = rng.Normal() * tc.scale
			}
			u := make([]float64, tc.n*tc.d)
			for i := range u {
				u[i] = (rng.Float64()*2 - 0.5) * tc.spread
			}
			var want []int64
			for _, p := range paths {
				if !MMDPathSupported(p) {
					continue
				}
				acc := make([]int64, 2*tc.hp)
				for i := range acc { // a non-zero starting state must be added to, not overwritten
					acc[i] = int64(i) * 12345
				}
				MMDAccumulate(p, omega, u, tc.d, tc.hp, acc)
				if want == nil {
					want = acc
					continue
				}
				if !slices.Equal(acc, want) {
					for i := range acc {
						if acc[i] != want[i] {
							t.Fatalf("path %v differs from portable at accumulator %d: %d vs %d", p, i, acc[i], want[i])
						}
					}
				}
			}
			// The portable kernel must also agree with the per-term definition (ToFixed of
			// sincosPoly), which checks the magic-sum shortcut.
			ref := make([]int64, 2*tc.hp)
			for i := range ref {
				ref[i] = int64(i) * 12345
			}
			for r := 0; r < tc.hp; r++ {
				for i := 0; i < tc.n; i++ {
					theta := float64(omega[r] * u[i*tc.d])
					for j := 1; j < tc.d; j++ {
						theta = fmaF(omega[j*tc.hp+r], u[i*tc.d+j], theta)
					}
					s, c := sincosPoly(theta)
					ref[r] += ToFixed(s)
					ref[tc.hp+r] += ToFixed(c)
				}
			}
			if !slices.Equal(ref, want) {
				t.Fatalf("portable kernel differs from the per-term definition")
			}
		})
	}
}

// TestSincosFixedMatchesPoly checks the portable kernel's building blocks against their
// definition, ToFixed of sincosPoly, on 4 million random arguments over every scale up to
// SincosMaxArg plus quadrant boundaries, signed zeros and arguments next to multiples of π/4
// (where the quadrant rounding and the integer-domain swap and negations matter), one
// argument at a time (sincosFixed) and summed two at a time (mmdSinCosSum, odd and even
// lengths). make test-arch runs it under qemu for arm64 too.
func TestSincosFixedMatchesPoly(t *testing.T) {
	th := sincosTestArgs(NewRNG(12, "Sincos-fixed"), 400000, 1000)
	var wantS, wantC int64
	for i, x := range th {
		s, c := sincosPoly(x)
		fs, fc := ToFixed(s), ToFixed(c)
		if gs, gc := sincosFixed(x); gs != fs || gc != fc {
			t.Fatalf("sincosFixed(%v) = (%d, %d), ToFixed of sincosPoly = (%d, %d)", x, gs, gc, fs, fc)
		}
		wantS += fs
		wantC += fc
		if i == len(th)-2 { // an odd length too
			if gs, gc := mmdSinCosSum(th[:len(th)-1]); gs != wantS || gc != wantC {
				t.Fatalf("mmdSinCosSum over %d arguments = (%d, %d), want (%d, %d)", len(th)-1, gs, gc, wantS, wantC)
			}
		}
	}
	if gs, gc := mmdSinCosSum(th); gs != wantS || gc != wantC {
		t.Fatalf("mmdSinCosSum over %d arguments = (%d, %d), want (%d, %d)", len(th), gs, gc, wantS, wantC)
	}
}

// mmdAccumulateRef is the per-term definition of the kernel: acc[r] += ToFixed(sin θ) and
// acc[hp+r] += ToFixed(cos θ) with θ = ω_r·u_i (the product, then one FMA per coordinate)
// and sin, cos from sincosPoly, one (point, frequency) pair at a time.
func mmdAccumulateRef(omega, u []float64, n, d, hp int, acc []int64) {
	for r := 0; r < hp; r++ {
		for i := 0; i < n; i++ {
			theta := float64(omega[r] * u[i*d])
			for j := 1; j < d; j++ {
				theta = fmaF(omega[j*hp+r], u[i*d+j], theta)
			}
			s, c := sincosPoly(theta)
			acc[r] += ToFixed(s)
			acc[hp+r] += ToFixed(c)
		}
	}
}

// TestMMDPortableEdgeCountsBitIdentical checks the portable kernel against the per-term definition on
// the bookkeeping edges of its loops: point counts below, at and around the lane counts of
// mmdSinCosSum (2), mmdSinCosSum2 (3, d = 2) and mmdThetas (4 points per iteration), around
// the d = 2 chunk size (1024 points) and mmdThetaMax, and every kind of d (1, 2, the
// gathered column up to mmdColMax, the strided one above). Inputs include points at the
// origin (θ = ±0, the same argument as the padding and the zero pipeline state, which the
// kernel must count as real) and a non-zero starting accumulator.
func TestMMDPortableEdgeCountsBitIdentical(t *testing.T) {
	rng := NewRNG(21, "portable-edges")
	counts := []int{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13}
	for _, tc := range []struct {
		d      int
		counts []int
	}{
		{1, append(counts, 2047, 2048, 2049)},
		{2, append(counts, 1023, 1024, 1025, 3071)},
		{3, append(counts, 99)},
		{4, counts},
		{16, append(counts, 1023, 1024, 1025)},
		{mmdColMax, counts},
		{mmdColMax + 1, counts},
	} {
		for _, n := range tc.counts {
			for _, zeros := range []string{"none", "some", "all"} {
				hp := MMDLanes
				omega := make([]float64, tc.d*hp)
				for i := range omega {
					omega[i] = rng.Normal() * 30
				}
				u := make([]float64, n*tc.d)
				for i := range u {
					u[i] = rng.Float64()*2 - 0.5
				}
				switch zeros {
				case "some": // every third point at the origin, one of them as −0
					for i := 0; i < n; i += 3 {
						clear(u[i*tc.d : (i+1)*tc.d])
					}
					u[0] = math.Copysign(0, -1)
				case "all":
					clear(u)
				}
				got, want := make([]int64, 2*hp), make([]int64, 2*hp)
				for i := range got {
					got[i], want[i] = int64(i)*-7777, int64(i)*-7777
				}
				MMDAccumulate(MMDPathPortable, omega, u, tc.d, hp, got)
				mmdAccumulateRef(omega, u, n, tc.d, hp, want)
				if !slices.Equal(got, want) {
					t.Fatalf("d=%d n=%d zeros=%s: portable kernel differs from the per-term definition\ngot  %v\nwant %v", tc.d, n, zeros, got, want)
				}
			}
		}
	}
}

// sincosTestArgs is the argument set of the sincos kernel tests: perScale random arguments
// at each scale from 1e-300 up to SincosMaxArg, the multiples k·π/4 for |k| ≤ kmax and their
// neighbours (where the quadrant rounding matters), signed zeros and ±SincosMaxArg.
func sincosTestArgs(rng *RNG, perScale, kmax int) []float64 {
	var th []float64
	for _, scale := range []float64{1e-300, 1e-8, 1, math.Pi / 4, 10, 100, 1e4, 1e8, 1e12, SincosMaxArg} {
		for i := 0; i < perScale; i++ {
			th = append(th, (2*rng.Float64()-1)*scale)
		}
	}
	for k := -kmax; k <= kmax; k++ {
		x := float64(k) * (math.Pi / 4)
		th = append(th, x, math.Nextafter(x, math.Inf(1)), math.Nextafter(x, math.Inf(-1)))
	}
	return append(th, 0, math.Copysign(0, -1), SincosMaxArg, -SincosMaxArg)
}

// TestSincosSum2MatchesPoly checks mmdSinCosSum2 (the fused d = 2 sum) against ToFixed of
// sincosPoly per point over the argument range of TestSincosFixedMatchesPoly: with ω =
// (1, 0) the argument is the first coordinate itself, so every scale up to SincosMaxArg,
// the multiples of π/4 and their neighbours, and signed zeros reach the kernel; random ω
// and points cover the fused product. Every length modulo the lane count is used.
func TestSincosSum2MatchesPoly(t *testing.T) {
	rng := NewRNG(13, "Sincos-sum2")
	args := sincosTestArgs(rng, 20000, 200)
	u := make([]float64, 2*len(args))
	for i, x := range args {
		u[2*i], u[2*i+1] = x, rng.Float64()
	}
	cases := []struct {
		name   string
		w0, w1 float64
	}{{"ω=(1,0)", 1, 0}, {"random ω", rng.Normal() * 10, rng.Normal() * 10}}
	for _, tc := range cases {
		for _, n := range []int{len(args), len(args) - 1, len(args) - 2} {
			var wantS, wantC int64
			for i := 0; i < n; i++ {
				s, c := sincosPoly(fmaF(tc.w1, u[2*i+1], float64(tc.w0*u[2*i])))
				wantS += ToFixed(s)
				wantC += ToFixed(c)
			}
			if gs, gc := mmdSinCosSum2(u[:2*n], tc.w0, tc.w1); gs != wantS || gc != wantC {
				t.Fatalf("%s, %d points: mmdSinCosSum2 = (%d, %d), want (%d, %d)", tc.name, n, gs, gc, wantS, wantC)
			}
		}
	}
}
