//go:build !amd64 || purego

package embedding

// kdeLanesSupported reports whether kdeMass2T's kernels run on this machine: not off amd64
// (kdeMass computes the same bits).
func kdeLanesSupported(dotPath) bool { return false }

// kdeDotLanes is never called off amd64 (kdeLanesSupported is false); it panics if it is.
func kdeDotLanes(_, _ []float64, _ int, _ []float64) {
	panic("embedding: kdeDotLanes: no kernel on this architecture")
}

// kdeSeqLanes is never called off amd64 (kdeLanesSupported is false); it panics if it is.
func kdeSeqLanes(_, _ []float64, _ int, _ []float64, _, _, _ int) {
	panic("embedding: kdeSeqLanes: no kernel on this architecture")
}

// kdeCountsT is never called off amd64 (kdeLanesSupported is false); it panics if it is.
func kdeCountsT(_ []int64, _ int, _ []float64, _ int) {
	panic("embedding: kdeCountsT: no kernel on this architecture")
}

// scaleFloorSIMD does nothing off amd64: the caller scales every value in Go (same bits).
func scaleFloorSIMD([]float64, float64, float64) int { return 0 }
