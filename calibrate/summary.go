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
	if r.Labelled > 0 {
		ew.printf("\nlabelled: %d sets (%s); accuracies are %d-fold cross-validated ridge on the features\n", r.Labelled, r.Labels, cvFolds)
	}
	if len(r.Trials) > 0 {
		ew.printf("\nalternatives tried (* chosen):\n")
		for _, t := range r.Trials {
			mark := " "
			if t.Chosen {
				mark = "*"
			}
			ew.printf("  %s %-14s %-60s %s %.4f\n", mark, t.Family, t.Setting, t.What, t.Score)
		}
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
		interval := ""
		if !math.IsNaN(c.R2Lo) {
			interval = fmt.Sprintf(" (interval %.4f–%.4f)", c.R2Lo, c.R2Hi)
		}
		ew.printf("  %-16s R² %.4f%s  max |error| %.3f  over %d set pairs; true kernel: %s\n", c.Family, c.R2, interval, c.MaxErr, c.Pairs, c.Kernel)
		if !math.IsNaN(c.CeilingLo) {
			ew.printf("  %-16s (R² %.4f against the exact kernel of the spec's own smoothed estimate: the random-feature error alone; %.4f–%.4f the estimated ceiling any D approaches; the intervals allow for the reference's smoothing, extrapolated from a second reference at √2 its bandwidth, and two jackknife standard errors over the sets)\n", "", c.R2Smoothed, c.CeilingLo, c.CeilingHi)
		} else if !math.IsNaN(c.Ceiling) {
			ew.printf("  %-16s (R² %.4f against the exact kernel of the spec's own smoothed estimate: the random-feature error alone; %.4f the estimated ceiling any D approaches)\n", "", c.R2Smoothed, c.Ceiling)
		}
	}
	if ws := r.Warnings(); len(ws) > 0 {
		ew.printf("\nwarnings:\n")
		for _, w := range ws {
			ew.printf("  %s\n", w)
		}
	}
	return ew.err
}

// lowR2 is the self-check R² below which a family gets a warning.
const lowR2 = 0.95

// Warnings are what the summary and the report warn about, one line each: a family whose
// self-check R² is below 0.95, and one whose estimated ceiling (the R² any D approaches)
// is below the target R² — the data, not the spec, limit it.
func (r *Result) Warnings() []string {
	var out []string
	for _, c := range r.Checks {
		if c.Exact || c.Pairs < 3 {
			continue
		}
		if !math.IsNaN(c.Ceiling) && c.Ceiling < r.TargetR2 {
			out = append(out, fmt.Sprintf("%s: data-limited: the estimated ceiling R² %.4f that any D approaches is below the target %g; more points per set would raise it", c.Family, c.Ceiling, r.TargetR2))
		}
		if c.R2 < lowR2 {
			out = append(out, fmt.Sprintf("%s: R² %.4f below %g — when near the ceiling the data limit it (more points per set); else more features (--r2)", c.Family, c.R2, lowR2))
		}
	}
	return out
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
