package main

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

// maxLineBytes bounds one JSON line (one whole set) of a set file.
const maxLineBytes = 256 << 20

// openInput opens a set file (- or "" for stdin). The open (a FIFO's waits for a writer)
// and the reads end with ctx's error once ctx is done, so a command reading a FIFO or a
// terminal that never delivers still stops on SIGINT/SIGTERM.
func openInput(ctx context.Context, path string) (io.Reader, func() error, error) {
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

// errLineTooLong is a set-file line longer than the limit; the line is skipped whole.
type errLineTooLong struct{ limit int }

func (e errLineTooLong) Error() string {
	size := fmt.Sprintf("%d bytes", e.limit)
	if e.limit >= 1<<20 {
		size = fmt.Sprintf("%d MiB", e.limit>>20)
	}
	return "longer than the limit of " + size + " on one line (one set): skipped to its end; split the set into several lines of one set each"
}

// lineReader reads the lines of a set file, numbered from 1, each without its "\n" (and a
// "\r" before it). A line longer than limit is read to its end without being kept and
// returned as errLineTooLong with its number, so a caller can refuse it and go on.
type lineReader struct {
	r     *bufio.Reader
	limit int
	n     int // number of the last line returned
	buf   []byte
}

func newLineReader(r io.Reader, limit int) *lineReader {
	br, ok := r.(*bufio.Reader)
	if !ok {
		br = bufio.NewReaderSize(r, 1<<20)
	}
	return &lineReader{r: br, limit: limit}
}

// next returns the next line and its number; err is io.EOF after the last line,
// errLineTooLong for a line over the limit (call next again for the following lines), or
// a read error.
func (lr *lineReader) next() (line []byte, n int, err error) {
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
			return nil, lr.n, errLineTooLong{lr.limit}
		}
		return line, lr.n, nil
	}
}

// otherFields counts the top-level fields of set-file lines that a command does not read
// (labels, ids: schema.DecodeOptions.OtherField); safe for concurrent use.
type otherFields struct {
	read   []string // fields the command reads itself (calibrate --label): not counted
	mu     sync.Mutex
	counts map[string]int
}

// add counts one line's field name.
func (o *otherFields) add(name string) {
	if slices.Contains(o.read, name) {
		return
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.counts == nil {
		o.counts = map[string]int{}
	}
	o.counts[name]++
}

// report says on w, once, which fields were ignored and how often, so a misspelt field
// ("edn" for "end") is not silent either.
func (o *otherFields) report(w io.Writer, command string) {
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

// setFileOptions are the decode options of a set file's lines: dimension dim, one set of
// any size per line (bounded by the line limit), other fields counted in o.
func setFileOptions(dim int, o *otherFields) schema.DecodeOptions {
	return schema.DecodeOptions{Dim: dim, MaxPoints: maxLineBytes, OtherField: o.add}
}

// labelValue is the class of a label's JSON value, compared as a value: a string as it is,
// a number in its shortest form (1, 1.0 and 1e0 are one class), true/false; ok is false
// for null (no label). Objects and arrays are refused.
func labelValue(raw json.RawMessage) (class string, ok bool, err error) {
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
