package offline

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/distfeat/distfeat/embedding"
	"github.com/distfeat/distfeat/processor"
	"github.com/distfeat/distfeat/schema"
	"github.com/distfeat/distfeat/window"
)

// LinesBatch and linesBatchBytes bound one batch of EmbedLines: consecutive input lines
// whose sets are finalised together (processor.Finalize → embedding.FinalizeBatch), so each
// random Fourier matrix is streamed once per batch instead of once per set — the same
// batching the worker does for the windows one fetch closes. The bytes bound keeps a batch
// of huge sets from holding much more memory than one set.
const (
	LinesBatch      = 16
	linesBatchBytes = 8 << 20
)

// embedLine is one non-empty input line and, once its job is done, its record or error.
type embedLine struct {
	line   int
	data   []byte
	rec    schema.FeatureRecord
	err    error
	points []float64 // the set's normalised points, kept for the per-point output

	clipped int // points clamped into the spec's bounds
}

// embedJob is a batch of consecutive input lines in flight.
type embedJob struct {
	lines  []embedLine
	doneCh chan struct{}
}

// LinesStats counts what EmbedLines did with the input lines.
type LinesStats struct {
	Sets    int // feature records written
	Invalid int // lines rejected (and skipped, if onInvalid let the run continue)
	Empty   int // sets without points (ErrNoPoints), skipped
	Clips   processor.ClipTally
}

// LinesRun are EmbedLines' settings: parallel workers, the longest input line, and where
// the lines' other fields (labels, ids) are counted.
type LinesRun struct {
	Workers int
	MaxLine int
	Other   *OtherFields
}

// EmbedLines computes one feature record per set-file line of r with a pool of workers,
// writing results to sink in input order. onInvalid decides whether a bad line (or a set
// without points, ErrNoPoints) stops the run. Lines travel in batches; a batch's sets are
// finalised together, which gives the same bytes as one by one. With psink, each set's
// per-point features are written after its window record.
func EmbedLines(ctx context.Context, emb *embedding.Embedder, r io.Reader, sink Sink, psink *PointSink, run LinesRun,
	onInvalid func(line int, err error) error, onProgress func(sets int)) (st LinesStats, err error) {
	workers := max(run.Workers, 1)
	opt := DecodeOptions(emb.Dim(), run.Other)
	specID := emb.Spec().ID()
	seq := processor.NewSequential(emb) // in input order, below: a set's windows in sequence
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	jobs := make(chan *embedJob, workers*2)
	ordered := make(chan *embedJob, workers*4)
	var wg sync.WaitGroup
	for i := 0; i < workers; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range jobs {
				embedBatch(emb, specID, j.lines, opt, psink != nil)
				close(j.doneCh)
			}
		}()
	}
	readErr := make(chan error, 1)
	go readLines(ctx, r, run.MaxLine, jobs, ordered, readErr)
	defer wg.Wait()
	for j := range ordered {
		<-j.doneCh
		for k := range j.lines {
			l := &j.lines[k]
			if err != nil {
				break
			}
			switch {
			case errors.Is(l.err, ErrNoPoints):
				st.Empty++
				err = onInvalid(l.line, l.err)
			case l.err != nil:
				st.Invalid++
				err = onInvalid(l.line, l.err)
			default:
				seq.Apply(&l.rec, int64(l.line)) // a line is a record: a run quiet for MaxRunRecords lines restarts
				err = sink.Write(l.rec)
				if err == nil && psink != nil {
					err = psink.Write(l.rec, l.points, emb.Dim())
				}
				if err == nil {
					st.Sets++
					st.Clips.Add(l.rec.Set, int(l.rec.N), l.clipped)
					onProgress(st.Sets)
				}
			}
			if err != nil {
				cancel() // stop reading; drain what is in flight
			}
		}
		j.lines = nil // the records are written: let them go
	}
	select {
	case rerr := <-readErr:
		if err == nil && !errors.Is(rerr, context.Canceled) {
			err = rerr
		}
	default:
	}
	if err == nil && ctx.Err() != nil {
		err = ctx.Err() // interrupted: the output is incomplete
	}
	return st, err
}

// readLines sends the non-empty input lines, in batches of consecutive lines, to the workers
// (jobs) and, in input order, to the writer (ordered); it closes both at the end and reports
// a read error on readErr. A line longer than maxLine travels with its error
// (LineTooLongError) in place of its data.
func readLines(ctx context.Context, r io.Reader, maxLine int, jobs, ordered chan<- *embedJob, readErr chan<- error) {
	defer close(ordered)
	defer close(jobs)
	lr := NewLineReader(r, maxLine)
	var cur *embedJob
	curBytes := 0
	send := func() bool {
		if cur == nil {
			return true
		}
		j := cur
		cur, curBytes = nil, 0
		for _, ch := range []chan<- *embedJob{jobs, ordered} {
			select {
			case ch <- j:
			case <-ctx.Done():
				readErr <- ctx.Err()
				return false
			}
		}
		return true
	}
	for {
		data, line, err := lr.Next()
		var long LineTooLongError
		switch {
		case err == io.EOF:
			send()
			return
		case errors.As(err, &long):
		case err != nil:
			readErr <- err
			return
		case len(data) == 0:
			continue
		}
		if cur == nil {
			cur = &embedJob{doneCh: make(chan struct{})}
		}
		cur.lines = append(cur.lines, embedLine{line: line, data: append([]byte(nil), data...), err: err})
		curBytes += len(data)
		if len(cur.lines) >= LinesBatch || curBytes >= linesBatchBytes {
			if !send() {
				return
			}
		}
	}
}

// embedBatch turns the JSON lines of one job (one whole set each) into their feature records
// with the worker's code path: processor.Decode (decode, normalise, dead-letter reasons), one
// sketch per set, and processor.Finalize over all of the job's valid sets together, the
// worker's finalisation. A bad line gets its error and does not affect the others. With
// keepPoints each line keeps its normalised points for the per-point output.
func embedBatch(emb *embedding.Embedder, specID string, lines []embedLine, opt schema.DecodeOptions, keepPoints bool) {
	closed := make([]window.Closed[*embedding.Sketch], 0, len(lines))
	at := make([]int, 0, len(lines))
	for k := range lines {
		if lines[k].err != nil {
			continue // refused while reading (LineTooLongError)
		}
		c, u, clipped, err := embedSketch(emb, lines[k].data, opt)
		lines[k].data = nil
		if err != nil {
			lines[k].err = err
			continue
		}
		if keepPoints {
			lines[k].points = u
		}
		lines[k].clipped = clipped
		closed = append(closed, c)
		at = append(at, k)
	}
	for i, rec := range processor.Finalize(specID, closed, 1, nil) {
		lines[at[i]].rec = rec
	}
}

// embedSketch decodes one JSON line (a set file's: other fields are skipped, opt) and sketches
// its points as one closed window; it also returns the normalised points and how many were
// clipped.
func embedSketch(emb *embedding.Embedder, line []byte, opt schema.DecodeOptions) (window.Closed[*embedding.Sketch], []float64, int, error) {
	d, err := processor.Decode(emb, nil, line, schema.ContentTypeJSON, 0, opt, nil)
	if err != nil {
		return window.Closed[*embedding.Sketch]{}, nil, 0, err
	}
	b := d.Batches[0]
	if b.N == 0 {
		return window.Closed[*embedding.Sketch]{}, nil, 0, fmt.Errorf("set %q: %w; the worker emits no window for it", b.Set, ErrNoPoints)
	}
	sk := emb.NewSketch()
	sk.Add(d.Points)
	return window.Closed[*embedding.Sketch]{Set: b.Set, Start: b.EventTime, End: b.EventTime, N: sk.Count(), Sketch: sk}, d.Points, d.Clipped, nil
}
