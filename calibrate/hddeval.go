package calibrate

import (
	"fmt"

	"github.com/distfeat/distfeat/internal/stats"
	"github.com/distfeat/distfeat/spec"
)

// hddEval is what one candidate hdd family delivers on the sample, against the reference.
type hddEval struct {
	// R2Coef estimates R² of the exact kernel of the family's coefficient vectors,
	// exp(−‖A−A′‖²/2σ²), against the true kernel: the ceiling that any D approaches.
	R2Coef float64
	// Coef is R2Coef with its interval (truthInterval; lo = hi = R2Coef without a coarse
	// reference).
	Coef r2Interval
	// R2 estimates R² of the features' inner products against the true kernel (only with
	// features).
	R2 float64
	// Feat is R2 with its interval.
	Feat r2Interval
	// R2Smoothed is R² of the features against the exact kernel of the coefficient vectors
	// (the random-feature error alone).
	R2Smoothed float64
	// X, C and Ref are the features' kernel, the coefficient kernel and the reference
	// kernel, pair order.
	X, C, Ref []float64
	// RFFVar is the variance over pairs of X − C (the random-feature error).
	RFFVar float64
}

// embedFamily embeds every sampled set (full, and halves A and B when halves) with the
// one-family spec f and returns the named columns (nil entries for absent columns).
func (c *calibration) embedFamily(f spec.Family, halves bool, cols ...string) (full, a, b [][][]float32, err error) {
	emb, err := c.oneFamilyEmbedder(f)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("calibrate: family %s: %w", f.Name, err)
	}
	pick := func(vecs [][]float32) [][]float32 {
		out := make([][]float32, len(cols))
		for k, col := range cols {
			if idx := columnIndex(emb, col); idx >= 0 {
				out[k] = vecs[idx]
			}
		}
		return out
	}
	run := func(src func(k int) []float64) ([][][]float32, error) {
		vecs, err := c.embedWith(emb, src)
		if err != nil {
			return nil, err
		}
		out := make([][][]float32, len(vecs))
		for k, v := range vecs {
			out[k] = pick(v)
		}
		return out, nil
	}
	if full, err = run(func(k int) []float64 { return c.smp.raw[k] }); err != nil || !halves {
		return full, nil, nil, err
	}
	// The halves need only the coefficient vectors: the smallest random stage.
	if f.Features > 2 {
		f.Features = 2
		if emb, err = c.oneFamilyEmbedder(f); err != nil {
			return nil, nil, nil, fmt.Errorf("calibrate: family %s: %w", f.Name, err)
		}
	}
	if a, err = run(func(k int) []float64 { return c.smp.halfOf(c.smp.raw[k], k, true) }); err != nil {
		return nil, nil, nil, err
	}
	b, err = run(func(k int) []float64 { return c.smp.halfOf(c.smp.raw[k], k, false) })
	return full, a, b, err
}

// column returns column k of every set's picked columns.
func column(vecs [][][]float32, k int) [][]float32 {
	out := make([][]float32, len(vecs))
	for i, v := range vecs {
		out[i] = v[k]
	}
	return out
}

// evalHDD measures the hdd family f (its own sigma) against the reference ref; with
// features it also embeds the random Fourier stage.
func (c *calibration) evalHDD(f spec.Family, ref hddReference, features bool) (hddEval, error) {
	fc := f
	fc.Coefficients = true
	if !features {
		fc.Features = 2
	}
	full, a, b, err := c.embedFamily(fc, true, f.Name, f.Name+"_coef")
	if err != nil {
		return hddEval{}, err
	}
	sigma := f.Sigma
	cEst := pairEstimate{coefRho2(column(full, 1)), coefRho2(column(a, 1)), coefRho2(column(b, 1))}.kernels(sigma)
	rEst := ref.rho2.kernels(sigma)
	refK := ref.refKernels(sigma)
	dC, dR := cEst.diff(), rEst.diff()
	ev := hddEval{C: cEst.full, Ref: refK}
	var coarseK, coarseD []float64
	if ref.coarse != nil {
		coarseK, coarseD = ref.coarse.refKernels(sigma), ref.coarse.rho2.kernels(sigma).diff()
	}
	S := len(c.smp.raw)
	ev.Coef = truthInterval(cEst.full, refK, dC, dR, coarseK, coarseD, S)
	ev.R2Coef = ev.Coef.est
	if features {
		ev.X = innerPairs(column(full, 0))
		ev.Feat = truthInterval(ev.X, refK, dC, dR, coarseK, coarseD, S)
		ev.R2 = ev.Feat.est
		ev.R2Smoothed = stats.RSquared(ev.X, ev.C)
		e := make([]float64, len(ev.X))
		for k := range e {
			e[k] = ev.X[k] - ev.C[k]
		}
		ev.RFFVar = covariance(e, e)
	}
	return ev, nil
}
