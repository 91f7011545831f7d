package calibrate

import (
	"fmt"
	"html/template"
	"slices"
)

// mtReport is the report's view of a MarginalResult: the decision, the σ grid as a table
// (rows pooling then σ_P ascending, columns σ_X ascending, cells shaded by accuracy) and the
// D sweep at the chosen σ's.
type mtReport struct {
	*MarginalResult
	GridD  int       // the D the σ grid ran at
	SigmaX []float64 // the columns
	Rows   []mtRow
	Sweep  []mtSweepRow
}

// mtRow is one σ_P (or pooling) of the grid.
type mtRow struct {
	Label   string // "pooling" or σ_P
	Pooling bool
	Cells   []mtCell
}

// mtCell is one candidate of the grid; Present is false where the grid has no such
// candidate. SP and SX label it as the summary does (data attributes for tests and tools).
type mtCell struct {
	MarginalCandidate
	Present, Chosen, RowBest bool
	SP, SX                   string
	Style                    template.CSS
}

// mtSweepRow is one D of the sweep.
type mtSweepRow struct {
	MarginalCandidate
	Chosen bool
}

// mtSigmaLabel is how the summary and the report print σ_P (or pooling) and σ_X.
func mtSigmaLabel(c MarginalCandidate) (sp, sx string) {
	sp = "pooling"
	if !c.Pooling {
		sp = fmt.Sprintf("%.4g", c.SigmaP)
	}
	return sp, fmt.Sprintf("%.4g", c.SigmaX)
}

// sameSigmas says whether a and b are the same (pooling or σ_P, σ_X) at any D.
func sameSigmas(a, b MarginalCandidate) bool {
	return a.Pooling == b.Pooling && a.SigmaP == b.SigmaP && a.SigmaX == b.SigmaX
}

// newMTReport lays out r for the report (nil for nil).
func newMTReport(r *MarginalResult) *mtReport {
	if r == nil {
		return nil
	}
	start := min(max(r.SweepStart, 0), len(r.Grid))
	grid := r.Grid[:start]
	v := &mtReport{MarginalResult: r}
	if len(grid) == 0 {
		return v
	}
	v.GridD = grid[0].Features
	var sigmaP []float64 // 0 is pooling
	for _, c := range grid {
		if !slices.Contains(v.SigmaX, c.SigmaX) {
			v.SigmaX = append(v.SigmaX, c.SigmaX)
		}
		if sp := mtRowKey(c); !slices.Contains(sigmaP, sp) {
			sigmaP = append(sigmaP, sp)
		}
	}
	slices.Sort(v.SigmaX)
	slices.Sort(sigmaP)
	lo, hi := grid[0].Accuracy, grid[0].Accuracy
	for _, c := range grid {
		lo, hi = min(lo, c.Accuracy), max(hi, c.Accuracy)
	}
	for _, sp := range sigmaP {
		row := mtRow{Label: "pooling", Pooling: sp == 0, Cells: make([]mtCell, len(v.SigmaX))}
		if sp != 0 {
			row.Label = fmt.Sprintf("%.4g", sp)
		}
		best := -1.0
		for _, c := range grid {
			if mtRowKey(c) != sp {
				continue
			}
			cell := mtCell{MarginalCandidate: c, Present: true, Chosen: sameSigmas(c, r.Chosen), Style: mtShade(c.Accuracy, lo, hi)}
			cell.SP, cell.SX = mtSigmaLabel(c)
			row.Cells[slices.Index(v.SigmaX, c.SigmaX)] = cell
			best = max(best, c.Accuracy)
		}
		for i := range row.Cells {
			row.Cells[i].RowBest = row.Cells[i].Present && row.Cells[i].Accuracy == best
		}
		v.Rows = append(v.Rows, row)
	}
	for _, c := range grid {
		if sameSigmas(c, r.Chosen) {
			v.Sweep = append(v.Sweep, mtSweepRow{MarginalCandidate: c, Chosen: sameCandidate(c, r.Chosen)})
		}
	}
	for _, c := range r.Grid[start:] {
		v.Sweep = append(v.Sweep, mtSweepRow{MarginalCandidate: c, Chosen: sameCandidate(c, r.Chosen)})
	}
	return v
}

// mtRowKey is a candidate's row: its σ_P, 0 for pooling.
func mtRowKey(c MarginalCandidate) float64 {
	if c.Pooling {
		return 0
	}
	return c.SigmaP
}

// mtShade is the cell background for accuracy a on the grid's range [lo, hi]: white at lo,
// a light green at hi (dark text stays readable).
func mtShade(a, lo, hi float64) template.CSS {
	t := 0.0
	if hi > lo {
		t = (a - lo) / (hi - lo)
	}
	mix := func(from, to float64) int { return int(from + t*(to-from) + 0.5) }
	return template.CSS(fmt.Sprintf("background-color:rgb(%d,%d,%d)", mix(255, 120), mix(255, 198), mix(255, 121)))
}
