package embedding

import (
	"fmt"
	"math"
	"runtime"
	"sort"
	"sync"
	"testing"

	"github.com/distfeat/distfeat/internal/stats"
	"github.com/distfeat/distfeat/spec"
)

// The Gram-matrix experiment of the AAAI paper (§5 and its appendix; docs/math.md): N = 50
// random mixtures of 5 truncated Gaussians on [0,1]², means ~ Unif([0,1]²), per-axis
// standard deviations ~ Unif[0.05, 0.15], equal weights; n = 2500 points from each. The
// exact kernels K(p_i,p_j) = exp(−ρ²(p_i,p_j)/(2σ²)) between the true densities are compared
// with the estimates z(Â(p̂_i))ᵀz(Â(p̂_j)) of the hdd family at the default spec's settings
// with D = 7000 features. The paper reports R² = 0.966 for the js kernel.

const (
	gramN          = 50
	gramPoints     = 2500
	gramComponents = 5
	gramFeatures   = 7000
	// gramQuad is the midpoint grid for the exact ρ²: the densities are smooth inside the
	// square (s ≥ 0.05, 12.8 grid cells per s), so the midpoint rule's relative error is
	// ~(1/256)²/24·∫|∇²κ|/ρ² ≲ 1e-4 — negligible against the estimator's error.
	gramQuad = 256
)

// gramMixture is one truncated Gaussian mixture with diagonal covariances.
type gramMixture struct {
	mx, my, sx, sy [gramComponents]float64
}

func gramMixtures() []gramMixture {
	rng := NewRNG(2016, "test/gram/mixtures")
	mix := make([]gramMixture, gramN)
	for i := range mix {
		for k := 0; k < gramComponents; k++ {
			mix[i].mx[k], mix[i].my[k] = rng.Float64(), rng.Float64()
			mix[i].sx[k], mix[i].sy[k] = 0.05+0.1*rng.Float64(), 0.05+0.1*rng.Float64()
		}
	}
	return mix
}

// sample draws n points: a uniformly chosen component, then rejection from its Gaussian
// until the point falls in [0,1]² (exactly the truncated component).
func (m *gramMixture) sample(rng *RNG, n int) []float64 {
	u := make([]float64, 0, 2*n)
	for len(u) < 2*n {
		k := int(rng.Float64() * gramComponents)
		for {
			x := m.mx[k] + m.sx[k]*rng.Normal()
			y := m.my[k] + m.sy[k]*rng.Normal()
			if x >= 0 && x <= 1 && y >= 0 && y <= 1 {
				u = append(u, x, y)
				break
			}
		}
	}
	return u
}

// density evaluates the mixture at the g² midpoints (row-major, x slowest).
func (m *gramMixture) density(g int) []float64 {
	p := make([]float64, g*g)
	fx, fy := make([]float64, g), make([]float64, g)
	for k := 0; k < gramComponents; k++ {
		for i := 0; i < g; i++ {
			c := (float64(i) + 0.5) / float64(g)
			fx[i] = truncNormal(c, m.mx[k], m.sx[k])
			fy[i] = truncNormal(c, m.my[k], m.sy[k])
		}
		for i := 0; i < g; i++ {
			for j := 0; j < g; j++ {
				p[i*g+j] += fx[i] * fy[j] / gramComponents
			}
		}
	}
	return p
}

// gramExactRho2 returns ρ²(p_i, p_j) for i < j (pair index order) for js, hellinger, tv,
// by the midpoint rule on the gramQuad² grid, splitting pairs across CPUs.
func gramExactRho2(dens [][]float64) map[divergence][]float64 {
	n := len(dens)
	type pre struct{ xlogx, sqrt []float64 }
	pres := make([]pre, n)
	for i, p := range dens {
		pres[i] = pre{make([]float64, len(p)), make([]float64, len(p))}
		for c, v := range p {
			pres[i].xlogx[c] = v * math.Log(v)
			pres[i].sqrt[c] = math.Sqrt(v)
		}
	}
	var pairs [][2]int
	for i := 0; i < n; i++ {
		for j := i + 1; j < n; j++ {
			pairs = append(pairs, [2]int{i, j})
		}
	}
	out := map[divergence][]float64{
		divJS: make([]float64, len(pairs)), divHellinger: make([]float64, len(pairs)), divTV: make([]float64, len(pairs)),
	}
	cell := 1 / float64(len(dens[0]))
	var wg sync.WaitGroup
	workers := runtime.GOMAXPROCS(0)
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := w; k < len(pairs); k += workers {
				i, j := pairs[k][0], pairs[k][1]
				js, hel, tv := gramPairKappa(dens[i], dens[j], pres[i].xlogx, pres[j].xlogx, pres[i].sqrt, pres[j].sqrt)
				out[divJS][k] = 0.5 * js * cell
				out[divHellinger][k] = 0.5 * hel * cell
				out[divTV][k] = tv * cell
			}
		}()
	}
	wg.Wait()
	return out
}

// gramPairKappa sums the three κs over the quadrature grid for one pair (x ln x and √x
// precomputed). It only reads shared, immutable slices, so it is exempt from race
// instrumentation, which would otherwise multiply the test's cost under -race several
// times (80M cells × 6 reads).
//
//go:norace
func gramPairKappa(p, q, pl, ql, ps, qs []float64) (js, hel, tv float64) {
	q, pl, ql, ps, qs = q[:len(p)], pl[:len(p)], ql[:len(p)], ps[:len(p)], qs[:len(p)]
	for c, x := range p {
		y := q[c]
		s := x + y
		// ½x ln(2x/(x+y)) + ½y ln(2y/(x+y)) = ½[x ln x + y ln y − s ln(s/2)]
		js += pl[c] + ql[c] - s*math.Log(0.5*s)
		d := ps[c] - qs[c]
		hel += d * d
		tv += math.Abs(x - y)
	}
	return js, hel, tv
}

func median(v []float64) float64 {
	s := append([]float64(nil), v...)
	sort.Float64s(s)
	return s[len(s)/2]
}

// gramRuns is every divergence with each RFF projection.
func gramRuns() []struct {
	div        divergence
	projection string
} {
	var runs []struct {
		div        divergence
		projection string
	}
	for _, div := range allDivergences {
		for _, p := range []string{spec.ProjectionGaussian, spec.ProjectionOrthogonal} {
			runs = append(runs, struct {
				div        divergence
				projection string
			}{div, p})
		}
	}
	return runs
}

// TestGramExperiment reproduces the paper's Gram-matrix experiment for js, and runs the
// same experiment for hellinger and tv.
//
// σ must match the scale of ρ for R² to mean anything (σ ≫ ρ makes every K ≈ 1, σ ≪ ρ every
// K ≈ 0, and the correlation then measures RFF noise). js uses the spec default σ = 0.5:
// ρ²_js ≤ ln 2, and on these mixtures the median ρ_js is ≈ 0.59, so the exact kernels
// spread over ≈ [0.27, 0.78] (logged). hellinger (ρ² ≤ 1, median ρ ≈ 0.65) also uses 0.5.
// tv distances are about twice as large (ρ²_tv = ∫|p−q| ≤ 2, median ρ ≈ 1.15), and at
// σ = 0.5 every tv kernel would lie below 0.22; it uses σ = 1, the same ratio to its
// median ρ as js's default.
//
// The assertion is the paper's R² ≥ 0.966 for js, over the 1225 off-diagonal pairs (the
// paper's N² values include the trivial diagonal, which only raises R²). The paper gives
// no figure for hellinger and tv: their R² is logged, with a floor of 0.9 so that a
// broken divergence still fails. Each divergence runs with both RFF projections (the same
// A, the Gaussian or the structured orthogonal frequencies): the same floors hold for both,
// and the logged RMSE of K compares them (the evidence behind spec version 2's default).
func TestGramExperiment(t *testing.T) {
	mix := gramMixtures()
	dens := make([][]float64, gramN)
	samples := make([][]float64, gramN)
	for i := range mix {
		dens[i] = mix[i].density(gramQuad)
		samples[i] = mix[i].sample(NewRNG(2016, fmt.Sprintf("test/gram/points/%d", i)), gramPoints)
	}
	exact := gramExactRho2(dens)
	sigmas := map[divergence]float64{divJS: 0.5, divHellinger: 0.5, divTV: 1}
	floors := map[divergence]float64{divJS: 0.966, divHellinger: 0.9, divTV: 0.9}
	for _, run := range gramRuns() {
		div, projection := run.div, run.projection
		sigma := sigmas[div]
		f := mustCompileHDD(t, hddTestSpec(2, func(fm *spec.Family) {
			fm.Name, fm.Divergence, fm.Features, fm.Sigma, fm.Coefficients = "hdd_"+div.String(), div.String(), gramFeatures, sigma, true
			fm.Projection = projection
		}))
		// Windows are finalised on parallel goroutines sharing the compiled family, as
		// the worker does.
		z := make([][]float32, gramN)
		a := make([][]float32, gramN)
		var wg sync.WaitGroup
		workers := runtime.GOMAXPROCS(0)
		for w := 0; w < workers; w++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := w; i < gramN; i += workers {
					s := f.newSketch()
					s.add(samples[i], 2)
					out := [][]float32{make([]float32, gramFeatures), make([]float32, f.coefLen)}
					s.finalize(gramPoints, out)
					z[i], a[i] = out[0], out[1]
				}
			}()
		}
		wg.Wait()
		rho2 := exact[div]
		var kTrue, kEst, rhoEst []float64
		k := 0
		for i := 0; i < gramN; i++ {
			for j := i + 1; j < gramN; j++ {
				var dotz, d2 float64
				for r := range z[i] {
					dotz += float64(z[i][r]) * float64(z[j][r])
				}
				for r := range a[i] {
					d := float64(a[i][r]) - float64(a[j][r])
					d2 += d * d
				}
				kTrue = append(kTrue, math.Exp(-rho2[k]/(2*sigma*sigma)))
				kEst = append(kEst, dotz)
				rhoEst = append(rhoEst, d2)
				k++
			}
		}
		var bias, mse float64
		for i := range kTrue {
			d := kEst[i] - kTrue[i]
			bias += d / float64(len(kTrue))
			mse += d * d / float64(len(kTrue))
		}
		sortedK := append([]float64(nil), kTrue...)
		sort.Float64s(sortedK)
		r2 := stats.RSquared(kTrue, kEst)
		t.Logf("%-9v %-10s σ=%.2g: R²(K) = %.4f, R²(ρ² from A) = %.4f, bias %+.4f, RMSE %.4f; exact K ∈ [%.3f, %.3f] (median %.3f), median ρ = %.3f",
			div, projection, sigma, r2, stats.RSquared(rho2, rhoEst), bias, math.Sqrt(mse), sortedK[0], sortedK[len(sortedK)-1], median(kTrue), math.Sqrt(median(rho2)))
		if r2 < floors[div] {
			t.Errorf("%v, projection %s: R² = %.4f < %.3f", div, projection, r2, floors[div])
		}
	}
}
