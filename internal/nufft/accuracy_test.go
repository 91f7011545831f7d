package nufft

import (
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

// TestAccuracy checks the documented error against the closed-form sum, as the mmd family
// uses it: max_r |S_r − Σ_k e^{iω_r·u_k}| / n, the error of a mean embedding on the scale of
// its features. Bound: the requirement 1e-6 for the default width. The two kernel
// stages each alias about 10^(1−w) (FINUFFT's rule for σ = 2; 1e-7 at w = 8) and measured
// errors stay below 4.5e-7 over these bandwidths (0.03 … 3: frequencies up to ~110 and down
// to the minimum grid) and point sets (spread, clustered, coincident, on the cube's faces).
// The coincident sets are the worst case for the error relative to n: nothing cancels.
func TestAccuracy(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, d := range []int{1, 2, 3} {
		for _, bw := range []float64{0.03, 0.1, 0.5, 3} {
			freqs := testFreqs(rng, 512, d, bw)
			p, err := NewPlan(freqs, d, Options{Sincos: testSincos})
			if err != nil {
				t.Fatal(err)
			}
			sets := map[string][]float64{
				"mixed 300":     testPoints(rng, 300, d),
				"one point":     testPoints(rng, 1, d)[:d],
				"coincident":    repeatPoint([]float64{0.7, 0.2, 0.9}[:d], 50),
				"corner (1,..)": repeatPoint([]float64{1, 1, 1}[:d], 20),
				"uniform 2000":  uniformPoints(rng, 2000, d),
			}
			for name, pts := range sets {
				if e := maxErr(p, freqs, pts); e > 1e-6 {
					t.Errorf("d=%d bandwidth %v, %s: max error %.3g of the feature scale, want ≤ 1e-6", d, bw, name, e)
				}
			}
		}
	}
}

// TestAccuracyByWidth checks the error law ε(w) ≈ 10^(1−w) for every committed width (the
// widths a caller may trade for speed): measured ratios to it are 1.4 … 5.2 (the largest at
// w = 10, near the fixed-point and float64 floor), so 8·10^(1−w) still fails if a width's
// kernel table or parameters are wrong (each width's error is ~10× the next one's).
func TestAccuracyByWidth(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for _, d := range []int{1, 2} {
		for _, bw := range []float64{0.1, 3} {
			freqs := testFreqs(rng, 256, d, bw)
			pts := testPoints(rng, 200, d)
			for _, w := range Widths() {
				p, err := NewPlan(freqs, d, Options{Width: w, Sincos: testSincos})
				if err != nil {
					t.Fatal(err)
				}
				bound := 8 * math.Pow(10, float64(1-w))
				if e := maxErr(p, freqs, pts); e > bound {
					t.Errorf("d=%d bandwidth %v width %d: max error %.3g, want ≤ %.1g", d, bw, w, e, bound)
				}
			}
		}
	}
}

func repeatPoint(u []float64, n int) []float64 {
	out := make([]float64, 0, n*len(u))
	for i := 0; i < n; i++ {
		out = append(out, u...)
	}
	return out
}

func uniformPoints(rng *rand.Rand, n, d int) []float64 {
	out := make([]float64, n*d)
	for i := range out {
		out[i] = rng.Float64()
	}
	return out
}
