//go:build !amd64 || purego

package embedding

// mmdPathSupported reports whether path can run on this machine: only the pure-Go paths
// exist off amd64 (or with the purego build tag).
func mmdPathSupported(p mmdPath) bool {
	return p == mmdPathPortable || p == mmdPathExact
}

// mmdAccumulateSIMD falls back to the portable kernel, which gives the same bits.
func mmdAccumulateSIMD(_ mmdPath, omega, u []float64, n, d, hp int, acc []int64) {
	mmdAccumulateGo(omega, u, n, d, hp, acc)
}
