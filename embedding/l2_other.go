//go:build !amd64 || purego

package embedding

// l2Products runs the portable kernel: only it exists off amd64 (or with purego).
func l2Products(_ dotPath, d int, tab []float64, flat *[3][]int32, acc []int64) {
	l2ProductsGo(d, tab, flat, acc)
}
