package calibrate

import (
	"bytes"
	"context"
	"fmt"
	"html"
	"regexp"
	"strings"
	"testing"

	"github.com/distfeat/distfeat/embedding"
)

// mtCellRE matches one cell of the report's σ grid: its classes, σ labels, accuracy and SE.
var mtCellRE = regexp.MustCompile(`<td class="num mt-cell( chosen)?( rowbest)?" style="[^"]*" data-sp="([^"]*)" data-sx="([^"]*)"[^>]*>([0-9.]+)<span class="se">±([0-9.]+)</span>`)

// TestReportMarginal: with a marginal-transfer search (calibrate --point-label) the report
// has a section with the decision and the rule, every grid candidate's cross-validated
// accuracy ± SE in the cell of its σ_P (or pooling) row and σ_X column, the proposed cell
// (and only it) marked, each row's best marked, and the D sweep; without one, no such
// section. Both a marginal-transfer and a pooling decision are laid out (the shift moves
// the boundary with the marginal, or not; TestMarginalTransferChoice checks the choices).
func TestReportMarginal(t *testing.T) {
	emb := shiftEmbedder(t)
	opts := MarginalOptions{Features: []int{64, 128}, Lambdas: []float64{1e-2, 1e-1}, MaxPoints: 40}
	for _, tc := range []struct {
		name        string
		informative bool
	}{{"informative", true}, {"noinfo", false}} { // the proposals: marginal transfer, pooling
		t.Run(tc.name, func(t *testing.T) {
			labelled := shiftDomains(10, 40, tc.informative, "report-"+tc.name)
			var sets []Set
			for _, s := range labelled {
				sets = append(sets, Set{ID: s.ID, Points: s.Points})
			}
			res, err := Calibrate(context.Background(), sets, 2, emb.Spec(), Options{})
			if err != nil {
				t.Fatal(err)
			}
			plain := reportPage(t, res)
			if strings.Contains(plain, "Per-point features") || strings.Contains(plain, "data-sp=") {
				t.Errorf("a report without --point-label shows a marginal-transfer section")
			}
			memb, err := embedding.New(res.Spec)
			if err != nil {
				t.Fatal(err)
			}
			mr, err := MarginalTransfer(context.Background(), memb, labelled, opts)
			if err != nil {
				t.Fatal(err)
			}
			res.Marginal = mr
			if mr.Chosen.Pooling == tc.informative {
				t.Fatalf("the data no longer exercise this layout: informative %v, yet %s", tc.informative, mr.Rule)
			}
			page := reportPage(t, res)
			checkMarginalSection(t, page, mr)
		})
	}
}

func reportPage(t *testing.T, res *Result) string {
	t.Helper()
	var b bytes.Buffer
	if err := res.WriteReport(&b); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// checkMarginalSection checks the report page against the search result mr.
func checkMarginalSection(t *testing.T, page string, mr *MarginalResult) {
	t.Helper()
	const heading = "<h2 id=\"marginal-transfer\">Per-point features (marginal transfer)</h2>"
	if strings.Count(page, heading) != 1 {
		t.Fatalf("the report has %d marginal-transfer sections, want 1", strings.Count(page, heading))
	}
	section := page[strings.Index(page, heading):]
	section = section[:strings.Index(section, "<h2>Plots</h2>")]
	text := html.UnescapeString(section)
	decision := "<strong>marginal transfer</strong>"
	if mr.Chosen.Pooling {
		decision = "<strong>pooling</strong>"
	}
	for _, want := range []string{
		decision, mr.Rule,
		fmt.Sprintf("%.3f ± %.3f", mr.BestPooling.Accuracy, mr.BestPooling.SE),
		fmt.Sprintf("%.3f ± %.3f", mr.BestMarginal.Accuracy, mr.BestMarginal.SE),
		fmt.Sprintf("D = %d, λ = %.0e; held-out accuracy %.3f ± %.3f", mr.Chosen.Features, mr.Chosen.Lambda, mr.Chosen.Accuracy, mr.Chosen.SE),
	} {
		if !strings.Contains(text, want) {
			t.Errorf("the section lacks %q:\n%s", want, text)
		}
	}
	// The grid: every candidate at the grid's D, in the cell of its row and column.
	grid := mr.Grid[:mr.SweepStart]
	type key struct{ sp, sx string }
	want := map[key]MarginalCandidate{}
	rowBest := map[string]float64{}
	for _, c := range grid {
		k := key{"pooling", fmt.Sprintf("%.4g", c.SigmaX)}
		if !c.Pooling {
			k.sp = fmt.Sprintf("%.4g", c.SigmaP)
		}
		want[k] = c
		rowBest[k.sp] = max(rowBest[k.sp], c.Accuracy)
	}
	cells := mtCellRE.FindAllStringSubmatch(section, -1)
	if len(cells) != len(grid) || len(grid) == 0 {
		t.Fatalf("the grid table has %d cells, the search %d candidates at D = %d", len(cells), len(grid), grid[0].Features)
	}
	chosen := 0
	for _, m := range cells {
		k := key{m[3], m[4]}
		c, ok := want[k]
		if !ok {
			t.Errorf("cell σ_P %s σ_X %s is not a candidate of the search", k.sp, k.sx)
			continue
		}
		delete(want, k)
		if acc, se := fmt.Sprintf("%.3f", c.Accuracy), fmt.Sprintf("%.3f", c.SE); m[5] != acc || m[6] != se {
			t.Errorf("cell %v shows %s ± %s, the search measured %s ± %s", k, m[5], m[6], acc, se)
		}
		isChosen := c.Pooling == mr.Chosen.Pooling && c.SigmaP == mr.Chosen.SigmaP && c.SigmaX == mr.Chosen.SigmaX
		if (m[1] != "") != isChosen {
			t.Errorf("cell %v marked chosen %v, is the proposal %v", k, m[1] != "", isChosen)
		}
		if m[1] != "" {
			chosen++
		}
		if (m[2] != "") != (c.Accuracy == rowBest[k.sp]) {
			t.Errorf("cell %v (%.3f) marked best of its row %v; the row's best is %.3f", k, c.Accuracy, m[2] != "", rowBest[k.sp])
		}
	}
	if chosen != 1 {
		t.Errorf("%d cells are marked as the proposal, want 1", chosen)
	}
	// The D sweep: the grid's D at the proposed σ's, then the other D, the proposed one marked.
	for _, c := range append(withSigmasOf(grid, mr.Chosen), mr.Grid[mr.SweepStart:]...) {
		row := fmt.Sprintf(`<td class="num">%d</td><td class="num">%.0e</td><td class="num">%.3f</td><td class="num">%.3f</td>`, c.Features, c.Lambda, c.Accuracy, c.SE)
		if c.Features == mr.Chosen.Features {
			row = `<tr class="chosen">` + row + "<td>✔</td>"
		}
		if !strings.Contains(section, row) {
			t.Errorf("the D sweep lacks %s", row)
		}
	}
}

// withSigmasOf is the candidates of grid with the σ's of c.
func withSigmasOf(grid []MarginalCandidate, c MarginalCandidate) []MarginalCandidate {
	var out []MarginalCandidate
	for _, g := range grid {
		if g.Pooling == c.Pooling && g.SigmaP == c.SigmaP && g.SigmaX == c.SigmaX {
			out = append(out, g)
		}
	}
	return out
}
