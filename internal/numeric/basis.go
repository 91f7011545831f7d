package numeric

import (
	"fmt"
	"math"
	"sort"
)

// CosineIndices returns the first count multi-indices α ∈ ℕ^d of the cosine basis
// φ_α(u) = Π_j c(α_j) cos(π α_j u_j), c(0)=1, c(k>0)=√2, ordered by Σα_j² and then
// lexicographically (docs/math.md). The order is part of the feature contract.
//
// It first finds the smallest bound B with at least count indices of Σα² ≤ B (counting
// without materialising, capped at count), then materialises only the indices it returns,
// so memory stays O(count·d) even for large d where the number of indices on one Σα² level
// explodes.
func CosineIndices(d, count int) [][]int {
	if count <= 0 || d <= 0 {
		return nil
	}
	enough := func(bound int) bool { return countIndices(d, bound, count) >= count }
	hi := 0
	for !enough(hi) {
		hi = max(1, 2*hi)
	}
	lo := hi / 2 // enough(hi); !enough(lo) unless hi == 0
	for hi > 0 && lo+1 < hi {
		mid := lo + (hi-lo)/2
		if enough(mid) {
			hi = mid
		} else {
			lo = mid
		}
	}
	if hi > 0 && enough(lo) {
		hi = lo
	}
	bound := hi
	below := 0 // indices with Σα² < bound: all are taken
	if bound > 0 {
		below = countIndices(d, bound-1, count)
	}
	need := count - below // indices with Σα² == bound, the lexicographically first ones

	out := make([][]int, 0, count)
	cur := make([]int, d)
	var rec func(j, sum int)
	rec = func(j, sum int) {
		if j == d {
			if sum < bound || need > 0 {
				if sum == bound {
					need--
				}
				out = append(out, append([]int(nil), cur...))
			}
			return
		}
		for k := 0; sum+k*k <= bound; k++ {
			cur[j] = k
			rec(j+1, sum+k*k)
		}
		cur[j] = 0
	}
	rec(0, 0) // lexicographic order
	sort.SliceStable(out, func(a, b int) bool { return sqNorm(out[a]) < sqNorm(out[b]) })
	return out
}

// countIndices counts the multi-indices α ∈ ℕ^d with Σα² ≤ bound, stopping at limit.
func countIndices(d, bound, limit int) int {
	n := 0
	var rec func(j, rem int)
	rec = func(j, rem int) {
		if n >= limit {
			return
		}
		if j == d-1 {
			n += isqrt(rem) + 1
			return
		}
		for k := 0; k*k <= rem && n < limit; k++ {
			rec(j+1, rem-k*k)
		}
	}
	rec(0, bound)
	return n
}

// isqrt is ⌊√x⌋ for x ≥ 0.
func isqrt(x int) int {
	r := int(math.Sqrt(float64(x)))
	for r*r > x {
		r--
	}
	for (r+1)*(r+1) <= x {
		r++
	}
	return r
}

func sqNorm(a []int) int {
	s := 0
	for _, k := range a {
		s += k * k
	}
	return s
}

// MaxIndex returns the largest single-axis index used by any multi-index.
func MaxIndex(idx [][]int) int {
	m := 0
	for _, a := range idx {
		for _, k := range a {
			if k > m {
				m = k
			}
		}
	}
	return m
}

// CheckedPow is bᵉ, or an error if it exceeds limit.
func CheckedPow(b, e, limit int) (int, error) {
	r := 1
	for ; e > 0; e-- {
		if r > limit/b {
			return 0, fmt.Errorf("%d^%d exceeds %d", b, e, limit)
		}
		r *= b
	}
	return r, nil
}
