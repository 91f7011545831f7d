//go:build !amd64 || purego

package nufft

// haveSIMD reports whether assembly kernels can run: none off amd64 (or with purego).
func haveSIMD() bool { return false }

// spreadSIMD does nothing off amd64: Spread's Go code gives the same bits.
func (p *Plan) spreadSIMD([]int64, []float64) bool { return false }
