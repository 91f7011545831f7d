package embedding

import (
	"fmt"
	"math"
	"slices"
	"testing"

	"github.com/distfeat/distfeat/internal/numeric"
	"github.com/distfeat/distfeat/twosample"
)

// countingKernel counts the rows twoSampleKernel sums, to show the bulk path ran.
type countingKernel struct {
	*twoSampleKernel
	rows int
}

func (k *countingKernel) AddFixed(theta []float64, acc []int64) {
	k.rows++
	k.twoSampleKernel.AddFixed(theta, acc)
}

// TestTwoSampleKernelBitIdentical: windows whose random Fourier sums go through the mmd
// kernel (twoSampleKernel, on every path this machine has: portable, AVX2, AVX-512) hold
// exactly the integers of the scalar path with numeric.Sincos — the configuration of the
// published two_sample specs — for d = 1, 2, 3, 5, bandwidths from 1e-11 (arguments up to
// ~1e12, near numeric.SincosMaxArg, where the map may fall back to the scalar path) and
// 1e-13 (beyond it: the scalar path with math.Sincos) to 1e3, random points and points on the cube's faces, added whole, one by one and in chunks
// merged into one window.
func TestTwoSampleKernelBitIdentical(t *testing.T) {
	paths := []numeric.MMDPath{numeric.MMDPathPortable, numeric.MMDPathAVX2, numeric.MMDPathAVX512}
	rng := NewRNG(9, "two-sample-kernel")
	// bulk: 1 when the bound Σ|ω_j| is surely below SincosMaxArg (the kernel must take every
	// point), 0 when surely above (the map must keep the scalar path), −1 when it depends
	// on the draws.
	bandwidths := []struct {
		bw   []float64
		bulk int
	}{
		{[]float64{1e-13}, 0},
		{[]float64{1e-11}, -1},
		{[]float64{1e-9, 1e-6}, 1},
		{twosample.DyadicBandwidths(0.3, 5), 1},
		{[]float64{7, 1e3}, 1},
	}
	for _, path := range paths {
		if !numeric.MMDPathSupported(path) {
			t.Logf("path %v is not supported on this machine: not compared", path)
			continue
		}
		for _, d := range []int{1, 2, 3, 5} {
			for _, bc := range bandwidths {
				t.Run(fmt.Sprintf("%v/d=%d/bands=%v", path, d, bc.bw), func(t *testing.T) {
					center := make([]float64, d)
					for j := range center {
						center[j] = rng.Float64()
					}
					seed := rng.Uint64()
					const freqs = 20
					scalar, err := twosample.NewFeatureMap(center, bc.bw, freqs, NewRNG(seed, "w"), numeric.Sincos)
					if err != nil {
						t.Fatal(err)
					}
					k := &countingKernel{twoSampleKernel: newTwoSampleKernel(path)}
					bulk, err := twosample.NewFeatureMap(center, bc.bw, freqs, NewRNG(seed, "w"), numeric.SincosFlat,
						twosample.WithFixedSincos(k))
					if err != nil {
						t.Fatal(err)
					}
					u := uniformPoints(rng, 400, d)
					for _, v := range []float64{0, 1, math.Copysign(0, -1), 5e-324, 1 - 0x1p-53, 0x1p-30} {
						for j := range d {
							u = append(u, []float64{v, 1 - v}[j%2])
						}
					}
					n := len(u) / d
					ref := scalar.NewWindow()
					ref.Add(u)
					want := ref.Sums()

					whole := bulk.NewWindow()
					whole.Add(u)
					single, merged := bulk.NewWindow(), bulk.NewWindow()
					for i := range n {
						single.Add(u[i*d : (i+1)*d])
					}
					for _, cut := range [][2]int{{0, 7}, {7, 250}, {250, n}} {
						part := bulk.NewWindow()
						part.Add(u[cut[0]*d : cut[1]*d])
						if err := merged.Merge(part); err != nil {
							t.Fatal(err)
						}
					}
					for name, w := range map[string]*twosample.Window{"whole": whole, "point by point": single, "merged chunks": merged} {
						if got := w.Sums(); !slices.Equal(got, want) {
							for i := range want {
								if got[i] != want[i] {
									t.Fatalf("%s: sum %d is %d, the scalar path's %d", name, i, got[i], want[i])
								}
							}
						}
					}
					if want := map[int]int{1: 3 * n, 0: 0}; bc.bulk >= 0 && k.rows != want[bc.bulk] {
						t.Errorf("the kernel summed %d rows for 3×%d points, want %d", k.rows, n, want[bc.bulk])
					}
				})
			}
		}
	}
}
