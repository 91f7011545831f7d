package sequential

import (
	"math"

	"github.com/distfeat/distfeat/internal/numeric"
)

// One deployment's run time depends on its reference (docs/drift.md): every window is
// compared with the same reference sample, whose sampling error is shared by all of them, so
// the windows' evidence −ln p has a mean μ that differs from 1 by a reference-to-reference
// spread, and the CUSUM's run time is exponential in μ. The functions here estimate that
// spread from the reference's size and turn it into a range of run times, for the start-up
// warning of the worker and `embed`.

// Spread model: ±spreadAt·(m/spreadPoints)^−spreadExponent, the least-squares line in logs
// through TestStudyReferenceSpread's measurements (Gaussian data, the default collection,
// 30 references per size): ±0.21, 0.08, 0.07 for m = 2000, 8000, 32000 and windows of 100
// points, ±0.21, 0.10, 0.05 for windows of 400, and an earlier ±0.14, 0.09 (100 points). The
// window's size made no measurable difference between 100 and 400 points; each value has
// a sampling error of about 20%.
const (
	spreadAt       = 0.17
	spreadPoints   = 2000.0
	spreadExponent = 0.4
)

// maxSpread bounds the spread Advise uses: the model is measured from 2000 points up, and a
// much smaller reference would extrapolate it past evidence levels of ½.
const maxSpread = 0.5

// EvidenceSpread estimates the standard deviation, across references of m points, of the
// mean evidence −ln p of windows tested against one reference (0 for m ≤ 0).
func EvidenceSpread(m int64) float64 {
	if m <= 0 {
		return 0
	}
	return spreadAt * numeric.Exp(-spreadExponent*numeric.Log(float64(m)/spreadPoints))
}

// RunTimeAt is the detector's mean run length, in windows, when the windows' evidence is
// exponential with mean mu instead of 1 (the same Markov chain, its increments' law that of
// round(c·(min(E, EMax) − K)) for that E). Past about 10¹⁵ windows the solve loses its
// precision (it can even turn negative): such run times are +Inf.
func (d *Detector) RunTimeAt(mu float64) float64 {
	lo, pmf := pmfAt(d.k, d.scale, mu)
	return solvable(chainARL(lo, pmf, Levels))
}

// solvable is a run time from chainARL, or +Inf past about 10¹⁵ windows, where the solve
// loses its precision (it can even turn negative).
func solvable(v float64) float64 {
	if v > 0 && v < 1e15 {
		return v
	}
	return math.Inf(1)
}

// ReferenceAdvice is what a reference's size means for one deployment's false alarms.
type ReferenceAdvice struct {
	// Spread is the estimated spread of the evidence level (EvidenceSpread, at most ½).
	Spread float64
	// Short and Long are the run times between false alarms, in windows, at evidence
	// levels 1 + Spread and 1 − Spread: about two references in three fall between them.
	Short, Long float64
	// Points is the reference size whose spread keeps both within ±Within of the ERT.
	Points int64
	// Within is the tolerance Points is for (0.2).
	Within float64
}

// Advise estimates the spread of one deployment's run time for a reference of m points, and
// the reference size that keeps it within ±20% of the ERT (beyond the measured sizes, an
// extrapolation of the spread model).
func (d *Detector) Advise(m int64) ReferenceAdvice {
	const within = 0.2
	s := min(EvidenceSpread(m), maxSpread)
	a := ReferenceAdvice{Spread: s, Short: d.RunTimeAt(1 + s), Long: d.RunTimeAt(1 - s), Within: within}
	// The largest spread whose run times stay within ±20% (the run time falls as μ grows):
	// bisection on s, then the model inverted for m.
	// (The products rounded explicitly: this package is on the feature path, where no product
	// may be fused into an addition, such as mid's into 1 ± s; docs/CONTRACTS.md.)
	shortest, longest := float64((1-within)*d.ert), float64((1+within)*d.ert)
	ok := func(s float64) bool {
		return d.RunTimeAt(1+s) >= shortest && d.RunTimeAt(1-s) <= longest
	}
	lo, hi := 0.0, 0.5
	for range 16 {
		mid := float64((lo + hi) / 2)
		if ok(mid) {
			lo = mid
		} else {
			hi = mid
		}
	}
	if lo > 0 {
		// s = spreadAt·(m/spreadPoints)^−b  ⇔  m = spreadPoints·(spreadAt/s)^(1/b).
		a.Points = int64(math.Ceil(spreadPoints * numeric.Exp(numeric.Log(spreadAt/lo)/spreadExponent)))
	}
	return a
}
