package offline

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/distfeat/distfeat/schema"
)

func writeTemp(t *testing.T, content string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "sets.jsonl")
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestReadSets: one reader for every command's set files: the dimension from the first
// point, labels and per-point labels as options, blank lines, MaxSets, and errors that name
// the line (a *LineError) and the option's flag.
func TestReadSets(t *testing.T) {
	ctx := context.Background()
	in := `{"set":"a","points":[[1,2],[3,4]],"y":"cat","c":["x",1]}` + "\n\n  \n" +
		`{"set":"b","points":[[5,6]],"y":2.0,"end":true}` + "\n" +
		`{"set":"c","points":[[7,8]],"y":null}` + "\n"
	path := writeTemp(t, in)

	other := &OtherFields{Read: []string{"y"}}
	sets, dim, err := ReadSets(ctx, path, ReadOptions{Label: "y", Other: other})
	if err != nil || dim != 2 || len(sets) != 3 {
		t.Fatalf("ReadSets: %d sets, dim %d, %v", len(sets), dim, err)
	}
	got := []string{sets[0].Label, sets[1].Label, sets[2].Label}
	if !slices.Equal(got, []string{"cat", "2", ""}) || !sets[0].Labelled || !sets[1].Labelled || sets[2].Labelled {
		t.Errorf("labels %q, labelled %v %v %v", got, sets[0].Labelled, sets[1].Labelled, sets[2].Labelled)
	}
	if sets[0].Line != 1 || sets[1].Line != 4 || sets[0].N != 2 || !sets[1].End || !slices.Equal(sets[0].Points, []float64{1, 2, 3, 4}) {
		t.Errorf("sets %+v", sets)
	}
	var report bytes.Buffer
	other.Report(&report, "test")
	if !strings.Contains(report.String(), `"c" (1 lines)`) || strings.Contains(report.String(), `"y"`) {
		t.Errorf("other fields: %q", report.String())
	}

	sets, _, err = ReadSets(ctx, path, ReadOptions{MaxSets: 2, PointLabel: "c"})
	if err != nil || len(sets) != 2 || !slices.Equal(sets[0].PointLabels, []string{"x", "1"}) || sets[1].PointLabels != nil {
		t.Fatalf("point labels: %+v, %v", sets, err)
	}

	for _, tc := range []struct {
		name, in string
		opt      ReadOptions
		line     int
		want     string
	}{
		{"bad label", `{"set":"a","points":[[1]],"y":[1]}`, ReadOptions{Label: "y"}, 1, `line 1: --label "y": label [1]: want a string, number or boolean`},
		{"short point labels", `{"set":"a","points":[[1],[2]],"c":["x"]}`, ReadOptions{PointLabel: "c"}, 1, `line 1: --point-label "c" has 1 labels for 2 points`},
		{"null point label", `{"set":"a","points":[[1]],"c":[null]}`, ReadOptions{PointLabel: "c"}, 1, `line 1: --point-label "c": point 0: null`},
		{"no points to infer from", "\n" + `{"set":"a","points":[]}`, ReadOptions{}, 2, "line 2: cannot infer the dimension from a record without points (give --dim or --spec)"},
		{"spaces decoded", `{"set":"a","points":[[1]]}` + "\n \n", ReadOptions{Dim: 1, DecodeSpaces: true}, 2, "line 2: "},
	} {
		_, _, err := ReadSets(ctx, writeTemp(t, tc.in), tc.opt)
		var le *LineError
		if !errors.As(err, &le) || le.Line != tc.line || !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("%s: %v, want line %d: %q", tc.name, err, tc.line, tc.want)
		}
	}
	if _, _, err := ReadSets(ctx, filepath.Join(t.TempDir(), "missing"), ReadOptions{}); err == nil || errors.As(err, new(*LineError)) {
		t.Errorf("missing file: %v, want the open error", err)
	}
}

// TestWriteSetsReadBack: the set file WriteSets writes reads back as the same batches.
func TestWriteSetsReadBack(t *testing.T) {
	want := []schema.Batch{
		{Set: "a", Points: []float64{0.25, 1e-300, -3, 7.5}, N: 2, EventTime: 5, End: true},
		{Set: "b", Points: []float64{1, 2}, N: 1, EventTime: 6},
	}
	var buf bytes.Buffer
	points, err := WriteSets(&buf, want)
	if err != nil || points != 3 {
		t.Fatalf("WriteSets: %d points, %v", points, err)
	}
	sets, _, err := ReadSets(context.Background(), writeTemp(t, buf.String()), ReadOptions{Dim: 2})
	if err != nil || len(sets) != len(want) {
		t.Fatalf("read back: %d sets, %v", len(sets), err)
	}
	for i, s := range sets {
		w := want[i]
		if s.Set != w.Set || s.N != w.N || s.EventTime != w.EventTime || s.End != w.End || !slices.Equal(s.Points, w.Points) {
			t.Errorf("set %d: %+v, want %+v", i, s.Batch, w)
		}
	}
}
