package nufft

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// testSincos is the plan's sin/cos in these tests: the library's (the package's results are
// deterministic given its sincos; embedding passes its portable one).
func testSincos(x float64) (float64, float64) { return math.Sincos(x) }

// testFreqs draws F frequencies ω ~ N(0, bw⁻² I_d), as the mmd family does.
func testFreqs(rng *rand.Rand, f, d int, bw float64) []float64 {
	out := make([]float64, f*d)
	for i := range out {
		out[i] = rng.NormFloat64() / bw
	}
	return out
}

// testPoints draws n points in [0, 1]^d: half uniform, half a tight cluster, plus the cube's
// corners (the grid's edges).
func testPoints(rng *rand.Rand, n, d int) []float64 {
	out := make([]float64, 0, n*d)
	for i := 0; i < n; i++ {
		for j := 0; j < d; j++ {
			var u float64
			switch {
			case i < 1<<d:
				u = float64(i >> j & 1)
			case i%2 == 0:
				u = rng.Float64()
			default:
				u = min(1, max(0, 0.3+0.02*rng.NormFloat64()))
			}
			out = append(out, u)
		}
	}
	return out
}

// direct is the closed-form sum Σ_k e^{iω_r·u_k}, accumulated in float64 (its own error,
// ~n·1e-16, is far below the tolerance checked).
func direct(freqs, pts []float64, d int) (re, im []float64) {
	f := len(freqs) / d
	re, im = make([]float64, f), make([]float64, f)
	for r := 0; r < f; r++ {
		for k := 0; k+d <= len(pts); k += d {
			th := 0.0
			for j := 0; j < d; j++ {
				th += freqs[r*d+j] * pts[k+j]
			}
			s, c := math.Sincos(th)
			re[r] += c
			im[r] += s
		}
	}
	return re, im
}

// maxErr is max_r |S_r − direct_r| / n: the error of the mean embedding, on the scale of
// its features (each |term| = 1).
func maxErr(p *Plan, freqs, pts []float64) float64 {
	d := p.Dim()
	grid := make([]int64, p.GridLen())
	p.Spread(grid, pts)
	re, im := make([]float64, p.Frequencies()), make([]float64, p.Frequencies())
	p.Finalize(grid, re, im, p.NewWork())
	wr, wi := direct(freqs, pts, d)
	n := float64(len(pts) / d)
	e := 0.0
	for r := range re {
		e = max(e, math.Hypot(re[r]-wr[r], im[r]-wi[r])/n)
	}
	return e
}

func TestAccuracyScan(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, d := range []int{1, 2, 3} {
		for _, bw := range []float64{0.03, 0.1, 0.5, 3} {
			freqs := testFreqs(rng, 512, d, bw)
			pts := testPoints(rng, 300, d)
			for _, w := range Widths() {
				p, err := NewPlan(freqs, d, Options{Width: w, Sincos: testSincos})
				if err != nil {
					t.Fatal(err)
				}
				fmt.Printf("d=%d bw=%v w=%d grid=%v M=%v err=%.3g\n", d, bw, w, p.GridShape(), p.mcount[:d], maxErr(p, freqs, pts))
			}
		}
	}
}
