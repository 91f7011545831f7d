package twosample

import (
	"fmt"
	"math"
	"slices"

	"github.com/distfeat/distfeat/internal/numeric"
)

// Result is one window's test.
type Result struct {
	// MMD2 is the unbiased MMD² between the window and the whole reference for the kernel
	// averaging the K bands' Gaussian kernels, estimated with the random features; 0 for
	// windows of fewer than 2 points.
	MMD2 float64
	// Statistic is the aggregated statistic −ln min_k(p_k/w_k) (larger is more evidence
	// of drift); its null distribution is simulated from the reference.
	Statistic float64
	// PValue is the test's p-value: the fraction of simulated null draws whose
	// aggregated statistic is at least the window's, (1 + #)/(NullDraws + 1), interpolated
	// in 1/n between the simulated window sizes around the window's.
	PValue float64
	// N is the window's point count.
	N int64
	// T are T_mean, T_mom and T_rff; P their p-values against their simulated nulls at
	// the window's size.
	T, P [3]float64
	// BandMMD2 is the unbiased MMD² of each band's Gaussian kernel alone.
	BandMMD2 []float64
}

// Test runs the test on the window, which must come from the reference's feature map.
// An empty window has statistic 0 and p-value 1.
func (r *Reference) Test(w *Window) (Result, error) {
	if w.fm != r.fm {
		return Result{}, fmt.Errorf("test a window of another feature map: %w", ErrIncompatible)
	}
	D, K := r.fm.Features(), r.fm.Bands()
	res := Result{N: w.n, PValue: 1, P: [3]float64{1, 1, 1}, BandMMD2: make([]float64, K)}
	if w.n == 0 {
		return res, nil
	}
	n := float64(w.n)
	mu := make([]float64, D)
	for i, s := range w.Sums() {
		mu[i] = fromFixed(s) / n
	}
	if w.n >= 2 {
		res.MMD2 = r.mmd2(mu, n, res.BandMMD2)
	}
	sc := math.Sqrt(1 / (1/n + 1/float64(r.mB)))
	g := make([]float64, D)
	for i := range g {
		g[i] = float64(mu[i]-r.meanB[i]) * sc
	}
	res.T = r.statistics(g, make([]float64, D), make([]float64, D))
	if r.between.Windows > 0 {
		res.P, res.PValue = r.windows.pvalues(r, res.T)
		res.Statistic = -numeric.Log(r.minQ(res.P))
		return res, nil
	}
	// The null at the window's size: g's covariance is Σ·(1/n)/(1/n + 1/m_B) from the
	// window and the rest from part B's mean, so its departure from a Gaussian is that of a
	// window of n/s² points, s the window's share (the variance excess of the statistics
	// scales as s²/n). Its p-values are interpolated linearly in 1/n between the two
	// simulated nulls around it (the Gaussian limit at 1/n = 0); smaller windows than the
	// smallest bootstrap size use that size's null.
	s := (1 / n) * sc * sc
	inv := float64(s*s) / n
	lo, hi, lam := r.bracket(inv)
	pl, ql := r.nullP(&r.nulls[lo], res.T)
	ph, qh := r.nullP(&r.nulls[hi], res.T)
	for k := range res.P {
		res.P[k] = pl[k] + float64(lam*(ph[k]-pl[k]))
	}
	res.PValue = ql + float64(lam*(qh-ql))
	res.Statistic = -numeric.Log(r.minQ(res.P))
	return res, nil
}

// mmd2 is the unbiased MMD² between a window with feature means mu (n ≥ 2 points) and the
// reference, in total and per band (written to band): for unit-norm features z,
// MMD²_u = (n|z̄_W|² − 1)/(n − 1) + (m|z̄_R|² − 1)/(m − 1) − 2 z̄_W·z̄_R.
func (r *Reference) mmd2(mu []float64, n float64, band []float64) float64 {
	F, o := r.fm.freqs, r.fm.moments()
	m := float64(r.m)
	total := 0.0
	for k := range band {
		ww, wr := 0.0, 0.0
		lo, hi := o+2*F*k, o+2*F*(k+1)
		for i := lo; i < hi; i++ {
			ww += float64(mu[i] * mu[i])
			wr += float64(mu[i] * r.meanR[i])
		}
		ww /= float64(F)
		wr /= float64(F)
		band[k] = (float64(n*ww)-1)/(n-1) + (float64(m*r.zBand2[k])-1)/(m-1) - 2*wr
		total += band[k]
	}
	return total / float64(len(band))
}

// Vector is the result as the family's output vector, in the documented order:
// [mmd2, statistic, p_value, n, T_mean, p_mean, T_mom, p_mom, T_rff, p_rff,
// mmd2 of band 1 … band K].
func (res *Result) Vector() []float64 {
	out := []float64{res.MMD2, res.Statistic, res.PValue, float64(res.N),
		res.T[0], res.P[0], res.T[1], res.P[1], res.T[2], res.P[2]}
	return append(out, res.BandMMD2...)
}

// bracket returns the nulls around the inverse window size inv (indices into r.nulls,
// increasing inv) and the interpolation weight of the second.
func (r *Reference) bracket(inv float64) (lo, hi int, lam float64) {
	last := len(r.nulls) - 1
	if inv >= r.nulls[last].inv {
		return last, last, 0
	}
	for lo = 0; r.nulls[lo+1].inv <= inv; lo++ {
	}
	a, b := r.nulls[lo].inv, r.nulls[lo+1].inv
	return lo, lo + 1, (inv - a) / (b - a)
}

// nullP returns the p-values of the statistics t against one simulated null (after its
// covariance-estimation correction) and the aggregated p-value.
func (r *Reference) nullP(ns *nullSet, t [3]float64) (p [3]float64, agg float64) {
	for k := range p {
		p[k] = pk(ns.t[k], ns.mean[k]+float64((t[k]-ns.mean[k])*ns.stretch[k]))
	}
	q := r.minQ(p)
	i, found := slices.BinarySearch(ns.q, q)
	for found && i < len(ns.q) && ns.q[i] == q {
		i++
	}
	return p, float64(1+i) / float64(len(ns.q)+1)
}
