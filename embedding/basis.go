package embedding

import (
	"math"
	"sort"
)

// cosineIndices returns the first count multi-indices α ∈ ℕ^d of the cosine basis
// φ_α(u) = Π_j c(α_j) cos(π α_j u_j), c(0)=1, c(k>0)=√2, ordered by Σα_j² and then
// lexicographically (DESIGN §3.2). The order is part of the feature contract.
func cosineIndices(d, count int) [][]int {
	if count <= 0 {
		return nil
	}
	// Grow the norm bound until at least count indices have Σα² ≤ bound.
	for bound := 1; ; bound *= 2 {
		var all [][]int
		cur := make([]int, d)
		var rec func(j, sum int)
		rec = func(j, sum int) {
			if j == d {
				all = append(all, append([]int(nil), cur...))
				return
			}
			for k := 0; sum+k*k <= bound; k++ {
				cur[j] = k
				rec(j+1, sum+k*k)
			}
			cur[j] = 0
		}
		rec(0, 0)
		if len(all) < count {
			continue
		}
		sort.Slice(all, func(a, b int) bool {
			na, nb := sqNorm(all[a]), sqNorm(all[b])
			if na != nb {
				return na < nb
			}
			for j := range all[a] {
				if all[a][j] != all[b][j] {
					return all[a][j] < all[b][j]
				}
			}
			return false
		})
		return all[:count]
	}
}

func sqNorm(a []int) int {
	s := 0
	for _, k := range a {
		s += k * k
	}
	return s
}

// cosineFactor returns c(k)·cos(π k u), one axis of a basis function.
func cosineFactor(k int, u float64) float64 {
	if k == 0 {
		return 1
	}
	return math.Sqrt2 * math.Cos(math.Pi*float64(k)*u)
}

// maxIndex returns the largest single-axis index used by any multi-index.
func maxIndex(idx [][]int) int {
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
