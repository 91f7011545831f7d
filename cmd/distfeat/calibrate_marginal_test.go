package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/distfeat/distfeat/embedding"
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

// TestCalibratePointLabel: calibrate --point-label writes a per-point configuration that
// embed --point-spec accepts with the proposed spec, and prints the cross-validation grid.
func TestCalibratePointLabel(t *testing.T) {
	dir := t.TempDir()
	specOut, mtOut := filepath.Join(dir, "spec.json"), filepath.Join(dir, "mt.json")
	code, stdout, stderr := runCLI(t, labelledLines(10, 60), "calibrate", "--families", "mmd",
		"--point-label", "y", "--out", specOut, "--point-spec-out", mtOut)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if !strings.Contains(stdout, "whole sets held out") || !strings.Contains(stdout, "← proposed") || !strings.Contains(stdout, "pooling") {
		t.Errorf("the summary lacks the marginal-transfer grid:\n%s", stdout)
	}
	ps, err := loadPointSpec(mtOut)
	if err != nil {
		t.Fatal(err)
	}
	spec, err := embedding.LoadSpec(specOut)
	if err != nil {
		t.Fatal(err)
	}
	emb, err := embedding.New(spec)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := embedding.NewPointMap(emb, ps); err != nil {
		t.Fatalf("the proposed configuration %+v does not compile with the proposed spec: %v", ps, err)
	}
	if ps.Pooling {
		t.Errorf("the boundary moves with each domain's marginal, yet pooling was proposed: %s", stdout)
	}
	b, _ := os.ReadFile(mtOut)
	var generic map[string]any
	if err := json.Unmarshal(b, &generic); err != nil || generic["name"] != "mt" {
		t.Errorf("%s: %s (%v)", mtOut, b, err)
	}
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
		{good, []string{"--point-label", "y"}, "--point-label FIELD goes with --point-spec-out"},
		{good, []string{"--point-spec-out", filepath.Join(dir, "a")}, "--point-label FIELD goes with --point-spec-out"},
		{short, []string{"--point-label", "y", "--point-spec-out", filepath.Join(dir, "b")}, "has 9 labels for 10 points"},
		{good, []string{"--point-label", "label", "--point-spec-out", filepath.Join(dir, "c")}, `unknown field "y"`},
		{`{"set":"a","points":[[1,2]]}`, []string{"--point-label", "y", "--point-spec-out", filepath.Join(dir, "d")}, `"y": no input line has this field`},
	} {
		args := append([]string{"calibrate", "--families", "mmd", "--out", filepath.Join(dir, "spec.json")}, tc.args...)
		code, _, stderr := runCLI(t, tc.in, args...)
		if code == 0 || !strings.Contains(stderr, tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want an error containing %q", tc.args, code, stderr, tc.want)
		}
	}
}
