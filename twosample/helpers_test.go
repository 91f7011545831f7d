package twosample

import (
	"math"
	"math/rand/v2"
	"testing"
)

// normals adapts math/rand to NormalSource for the statistical tests (distfeat passes its
// frozen RNG; the statistics do not depend on which generator draws the frequencies).
type normals struct{ r *rand.Rand }

func (n normals) Normal() float64 { return n.r.NormFloat64() }

// scenario draws points of [0,1]² (row-major): the reference's distribution and the
// window's under the alternative.
type scenario struct {
	name     string
	ref, alt func(r *rand.Rand, n int) []float64
}

// gaussian draws N((shift, 0), diag(sx², 1)) mapped to [0,1]² by u = 1/2 + x/12 (clipped;
// |x| > 6 has probability 2e-9).
func gaussian(shift, sx float64) func(r *rand.Rand, n int) []float64 {
	return func(r *rand.Rand, n int) []float64 {
		out := make([]float64, 2*n)
		for i := 0; i < n; i++ {
			out[2*i] = clip01(0.5 + (shift+sx*r.NormFloat64())/12)
			out[2*i+1] = clip01(0.5 + r.NormFloat64()/12)
		}
		return out
	}
}

// blobs is the blobs problem (thesis §6.4.3, on a 3×3 grid as in the issue): a uniform
// mixture of Gaussians centred on a 3×3 grid of spacing 10 with covariance eigenvalue
// ratio eps (correlation (eps−1)/(eps+1), unit variances), mapped by u = 1/2 + x/32.
func blobs(eps float64) func(r *rand.Rand, n int) []float64 {
	rho := (eps - 1) / (eps + 1)
	c := math.Sqrt(1 - rho*rho)
	return func(r *rand.Rand, n int) []float64 {
		out := make([]float64, 2*n)
		for i := 0; i < n; i++ {
			cx, cy := float64(r.IntN(3)-1)*10, float64(r.IntN(3)-1)*10
			a, b := r.NormFloat64(), r.NormFloat64()
			out[2*i] = clip01(0.5 + (cx+a)/32)
			out[2*i+1] = clip01(0.5 + (cy+rho*a+c*b)/32)
		}
		return out
	}
}

func clip01(v float64) float64 { return min(max(v, 0), 1) }

// The three problems. The shift and variance ratio make the quadratic oracles'
// power intermediate at 400-point windows against a 2000-point reference, where the
// comparison is informative.
var (
	meanShift   = scenario{"mean shift 0.15σ", gaussian(0, 1), gaussian(0.15, 1)}
	varChange   = scenario{"variance ×1.12² (one axis)", gaussian(0, 1), gaussian(0, 1.12)}
	blobProblem = scenario{"blobs ε=6", blobs(1), blobs(6)}
)

// Defaults of the studies, the family's defaults.
const (
	studyBands = 5
	studyFreqs = 20
)

// buildReference summarises ref with the default collection (median heuristic on the first
// 1000 points, 5 dyadic bands, 20 frequencies each).
func buildReference(tb testing.TB, r *rand.Rand, ref []float64, cfg Config) *Reference {
	tb.Helper()
	b := defaultFeatureMap(tb, r, ref).NewReferenceBuilder()
	b.Add(ref)
	rf, err := b.Build(cfg, normals{r})
	if err != nil {
		tb.Fatal(err)
	}
	return rf
}

// defaultFeatureMap is the default collection for the reference points ref: the median
// heuristic on the first 1000, 5 dyadic bands, 20 frequencies each.
func defaultFeatureMap(tb testing.TB, r *rand.Rand, ref []float64) *FeatureMap {
	tb.Helper()
	med, err := MedianBandwidth(ref, 2, 1000)
	if err != nil {
		tb.Fatal(err)
	}
	fm, err := NewFeatureMap(Center(ref, 2, 1000), DyadicBandwidths(med, studyBands), studyFreqs, normals{r}, math.Sincos)
	if err != nil {
		tb.Fatal(err)
	}
	return fm
}

// pvalue tests the window x against the reference.
func pvalue(tb testing.TB, rf *Reference, x []float64) Result {
	tb.Helper()
	w := rf.FeatureMap().NewWindow()
	w.Add(x)
	res, err := rf.Test(w)
	if err != nil {
		tb.Fatal(err)
	}
	return res
}
