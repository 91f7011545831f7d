//go:build !amd64 || purego

package numeric

// KDELanesSupported reports whether kdeMass2T's kernels run on this machine: not off amd64
// (kdeMass computes the same bits).
func KDELanesSupported(Path) bool { return false }

// KDEDotLanes is never called off amd64 (KDELanesSupported is false); it panics if it is.
func KDEDotLanes(_, _ []float64, _ int, _ []float64) {
	panic("numeric: KDEDotLanes: no kernel on this architecture")
}

// KDESeqLanes is never called off amd64 (KDELanesSupported is false); it panics if it is.
func KDESeqLanes(_, _ []float64, _ int, _ []float64, _, _, _ int) {
	panic("numeric: KDESeqLanes: no kernel on this architecture")
}

// KDECountsT is never called off amd64 (KDELanesSupported is false); it panics if it is.
func KDECountsT(_ []int64, _ int, _ []float64, _ int) {
	panic("numeric: KDECountsT: no kernel on this architecture")
}

// ScaleFloorSIMD does nothing off amd64: the caller scales every value in Go (same bits).
func ScaleFloorSIMD([]float64, float64, float64) int { return 0 }
