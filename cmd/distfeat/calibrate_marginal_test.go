package main

import (
	"fmt"
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
// proposed spec (which embed --points then uses) and prints the cross-validation grid.
func TestCalibratePointLabel(t *testing.T) {
	dir := t.TempDir()
	specOut := filepath.Join(dir, "spec.json")
	code, stdout, stderr := runCLI(t, labelledLines(10, 60), "calibrate", "--families", "mmd",
		"--point-label", "y", "--point-family", "cells", "--out", specOut)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if !strings.Contains(stdout, "whole sets held out") || !strings.Contains(stdout, "← proposed") || !strings.Contains(stdout, "pooling") {
		t.Errorf("the summary lacks the marginal-transfer grid:\n%s", stdout)
	}
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
	code, stdout, stderr = runCLI(t, pointsOnly(labelledLines(10, 60)), "calibrate", "--spec", specOut, "--out", spec2)
	if code != 0 || !strings.Contains(stdout, "kept from the base spec unchanged: cells") {
		t.Fatalf("calibrate --spec <spec with a marginal_transfer family>: exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
	sp2, err := spec.LoadSpec(spec2)
	if err != nil {
		t.Fatal(err)
	}
	if last := sp2.Families[len(sp2.Families)-1]; last.Name != "cells" || last != maps[0].Family() {
		t.Errorf("the kept family %+v, want %+v", last, maps[0].Family())
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
		{good, []string{"--point-label", "label"}, `unknown field "y"`},
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
