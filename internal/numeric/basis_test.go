package numeric

import (
	"reflect"
	"sort"
	"testing"
)

// cosineIndicesReference is the straightforward definition: enumerate every index with
// Σα² ≤ bound for a growing bound, sort by (Σα², lexicographic), take the first count.
func cosineIndicesReference(d, count int) [][]int {
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

func TestCosineIndicesOrder(t *testing.T) {
	for d := 1; d <= 6; d++ {
		for _, count := range []int{1, 2, 3, 7, 50, 100, 333} {
			got, want := CosineIndices(d, count), cosineIndicesReference(d, count)
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("d=%d count=%d: differs from the reference order\n got %v\nwant %v", d, count, got, want)
			}
		}
	}
	// Spot checks of the contract order (docs/math.md) in 2-D.
	want := [][]int{{0, 0}, {0, 1}, {1, 0}, {1, 1}, {0, 2}, {2, 0}, {1, 2}, {2, 1}}
	if got := CosineIndices(2, 8); !reflect.DeepEqual(got, want) {
		t.Errorf("first 2-D indices %v, want %v", got, want)
	}
	// Large d stays cheap: only count indices are materialised.
	big := CosineIndices(512, 600)
	if len(big) != 600 || sqNorm(big[599]) != 2 || sqNorm(big[512]) != 1 || sqNorm(big[513]) != 2 {
		t.Errorf("d=512: unexpected norms")
	}
}
