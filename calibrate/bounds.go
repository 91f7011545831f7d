package calibrate

import (
	"fmt"
	"math"
	"slices"
	"strconv"
)

// Bounds rule: per axis, the QuantileLo and QuantileHi quantiles of the pooled sampled
// points, widened on each side by Margin times their distance, then rounded outward to
// three significant digits of the width. Robust quantiles ignore a few wild points (which
// are then clipped, and counted) instead of letting them squash the bulk of the data into a
// corner of the unit cube, where every bandwidth would have to be tiny.
const (
	QuantileLo = 0.001
	QuantileHi = 0.999
	Margin     = 0.05
	// maxPooled bounds the pooled values sorted per axis (a deterministic stride beyond).
	maxPooled = 1 << 21
)

// BoundsProposal is the proposed bounds with the numbers behind them.
type BoundsProposal struct {
	QLo, QHi []float64 // the per-axis quantiles
	Lo, Hi   []float64 // proposed bounds
	Clipped  float64   // fraction of the sampled points with a coordinate outside [Lo, Hi]
	Pooled   int       // points the quantiles were computed from
}

// proposeBounds computes the bounds proposal from the raw sampled sets.
func proposeBounds(raw [][]float64, dim int) BoundsProposal {
	total := 0
	for _, r := range raw {
		total += len(r) / dim
	}
	stride := max(1, (total+maxPooled-1)/maxPooled)
	b := BoundsProposal{QLo: make([]float64, dim), QHi: make([]float64, dim), Lo: make([]float64, dim), Hi: make([]float64, dim)}
	col := make([]float64, 0, total/stride+1)
	for j := 0; j < dim; j++ {
		col = col[:0]
		k := 0
		for _, r := range raw {
			for i := j; i < len(r); i += dim {
				if k%stride == 0 {
					col = append(col, r[i])
				}
				k++
			}
		}
		slices.Sort(col)
		b.Pooled = len(col)
		b.QLo[j], b.QHi[j] = quantileSorted(col, QuantileLo), quantileSorted(col, QuantileHi)
		b.Lo[j], b.Hi[j] = widen(b.QLo[j], b.QHi[j])
	}
	var out, n int
	for _, r := range raw {
		for i := 0; i < len(r); i += dim {
			n++
			for j := 0; j < dim; j++ {
				if r[i+j] < b.Lo[j] || r[i+j] > b.Hi[j] {
					out++
					break
				}
			}
		}
	}
	b.Clipped = float64(out) / float64(n)
	return b
}

// widen applies the margin and the outward rounding; a constant axis gets a unit width.
func widen(qlo, qhi float64) (lo, hi float64) {
	w := qhi - qlo
	if !(w > 0) {
		return roundDown(qlo-0.5, 1), roundUp(qhi+0.5, 1)
	}
	lo, hi = qlo-Margin*w, qhi+Margin*w
	step := math.Pow(10, math.Floor(math.Log10(hi-lo))-2)
	return roundDown(lo, step), roundUp(hi, step)
}

// roundDown/roundUp round to a multiple of step (a power of ten) and clean the decimal
// representation (0.30000000000000004 → 0.3).
func roundDown(v, step float64) float64 { return tidy(math.Floor(v/step)*step, step) }
func roundUp(v, step float64) float64   { return tidy(math.Ceil(v/step)*step, step) }

func tidy(v, step float64) float64 {
	digits := max(0, int(-math.Floor(math.Log10(step)+1e-9)))
	t, err := strconv.ParseFloat(strconv.FormatFloat(v, 'f', digits, 64), 64)
	if err != nil {
		return v
	}
	return t
}

// quantileSorted is the type-7 (linear interpolation) quantile of sorted data.
func quantileSorted(x []float64, p float64) float64 {
	if len(x) == 0 {
		return math.NaN()
	}
	h := p * float64(len(x)-1)
	i := int(math.Floor(h))
	if i >= len(x)-1 {
		return x[len(x)-1]
	}
	return x[i] + (h-float64(i))*(x[i+1]-x[i])
}

// median of unsorted data (the input is not modified).
func median(x []float64) float64 {
	s := slices.Clone(x)
	slices.Sort(s)
	return quantileSorted(s, 0.5)
}

func (b BoundsProposal) notes() []Note {
	return []Note{
		{Field: "bounds.lo", Value: fmtVec(b.Lo), Rule: fmt.Sprintf("per-axis %.1f%% quantile %s of %d pooled points − %.0f%% of the quantile range, rounded down", 100*QuantileLo, fmtVec(b.QLo), b.Pooled, 100*Margin)},
		{Field: "bounds.hi", Value: fmtVec(b.Hi), Rule: fmt.Sprintf("per-axis %.1f%% quantile %s + %.0f%% of the quantile range, rounded up; %.3f%% of the sampled points would be clipped", 100*QuantileHi, fmtVec(b.QHi), 100*Margin, 100*b.Clipped)},
	}
}

func fmtVec(v []float64) string {
	s := "["
	for i, x := range v {
		if i > 0 {
			s += ", "
		}
		if i == 8 && len(v) > 10 {
			s += fmt.Sprintf("… %d more", len(v)-8)
			break
		}
		s += strconv.FormatFloat(x, 'g', 4, 64)
	}
	return s + "]"
}
