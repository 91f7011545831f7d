package embedding

// family is one compiled feature family: its random draws are made once, at compile time,
// and shared read-only by every sketch.
type family interface {
	// columns lists the output vectors this family produces, in output order.
	columns() []Column
	// newSketch returns an empty per-window accumulator.
	newSketch() familySketch
}

// familySketch is one family's fixed-size, mergeable per-window state.
type familySketch interface {
	// add accumulates n = len(u)/d normalised points u ∈ [0,1]^d (row-major).
	add(u []float64, d int)
	// merge adds other's state (same family, same compiled spec) into this sketch.
	merge(other familySketch)
	// finalize writes the family's output vectors for a window of n points; out has one
	// preallocated slice per column.
	finalize(n int64, out [][]float32)
	// reset empties the sketch for reuse.
	reset()
	// sizeBytes is the sketch's memory footprint.
	sizeBytes() int
	// addNanos is a rough cost of add per point in ns (a vector machine's order of
	// magnitude): it decides whether sharing a large add among goroutines pays for merging
	// the shares' states (Sketch.Add with WithAddWorkers). It never changes a result.
	addNanos() float64
}

// batchFamily is a family that finalises many windows of its sketches at once
// (FinalizeBatch), each bit-identical to its sketch's finalize.
type batchFamily interface {
	// finalizeBatch writes, for every k, what parts[k].finalize(ns[k], outs[k]) writes,
	// with the work spread over up to workers goroutines (the bits never depend on it).
	finalizeBatch(ns []int64, parts []familySketch, outs [][][]float32, workers int)
}
