package calibrate

import (
	"math"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/distfeat/distfeat/embedding"
	"github.com/distfeat/distfeat/internal/stats"
)

// The truth-facing self-check. What a user gets from a spec is the inner product X of the
// features of two of their sets; what they want is the kernel T between the distributions
// the sets were drawn from. X − T has three parts: the random-feature error (falls like
// 1/D), the estimation noise of a finite set (falls like 1/n), and the smoothing of the
// estimate (the KDE bandwidth, the cosine basis, the λ quadrature, the sub-sample of an
// exact mean-map kernel). Comparing X with the exact kernel of the spec's own smoothed
// estimate sees only the first. Here T is estimated from the data:
//
//   - a reference estimate R of each pair's kernel with much less smoothing (truth.go's
//     callers: a fine reference KDE for hdd and l2, the exact mean-map kernel for mmd);
//   - the noise of R and of the spec's own estimate C, from each set split in halves A and
//     B: for estimates linear in the points to first order (KDEs, mean maps), the noise
//     N_A − N_B of half sets has four times the variance of the full set's noise, and the
//     covariance of two estimates' noises scales the same way, so
//
//     var T ≈ var R − ¼·var(R_A − R_B),   cov(X, T) ≈ cov(X, R) − ¼·cov(C_A − C_B, R_A − R_B),
//
//     and R²(X, T) = cov(X, T)² / (var X · var T), the squared Pearson correlation over the
//     sample's set pairs;
//   - a divergence of two noisy densities is biased upwards by the noise (a second-order
//     term, per set, of order 1/n); the reference is corrected by the extrapolation
//     ρ²_R = 2ρ²(full) − ½(ρ²(A) + ρ²(B)), which removes the 1/n term.
//
// The halves see the reference's noise, not its smoothing: a reference KDE at a finite
// bandwidth shares part of the features' own smoothing bias, so on densities with hard
// edges or sharp peaks the estimate reads high (issue #38: by up to 0.024 on truncated
// mixtures whose edges lie inside the unit cube, 0.008 on Student t peaks and uniform
// rectangles). For hdd the estimate therefore comes with an interval (truthInterval):
// the estimate with a second reference at √2 times the bandwidth shows how fast it moves
// with the reference's smoothing, the move extrapolated linearly in h to h = 0 (the rate of
// a hard edge; smooth densities converge like h², so this end is conservative) gives the
// lower end, and both ends are widened by two jackknife standard errors over the sets.

// halfSplit holds, per sampled set, the indices of its half A (the rest is half B), drawn
// with the stream "calibrate/halves/<k>".
func (s *sample) splitHalves(seed uint64) {
	s.half = make([][]bool, len(s.raw))
	for k, r := range s.raw {
		n := len(r) / s.dim
		inA := make([]bool, n)
		for _, i := range choose(embedding.NewRNG(seed, "calibrate/halves/"+strconv.Itoa(k)), n, n/2) {
			inA[i] = true
		}
		s.half[k] = inA
	}
}

// halfOf returns the points of set k (raw or normalised: x is s.raw[k] or s.full[k]) in
// half A (a) or B.
func (s *sample) halfOf(x []float64, k int, a bool) []float64 {
	d := s.dim
	out := make([]float64, 0, len(x)/2+d)
	for i, in := range s.half[k] {
		if in == a {
			out = append(out, x[i*d:(i+1)*d]...)
		}
	}
	return out
}

// pairEstimate is a kernel estimate over the sample's set pairs (i < j, row-major) from the
// full sets and from halves A and B.
type pairEstimate struct {
	full, a, b []float64
}

// diff is a − b, pair by pair.
func (p pairEstimate) diff() []float64 {
	out := make([]float64, len(p.a))
	for k := range out {
		out[k] = p.a[k] - p.b[k]
	}
	return out
}

// truthR2 is the estimate of R²(X, T) above: x the user's kernel values, ref the reference
// (bias-corrected where it applies), dC and dRef the half differences of the spec's
// noise-free-of-random-features estimate and of the reference, kc and kr the scales that
// turn their covariance and variance into the full sets' noise (¼ when all are computed on
// the full sets). NaN when the reference is too noisy to tell (its noise-free variance is
// not positive).
func truthR2(x, ref, dC, dRef []float64, kc, kr float64) float64 {
	vx := covariance(x, x)
	vt := covariance(ref, ref) - kr*covariance(dRef, dRef)
	cxt := covariance(x, ref) - kc*covariance(dC, dRef)
	if !(vt > 0) || !(vx > 0) {
		return math.NaN()
	}
	return math.Min(1, math.Max(0, cxt*cxt/(vx*vt)))
}

// r2Interval is an estimated R² against the true kernel with the interval that allows for
// the reference's smoothing and the sample's noise.
type r2Interval struct{ est, lo, hi float64 }

// jackknifeZ is how many jackknife standard errors widen the interval on each side.
const jackknifeZ = 2

// edgeExtrapolation is the factor of the linear-in-h extrapolation from references at √2·h
// and h to 0: R²(0) = R²(h) − (R²(√2h) − R²(h))·h/(√2h − h).
var edgeExtrapolation = 1 / (math.Sqrt2 - 1)

// truthInterval is truthR2 of x against ref (fine) with its interval: the estimate against
// the coarse reference (the same quantities at √2 times the bandwidth: refCoarse, its half
// difference dRefCoarse) extrapolated to a reference without smoothing, and the jackknife
// standard error over the S sets (pair order i < j, row-major). The lower end is the
// smaller of the estimate and the extrapolation less jackknifeZ standard errors, the upper
// the estimate plus as many; a NaN estimate gives a NaN interval.
func truthInterval(x, ref, dC, dRef, refCoarse, dRefCoarse []float64, S int) r2Interval {
	est := truthR2(x, ref, dC, dRef, 0.25, 0.25)
	if math.IsNaN(est) {
		return r2Interval{est, est, est}
	}
	lo := est
	if refCoarse != nil {
		if coarse := truthR2(x, refCoarse, dC, dRefCoarse, 0.25, 0.25); coarse > est {
			lo = est - edgeExtrapolation*(coarse-est)
		}
	}
	se := jackknifeR2(x, ref, dC, dRef, S)
	return r2Interval{est, math.Max(0, lo-jackknifeZ*se), math.Min(1, est+jackknifeZ*se)}
}

// jackknifeR2 is the leave-one-set-out jackknife standard error of truthR2(x, ref, dC,
// dRef, ¼, ¼) over the S sets whose pairs (i < j, row-major) the vectors hold: each
// replicate drops the S − 1 pairs of one set, from running sums (O(pairs) in all).
func jackknifeR2(x, ref, dC, dRef []float64, S int) float64 {
	if S < 3 {
		return 0
	}
	type sums struct{ n, x, r, c, d, xx, rr, xr, dd, cd float64 }
	add := func(s *sums, k int) {
		s.n++
		s.x, s.r, s.c, s.d = s.x+x[k], s.r+ref[k], s.c+dC[k], s.d+dRef[k]
		s.xx, s.rr, s.xr = s.xx+x[k]*x[k], s.rr+ref[k]*ref[k], s.xr+x[k]*ref[k]
		s.dd, s.cd = s.dd+dRef[k]*dRef[k], s.cd+dC[k]*dRef[k]
	}
	var all sums
	per := make([]sums, S)
	k := 0
	for i := 0; i < S; i++ {
		for j := i + 1; j < S; j++ {
			add(&all, k)
			add(&per[i], k)
			add(&per[j], k)
			k++
		}
	}
	r2 := func(s sums) float64 {
		cov := func(sxy, sx, sy float64) float64 { return sxy/s.n - (sx/s.n)*(sy/s.n) }
		vx, vt := cov(s.xx, s.x, s.x), cov(s.rr, s.r, s.r)-0.25*cov(s.dd, s.d, s.d)
		cxt := cov(s.xr, s.x, s.r) - 0.25*cov(s.cd, s.c, s.d)
		if !(vt > 0) || !(vx > 0) {
			return math.NaN()
		}
		return math.Min(1, math.Max(0, cxt*cxt/(vx*vt)))
	}
	reps := make([]float64, 0, S)
	var mean float64
	for i := 0; i < S; i++ {
		o := all
		p := per[i]
		o.n, o.x, o.r, o.c, o.d = o.n-p.n, o.x-p.x, o.r-p.r, o.c-p.c, o.d-p.d
		o.xx, o.rr, o.xr, o.dd, o.cd = o.xx-p.xx, o.rr-p.rr, o.xr-p.xr, o.dd-p.dd, o.cd-p.cd
		v := r2(o)
		if math.IsNaN(v) {
			continue
		}
		reps = append(reps, v)
		mean += v
	}
	if len(reps) < 3 {
		return 0
	}
	mean /= float64(len(reps))
	var ss float64
	for _, v := range reps {
		ss += (v - mean) * (v - mean)
	}
	m := float64(len(reps))
	return math.Sqrt((m - 1) / m * ss)
}

// covariance is the population covariance of x and y.
func covariance(x, y []float64) float64 {
	if len(x) == 0 {
		return 0
	}
	mx, my := means(x, y)
	var s float64
	for i := range x {
		s += (x[i] - mx) * (y[i] - my)
	}
	return s / float64(len(x))
}

// parallelPairs runs fn(k, i, j) for every pair i < j of S sets (k its pair index) on
// workers goroutines.
func parallelPairs(S, workers int, fn func(k, i, j int)) {
	type pair struct{ i, j int }
	var pairs []pair
	for i := 0; i < S; i++ {
		for j := i + 1; j < S; j++ {
			pairs = append(pairs, pair{i, j})
		}
	}
	parallelFor(len(pairs), workers, func(k int) { fn(k, pairs[k].i, pairs[k].j) })
}

// parallelFor runs fn(k), k = 0..n−1, on workers goroutines.
func parallelFor(n, workers int, fn func(k int)) {
	var next atomic.Int64
	var wg sync.WaitGroup
	for w := 0; w < max(1, workers); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				k := int(next.Add(1) - 1)
				if k >= n {
					return
				}
				fn(k)
			}
		}()
	}
	wg.Wait()
}

// hddReference is the reference ρ² of every sampled pair for one divergence: full sets,
// halves, and the bias-corrected value.
type hddReference struct {
	h    float64 // reference KDE bandwidth
	g    int     // reference grid
	rho2 pairEstimate
	corr []float64 // 2ρ²(full) − ½(ρ²(A) + ρ²(B))
	// coarse is the same reference at √2·h (withCoarse; nil: no interval).
	coarse *hddReference
}

// withCoarse adds the reference at √2 times r's bandwidth that truthInterval compares with.
func (r hddReference) withCoarse(s *sample, div string, joint bool, workers int) hddReference {
	c := newHDDReference(s, div, joint, r.h*math.Sqrt2, workers)
	r.coarse = &c
	return r
}

// refGridSize is the reference grid: two cells per bandwidth (linear binning then adds a
// variance of 1/(6G²), under 5% of h²), at least 32 and at most 128 per axis (joint 2-D),
// 48 (joint 3-D) or 1024 (a line).
func refGridSize(h float64, gd int) int {
	capG := map[int]int{1: 1024, 2: 128, 3: 48}[gd]
	return min(capG, max(32, int(math.Ceil(2/h))))
}

// newHDDReference computes the reference densities of every sampled set (full and halves)
// at bandwidth h and the divergence div between every pair.
func newHDDReference(s *sample, div string, joint bool, h float64, workers int) hddReference {
	gd := s.dim
	if !joint {
		gd = 1
	}
	g := refGridSize(h, gd)
	k := refAxis(g, h)
	S := len(s.full)
	full, a, b := make([]refPre, S), make([]refPre, S), make([]refPre, S)
	parallelFor(S, workers, func(i int) {
		u := s.full[i]
		full[i] = newRefPre(refDensity(u, s.dim, joint, g, k))
		a[i] = newRefPre(refDensity(s.halfOf(u, i, true), s.dim, joint, g, k))
		b[i] = newRefPre(refDensity(s.halfOf(u, i, false), s.dim, joint, g, k))
	})
	n := S * (S - 1) / 2
	r := hddReference{h: h, g: g, rho2: pairEstimate{make([]float64, n), make([]float64, n), make([]float64, n)}, corr: make([]float64, n)}
	parallelPairs(S, workers, func(p, i, j int) {
		r.rho2.full[p] = refRho2(div, full[i], full[j])
		r.rho2.a[p] = refRho2(div, a[i], a[j])
		r.rho2.b[p] = refRho2(div, b[i], b[j])
		r.corr[p] = 2*r.rho2.full[p] - 0.5*(r.rho2.a[p]+r.rho2.b[p])
	})
	return r
}

// kernels maps ρ² values to exp(−ρ²/2σ²).
func kernels(rho2 []float64, sigma float64) []float64 {
	out := make([]float64, len(rho2))
	for k, v := range rho2 {
		out[k] = math.Exp(-v / (2 * sigma * sigma))
	}
	return out
}

// kernelEstimate maps a ρ² pairEstimate to kernels.
func (p pairEstimate) kernels(sigma float64) pairEstimate {
	return pairEstimate{kernels(p.full, sigma), kernels(p.a, sigma), kernels(p.b, sigma)}
}

// coefRho2 is ‖A_i − A_j‖² between coefficient vectors, pair order.
func coefRho2(vs [][]float32) []float64 { return overPairs(vs, sqDist32) }

// innerPairs is ⟨v_i, v_j⟩, pair order.
func innerPairs(vs [][]float32) []float64 { return overPairs(vs, stats.Dot32) }

// overPairs is f(v_i, v_j) for every pair i < j, pair order.
func overPairs(vs [][]float32, f func(a, b []float32) float64) []float64 {
	var out []float64
	for a := range vs {
		for b := a + 1; b < len(vs); b++ {
			out = append(out, f(vs[a], vs[b]))
		}
	}
	return out
}

// refKernels is the reference kernel exp(−ρ²/2σ²) of every pair, from the bias-corrected ρ².
func (r hddReference) refKernels(sigma float64) []float64 {
	return kernels(r.corr, sigma)
}
