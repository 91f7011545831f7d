//go:build !amd64 || purego

package embedding

// projLanesSIMD does no lanes off amd64: projLanesGo computes them all (same bits).
func projLanesSIMD(dotPath, []float64, []float64, int, []float64) int { return 0 }

// hddCellsSIMD does no cells off amd64: hddCellsGo computes them all (same bits).
func hddCellsSIMD(dotPath, float64, float64, float64, []float64, []float64, []float64, []float64) int {
	return 0
}
