package calibrate

import (
	"fmt"
	"math"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/distfeat/distfeat/embedding"
	"github.com/distfeat/distfeat/internal/stats"
	"github.com/distfeat/distfeat/spec"
)

// selfCheck embeds the sample with the proposed spec and compares, per family, the
// approximate Gram matrix (inner products of the features) over every pair i < j of sampled
// sets with the kernel between the true distributions as estimated by truth.go (hdd, mmd,
// l2 without a stage), or else with the exact kernel of the sample.
func (c *calibration) selfCheck() error {
	withCoef := *c.spec
	withCoef.Families = slices.Clone(c.spec.Families)
	for k := range withCoef.Families {
		if withCoef.Families[k].Kind == spec.KindHDD {
			withCoef.Families[k].Coefficients = true // adds a column, changes no draw
		}
	}
	emb, err := embedding.New(&withCoef)
	if err != nil {
		return fmt.Errorf("calibrate: proposed spec: %w", err)
	}
	full, err := c.embedAll(emb, false)
	if err != nil {
		return err
	}
	for _, t := range c.truths {
		ck := Check{Family: t.name, Kernel: t.kernel, Exact: t.exact, R2Smoothed: math.NaN(), Ceiling: math.NaN(),
			R2Lo: math.NaN(), R2Hi: math.NaN(), CeilingLo: math.NaN(), CeilingHi: math.NaN()}
		switch {
		case t.hddRef != nil:
			f := withCoef.Families[slices.IndexFunc(withCoef.Families, func(f spec.Family) bool { return f.Name == t.name })]
			ev, err := c.evalHDD(f, *t.hddRef, true)
			if err != nil {
				return err
			}
			ck.Approx, ck.Truth, ck.Pairs = ev.X, ev.Ref, len(ev.X)
			ck.R2, ck.R2Smoothed, ck.Ceiling = ev.R2, ev.R2Smoothed, ev.R2Coef
			ck.R2Lo, ck.R2Hi, ck.CeilingLo, ck.CeilingHi = ev.Feat.lo, ev.Feat.hi, ev.Coef.lo, ev.Coef.hi
			ck.MaxErr = maxAbsDiff(ck.Approx, ck.Truth)
		case t.estimate != nil:
			ck.Approx = innerPairs(familyVectors(full, columnIndex(emb, t.name)))
			ck.Pairs = len(ck.Approx)
			ck.R2 = t.estimate(ck.Approx)
		case t.mmd:
			c.checkMMD(&ck, t, innerPairs(familyVectors(full, columnIndex(emb, t.name))))
		case !t.exact:
			// A second stage on l2 coefficients: against its exact kernel on the sample
			// (the random-feature error only).
			ck.Approx, ck.Truth = innerPairs(familyVectors(full, columnIndex(emb, t.name))), t.pairs
			ck.Pairs = len(ck.Approx)
			ck.R2 = stats.RSquared(ck.Approx, ck.Truth)
			ck.MaxErr = maxAbsDiff(ck.Approx, ck.Truth)
		}
		c.res.Checks = append(c.res.Checks, ck)
	}
	return nil
}

// checkMMD fills an mmd family's check from its features' inner products over the pairs.
// The user's features are of the full sets; the reference is the exact kernel of m
// sub-sampled points, whose noise has variance v₁(m) + v₂(m) (first and second order,
// halvesNoise); the full sets' estimate shares its first-order noise v₁(n) = v₁(m)·m/n (the
// sub-sample is part of the full set; the shared second-order part is of order (m/n)²·v₂ and
// left out).
func (c *calibration) checkMMD(ck *Check, t familyTruth, approx []float64) {
	ck.Approx, ck.Truth, ck.Pairs = approx, t.pairs, len(t.pairs)
	ratio := make([]float64, len(c.smp.raw))
	for k := range ratio {
		ratio[k] = float64(len(c.smp.sub[k])) / float64(len(c.smp.raw[k]))
	}
	quarter, v2 := halvesNoiseParts(t.halfA, t.halfB, t.halfAB, t.halfBA)
	vx, vt := covariance(ck.Approx, ck.Approx), covariance(ck.Truth, ck.Truth)-(quarter-v2)
	cxt := covariance(ck.Approx, ck.Truth) - median(ratio)*(quarter-2*v2)
	ck.R2 = math.NaN()
	if vt > 0 && vx > 0 {
		ck.R2 = math.Min(1, math.Max(0, cxt*cxt/(vx*vt)))
	}
	ck.R2Smoothed = stats.RSquared(ck.Approx, ck.Truth)
	ck.MaxErr = maxAbsDiff(ck.Approx, ck.Truth)
}

// familyVectors is one family's column of every set's feature vectors.
func familyVectors(full [][][]float32, col int) [][]float32 {
	sets := make([][]float32, len(full))
	for k, v := range full {
		sets[k] = v[col]
	}
	return sets
}

// maxAbsDiff is max_k |a_k − b_k|.
func maxAbsDiff(a, b []float64) float64 {
	m := 0.0
	for k := range a {
		m = math.Max(m, math.Abs(a[k]-b[k]))
	}
	return m
}

// embedAll embeds every sampled set (or its sub-sample) in parallel; the output order is
// the sample's order and each set's vectors do not depend on scheduling.
func (c *calibration) embedAll(emb *embedding.Embedder, sub bool) ([][][]float32, error) {
	return c.embedWith(emb, func(k int) []float64 {
		if sub {
			return c.smp.subRaw(k)
		}
		return c.smp.raw[k]
	})
}

// embedWith embeds the raw points src(k) of every sampled set k in parallel.
func (c *calibration) embedWith(emb *embedding.Embedder, src func(k int) []float64) ([][][]float32, error) {
	S := len(c.smp.raw)
	out := make([][][]float32, S)
	errs := make([]error, S)
	var next, done atomic.Int64
	var mu sync.Mutex
	var wg sync.WaitGroup
	for w := 0; w < c.opts.Workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				k := int(next.Add(1) - 1)
				if k >= S || c.ctx.Err() != nil {
					return
				}
				x := src(k)
				u := make([]float64, len(x))
				if _, err := emb.Normalize(u, x); err != nil {
					errs[k] = fmt.Errorf("calibrate: set %q: %w", c.smp.ids[k], err)
					continue
				}
				out[k] = emb.Embed(u)
				mu.Lock()
				c.opts.progress("embedding the sample", int(done.Add(1)), S)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if err := c.ctx.Err(); err != nil {
		return nil, err
	}
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

func columnIndex(emb *embedding.Embedder, name string) int {
	return slices.IndexFunc(emb.Columns(), func(col embedding.Column) bool { return col.Name == name })
}

// means are the means of x and y (of equal, non-zero length).
func means(x, y []float64) (mx, my float64) {
	n := float64(len(x))
	for i := range x {
		mx += x[i]
		my += y[i]
	}
	return mx / n, my / n
}
