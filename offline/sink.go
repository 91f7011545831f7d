package offline

import (
	"bufio"
	"encoding/json"
	"io"

	"github.com/distfeat/distfeat/embedding"
	"github.com/distfeat/distfeat/schema"
	"github.com/distfeat/distfeat/spec"
)

// Output formats of the sinks.
const (
	FormatJSONL = "jsonl" // one JSON object a line (schema.FeatureLine)
	FormatArrow = "arrow" // one Arrow IPC stream
)

// Sink writes feature records in an output format.
type Sink interface {
	Write(r schema.FeatureRecord) error
	Close() error
}

// NewSink returns the sink of emb's feature records in format (FormatArrow, else JSON lines).
func NewSink(w io.Writer, format string, sp *spec.Spec, emb *embedding.Embedder) (Sink, error) {
	out := schema.NewOutput(sp, emb.Columns())
	if format == FormatArrow {
		return out.NewStreamWriter(w), nil
	}
	return &jsonlSink{w: bufio.NewWriter(w), out: out}, nil
}

type jsonlSink struct {
	w   *bufio.Writer
	out *schema.Output
}

func (s *jsonlSink) Write(r schema.FeatureRecord) error {
	b, err := json.Marshal(s.out.Line(r))
	if err != nil {
		return err
	}
	b = append(b, '\n')
	_, err = s.w.Write(b)
	return err
}

func (s *jsonlSink) Close() error { return s.w.Flush() }
