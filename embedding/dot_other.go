//go:build !amd64 || purego

package embedding

// dotPathSupported reports whether path can run on this machine: only the portable kernel
// exists off amd64 (or with the purego build tag).
func dotPathSupported(p dotPath) bool { return p == dotPathPortable }

// rffDotSIMD falls back to the portable kernel, which gives the same bits.
func rffDotSIMD(_ dotPath, omega []float64, n int, a, theta []float64) {
	rffDotGo(omega, n, a, theta)
}

// rffTileSupported reports whether path has a batch tile kernel: none off amd64.
func rffTileSupported(dotPath) bool { return false }

// rffDotTile is never called off amd64 (rffTileSupported is false); it panics if it is.
func rffDotTile(_, _ []float64, _, _ int, _ []float64, _ int) {
	panic("embedding: rffDotTile: no tile kernel on this architecture")
}

// rffEmitSIMD does nothing off amd64: rff.emit computes every feature (same bits).
func rffEmitSIMD(dotPath, []float64, float64, []float32) int { return 0 }

// fwhtWideSIMD does nothing off amd64: fwht runs every stage in Go (same bits).
func fwhtWideSIMD(dotPath, []float64) bool { return false }
