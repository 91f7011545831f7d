package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"sync"

	"github.com/distfeat/distfeat/embedding"
	"github.com/distfeat/distfeat/internal/outfile"
	"github.com/distfeat/distfeat/processor"
	"github.com/distfeat/distfeat/schema"
	"github.com/distfeat/distfeat/spec"
	"github.com/distfeat/distfeat/window"
)

// maxEmbedWorkers bounds embed --workers: each worker may hold batches of up to
// embedBatchBytes of input in flight, and finalisation is CPU-bound.
const maxEmbedWorkers = 256

// errNoPoints marks an input line whose set has no points. The worker opens no window for
// such a set and emits nothing (it counts end_without_window), so embed skips it as well.
var errNoPoints = errors.New("no points")

func runEmbed(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("embed", "", "", stderr)
	specPath := fs.String("spec", envOr("SPEC", ""), "feature spec JSON `file` (DISTFEAT_SPEC); empty: the built-in default")
	in := fs.String("in", "-", "input JSON lines `file`, one set per line (- for stdin)")
	out := fs.String("out", "-", "output `file` (- for stdout); a file is replaced only when complete, a device or FIFO written directly")
	format := fs.String("format", "jsonl", "output format `jsonl|arrow` (arrow: one Arrow IPC stream)")
	skip := fs.Bool("skip-invalid", false, "report invalid lines on stderr and continue")
	workers := fs.Int("workers", runtime.GOMAXPROCS(0), "parallel finalisation `workers` (output order is input order)")
	maxClipped := fs.Float64("max-clipped", processor.MaxClippedFraction, "largest `fraction` of the points that may lie outside the spec's bounds (clipped into them, out_of_bounds clip) before embed fails; 1 accepts any")
	modelPath := fs.String("model", "", "also predict with this model `file` (distfeat fit; docs/fitting.md): prediction columns in the output")
	coverage := fs.Float64("coverage", 0.9, "--model regression: the prediction interval's `coverage` (one the model stores; 0: no interval)")
	pointsOut := fs.String("points", "", "also write the per-point features of the spec's marginal_transfer families to `file` (- for stdout), in --format")
	if err := parseArgs(fs, args); err != nil {
		var positional usageError
		if errors.As(err, &positional) {
			return usageError(fmt.Sprintf("unexpected argument %q: the input is --in FILE (or stdin)", fs.Arg(0)))
		}
		return err
	}
	if !(*maxClipped >= 0 && *maxClipped <= 1) {
		return usageError(fmt.Sprintf("--max-clipped %v: want a fraction in [0, 1]", *maxClipped))
	}
	if *format != "jsonl" && *format != "arrow" {
		return fmt.Errorf("--format %q: want jsonl or arrow", *format)
	}
	if *workers < 1 || *workers > maxEmbedWorkers {
		return usageError(fmt.Sprintf("--workers %d: want 1 to %d (this machine runs %d at once; more workers than cores add memory, not speed)",
			*workers, maxEmbedWorkers, runtime.GOMAXPROCS(0)))
	}
	sp, err := spec.LoadSpec(*specPath)
	if err != nil {
		return err
	}
	emb, err := embedding.New(sp)
	if err != nil {
		return err
	}
	for _, w := range emb.SequentialWarnings() {
		fmt.Fprintln(stderr, "embed: warning: "+w)
	}
	var pred *predictor
	if *modelPath != "" {
		if pred, err = loadPredictor(*modelPath, *coverage, sp, emb); err != nil {
			return err
		}
	}
	if *pointsOut != "" && (*pointsOut == *out && *out != "-" || *pointsOut == "-" && (*out == "-" || *out == "")) {
		return usageError("--points and --out must be different files (give --out FILE or --points FILE)")
	}
	if *pointsOut != "" && len(emb.PointMaps()) == 0 {
		return usageError("--points: the spec has no marginal_transfer family (docs/marginal-transfer.md; distfeat calibrate --point-label proposes one)")
	}
	w, commit, err := openOutput(ctx, *out, stdout) // first: a bad --out fails before any input is read
	if err != nil {
		return err
	}
	r, closeIn, err := openInput(ctx, *in)
	if err != nil {
		_ = commit(false)
		return err
	}
	defer closeIn()
	var sink featureSink
	if pred != nil {
		sink = newPredictionSink(w, *format, sp, emb, pred)
	} else {
		sink, err = newFeatureSink(w, *format, sp, emb)
	}
	if err != nil {
		_ = commit(false)
		return err
	}
	var psink *pointSink
	commitPoints := func(bool) error { return nil }
	if *pointsOut != "" {
		var pw io.Writer
		if pw, commitPoints, err = openOutput(ctx, *pointsOut, stdout); err == nil {
			psink, err = newPointSink(pw, *format, sp, emb, *workers)
		} else {
			err = fmt.Errorf("--points %s: %w", *pointsOut, errors.Unwrap(err)) // openOutput names --out
		}
		if err != nil {
			_, _ = commit(false), commitPoints(false)
			return err
		}
	}
	prog := newProgress(stderr, "embed")
	var other otherFields
	defer other.report(stderr, "embed")
	st, err := embedLines(ctx, emb, r, sink, psink, embedRun{workers: *workers, maxLine: maxLineBytes, other: &other}, func(line int, err error) error {
		if !*skip && !errors.Is(err, errNoPoints) {
			return fmt.Errorf("line %d: %w", line, err)
		}
		fmt.Fprintf(stderr, "line %d: skipped: %v\n", line, err)
		return nil
	}, func(sets int) { prog.update("%d sets", sets) })
	prog.done()
	if cerr := sink.Close(); err == nil {
		err = cerr
	}
	if psink != nil {
		if cerr := psink.Close(); err == nil {
			err = cerr
		}
	}
	if err == nil && st.sets == 0 {
		err = fmt.Errorf("nothing embedded (%d invalid lines, %d sets without points)", st.invalid, st.empty)
	}
	if cerr := st.clips.Check(*maxClipped); err == nil && cerr != nil {
		err = fmt.Errorf("%w; or accept them with --max-clipped 1", cerr)
	} else if err != nil && st.clips.Clipped > 0 {
		fmt.Fprintf(stderr, "embed: %s\n", st.clips.Summary())
	}
	if cerr := commit(err == nil); err == nil {
		err = cerr
	}
	if cerr := commitPoints(err == nil); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	if st.clips.Clipped > 0 {
		fmt.Fprintf(stderr, "embed: %s (within --max-clipped %g)\n", st.clips.Summary(), *maxClipped)
	}
	if st.invalid+st.empty > 0 {
		fmt.Fprintf(stderr, "embed: %d sets, %d invalid lines and %d sets without points skipped\n", st.sets, st.invalid, st.empty)
	}
	return nil
}

// featureSink writes feature records in the chosen format.
type featureSink interface {
	Write(r schema.FeatureRecord) error
	Close() error
}

func newFeatureSink(w io.Writer, format string, spec *spec.Spec, emb *embedding.Embedder) (featureSink, error) {
	out := schema.NewOutput(spec, emb.Columns())
	if format == "arrow" {
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

// embedBatchLines and embedBatchBytes bound one embedJob: consecutive input lines whose sets
// are finalised together (processor.Finalize → embedding.FinalizeBatch), so each random
// Fourier matrix is streamed once per batch instead of once per set — the same batching the
// worker does for the windows one fetch closes. The bytes bound keeps a batch of huge sets
// from holding much more memory than one set.
const (
	embedBatchLines = 16
	embedBatchBytes = 8 << 20
)

// embedLine is one non-empty input line and, once its job is done, its record or error.
type embedLine struct {
	line   int
	data   []byte
	rec    schema.FeatureRecord
	err    error
	points []float64 // the set's normalised points, kept for the per-point output (--points)

	clipped int // points clamped into the spec's bounds
}

// embedJob is a batch of consecutive input lines in flight.
type embedJob struct {
	lines  []embedLine
	doneCh chan struct{}
}

// embedStats counts what embedLines did with the input lines.
type embedStats struct {
	sets    int // feature records written
	invalid int // lines rejected (and skipped, if onInvalid let the run continue)
	empty   int // sets without points (errNoPoints), skipped
	clips   processor.ClipTally
}

// embedRun are embedLines' settings: parallel workers, the longest input line, and where
// the lines' other fields (labels, ids) are counted.
type embedRun struct {
	workers int
	maxLine int
	other   *otherFields
}

// embedLines computes one feature record per input line with a pool of workers, writing
// results in input order. onInvalid decides whether a bad line (or a set without points,
// errNoPoints) stops the run. Lines travel in batches (embedJob); a batch's sets are
// finalised together, which gives the same bytes as one by one. With psink, each set's
// per-point features are written after its window record.
func embedLines(ctx context.Context, emb *embedding.Embedder, r io.Reader, sink featureSink, psink *pointSink, run embedRun,
	onInvalid func(line int, err error) error, onProgress func(sets int)) (st embedStats, err error) {
	workers := max(run.workers, 1)
	opt := setFileOptions(emb.Dim(), run.other)
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
	go readLines(ctx, r, run.maxLine, jobs, ordered, readErr)
	defer wg.Wait()
	for j := range ordered {
		<-j.doneCh
		for k := range j.lines {
			l := &j.lines[k]
			if err != nil {
				break
			}
			switch {
			case errors.Is(l.err, errNoPoints):
				st.empty++
				err = onInvalid(l.line, l.err)
			case l.err != nil:
				st.invalid++
				err = onInvalid(l.line, l.err)
			default:
				seq.Apply(&l.rec, int64(l.line)) // a line is a record: a run quiet for MaxRunRecords lines restarts
				err = sink.Write(l.rec)
				if err == nil && psink != nil {
					err = psink.write(l.rec, l.points, emb.Dim())
				}
				if err == nil {
					st.sets++
					st.clips.Add(l.rec.Set, int(l.rec.N), l.clipped)
					onProgress(st.sets)
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
// (errLineTooLong) in place of its data.
func readLines(ctx context.Context, r io.Reader, maxLine int, jobs, ordered chan<- *embedJob, readErr chan<- error) {
	defer close(ordered)
	defer close(jobs)
	lr := newLineReader(r, maxLine)
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
		data, line, err := lr.next()
		var long errLineTooLong
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
		if len(cur.lines) >= embedBatchLines || curBytes >= embedBatchBytes {
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
			continue // refused while reading (errLineTooLong)
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
		return window.Closed[*embedding.Sketch]{}, nil, 0, fmt.Errorf("set %q: %w; the worker emits no window for it", b.Set, errNoPoints)
	}
	sk := emb.NewSketch()
	sk.Add(d.Points)
	return window.Closed[*embedding.Sketch]{Set: b.Set, Start: b.EventTime, End: b.EventTime, N: sk.Count(), Sketch: sk}, d.Points, d.Clipped, nil
}

// openOutput returns the output writer and commit, which finishes it. A file is opened with
// outfile.Create (see internal/outfile): a regular file is written to a temporary file that
// commit(true) renames over it and commit(false) removes, so a failed run never leaves a
// partial file that looks complete; a device, FIFO or /dev/stdout is written directly, and a
// directory or unwritable path is an error here, before any work.
func openOutput(ctx context.Context, path string, stdout io.Writer) (io.Writer, func(ok bool) error, error) {
	if path == "-" || path == "" {
		return stdout, func(bool) error { return nil }, nil
	}
	f, err := outfile.CreateContext(ctx, path)
	if err != nil {
		return nil, nil, fmt.Errorf("--out: %w", err)
	}
	commit := func(ok bool) error {
		if ok {
			return f.Commit()
		}
		return f.Abort()
	}
	return f, commit, nil
}

// envOr returns DISTFEAT_<name> or def.
func envOr(name, def string) string {
	if v, ok := os.LookupEnv(envPrefix + name); ok {
		return v
	}
	return def
}
