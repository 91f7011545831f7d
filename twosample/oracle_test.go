package twosample

import (
	"math"
	"math/rand/v2"
	"slices"
)

// The quadratic-time oracles of the power study (issue #27): the exact MMD permutation
// test with the median heuristic (alibi-detect's MMDDrift default) and MMDAgg (Schrab et
// al., JMLR 2023) over a collection of Gaussian bandwidths with its level corrected by
// permutations. They hold every point and cost O((n+m)²) per window: they exist only to
// measure what the streaming test gives up (or not).

// gram holds the pooled sample's kernel matrix for one bandwidth in a form that makes one
// split's unbiased MMD² cost O(n²) instead of O((n+m)²): with the off-diagonal row sums
// r_i and the total S = Σ_{i≠j} K_ij fixed, a split (A of size n, its complement B of
// size m) has S_AA from the n² entries of A's rows, S_AB = Σ_{i∈A} r_i − S_AA and
// S_BB = S − S_AA − 2S_AB. The matrix is float32 (the sums are float64): the oracles only
// compare statistics with each other, and halving the memory traffic matters.
type gram struct {
	n, m int
	k    []float32 // (n+m)², row-major, zero diagonal
	rows []float64 // off-diagonal row sums
	sum  float64
}

func newGram(n, m int) *gram {
	N := n + m
	return &gram{n: n, m: m, k: make([]float32, N*N), rows: make([]float64, N)}
}

// fillExp fills g with the Gaussian kernel exp(−d²/(2σ²)) of the squared distances d2.
func (g *gram) fillExp(d2 []float32, sigma float64) {
	inv := -1 / (2 * sigma * sigma)
	for i, v := range d2 {
		g.k[i] = float32(math.Exp(float64(v) * inv))
	}
	g.finish()
}

// fillPow4 fills g with prev's kernel to the 4th power: the Gaussian kernel at half
// prev's bandwidth.
func (g *gram) fillPow4(prev *gram) {
	for i, v := range prev.k {
		v2 := v * v
		g.k[i] = v2 * v2
	}
	g.finish()
}

func (g *gram) finish() {
	N := g.n + g.m
	g.sum = 0
	for i := 0; i < N; i++ {
		g.k[i*N+i] = 0
		s := 0.0
		for _, v := range g.k[i*N : (i+1)*N] {
			s += float64(v)
		}
		g.rows[i] = s
		g.sum += s
	}
}

// splits is a set of candidate first samples (each n sorted indices into the pooled
// sample) with, for each pooled point, the splits that contain it: the MMD² of all of
// them is computed row by row, each row of K read once while it is in cache.
type splits struct {
	sets     [][]int
	memberOf [][]int
}

func newSplits(sets [][]int, N int) *splits {
	sp := &splits{sets: sets, memberOf: make([][]int, N)}
	for p, a := range sets {
		slices.Sort(a)
		for _, i := range a {
			sp.memberOf[i] = append(sp.memberOf[i], p)
		}
	}
	return sp
}

// mmd2 returns the unbiased MMD² of every split.
func (g *gram) mmd2(sp *splits) []float64 {
	N := g.n + g.m
	saa := make([]float64, len(sp.sets))
	ra := make([]float64, len(sp.sets))
	for i := 0; i < N; i++ {
		row := g.k[i*N : (i+1)*N]
		for _, p := range sp.memberOf[i] {
			s := float32(0)
			for _, j := range sp.sets[p] {
				s += row[j]
			}
			saa[p] += float64(s)
			ra[p] += g.rows[i]
		}
	}
	out := make([]float64, len(sp.sets))
	n, m := float64(g.n), float64(g.m)
	for p := range out {
		sab := ra[p] - saa[p]
		sbb := g.sum - saa[p] - 2*sab
		out[p] = saa[p]/(n*(n-1)) + sbb/(m*(m-1)) - 2*sab/(n*m)
	}
	return out
}

// pooled returns the squared distances of the pooled sample x (the window, n points)
// followed by y (the reference, m points), both row-major of dimension d.
func pooledD2(x, y []float64, d int) (d2 []float32, n, m int) {
	n, m = len(x)/d, len(y)/d
	z := append(slices.Clone(x), y...)
	N := n + m
	d2 = make([]float32, N*N)
	for i := 0; i < N; i++ {
		for j := i + 1; j < N; j++ {
			s := 0.0
			for k := 0; k < d; k++ {
				t := z[i*d+k] - z[j*d+k]
				s += t * t
			}
			d2[i*N+j], d2[j*N+i] = float32(s), float32(s)
		}
	}
	return d2, n, m
}

// permutations draws b random window index sets of size n among N = n+m points.
func permutations(r *rand.Rand, b, n, N int) [][]int {
	out := make([][]int, b)
	for i := range out {
		out[i] = r.Perm(N)[:n]
	}
	return out
}

func identity(n int) []int {
	a := make([]int, n)
	for i := range a {
		a[i] = i
	}
	return a
}

// medianTest is alibi-detect's MMDDrift with its defaults but b permutations: Gaussian
// kernel exp(−d²/(2σ²)) with σ² = median(cross squared distances)/2 (alibi's sigma_median),
// unbiased MMD², p = (1 + #{permuted ≥ observed})/(b+1). It returns the p-value.
func medianTest(r *rand.Rand, x, y []float64, d, b int) float64 {
	d2, n, m := pooledD2(x, y, d)
	N := n + m
	cross := make([]float32, 0, n*m)
	for i := 0; i < n; i++ {
		cross = append(cross, d2[i*N+n:(i+1)*N]...)
	}
	slices.Sort(cross)
	sigma := math.Sqrt(float64(cross[len(cross)/2]) / 2)
	g := newGram(n, m)
	g.fillExp(d2, sigma)
	sets := append([][]int{identity(n)}, permutations(r, b, n, N)...)
	st := g.mmd2(newSplits(sets, N))
	ge := 1
	for _, v := range st[1:] {
		if v >= st[0] {
			ge++
		}
	}
	return float64(ge) / float64(b+1)
}

// aggTest is MMDAgg with uniform weights over Gaussian kernels at bandwidths on a dyadic
// grid from λ_min/2 to 2λ_max, λ_min and λ_max the smallest (or, when below 0.1, the 5%
// quantile of) and largest distances between the first 500 points of each sample — the
// range of mmdagg's default collection, with ratio 2 between neighbours so that each
// kernel matrix is the previous one to the 4th power (one exp per pair). b1 permutations
// estimate each bandwidth's quantiles (its p-value p_λ); b2 further permutations give the
// distribution of min_λ p_λ under the null, whose α-quantile u is the level-corrected
// threshold (mmdagg's bisection over u finds the same threshold on its grid). It reports
// whether the test rejects at level alpha.
func aggTest(r *rand.Rand, x, y []float64, d, b1, b2 int, alpha float64) bool {
	d2, n, m := pooledD2(x, y, d)
	N := n + m
	var ds []float64
	for i := 0; i < min(n, 500); i++ {
		for j := 0; j < min(m, 500); j++ {
			ds = append(ds, math.Sqrt(float64(d2[i*N+n+j])))
		}
	}
	slices.Sort(ds)
	lmin := ds[0]
	if lmin < 0.1 {
		lmin = math.Max(ds[len(ds)*5/100], 0.1)
	}
	lmax := math.Max(ds[len(ds)-1], 0.3)
	lo, hi := lmin/2, 2*lmax
	var sigmas []float64
	for s := hi; s > lo/2; s /= 2 {
		sigmas = append(sigmas, s)
	}
	sp := newSplits(append(permutations(r, b1+b2, n, N), identity(n)), N)
	L := len(sigmas)
	// stats[l][p]: permutation p's MMD² at bandwidth l; obsStat[l] the observed one.
	stats := make([][]float64, L)
	obsStat := make([]float64, L)
	cur, next := newGram(n, m), newGram(n, m)
	for l, s := range sigmas {
		if l == 0 {
			cur.fillExp(d2, s)
		} else {
			next.fillPow4(cur)
			cur, next = next, cur
		}
		st := cur.mmd2(sp)
		stats[l], obsStat[l] = st[:b1+b2], st[b1+b2]
	}
	// p-value of a statistic at bandwidth l against the b1 permutations (and itself).
	sorted := make([][]float64, L)
	for l := range sorted {
		sorted[l] = slices.Sorted(slices.Values(stats[l][:b1]))
	}
	pval := func(l int, s float64) float64 {
		ge := b1 - sort64(sorted[l], s)
		return float64(1+ge) / float64(b1+1)
	}
	minP := func(get func(l int) float64) float64 {
		mp := 1.0
		for l := range L {
			mp = math.Min(mp, pval(l, get(l)))
		}
		return mp
	}
	null := make([]float64, b2)
	for p := range b2 {
		null[p] = minP(func(l int) float64 { return stats[l][b1+p] })
	}
	slices.Sort(null)
	// The largest threshold u with #{null min-p ≤ u} ≤ α·b2.
	k := int(math.Floor(alpha * float64(b2)))
	u := 0.0
	for i, v := range null {
		if i+1 <= k && (i+1 == b2 || null[i+1] > v) {
			u = v
		}
	}
	return minP(func(l int) float64 { return obsStat[l] }) <= u
}

// sort64 is the number of values of the ascending s that are < v.
func sort64(s []float64, v float64) int {
	i, _ := slices.BinarySearch(s, v)
	return i
}
