package embedding

import (
	"fmt"
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
