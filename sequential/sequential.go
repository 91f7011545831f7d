// Package sequential is a CUSUM change detector on a stream of per-window p-values, with a
// threshold calibrated so that, while nothing changes, the expected number of windows
// between false alarms (the expected run time, ERT) is the one asked for.
//
// # Statistic
//
// Each window contributes its evidence E = −ln p (p its two-sample p-value, floored at
// e^−EMax), an Exp(1) variable while the window matches the reference. The detector keeps
//
//	S_t = max(0, S_{t−1} + J_t),  J_t = round(c·(E_t − K))
//
// and alarms when S_t ≥ H. K (default 1.5) is the reference value: windows whose evidence
// averages more than K push S up, the others pull it down; it is the log-likelihood-ratio
// CUSUM of Exp(1) against an exponential law of mean m with K = ln m/(1 − 1/m) (m ≈ 2.4 for
// K = 1.5). S is kept in integer units of 1/c (c the scale): the increments and the state are integers, so the detector is an exact
// finite Markov chain under the null and its run length can be computed, not simulated.
//
// # Calibration
//
// With p uniform (the two-sample test's p-values are, while the stream matches the
// reference: docs/drift.md), J has a known law: P(J = j) = P(E ∈ [K + (j−½)/c, K + (j+½)/c)).
// With H states 0 … H−1 before the alarm, the mean run length from S = 0 solves the H×H
// linear system L = 1 + Q·L (Q the transitions between non-alarm states). H is fixed
// (Levels) and the scale c is found by regula falsi until L_0 equals the ERT to a relative
// 10⁻⁹ (the solve's rounding allows about that up to ERT 10⁶, only 2·10⁻³ at 10⁷, hence
// MaxERT): the threshold is h = H/c in units of E. The run time is not continuous in c: it
// jumps where the top increment (evidence capped at EMax) starts to cross the threshold, and
// with a large K and ERT the jump can straddle the ERT (K 2.5 at ERT 10⁵): Calibrate then
// returns an error rather than another run time. It costs a handful of H×H solves, under
// a second for any ERT, and reads nothing but the ERT and K: the reference's simulated null
// is what makes the p-values uniform.
//
// # Dependent windows
//
// The calibration assumes independent windows. When the stream wanders from window to
// window (and its reference too, which twosample's between-windows null allows), the
// evidence of consecutive windows is correlated: small excesses persist, and the CUSUM
// climbs further than independent windows would take it. Persistent raises the threshold by
// the evidence's persistence R = 1 + 2Σ_h ρ_h (its long-run variance over its variance,
// measured by twosample on the reference's windows, the second half as a stream against the
// first): in the diffusion approximation of the CUSUM
// the run time depends on h/σ², and dependence multiplies σ² by R. It is an approximation,
// measured in docs/drift.md (Correlated windows): close for K = 3, still short for K = 1.5,
// whose run time rests on short clusters of large evidence more than on the variance.
//
// # After an alarm
//
// The state resets to 0, so false alarms form a renewal process: the mean number of windows
// between two of them is the ERT, and an ongoing change alarms again after about the
// detection delay.
//
// # Determinism
//
// Logarithms and exponentials come from internal/numeric (the same bits on every
// architecture) and every product is rounded explicitly, so the calibrated scale, the
// threshold and every state are the same bits everywhere.
package sequential

import (
	"errors"
	"fmt"
	"math"

	"github.com/distfeat/distfeat/internal/numeric"
)

// Defaults and limits.
const (
	// DefaultK is the default reference value K.
	DefaultK = 1.5
	// Levels is H, the number of non-alarm states of the integer CUSUM.
	Levels = 256
	// EMax caps a window's evidence −ln p (p ≥ e^−12 ≈ 6·10⁻⁶): one window cannot carry more.
	// The two-sample test's p-values are at least 1/4001 (E ≤ 8.3), so it never binds there.
	EMax = 12.0
	// MinERT and MaxERT bound the ERT (in windows).
	MinERT = 10.0
	MaxERT = 1e6
)

// ErrConfig is wrapped by Calibrate's errors.
var ErrConfig = errors.New("sequential: invalid configuration")

// Detector is a calibrated CUSUM: read-only, safe for concurrent use; each stream keeps its
// own State.
type Detector struct {
	k     float64 // reference value K
	scale float64 // c: integer units per unit of evidence
	ert   float64 // the ERT asked for
	arl   float64 // the exact null mean run length at scale (= ert to 10⁻⁹)
	ranks int     // 0: p uniform on (0, 1]; n: ranks among n (CalibrateRanks)
}

// arlAt is the exact null mean run length at the scale, for the detector's law of p.
func (d *Detector) arlAt(scale float64) float64 {
	if d.ranks == 0 {
		return NullARL(d.k, scale, Levels)
	}
	lo, pmf := rankPMF(d.k, scale, d.ranks)
	return chainARL(lo, pmf, Levels)
}

// Calibrate returns the detector whose null mean run length is ert windows, for the
// reference value k (0: DefaultK).
func Calibrate(ert, k float64) (*Detector, error) { return calibrate(ert, k, 0) }

// CalibrateRanks is Calibrate for p-values that are ranks among n null statistics, uniform
// on {1/(n+1), 2/(n+1), …, 1} rather than on (0, 1] (twosample's between-windows null):
// evidence never exceeds ln(n+1), and a CUSUM calibrated for the continuous law would run
// several times longer than the ERT on them (2.3× at ERT 1000, K = 1.5, n = 700:
// docs/drift.md). The chain is the same, with that discrete law; its run time is a step
// function of the threshold, and where a step straddles the ERT (a large k: one window's
// capped evidence starts to cross the threshold) the threshold above it is taken, so NullARL
// may exceed the ERT.
func CalibrateRanks(ert, k float64, n int) (*Detector, error) {
	if n < 1 {
		return nil, fmt.Errorf("ranks among %d null statistics: need at least 1: %w", n, ErrConfig)
	}
	return calibrate(ert, k, n)
}

// calibrate is Calibrate (ranks 0) and CalibrateRanks.
func calibrate(ert, k float64, ranks int) (*Detector, error) {
	if k == 0 {
		k = DefaultK
	}
	switch {
	case !(ert >= MinERT && ert <= MaxERT):
		return nil, fmt.Errorf("ert %v: need a value in [%v, %v] windows: %w", ert, MinERT, MaxERT, ErrConfig)
	case !(k >= 1.05 && k <= 6):
		// K ≤ 1 is the null mean of E: S would drift upwards and alarm in a few windows.
		return nil, fmt.Errorf("k %v: need a value in [1.05, 6]: %w", k, ErrConfig)
	}
	// The run length falls as the scale grows (the threshold H/c falls). Bracket in log c
	// from above: at c = 4H (h = ¼) any window with E ≥ K + ¼ alarms, a run length of a few
	// windows; halving c then raises it until it passes the ERT. (Far beyond the ERT, at
	// run lengths of 10¹⁵ and more, the solve loses its precision: the bracket never goes
	// there.)
	d := &Detector{k: k, ert: ert, ranks: ranks}
	arl := d.arlAt
	hi := float64(4 * Levels)
	if a := arl(hi); a >= ert {
		return nil, fmt.Errorf("ert %v: with k %v the shortest run time is %.0f windows (about e^k); lower k: %w", ert, k, a, ErrConfig)
	}
	lo := hi
	for arl(lo) < ert {
		hi = lo
		lo /= 2
		if lo < 1e-2 {
			return nil, fmt.Errorf("ert %v unreachable with k %v: %w", ert, k, ErrConfig)
		}
	}
	// Regula falsi (Illinois) on f(x) = ln L₀ − ln ERT in x = 1/c: ln L₀ is nearly linear in
	// the threshold H/c, so a few solves reach 10⁻⁹ where bisection needs about 35.
	f := func(c float64) float64 { return numeric.Log(arl(c)) - numeric.Log(ert) }
	xa, xb := 1/lo, 1/hi // f(xa) ≥ 0 > f(xb)
	fa, fb := f(lo), f(hi)
	d.scale = lo
	// Rank p-values take n+1 values, so the run time is a step function of the scale: within
	// 1% of the ERT is the aim there (far below one deployment's spread), and where a step
	// straddles the ERT the threshold above it is taken; 10⁻⁶ (reached: 10⁻⁹) otherwise.
	tol := 1e-8
	if ranks > 0 {
		tol = 1e-2
	}
	side := 0
	for range 100 {
		x := xb - fb*(xb-xa)/(fb-fa)
		if !(x > min(xa, xb) && x < max(xa, xb)) {
			x = (xa + xb) / 2
		}
		fx := f(1 / x)
		d.scale = 1 / x
		if math.Abs(fx) <= tol/10 || xa == xb {
			break
		}
		if fx >= 0 {
			xa, fa = x, fx
			if side == -1 {
				fb /= 2
			}
			side = -1
		} else {
			xb, fb = x, fx
			if side == 1 {
				fa /= 2
			}
			side = 1
		}
	}
	d.arl = arl(d.scale)
	if ranks > 0 && d.arl < float64((1-tol)*ert) {
		// A step of the run time straddles the ERT: the threshold above it, so that false
		// alarms come no sooner than asked (NullARL says how much later).
		d.scale = 1 / xa
		d.arl = arl(d.scale)
	}
	if ranks == 0 && math.Abs(d.arl/ert-1) > 1e-6 {
		// The run time jumps where the top increment (a window's evidence capped at EMax)
		// crosses the threshold: with a large k and ERT the jump can straddle the ERT.
		return nil, fmt.Errorf("ert %v is out of reach with k %v: the run time jumps across it (to %.6g windows) where one window's capped evidence (%v) can cross the threshold; lower k or choose another ert: %w",
			ert, k, d.arl, EMax, ErrConfig)
	}
	return d, nil
}

// K is the reference value.
func (d *Detector) K() float64 { return d.k }

// ERT is the expected run time asked for, in windows.
func (d *Detector) ERT() float64 { return d.ert }

// NullARL is the exact mean run length under the null of the calibrated chain (equal to
// ERT to a relative 10⁻⁹).
func (d *Detector) NullARL() float64 { return d.arl }

// Threshold is h = H/c in units of evidence: the alarm fires when Statistic ≥ Threshold.
func (d *Detector) Threshold() float64 { return Levels / d.scale }

// Persistent returns the detector with its threshold multiplied by r, the persistence of the
// windows' evidence (package doc, Dependent windows); r ≤ 1 returns d itself. NullARL is
// then the run time the raised threshold would have for independent windows (longer than
// the ERT); ERT and K are unchanged.
func (d *Detector) Persistent(r float64) *Detector {
	if !(r > 1) {
		return d
	}
	c := *d
	c.scale = d.scale / r
	c.arl = solvable(c.arlAt(c.scale))
	return &c
}

// Increment is J = round(c·(min(−ln p, EMax) − K)) for the window's p-value p ∈ (0, 1].
// A p-value outside (0, 1] (NaN included) counts as 1: no evidence.
func (d *Detector) Increment(p float64) int64 {
	e := 0.0
	if p > 0 && p < 1 {
		e = min(-numeric.Log(p), EMax)
	}
	return roundHalfUp(float64(d.scale * (e - d.k)))
}

// State is one stream's detector state: two integers, carried from window to window.
type State struct {
	// S is the statistic in units of 1/c.
	S int64
	// Run is the number of consecutive windows, ending with the last, over which S has
	// been positive: the change is estimated to have begun Run windows ago.
	Run int64
}

// Step is the outcome of one window.
type Step struct {
	// Statistic is S after the window (before a reset), in units of evidence.
	Statistic float64
	// Alarm is whether S reached the threshold at this window.
	Alarm bool
	// Run is, on an alarm, how many windows back the change is estimated to have begun
	// (the windows since S last left 0, this one included); otherwise the current run.
	Run int64
}

// Update folds one window's p-value into st and returns the new state and the window's
// outcome. On an alarm the returned state is reset (S = 0).
func (d *Detector) Update(st State, p float64) (State, Step) {
	s := st.S + d.Increment(p)
	run := st.Run + 1
	if s <= 0 {
		s, run = 0, 0
	}
	step := Step{Statistic: float64(s) / d.scale, Alarm: s >= Levels, Run: run}
	if step.Alarm {
		return State{}, step
	}
	return State{S: s, Run: run}, step
}

// roundHalfUp rounds x to the nearest integer, halves up.
func roundHalfUp(x float64) int64 { return int64(math.Floor(x + 0.5)) }

// NullPMF is the law of the increment J = round(c·(min(E, EMax) − K)) for E ~ Exp(1): the
// probabilities of J = lo, lo+1, …, lo+len−1.
func NullPMF(k, scale float64) (lo int64, pmf []float64) { return pmfAt(k, scale, 1) }

// rankPMF is the law of J for p uniform on {1/(n+1), …, 1}: E = −ln(i/(n+1)), i = 1 … n+1,
// each with probability 1/(n+1).
func rankPMF(k, scale float64, n int) (lo int64, pmf []float64) {
	lo = roundHalfUp(float64(scale * -k)) // i = n+1: E = 0
	hi := roundHalfUp(float64(scale * (min(-numeric.Log(1/float64(n+1)), EMax) - k)))
	pmf = make([]float64, hi-lo+1)
	w := 1 / float64(n+1)
	for i := 1; i <= n+1; i++ {
		e := 0.0
		if i <= n {
			e = min(-numeric.Log(float64(i)/float64(n+1)), EMax)
		}
		pmf[roundHalfUp(float64(scale*(e-k)))-lo] += w
	}
	return lo, pmf
}

// pmfAt is the law of J for evidence E exponential with mean mu (NullPMF: mu = 1).
func pmfAt(k, scale, mu float64) (lo int64, pmf []float64) {
	lo = roundHalfUp(float64(scale * -k))
	hi := roundHalfUp(float64(scale * (EMax - k)))
	// J ≤ j  ⇔  E < K + (j+½)/c: survival S(j) = P(E ≥ K + (j+½)/c) = e^−(K + (j+½)/c)/μ.
	surv := func(j int64) float64 { return numeric.Exp(-(k + (float64(j)+0.5)/scale) / mu) }
	pmf = make([]float64, hi-lo+1)
	prev := 1.0
	for j := lo; j < hi; j++ {
		s := surv(j)
		pmf[j-lo] = prev - s
		prev = s
	}
	pmf[hi-lo] = prev // the capped tail E ≥ EMax and its rounding bin
	return lo, pmf
}

// NullARL is the exact mean run length from S = 0 of the integer CUSUM with h states and
// scale c, for uniform p-values.
func NullARL(k, scale float64, h int) float64 {
	lo, pmf := NullPMF(k, scale)
	return chainARL(lo, pmf, h)
}

// chainARL solves L = 1 + Q·L for the CUSUM S' = max(0, S + J) on states 0 … h−1 (J with
// law pmf starting at lo; S + J ≥ h is the alarm) and returns L_0. I − Q is a non-singular
// M-matrix, so Gaussian elimination without pivoting is stable.
func chainARL(lo int64, pmf []float64, h int) float64 {
	a := make([]float64, h*h)
	b := make([]float64, h)
	for i := range h {
		row := a[i*h : (i+1)*h]
		row[i] = 1
		b[i] = 1
		for t, q := range pmf {
			j := int64(i) + lo + int64(t)
			switch {
			case j >= int64(h):
			case j <= 0:
				row[0] -= q
			default:
				row[j] -= q
			}
		}
	}
	for c := range h {
		piv := a[c*h+c]
		for r := c + 1; r < h; r++ {
			f := a[r*h+c] / piv
			if f == 0 {
				continue
			}
			rr, rc := a[r*h:(r+1)*h], a[c*h:(c+1)*h]
			for j := c; j < h; j++ {
				rr[j] -= float64(f * rc[j])
			}
			b[r] -= float64(f * b[c])
		}
	}
	for r := h - 1; r >= 0; r-- {
		s := b[r]
		for j := r + 1; j < h; j++ {
			s -= float64(a[r*h+j] * b[j])
		}
		b[r] = s / a[r*h+r]
	}
	return b[0]
}
