//go:build !amd64 || purego

package numeric

// projLanesSIMD does no lanes off amd64: projLanesGo computes them all (same bits).
func projLanesSIMD(Path, []float64, []float64, int, []float64) int { return 0 }

// hddCellsSIMD does no cells off amd64: HDDCellsGo computes them all (same bits).
func hddCellsSIMD(Path, float64, float64, float64, []float64, []float64, []float64, []float64) int {
	return 0
}

// hddLogSqrtSIMD does no cells off amd64: HDDLogSqrt computes them all in Go (same bits).
func hddLogSqrtSIMD(Path, []float64, []float64, []float64) (int, float64, bool) {
	return 0, 0, false
}

// FoldLinesSIMD does nothing off amd64: project2DT folds in Go (same bits).
func FoldLinesSIMD(Path, []float64, int, []float64, []float64) bool { return false }

// ProjLanes2SIMD does no lanes off amd64: ProjLanes computes them (same bits).
func ProjLanes2SIMD(Path, []float64, []float64, []float64, int, []float64, []float64) int {
	return 0
}
