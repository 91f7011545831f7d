//go:build !amd64 || purego

package numeric

// MMDPathSupported reports whether path can run on this machine: only the pure-Go paths
// exist off amd64 (or with the purego build tag).
func MMDPathSupported(p MMDPath) bool {
	return p == MMDPathPortable || p == MMDPathExact
}

// mmdAccumulateSIMD falls back to the portable kernel, which gives the same bits.
func mmdAccumulateSIMD(_ MMDPath, omega, u []float64, n, d, hp int, acc []int64) {
	mmdAccumulateGo(omega, u, n, d, hp, acc)
}
