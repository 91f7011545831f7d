package calibrate

import (
	"fmt"
	"math"
	"slices"

	"github.com/distfeat/distfeat/embedding"
)

// sample is the part of the input the calibration looks at: at most MaxSets sets, each
// also sub-sampled to at most MaxPoints points for the O(n·m) exact mean-map kernels.
type sample struct {
	dim  int
	ids  []string
	raw  [][]float64 // raw points of each sampled set
	full [][]float64 // normalised (after normalise)
	sub  [][]float64 // normalised sub-sample of each set (after normalise)
	pick [][]int     // indices of the sub-sampled points in raw
	half [][]bool    // per set, which points are in half A (splitHalves)
}

// newSample chooses the sets and the sub-sampled points with the frozen RNG (streams
// "calibrate/sets" and "calibrate/points/<i>"), keeping input order; it rejects
// non-finite coordinates and partial points.
func newSample(sets []Set, dim int, seed uint64, o Options) (*sample, error) {
	for _, s := range sets {
		if len(s.Points)%dim != 0 {
			return nil, fmt.Errorf("calibrate: set %q: %d values are not whole points of dim %d", s.ID, len(s.Points), dim)
		}
		for k, v := range s.Points {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return nil, fmt.Errorf("calibrate: set %q: point %d: non-finite coordinate %v", s.ID, k/dim, v)
			}
		}
	}
	idx := choose(embedding.NewRNG(seed, "calibrate/sets"), len(sets), o.MaxSets)
	smp := &sample{dim: dim}
	for _, i := range idx {
		s := sets[i]
		n := len(s.Points) / dim
		smp.ids = append(smp.ids, s.ID)
		smp.raw = append(smp.raw, s.Points)
		smp.pick = append(smp.pick, choose(embedding.NewRNG(seed, fmt.Sprintf("calibrate/points/%d", i)), n, o.MaxPoints))
	}
	return smp, nil
}

// choose returns k of the indices 0..n−1 (all when n ≤ k), sorted, by a partial
// Fisher–Yates shuffle.
func choose(rng *embedding.RNG, n, k int) []int {
	idx := make([]int, n)
	for i := range idx {
		idx[i] = i
	}
	if n <= k {
		return idx
	}
	for i := 0; i < k; i++ {
		j := i + intn(rng, n-i)
		idx[i], idx[j] = idx[j], idx[i]
	}
	idx = idx[:k]
	slices.Sort(idx)
	return idx
}

// intn is a uniform draw in [0, n) (53-bit float scaling: the bias is below 2⁻²⁰ for the
// sizes used here).
func intn(rng *embedding.RNG, n int) int {
	return min(int(rng.Float64()*float64(n)), n-1)
}

func (s *sample) points() int {
	n := 0
	for _, r := range s.raw {
		n += len(r) / s.dim
	}
	return n
}

// normalise maps every sampled point into the unit cube with the proposed bounds, clamping
// like the worker's clip mode.
func (s *sample) normalise(b BoundsProposal) {
	d := s.dim
	s.full = make([][]float64, len(s.raw))
	s.sub = make([][]float64, len(s.raw))
	for k, r := range s.raw {
		u := make([]float64, len(r))
		for i := 0; i < len(r); i += d {
			for j := 0; j < d; j++ {
				u[i+j] = min(max((r[i+j]-b.Lo[j])/(b.Hi[j]-b.Lo[j]), 0), 1)
			}
		}
		s.full[k] = u
		sub := make([]float64, 0, len(s.pick[k])*d)
		for _, p := range s.pick[k] {
			sub = append(sub, u[p*d:(p+1)*d]...)
		}
		s.sub[k] = sub
	}
}

// subRaw returns the raw sub-sampled points of set k (the mmd self-check embeds these).
func (s *sample) subRaw(k int) []float64 {
	d := s.dim
	out := make([]float64, 0, len(s.pick[k])*d)
	for _, p := range s.pick[k] {
		out = append(out, s.raw[k][p*d:(p+1)*d]...)
	}
	return out
}

// sizes returns the number of points of every sampled set.
func (s *sample) sizes() []float64 {
	out := make([]float64, len(s.raw))
	for k, r := range s.raw {
		out[k] = float64(len(r) / s.dim)
	}
	return out
}

// subHalves splits every set's sub-sample into halves by alternating points (the
// sub-sample is a random choice, so both halves are random halves of it).
func (s *sample) subHalves() (a, b [][]float64) {
	d := s.dim
	for _, u := range s.sub {
		var x, y []float64
		for i := 0; i+d <= len(u); i += d {
			if (i/d)%2 == 0 {
				x = append(x, u[i:i+d]...)
			} else {
				y = append(y, u[i:i+d]...)
			}
		}
		a, b = append(a, x), append(b, y)
	}
	return a, b
}
