package offline_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/distfeat/distfeat/embedding"
	"github.com/distfeat/distfeat/offline"
	"github.com/distfeat/distfeat/spec"
)

// EmbedLines is `distfeat embed`: a set file in, one feature record per set out, in input
// order, here as JSON lines.
func ExampleEmbedLines() {
	emb, err := embedding.New(spec.DefaultSpec())
	if err != nil {
		panic(err)
	}
	in := `{"set":"a","points":[[0.1,0.2],[0.3,0.4]],"label":"x"}` + "\n" +
		`{"set":"b","points":[[0.5,0.6]],"end":true}` + "\n"
	var out bytes.Buffer
	sink, err := offline.NewSink(&out, offline.FormatJSONL, emb.Spec(), emb)
	if err != nil {
		panic(err)
	}
	var other offline.OtherFields
	st, err := offline.EmbedLines(context.Background(), emb, strings.NewReader(in), sink, nil,
		offline.LinesRun{Workers: 2, MaxLine: offline.MaxLineBytes, Other: &other},
		func(line int, err error) error { return fmt.Errorf("line %d: %w", line, err) }, func(int) {})
	if err == nil {
		err = sink.Close()
	}
	if err != nil {
		panic(err)
	}
	fmt.Println(st.Sets, "sets,", strings.Count(out.String(), "\n"), "lines")
	other.Report(os.Stdout, "embed") // the label is a field embed does not read
	// Output:
	// 2 sets, 2 lines
	// embed: ignored fields "label" (1 lines): a set file's lines may carry labels and ids; embed reads set, points, t and end
}
