//go:build !amd64 || purego

package embedding

// projLanesSIMD does no lanes off amd64: projLanesGo computes them all (same bits).
func projLanesSIMD(dotPath, []float64, []float64, int, []float64) int { return 0 }

// hddCellsSIMD does no cells off amd64: hddCellsGo computes them all (same bits).
func hddCellsSIMD(dotPath, float64, float64, float64, []float64, []float64, []float64, []float64) int {
	return 0
}

// hddLogSqrtSIMD does no cells off amd64: hddLogSqrt computes them all in Go (same bits).
func hddLogSqrtSIMD(dotPath, []float64, []float64, []float64) (int, float64, bool) {
	return 0, 0, false
}

// foldLinesSIMD does nothing off amd64: project2DT folds in Go (same bits).
func foldLinesSIMD(dotPath, []float64, int, []float64, []float64) bool { return false }

// projLanes2SIMD does no lanes off amd64: projLanes computes them (same bits).
func projLanes2SIMD(dotPath, []float64, []float64, []float64, int, []float64, []float64) int {
	return 0
}
