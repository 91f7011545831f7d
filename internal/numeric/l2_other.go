//go:build !amd64 || purego

package numeric

// L2Products runs the portable kernel: only it exists off amd64 (or with purego).
func L2Products(_ Path, d int, tab []float64, flat *[3][]int32, acc []int64) {
	l2ProductsGo(d, tab, flat, acc)
}
