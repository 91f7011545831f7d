//go:build !amd64 || purego

package numeric

// boxMullerSIMD does nothing off amd64: NormalFill's Go loop computes every pair (same bits).
func boxMullerSIMD(_, _, _, _ []float64) int { return 0 }
