package twosample

import (
	"errors"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

// betweenReference summarises the windows wins (in order, one EndWindow each) with the
// default collection and the between-windows null; with withPooled, pooled is the same
// points' pooled null.
func betweenReference(tb testing.TB, r *rand.Rand, wins [][]float64, withPooled bool) (between, pooled *Reference) {
	tb.Helper()
	var all []float64
	for _, w := range wins {
		all = append(all, w...)
	}
	b := defaultFeatureMap(tb, r, all).NewReferenceBuilder()
	b.ByWindows()
	for _, w := range wins {
		b.Add(w)
		b.EndWindow()
	}
	var err error
	if between, err = b.Build(Config{BetweenWindows: true}, normals{r}); err != nil {
		tb.Fatal(err)
	}
	if withPooled {
		if pooled, err = b.Build(Config{}, normals{r}); err != nil {
			tb.Fatal(err)
		}
	}
	return between, pooled
}

// wandering returns a window generator whose x-mean is an AR(1) across windows (φ = 0.9,
// stationary standard deviation tau in σ of the points), started from its stationary law.
func wandering(r *rand.Rand, tau float64, n int) func() []float64 {
	const phi = 0.9
	mu := tau * r.NormFloat64()
	return func() []float64 {
		mu = phi*mu + math.Sqrt(1-phi*phi)*tau*r.NormFloat64()
		return gaussian(mu, 1)(r, n)
	}
}

// TestBetweenWindowsNull: a window is ranked against the reference's own windows, so its
// p-value is valid whenever it is exchangeable with them — with independent windows
// (Gaussian and blobs), and on average over references for a stream that wanders from
// window to window as its reference did (the x-mean an AR(1), τ = 0.2σ), where the pooled
// null flags windows several times too often (docs/drift.md, Correlated windows).
//
// Tolerances: the rejection rate at α over R references × W windows must be within 3.5
// standard errors of α, the error estimated between references (windows ranked against one
// reference share it: cluster-robust, the per-reference rates' standard deviation over √R),
// floored by the binomial one. A rank p-value (1 + #)/(k + 1) (k part B's windows) is discrete: at α it rejects
// with probability ⌊α(k+1)⌋/(k+1) ≤ α, the level the rate is compared with. The pooled null
// on the wandering stream must reject at more than 2α (measured 3–4α; docs/drift.md).
func TestBetweenWindowsNull(t *testing.T) {
	const n = 100
	cases := []struct {
		name   string
		k      int // reference windows (part B ranks 7 of every 10)
		R, W   int
		window func(r *rand.Rand) func() []float64
		pooled bool // also check that the pooled null over-rejects
	}{
		{"independent Gaussian windows", 60, 10, 50, func(r *rand.Rand) func() []float64 {
			return func() []float64 { return gaussian(0, 1)(r, n) }
		}, false},
		{"independent blobs windows", 60, 8, 50, func(r *rand.Rand) func() []float64 {
			return func() []float64 { return blobs(1)(r, n) }
		}, false},
		{"AR(1) wandering mean, τ = 0.2σ", 100, 12, 50, func(r *rand.Rand) func() []float64 { return wandering(r, 0.2, n) }, true},
	}
	r := rand.New(rand.NewPCG(37, 11))
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			levels := []float64{0.05, 0.1, 0.3}
			rates := make([][]float64, len(levels)) // per level, per reference
			pooledRate := 0.0
			for range c.R {
				next := c.window(r)
				kB := int64(c.k - c.k/10*3) // part B's windows: 7 of every 10
				wins := make([][]float64, c.k)
				for i := range wins {
					wins[i] = next()
				}
				between, pooled := betweenReference(t, r, wins, c.pooled)
				if b := between.Between(); b.Windows != kB || b.Size != n {
					t.Fatalf("Between() = %+v, want %d windows (part B's) of %d points", b, kB, n)
				}
				hits := make([]int, len(levels))
				for range c.W {
					x := next()
					p := pvalue(t, between, x).PValue
					for i, a := range levels {
						if p <= a {
							hits[i]++
						}
					}
					if c.pooled && pvalue(t, pooled, x).PValue <= 0.05 {
						pooledRate++
					}
				}
				for i := range levels {
					rates[i] = append(rates[i], float64(hits[i])/float64(c.W))
				}
			}
			for i, a := range levels {
				kB := float64(c.k - c.k/10*3)
				want := math.Floor(a*(kB+1)) / (kB + 1)
				mean, sd := meanSD(rates[i])
				se := max(sd/math.Sqrt(float64(c.R)), math.Sqrt(want*(1-want)/float64(c.R*c.W)))
				t.Logf("α = %.2f: rejection rate %.3f (exact level %.3f, se %.3f)", a, mean, want, se)
				if math.Abs(mean-want) > 3.5*se {
					t.Errorf("α = %.2f: rejection rate %.3f, want %.3f ± %.3f (3.5 se)", a, mean, want, 3.5*se)
				}
			}
			if c.pooled {
				rate := pooledRate / float64(c.R*c.W)
				t.Logf("pooled null at α = 0.05: %.3f", rate)
				if rate <= 0.1 {
					t.Errorf("the pooled null rejected %.3f of the wandering stream's windows at α = 0.05: the case no longer shows what between_windows is for", rate)
				}
			}
		})
	}
}

func meanSD(x []float64) (mean, sd float64) {
	for _, v := range x {
		mean += v
	}
	mean /= float64(len(x))
	for _, v := range x {
		sd += (v - mean) * (v - mean)
	}
	return mean, math.Sqrt(sd / float64(len(x)-1))
}

// TestBetweenWindowsRefusals: too few windows, or more than the null keeps, are refused by
// name; windows without points do not count.
func TestBetweenWindowsRefusals(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	fm, err := NewFeatureMap([]float64{0.5, 0.5}, DyadicBandwidths(0.1, 2), 4, normals{r}, math.Sincos)
	if err != nil {
		t.Fatal(err)
	}
	pointwise := fm.NewReferenceBuilder()
	pointwise.Add(gaussian(0, 1)(r, 500))
	if _, err := pointwise.Build(Config{BetweenWindows: true}, normals{r}); !errors.Is(err, ErrReference) || !strings.Contains(err.Error(), "ByWindows") {
		t.Fatalf("Build without ByWindows: %v, want ErrReference naming ByWindows", err)
	}
	b := fm.NewReferenceBuilder()
	b.ByWindows()
	for range MinReferenceWindows - 1 {
		b.Add(gaussian(0, 1)(r, 10))
		b.EndWindow()
		b.EndWindow() // an empty window: not counted
	}
	if b.Windows() != MinReferenceWindows-1 {
		t.Fatalf("Windows() = %d, want %d", b.Windows(), MinReferenceWindows-1)
	}
	_, err = b.Build(Config{BetweenWindows: true}, normals{r})
	if !errors.Is(err, ErrReference) || !strings.Contains(err.Error(), "at least 20") {
		t.Fatalf("Build with %d windows: %v, want ErrReference naming the minimum", MinReferenceWindows-1, err)
	}
	b.Add(gaussian(0, 1)(r, 10))
	b.EndWindow()
	if _, err := b.Build(Config{BetweenWindows: true}, normals{r}); err != nil {
		t.Fatalf("Build with %d windows: %v", MinReferenceWindows, err)
	}
}

// TestBatchVarianceRatio: the persistence estimate is about 1 for independent values and
// (1 + φ)/(1 − φ) for an AR(1); its relative standard error is √(2/(B−1)) (B = 100 batches
// here: 0.14), so 3.5 of them bound it.
func TestBatchVarianceRatio(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 8))
	for _, phi := range []float64{0, 0.5, 0.8} {
		x := make([]float64, 10000)
		v := 0.0
		for i := range x {
			v = phi*v + math.Sqrt(1-phi*phi)*r.NormFloat64()
			x[i] = v
		}
		got, batches := batchVarianceRatio(x)
		want := (1 + phi) / (1 - phi)
		if tol := 3.5 * want * math.Sqrt(2/float64(batches-1)); math.Abs(got-want) > tol {
			t.Errorf("φ = %v: ratio %.3f, want %.3f ± %.3f", phi, got, want, tol)
		}
	}
}
