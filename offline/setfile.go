package offline

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/distfeat/distfeat/schema"
)

// A set file is JSON lines, one whole set per line, in the input topic's JSON record format
// (docs/input-output.md); its lines may carry other fields (labels, ids), which the record
// decoder skips and OtherFields counts. embed, fit, calibrate and produce read set files.

// MaxLineBytes bounds one JSON line (one whole set) of a set file.
const MaxLineBytes = 256 << 20

// ErrNoSets reports a set file without a set.
var ErrNoSets = errors.New("no sets in the input")

// OpenInput opens a set file (- or "" for stdin). The open (a FIFO's waits for a writer)
// and the reads end with ctx's error once ctx is done, so a command reading a FIFO or a
// terminal that never delivers still stops on SIGINT/SIGTERM.
func OpenInput(ctx context.Context, path string) (io.Reader, func() error, error) {
	if path == "-" || path == "" {
		return bufio.NewReaderSize(&ctxReader{ctx: ctx, r: os.Stdin}, 1<<20), func() error { return nil }, nil
	}
	type opened struct {
		f   *os.File
		err error
	}
	ch := make(chan opened, 1)
	go func() {
		f, err := os.Open(path)
		ch <- opened{f, err}
	}()
	select {
	case o := <-ch:
		if o.err != nil {
			return nil, nil, o.err
		}
		return bufio.NewReaderSize(&ctxReader{ctx: ctx, r: o.f}, 1<<20), o.f.Close, nil
	case <-ctx.Done():
		go func() { // close the file if the open ever completes
			if o := <-ch; o.f != nil {
				o.f.Close()
			}
		}()
		return nil, nil, fmt.Errorf("opening %s: %w", path, ctx.Err())
	}
}

// ctxReader is r whose Read returns ctx's error once ctx is done, even while the
// underlying read is blocked (that read is left to finish in its goroutine, into a buffer
// of its own, and its result dropped).
type ctxReader struct {
	ctx context.Context
	r   io.Reader
	buf []byte
}

func (c *ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	if len(c.buf) < len(p) {
		c.buf = make([]byte, len(p))
	}
	buf := c.buf[:len(p)]
	type result struct {
		n   int
		err error
	}
	done := make(chan result, 1)
	go func() {
		n, err := c.r.Read(buf)
		done <- result{n, err}
	}()
	select {
	case res := <-done:
		copy(p, buf[:res.n])
		return res.n, res.err
	case <-c.ctx.Done():
		c.buf = nil // the blocked read still owns it
		return 0, c.ctx.Err()
	}
}

// LineTooLongError is a set-file line longer than the limit; the line is skipped whole.
type LineTooLongError struct{ Limit int }

func (e LineTooLongError) Error() string {
	size := fmt.Sprintf("%d bytes", e.Limit)
	if e.Limit >= 1<<20 {
		size = fmt.Sprintf("%d MiB", e.Limit>>20)
	}
	return "longer than the limit of " + size + " on one line (one set): skipped to its end; split the set into several lines of one set each"
}

// LineReader reads the lines of a set file, numbered from 1, each without its "\n" (and a
// "\r" before it). A line longer than limit is read to its end without being kept and
// returned as LineTooLongError with its number, so a caller can refuse it and go on.
type LineReader struct {
	r     *bufio.Reader
	limit int
	n     int // number of the last line returned
	buf   []byte
}

// NewLineReader reads r's lines of at most limit bytes.
func NewLineReader(r io.Reader, limit int) *LineReader {
	br, ok := r.(*bufio.Reader)
	if !ok {
		br = bufio.NewReaderSize(r, 1<<20)
	}
	return &LineReader{r: br, limit: limit}
}

// Next returns the next line and its number; err is io.EOF after the last line,
// LineTooLongError for a line over the limit (call Next again for the following lines), or
// a read error. The line is valid until the next call.
func (lr *LineReader) Next() (line []byte, n int, err error) {
	if cap(lr.buf) > 16<<20 {
		lr.buf = nil // do not keep a huge line's buffer for the rest of the input
	}
	lr.buf = lr.buf[:0]
	size := 0 // the line's bytes, its "\n" excluded
	for {
		chunk, rerr := lr.r.ReadSlice('\n')
		if rerr == nil {
			chunk = chunk[:len(chunk)-1]
		}
		size += len(chunk)
		if size <= lr.limit+1 { // +1: a "\r" before the "\n"
			lr.buf = append(lr.buf, chunk...)
		}
		switch {
		case rerr == nil:
		case errors.Is(rerr, bufio.ErrBufferFull):
			continue
		case rerr == io.EOF && size == 0:
			return nil, lr.n, io.EOF
		case rerr != io.EOF:
			return nil, lr.n + 1, fmt.Errorf("reading line %d: %w", lr.n+1, rerr)
		}
		lr.n++
		line = bytes.TrimSuffix(lr.buf, []byte("\r"))
		if size > lr.limit+1 || len(line) > lr.limit {
			return nil, lr.n, LineTooLongError{lr.limit}
		}
		return line, lr.n, nil
	}
}

// OtherFields counts the top-level fields of set-file lines that a command does not read
// (labels, ids: schema.DecodeOptions.OtherField); safe for concurrent use.
type OtherFields struct {
	Read   []string // fields the command reads itself (calibrate --label): not counted
	mu     sync.Mutex
	counts map[string]int
}

// Add counts one line's field name.
func (o *OtherFields) Add(name string) {
	if slices.Contains(o.Read, name) {
		return
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.counts == nil {
		o.counts = map[string]int{}
	}
	o.counts[name]++
}

// Report says on w, once, which fields were ignored and how often, so a misspelt field
// ("edn" for "end") is not silent either.
func (o *OtherFields) Report(w io.Writer, command string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if len(o.counts) == 0 {
		return
	}
	names := make([]string, 0, len(o.counts))
	for n := range o.counts {
		names = append(names, n)
	}
	slices.Sort(names)
	parts := make([]string, len(names))
	for i, n := range names {
		parts[i] = fmt.Sprintf("%q (%d lines)", n, o.counts[n])
	}
	fmt.Fprintf(w, "%s: ignored fields %s: a set file's lines may carry labels and ids; %s reads set, points, t and end\n",
		command, strings.Join(parts, ", "), command)
}

// DecodeOptions are the decode options of a set file's lines: dimension dim, one set of
// any size per line (bounded by the line limit), other fields skipped and counted in o
// (nil: skipped uncounted).
func DecodeOptions(dim int, o *OtherFields) schema.DecodeOptions {
	opt := schema.DecodeOptions{Dim: dim, MaxPoints: MaxLineBytes, OtherField: func(string) {}}
	if o != nil {
		opt.OtherField = o.Add
	}
	return opt
}

// LabelValue is the class of a label's JSON value, compared as a value: a string as it is,
// a number in its shortest form (1, 1.0 and 1e0 are one class), true/false; ok is false
// for null (no label). Objects and arrays are refused.
func LabelValue(raw json.RawMessage) (class string, ok bool, err error) {
	raw = bytes.TrimSpace(raw)
	var v any
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil {
		return "", false, err
	}
	switch v := v.(type) {
	case nil:
		return "", false, nil
	case string:
		return v, true, nil
	case bool:
		return strconv.FormatBool(v), true, nil
	case json.Number:
		f, err := strconv.ParseFloat(string(v), 64)
		if err != nil {
			return "", false, fmt.Errorf("label %s: %w", v, err)
		}
		return strconv.FormatFloat(f, 'g', -1, 64), true, nil
	default:
		return "", false, fmt.Errorf("label %.40s: want a string, number or boolean", raw)
	}
}

// LabelOf is the class in the field label of a JSON record (LabelValue); ok is false when
// the field is absent or null.
func LabelOf(value []byte, label string) (class string, ok bool, err error) {
	var rec map[string]json.RawMessage
	if err := json.Unmarshal(value, &rec); err != nil {
		return "", false, err
	}
	raw, ok := rec[label]
	if !ok {
		return "", false, nil
	}
	return LabelValue(raw)
}

// FirstPointDim is the length of the first point of a JSON input record.
func FirstPointDim(value []byte) (int, error) {
	var rec struct {
		Points [][]json.RawMessage `json:"points"`
	}
	if err := json.Unmarshal(value, &rec); err != nil {
		return 0, fmt.Errorf("cannot infer the dimension (give --dim or --spec): %w", err)
	}
	if len(rec.Points) == 0 || len(rec.Points[0]) == 0 {
		return 0, errors.New("cannot infer the dimension from a record without points (give --dim or --spec)")
	}
	return len(rec.Points[0]), nil
}

// ReadOptions say what ReadSets reads from a set file besides each line's set. The label
// errors name the flags of the commands that set Label (--label) and PointLabel
// (--point-label).
type ReadOptions struct {
	// Dim is the points' dimension; 0 takes the first point's.
	Dim int
	// MaxSets stops after this many sets; 0 reads them all.
	MaxSets int
	// Label is the field holding each set's class (LabelValue); "" for none.
	Label string
	// PointLabel is the field holding an array of per-point labels, one a point (LabelValue,
	// null refused); "" for none. With PointLabel, Label is not read.
	PointLabel string
	// EventTime is the event time of a line without "t".
	EventTime int64
	// DecodeSpaces decodes (and so refuses) a line of white space; only an empty line is
	// skipped (produce's rule). Otherwise every blank line is skipped.
	DecodeSpaces bool
	// Other counts the fields the decoder skips (labels, ids); nil: skipped uncounted.
	Other *OtherFields
}

// FileSet is one set read from a set file.
type FileSet struct {
	schema.Batch
	// Line is the set's line number, from 1.
	Line int
	// Label is the set's class (ReadOptions.Label); Labelled is false when the field is
	// absent or null.
	Label    string
	Labelled bool
	// PointLabels are the per-point labels (ReadOptions.PointLabel); nil when the line has
	// no such field.
	PointLabels []string
}

// LineError is a set-file line that could not be read or decoded.
type LineError struct {
	Line int
	Err  error
}

func (e *LineError) Error() string { return fmt.Sprintf("line %d: %v", e.Line, e.Err) }
func (e *LineError) Unwrap() error { return e.Err }

// ReadSets reads the sets of a set file (- for stdin) and returns them with the dimension
// (opt.Dim, or the first point's). A bad line is a *LineError; an empty input is no error
// (callers that need a set say ErrNoSets).
func ReadSets(ctx context.Context, path string, opt ReadOptions) ([]FileSet, int, error) {
	r, closeIn, err := OpenInput(ctx, path)
	if err != nil {
		return nil, 0, err
	}
	defer closeIn()
	lr := NewLineReader(r, MaxLineBytes)
	var sets []FileSet
	dim := opt.Dim
	for opt.MaxSets <= 0 || len(sets) < opt.MaxSets {
		value, line, err := lr.Next()
		switch {
		case err == io.EOF:
			return sets, dim, nil
		case err != nil:
			return nil, 0, &LineError{line, err}
		case len(value) == 0, !opt.DecodeSpaces && len(bytes.TrimSpace(value)) == 0:
			continue
		}
		s := FileSet{Line: line}
		var rawLabels json.RawMessage
		hasLabels := false
		switch {
		case opt.PointLabel != "":
			var obj map[string]json.RawMessage
			if err := json.Unmarshal(value, &obj); err != nil {
				return nil, 0, &LineError{line, err}
			}
			rawLabels, hasLabels = obj[opt.PointLabel]
		case opt.Label != "":
			if s.Label, s.Labelled, err = LabelOf(value, opt.Label); err != nil {
				return nil, 0, &LineError{line, fmt.Errorf("--label %q: %w", opt.Label, err)}
			}
		}
		if dim == 0 {
			if dim, err = FirstPointDim(value); err != nil {
				return nil, 0, &LineError{line, err}
			}
		}
		bs, err := schema.DecodeRecord(nil, value, schema.ContentTypeJSON, opt.EventTime, DecodeOptions(dim, opt.Other))
		if err != nil {
			return nil, 0, &LineError{line, err}
		}
		s.Batch = bs[0]
		if hasLabels {
			if s.PointLabels, err = pointLabels(rawLabels, s.N); err != nil {
				return nil, 0, &LineError{line, fmt.Errorf("--point-label %q%w", opt.PointLabel, err)}
			}
		}
		sets = append(sets, s)
	}
	return sets, dim, nil
}

// pointLabels decodes a per-point label array of n labels; its error text starts with the
// separator that follows the field's name.
func pointLabels(raw json.RawMessage, n int) ([]string, error) {
	var vals []json.RawMessage
	if err := json.Unmarshal(raw, &vals); err != nil {
		return nil, fmt.Errorf(": want an array with one label per point: %w", err)
	}
	if len(vals) != n {
		return nil, fmt.Errorf(" has %d labels for %d points", len(vals), n)
	}
	labels := make([]string, len(vals))
	for i, v := range vals {
		class, ok, err := LabelValue(v)
		if err == nil && !ok {
			err = errors.New("null")
		}
		if err != nil {
			return nil, fmt.Errorf(": point %d: %w", i, err)
		}
		labels[i] = class
	}
	return labels, nil
}

// WriteSets writes one JSON line a batch (schema.EncodeJSON: set, points, t, end), the set
// file `distfeat produce --out` writes, and returns the number of points written.
func WriteSets(w io.Writer, batches []schema.Batch) (points int, err error) {
	bw := bufio.NewWriterSize(w, 1<<20)
	for _, b := range batches {
		line, err := schema.EncodeJSON(b)
		if err != nil {
			return points, fmt.Errorf("set %s: %w", b.Set, err)
		}
		bw.Write(line)
		bw.WriteByte('\n')
		points += b.N
	}
	return points, bw.Flush()
}
