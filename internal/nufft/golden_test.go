package nufft

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"os"
	"testing"

	"github.com/distfeat/distfeat/internal/numeric"
)

var updateSums = flag.Bool("update", false, "rewrite testdata/sums.json from the current code")

const sumsPath = "testdata/sums.json"

// goldenSums computes, for d = 1, 2, 3 and a few bandwidths, the float64 sums of fixed
// points at fixed frequencies (both from distfeat's frozen RNG) with the portable sine and
// cosine, and returns the SHA-256 of their bits per case. Float64 bits, not the float32
// features: a changed rounding anywhere in the plan, the spreading or the transform shows.
func goldenSums(t *testing.T) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, d := range []int{1, 2, 3} {
		for _, bw := range []float64{0.05, 0.3} {
			rng := numeric.NewRNG(uint64(d), fmt.Sprintf("nufft-golden/%v", bw))
			freqs := make([]float64, 96*d)
			rng.NormalFill(freqs)
			for i := range freqs {
				freqs[i] /= bw
			}
			p, err := NewPlan(freqs, d, Options{Sincos: numeric.Sincos})
			if err != nil {
				t.Fatal(err)
			}
			pts := make([]float64, 1500*d)
			for i := range pts {
				pts[i] = rng.Float64()
			}
			pts[0], pts[len(pts)-1] = 0, 1 // the grid's edges
			grid := make([]int64, p.GridLen())
			p.Spread(grid, pts)
			h := sha256.New()
			var b [8]byte
			for _, v := range grid {
				binary.LittleEndian.PutUint64(b[:], uint64(v))
				h.Write(b[:])
			}
			for _, v := range sums(p, grid) {
				binary.LittleEndian.PutUint64(b[:], math.Float64bits(v))
				h.Write(b[:])
			}
			out[fmt.Sprintf("d=%d/bandwidth=%v", d, bw)] = hex.EncodeToString(h.Sum(nil))
		}
	}
	return out
}

// TestNUFFTSumsBitIdentical pins the grids and float64 sums of goldenSums: the same bits on
// every architecture and build (make test-arch runs it with purego, GOAMD64=v3 and on arm64),
// whichever kernels (assembly or Go) produced them.
func TestNUFFTSumsBitIdentical(t *testing.T) {
	got := goldenSums(t)
	if *updateSums {
		b, err := json.MarshalIndent(got, "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(sumsPath, append(b, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("wrote %s", sumsPath)
		return
	}
	b, err := os.ReadFile(sumsPath)
	if err != nil {
		t.Fatalf("%v (create it with: go test ./internal/nufft -run NUFFTSums -update)", err)
	}
	var want map[string]string
	if err := json.Unmarshal(b, &want); err != nil {
		t.Fatalf("%s: %v", sumsPath, err)
	}
	if len(want) != len(got) {
		t.Errorf("%s holds %d cases, the test computes %d", sumsPath, len(want), len(got))
	}
	for k, w := range want {
		if got[k] != w {
			t.Errorf("%s: sha256 %s, pinned %s: the nufft sums changed bits (mmd nufft features of "+
				"every user would change; regenerate only for an intended change: -update)", k, got[k], w)
		}
	}
}
