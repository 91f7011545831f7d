package calibrate

import (
	"context"
	"fmt"
	"math"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/distfeat/distfeat/embedding"
)

// maxWithinPairs bounds the pooled within-set distances of the median heuristic.
const maxWithinPairs = 1 << 16

// refineSteps are the exponents k of the bandwidth grid h0·2^(k/2).
var refineSteps = [...]int{-4, -3, -2, -1, 0, 1, 2, 3, 4}

// withinDistances draws pairs of distinct points inside each sampled set (stream
// "calibrate/pairs/<k>", the same number per set) and returns their distances in
// normalised units, pooled over sets.
func withinDistances(s *sample, seed uint64) []float64 {
	d := s.dim
	per := max(1, maxWithinPairs/max(1, len(s.full)))
	var out []float64
	for k, u := range s.full {
		n := len(u) / d
		if n < 2 {
			continue
		}
		rng := embedding.NewRNG(seed, "calibrate/pairs/"+strconv.Itoa(k))
		for p := 0; p < per; p++ {
			a := intn(rng, n)
			b := intn(rng, n-1)
			if b >= a {
				b++
			}
			out = append(out, math.Sqrt(sqDist(u[a*d:(a+1)*d], u[b*d:(b+1)*d])))
		}
	}
	return out
}

// distinctWithinPairs is the number of distinct pairs of points inside the sampled sets
// (withinDistances draws with repetition; small sets have fewer pairs than it draws).
func (s *sample) distinctWithinPairs() int {
	total := 0
	for _, u := range s.full {
		n := len(u) / s.dim
		total += n * (n - 1) / 2
	}
	return total
}

// medianHeuristic is the median within-set distance, guarded against a zero median (many
// repeated or clipped points): then the median of the positive distances; with none, 0.
func medianHeuristic(dist []float64) (h float64, rule string) {
	if len(dist) == 0 {
		return 0, "no set has two points"
	}
	m := median(dist)
	if m > 0 {
		return m, fmt.Sprintf("median within-set distance %.4g over %d pairs", m, len(dist))
	}
	var pos []float64
	for _, v := range dist {
		if v > 0 {
			pos = append(pos, v)
		}
	}
	if len(pos) == 0 {
		return 0, "every within-set distance is 0"
	}
	m = median(pos)
	return m, fmt.Sprintf("median within-set distance is 0 (%d of %d pairs coincide); median of the positive ones %.4g", len(dist)-len(pos), len(dist), m)
}

// mmkGrams computes the exact biased mean-map kernel between every pair of sub-sampled
// sets for each bandwidth in hs: grams[h][i·S+j] = (1/nm) Σ_a Σ_b exp(−‖a−b‖²/(2h²)).
// Pairs are spread over workers; each entry is summed by one goroutine in a fixed order,
// so the result does not depend on scheduling.
func mmkGrams(ctx context.Context, sub [][]float64, d int, hs []float64, o Options) ([][]float64, error) {
	S := len(sub)
	grams := make([][]float64, len(hs))
	for i := range grams {
		grams[i] = make([]float64, S*S)
	}
	coef := make([]float64, len(hs))
	for i, h := range hs {
		coef[i] = -1 / (2 * h * h)
	}
	type pair struct{ i, j int }
	var pairs []pair
	for i := 0; i < S; i++ {
		for j := i; j < S; j++ {
			pairs = append(pairs, pair{i, j})
		}
	}
	var next, done atomic.Int64
	var wg sync.WaitGroup
	var mu sync.Mutex
	for w := 0; w < o.Workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			acc := make([]float64, len(hs))
			row := make([]float64, len(hs))
			for {
				p := int(next.Add(1) - 1)
				if p >= len(pairs) || ctx.Err() != nil {
					return
				}
				i, j := pairs[p].i, pairs[p].j
				clear(acc)
				x, y := sub[i], sub[j]
				for a := 0; a < len(x); a += d {
					clear(row)
					for b := 0; b < len(y); b += d {
						s := sqDist(x[a:a+d], y[b:b+d])
						for h, c := range coef {
							row[h] += math.Exp(c * s)
						}
					}
					for h := range acc {
						acc[h] += row[h]
					}
				}
				nm := float64(len(x)/d) * float64(len(y)/d)
				for h := range hs {
					grams[h][i*S+j] = acc[h] / nm
					grams[h][j*S+i] = acc[h] / nm
				}
				if n := done.Add(1); n%64 == 0 || int(n) == len(pairs) {
					mu.Lock()
					o.progress("exact mean-map kernels", int(n), len(pairs))
					mu.Unlock()
				}
			}
		}()
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return grams, nil
}

// offDiagonal returns the entries i < j of an S×S matrix, row-major.
func offDiagonal(g []float64, S int) []float64 {
	out := make([]float64, 0, S*(S-1)/2)
	for i := 0; i < S; i++ {
		for j := i + 1; j < S; j++ {
			out = append(out, g[i*S+j])
		}
	}
	return out
}

// variance is the population variance.
func variance(x []float64) float64 {
	if len(x) == 0 {
		return 0
	}
	var m float64
	for _, v := range x {
		m += v
	}
	m /= float64(len(x))
	var s float64
	for _, v := range x {
		s += (v - m) * (v - m)
	}
	return s / float64(len(x))
}

func sqDist(a, b []float64) float64 {
	var s float64
	for k, v := range a {
		t := v - b[k]
		s += t * t
	}
	return s
}

// round3 rounds to three significant digits (readable specs; the spread criterion is flat
// far beyond that precision).
func round3(v float64) float64 {
	if v == 0 || math.IsNaN(v) || math.IsInf(v, 0) {
		return v
	}
	t, err := strconv.ParseFloat(strconv.FormatFloat(v, 'g', 3, 64), 64)
	if err != nil {
		return v
	}
	return t
}
