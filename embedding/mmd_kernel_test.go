package embedding

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
	paths := []mmdPath{mmdPathPortable, mmdPathAVX2, mmdPathAVX512}
	for _, p := range paths[1:] {
		if !mmdPathSupported(p) {
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
				if !mmdPathSupported(p) {
					continue
				}
				acc := make([]int64, 2*tc.hp)
				for i := range acc { // a non-zero starting state must be added to, not overwritten
					acc[i] = int64(i) * 12345
				}
				mmdAccumulate(p, omega, u, tc.d, tc.hp, acc)
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
			// The portable kernel must also agree with the per-term definition (toFixed of
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
					ref[r] += toFixed(s)
					ref[tc.hp+r] += toFixed(c)
				}
			}
			if !slices.Equal(ref, want) {
				t.Fatalf("portable kernel differs from the per-term definition")
			}
		})
	}
}

// TestSincosFixedMatchesPoly checks the portable kernel's building blocks against their
// definition, toFixed of sincosPoly, on 4 million random arguments over every scale up to
// sincosMaxArg plus quadrant boundaries, signed zeros and arguments next to multiples of π/4
// (where the quadrant rounding and the integer-domain swap and negations matter), one
// argument at a time (sincosFixed) and summed two at a time (mmdSinCosSum, odd and even
// lengths). make test-arch runs it under qemu for arm64 too.
func TestSincosFixedMatchesPoly(t *testing.T) {
	rng := NewRNG(12, "sincos-fixed")
	var th []float64
	for _, scale := range []float64{1e-300, 1e-8, 1, math.Pi / 4, 10, 100, 1e4, 1e8, 1e12, sincosMaxArg} {
		for i := 0; i < 400000; i++ {
			th = append(th, (2*rng.Float64()-1)*scale)
		}
	}
	for k := -1000; k <= 1000; k++ {
		x := float64(k) * (math.Pi / 4)
		th = append(th, x, math.Nextafter(x, math.Inf(1)), math.Nextafter(x, math.Inf(-1)))
	}
	th = append(th, 0, math.Copysign(0, -1), sincosMaxArg, -sincosMaxArg)
	var wantS, wantC int64
	for i, x := range th {
		s, c := sincosPoly(x)
		fs, fc := toFixed(s), toFixed(c)
		if gs, gc := sincosFixed(x); gs != fs || gc != fc {
			t.Fatalf("sincosFixed(%v) = (%d, %d), toFixed of sincosPoly = (%d, %d)", x, gs, gc, fs, fc)
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
