package main

import (
	"fmt"
	"html"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/distfeat/distfeat/embedding"
	"github.com/distfeat/distfeat/spec"
)

// labelledLines is n domains of 2-D points whose class boundary x₁ = c moves with the
// domain's shift c, with per-point labels in the array "y" (numbers in even domains,
// strings in odd ones: both are accepted).
func labelledLines(n, points int) string {
	var b strings.Builder
	for k := 0; k < n; k++ {
		rng := embedding.NewRNG(4, fmt.Sprintf("cal-mt/%d", k))
		c := 4*rng.Float64() - 2
		var pts, ys []string
		for i := 0; i < points; i++ {
			sign, y := 1.0, "1"
			if i%2 == 1 {
				sign, y = -1, "0"
			}
			pts = append(pts, fmt.Sprintf("[%v,%v]", c+sign+0.6*rng.Normal(), 0.6*rng.Normal()))
			if k%2 == 1 {
				y = `"` + y + `"`
			}
			ys = append(ys, y)
		}
		fmt.Fprintf(&b, `{"set":"d%02d","points":[%s],"y":[%s],"end":true}`+"\n", k, strings.Join(pts, ","), strings.Join(ys, ","))
	}
	return b.String()
}

// TestCalibratePointLabel: calibrate --point-label appends a marginal_transfer family to the
// proposed spec (which embed --points then uses), prints the cross-validation grid and shows
// it with the decision in the --report (a report without --point-label has no such section).
func TestCalibratePointLabel(t *testing.T) {
	dir := t.TempDir()
	specOut, reportOut := filepath.Join(dir, "spec.json"), filepath.Join(dir, "report.html")
	code, stdout, stderr := runCLI(t, labelledLines(10, 60), "calibrate", "--families", "mmd",
		"--point-label", "y", "--point-family", "cells", "--out", specOut, "--report", reportOut)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if !strings.Contains(stdout, "whole sets held out") || !strings.Contains(stdout, "← proposed") || !strings.Contains(stdout, "pooling") {
		t.Errorf("the summary lacks the marginal-transfer grid:\n%s", stdout)
	}
	checkReportMarginal(t, reportOut, stdout, true)
	sp, err := spec.LoadSpec(specOut)
	if err != nil {
		t.Fatal(err)
	}
	emb, err := embedding.New(sp)
	if err != nil {
		t.Fatal(err)
	}
	maps := emb.PointMaps()
	if len(maps) != 1 || maps[0].Name() != "cells" {
		t.Fatalf("the proposed spec's marginal_transfer families: %v", maps)
	}
	if f := maps[0].Family(); f.Pooling || f.SetFamily != "mmd" {
		t.Errorf("the boundary moves with each domain's marginal, yet %+v was proposed:\n%s", f, stdout)
	}
	code, _, stderr = runCLI(t, `{"set":"a","points":[[0.1,0.2],[0.3,0.4]]}`, "embed", "--spec", specOut,
		"--out", filepath.Join(dir, "w.jsonl"), "--points", filepath.Join(dir, "p.jsonl"))
	if code != 0 {
		t.Fatalf("embed --points with the proposed spec: exit %d: %s", code, stderr)
	}
	// The proposed spec as the base of another calibration: its marginal_transfer family is
	// kept (and said so) without --point-label.
	spec2 := filepath.Join(dir, "spec2.json")
	report2 := filepath.Join(dir, "report2.html")
	code, stdout, stderr = runCLI(t, pointsOnly(labelledLines(10, 60)), "calibrate", "--spec", specOut, "--out", spec2, "--report", report2)
	if code != 0 || !strings.Contains(stdout, "kept from the base spec unchanged: cells") {
		t.Fatalf("calibrate --spec <spec with a marginal_transfer family>: exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
	checkReportMarginal(t, report2, stdout, false)
	sp2, err := spec.LoadSpec(spec2)
	if err != nil {
		t.Fatal(err)
	}
	if last := sp2.Families[len(sp2.Families)-1]; last.Name != "cells" || last != maps[0].Family() {
		t.Errorf("the kept family %+v, want %+v", last, maps[0].Family())
	}
}

// checkReportMarginal checks that the HTML report at path has the marginal-transfer section
// (want) with the summary's decision rule (its "choice:" line) and a marked proposed cell, or
// has no such section.
func checkReportMarginal(t *testing.T, path, summary string, want bool) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	page := html.UnescapeString(string(b))
	if has := strings.Contains(page, "Per-point features (marginal transfer)"); has != want {
		t.Fatalf("report %s: marginal-transfer section %v, want %v", filepath.Base(path), has, want)
	}
	if !want {
		return
	}
	_, rule, ok := strings.Cut(summary, "  choice: ")
	rule, _, _ = strings.Cut(rule, "\n")
	if !ok || !strings.Contains(page, rule) {
		t.Errorf("the report lacks the summary's rule %q", rule)
	}
	if n := strings.Count(page, "mt-cell chosen"); n != 1 {
		t.Errorf("the report marks %d grid cells as proposed, want 1", n)
	}
}

// pointsOnly drops the "y" arrays of labelledLines.
func pointsOnly(lines string) string {
	var out []string
	for _, l := range strings.Split(strings.TrimSpace(lines), "\n") {
		out = append(out, l[:strings.Index(l, `,"y":[`)]+`,"end":true}`)
	}
	return strings.Join(out, "\n") + "\n"
}

func TestCalibratePointLabelErrors(t *testing.T) {
	good := labelledLines(3, 10)
	short := strings.Replace(good, `"y":[1,`, `"y":[`, 1)
	dir := t.TempDir()
	for _, tc := range []struct {
		in   string
		args []string
		want string
	}{
		{short, []string{"--point-label", "y"}, "has 9 labels for 10 points"},
		{good, []string{"--point-label", "label"}, `--point-label "label": no input line has this field`},
		{`{"set":"a","points":[[1,2]]}`, []string{"--point-label", "y"}, `"y": no input line has this field`},
		{good, []string{"--point-label", "y", "--point-family", "mmd"}, `"mmd" is already the name`},
	} {
		args := append([]string{"calibrate", "--families", "mmd", "--out", filepath.Join(dir, "spec.json")}, tc.args...)
		code, _, stderr := runCLI(t, tc.in, args...)
		if code == 0 || !strings.Contains(stderr, tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want an error containing %q", tc.args, code, stderr, tc.want)
		}
	}
}
