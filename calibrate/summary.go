package calibrate

import (
	"fmt"
	"io"
	"math"
)

// WriteSummary prints the proposal: every value with its rule, then the self-check.
func (r *Result) WriteSummary(w io.Writer) error {
	ew := &errWriter{w: w}
	ew.printf("calibrated from %d sets (%d sampled, %d points), dim %d; spec_id %s\n\n", r.Sets, r.Sampled, r.Points, r.Spec.Dim, r.Spec.ID())
	for _, n := range r.Notes {
		ew.printf("%s = %s\n    %s\n", n.Field, n.Value, n.Rule)
	}
	ew.printf("\nself-check: approximate Gram matrix (feature inner products) vs the kernel between the true distributions, estimated from the sample\n")
	for _, c := range r.Checks {
		if c.Exact {
			ew.printf("  %-16s exact: %s\n", c.Family, c.Kernel)
			continue
		}
		if c.Pairs < 3 {
			ew.printf("  %-16s R² not meaningful over %d set pairs (max |error| %.3f); exact kernel: %s\n", c.Family, c.Pairs, c.MaxErr, c.Kernel)
			continue
		}
		ew.printf("  %-16s R² %.4f  max |error| %.3f  over %d set pairs; true kernel: %s\n", c.Family, c.R2, c.MaxErr, c.Pairs, c.Kernel)
		if !math.IsNaN(c.Ceiling) {
			ew.printf("  %-16s (R² %.4f against the exact kernel of the spec's own smoothed estimate: the random-feature error alone; %.4f the estimated ceiling any D approaches)\n", "", c.R2Smoothed, c.Ceiling)
		}
		if c.R2 < 0.95 {
			ew.printf("  %-16s warning: R² below 0.95 — more features (a smaller --error or a larger --r2) or more sampled sets\n", "")
		}
	}
	return ew.err
}

// errWriter keeps the first write error.
type errWriter struct {
	w   io.Writer
	err error
}

func (e *errWriter) printf(format string, args ...any) {
	if e.err == nil {
		_, e.err = fmt.Fprintf(e.w, format, args...)
	}
}
