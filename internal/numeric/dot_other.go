//go:build !amd64 || purego

package numeric

// PathSupported reports whether path can run on this machine: only the portable kernel
// exists off amd64 (or with the purego build tag).
func PathSupported(p Path) bool { return p == PathPortable }

// rffDotSIMD falls back to the portable kernel, which gives the same bits.
func rffDotSIMD(_ Path, omega []float64, n int, a, theta []float64) {
	rffDotGo(omega, n, a, theta)
}

// RFFTileSupported reports whether path has a batch tile kernel: none off amd64.
func RFFTileSupported(Path) bool { return false }

// rffDotTile is never called off amd64 (RFFTileSupported is false); it panics if it is.
func rffDotTile(_, _ []float64, _, _ int, _ []float64, _ int) {
	panic("numeric: rffDotTile: no tile kernel on this architecture")
}

// RFFEmitSIMD does nothing off amd64: rff.emit computes every feature (same bits).
func RFFEmitSIMD(Path, []float64, float64, []float32) int { return 0 }

// fwhtWideSIMD does nothing off amd64: fwht runs every stage in Go (same bits).
func fwhtWideSIMD(Path, []float64) bool { return false }
