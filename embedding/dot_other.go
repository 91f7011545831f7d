//go:build !amd64 || purego

package embedding

// dotPathSupported reports whether path can run on this machine: only the portable kernel
// exists off amd64 (or with the purego build tag).
func dotPathSupported(p dotPath) bool { return p == dotPathPortable }

// rffDotSIMD falls back to the portable kernel, which gives the same bits.
func rffDotSIMD(_ dotPath, omega []float64, n int, a, theta []float64) {
	rffDotGo(omega, n, a, theta)
}
