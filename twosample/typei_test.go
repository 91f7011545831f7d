package twosample

import (
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

var (
	typeIRefs    = flag.Int("typei.refs", 40, "TestTypeIError: references per problem (docs/drift.md used 300)")
	typeIWindows = flag.Int("typei.windows", 10, "TestTypeIError: H0 windows per reference and window size")
)

// TestTypeIError checks that the p-values are honest under H0 (issue #27, item 4): windows
// drawn from the reference's own distribution, of 100 points (fewer than the 204 features)
// and of 400, on the Gaussian and the blobs references. For each, the rejection rate at
// every level of a grid must match the level, and the p-values of independent windows must
// pass a Kolmogorov–Smirnov test of uniformity.
//
// Tolerances. Windows tested against one reference share its sampling error, so their
// rejections are positively correlated (the level conditional on a reference varies around
// α; only its average over references is α). The rate's standard error is therefore
// estimated between references (cluster-robust: the standard deviation of the per-reference
// rates over √R), floored by the binomial one √(α(1−α)/(R·W)) for the case where no
// rejection varies. The rate must be within 3.5 standard errors of the level: over the 9
// levels × 4 cases a correct test fails with probability < 2% (normal tails, Bonferroni).
// The Kolmogorov–Smirnov test uses one window per reference (independent p-values) at
// level 0.1%. The p-values are discrete, (1+k)/(NullDraws+1), which is finer than any
// level of the grid.
func TestTypeIError(t *testing.T) {
	levels := []float64{0.01, 0.02, 0.05, 0.1, 0.2, 0.3, 0.5, 0.7, 0.9}
	R, W := *typeIRefs, *typeIWindows
	r := rand.New(rand.NewPCG(27, 4))
	for _, sc := range []scenario{meanShift, blobProblem} {
		// pv[s][ref][w]: p-value of window w of size sizes[s] against reference ref.
		sizes := []int{100, 400}
		pv := make([][][]float64, len(sizes))
		for s := range sizes {
			pv[s] = make([][]float64, R)
		}
		for ref := 0; ref < R; ref++ {
			rf := buildReference(t, r, sc.ref(r, 2000), Config{})
			for s, n := range sizes {
				for range W {
					pv[s][ref] = append(pv[s][ref], pvalue(t, rf, sc.ref(r, n)).PValue)
				}
			}
		}
		for s, n := range sizes {
			name := fmt.Sprintf("%s reference, %d-point windows", sc.ref2name(), n)
			line := name + ": rejection rate at α ="
			for _, a := range levels {
				rates := make([]float64, R)
				mean := 0.0
				for ref, ps := range pv[s] {
					k := 0
					for _, p := range ps {
						if p <= a {
							k++
						}
					}
					rates[ref] = float64(k) / float64(W)
					mean += rates[ref] / float64(R)
				}
				v := 0.0
				for _, x := range rates {
					v += (x - mean) * (x - mean)
				}
				se := max(math.Sqrt(v/float64(R-1)/float64(R)), math.Sqrt(a*(1-a)/float64(R*W)))
				line += fmt.Sprintf(" %.2f: %.3f±%.3f", a, mean, se)
				if math.Abs(mean-a) > 3.5*se {
					t.Errorf("%s: rejection rate %.4f at α = %.2f, more than 3.5 standard errors (%.4f) from α", name, mean, a, se)
				}
			}
			t.Log(line)
			first := make([]float64, R)
			for ref, ps := range pv[s] {
				first[ref] = ps[0]
			}
			if d, crit := ksUniform(first), 1.95/math.Sqrt(float64(R)); d > crit {
				t.Errorf("%s: Kolmogorov–Smirnov distance of %d independent p-values from uniform %.3f > %.3f (0.1%% level)", name, R, d, crit)
			}
		}
	}
}

// ref2name names a scenario by its reference distribution.
func (s scenario) ref2name() string {
	if s.name == blobProblem.name {
		return "blobs"
	}
	return "Gaussian"
}

// ksUniform is the Kolmogorov–Smirnov distance between the sample's empirical distribution
// and the uniform one on [0, 1].
func ksUniform(p []float64) float64 {
	p = slices.Sorted(slices.Values(p))
	n := float64(len(p))
	d := 0.0
	for i, v := range p {
		d = max(d, float64(i+1)/n-v, v-float64(i)/n)
	}
	return d
}
