package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"runtime"

	"github.com/distfeat/distfeat/cmd/distfeat/internal/cli"
	"github.com/distfeat/distfeat/embedding"
	"github.com/distfeat/distfeat/internal/outfile"
	"github.com/distfeat/distfeat/model"
	"github.com/distfeat/distfeat/offline"
	"github.com/distfeat/distfeat/processor"
	"github.com/distfeat/distfeat/spec"
)

// maxEmbedWorkers bounds embed --workers: each worker may hold a batch of up to
// 8 MiB of input in flight (offline.EmbedLines), and finalisation is CPU-bound.
const maxEmbedWorkers = 256

func runEmbed(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("embed", "", "", stderr)
	specPath := fs.String("spec", cli.EnvOr("SPEC", ""), "feature spec JSON `file` (DISTFEAT_SPEC); empty: the built-in default")
	in := fs.String("in", "-", "input JSON lines `file`, one set per line (- for stdin)")
	out := fs.String("out", "-", "output `file` (- for stdout); a file is replaced only when complete, a device or FIFO written directly")
	format := fs.String("format", "jsonl", "output format `jsonl|arrow` (arrow: one Arrow IPC stream)")
	skip := fs.Bool("skip-invalid", false, "report invalid lines on stderr and continue")
	workers := fs.Int("workers", runtime.GOMAXPROCS(0), "parallel finalisation `workers` (output order is input order)")
	maxClipped := fs.Float64("max-clipped", processor.MaxClippedFraction, "largest `fraction` of the points that may lie outside the spec's bounds (clipped into them, out_of_bounds clip) before embed fails; 1 accepts any")
	modelPath := fs.String("model", "", "also predict with this model `file` (distfeat fit; docs/fitting.md): prediction columns in the output (a per-point model, fit --point-label: in the --points output)")
	coverage := fs.Float64("coverage", 0.9, "--model regression: the prediction interval's `coverage` (one the model stores; 0: no interval)")
	pointsOut := fs.String("points", "", "also write the per-point features of the spec's marginal_transfer families to `file` (- for stdout), in --format")
	if err := cli.ParseArgs(fs, args); err != nil {
		var positional cli.UsageError
		if errors.As(err, &positional) {
			return cli.UsageError(fmt.Sprintf("unexpected argument %q: the input is --in FILE (or stdin)", fs.Arg(0)))
		}
		return err
	}
	if !(*maxClipped >= 0 && *maxClipped <= 1) {
		return cli.UsageError(fmt.Sprintf("--max-clipped %v: want a fraction in [0, 1]", *maxClipped))
	}
	if *format != "jsonl" && *format != "arrow" {
		return fmt.Errorf("--format %q: want jsonl or arrow", *format)
	}
	if *workers < 1 || *workers > maxEmbedWorkers {
		return cli.UsageError(fmt.Sprintf("--workers %d: want 1 to %d (this machine runs %d at once; more workers than cores add memory, not speed)",
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
	var pred *offline.Predictor
	if *modelPath != "" {
		if pred, err = loadPredictor(*modelPath, *coverage, emb); err != nil {
			return err
		}
	}
	if *pointsOut != "" && (*pointsOut == *out && *out != "-" || *pointsOut == "-" && (*out == "-" || *out == "")) {
		return cli.UsageError("--points and --out must be different files (give --out FILE or --points FILE)")
	}
	if *pointsOut != "" && len(emb.PointMaps()) == 0 {
		return cli.UsageError("--points: the spec has no marginal_transfer family (docs/marginal-transfer.md; distfeat calibrate --point-label proposes one)")
	}
	switch {
	case pred != nil && pred.PredictsPoints() && *pointsOut == "":
		return cli.UsageError(fmt.Sprintf("--model %s predicts each point (fitted with fit --point-label): give --points FILE, whose per-point records get the predictions", *modelPath))
	case pred != nil && !pred.PredictsPoints() && *pointsOut != "":
		return cli.UsageError(fmt.Sprintf("--model %s predicts each set, and --points --model needs a per-point model (distfeat fit --point-label); to predict the sets, leave out --points", *modelPath))
	}
	setPred, pointPred := pred, (*offline.Predictor)(nil)
	if pred != nil && pred.PredictsPoints() {
		setPred, pointPred = nil, pred
	}
	w, commit, err := openOutput(ctx, *out, stdout) // first: a bad --out fails before any input is read
	if err != nil {
		return err
	}
	r, closeIn, err := offline.OpenInput(ctx, *in)
	if err != nil {
		_ = commit(false)
		return err
	}
	defer closeIn()
	var sink offline.Sink
	if setPred != nil {
		sink = offline.NewPredictionSink(w, *format, sp, emb, setPred)
	} else {
		sink, err = offline.NewSink(w, *format, sp, emb)
	}
	if err != nil {
		_ = commit(false)
		return err
	}
	var psink *offline.PointSink
	commitPoints := func(bool) error { return nil }
	if *pointsOut != "" {
		var pw io.Writer
		if pw, commitPoints, err = openOutput(ctx, *pointsOut, stdout); err == nil {
			if pointPred != nil {
				psink, err = offline.NewPointPredictionSink(pw, *format, sp, emb, *workers, pointPred)
			} else {
				psink, err = offline.NewPointSink(pw, *format, sp, emb, *workers)
			}
		} else {
			err = fmt.Errorf("--points %s: %w", *pointsOut, errors.Unwrap(err)) // openOutput names --out
		}
		if err != nil {
			_, _ = commit(false), commitPoints(false)
			return err
		}
	}
	prog := cli.NewProgress(stderr, "embed")
	var other offline.OtherFields
	defer other.Report(stderr, "embed")
	st, err := offline.EmbedLines(ctx, emb, r, sink, psink, offline.LinesRun{Workers: *workers, MaxLine: offline.MaxLineBytes, Other: &other}, func(line int, err error) error {
		if !*skip && !errors.Is(err, offline.ErrNoPoints) {
			return fmt.Errorf("line %d: %w", line, err)
		}
		fmt.Fprintf(stderr, "line %d: skipped: %v\n", line, err)
		return nil
	}, func(sets int) { prog.Update("%d sets", sets) })
	prog.Done()
	if cerr := sink.Close(); err == nil {
		err = cerr
	}
	if psink != nil {
		if cerr := psink.Close(); err == nil {
			err = cerr
		}
	}
	if err == nil && st.Sets == 0 {
		err = fmt.Errorf("nothing embedded (%d invalid lines, %d sets without points)", st.Invalid, st.Empty)
	}
	if cerr := st.Clips.Check(*maxClipped); err == nil && cerr != nil {
		err = fmt.Errorf("%w; or accept them with --max-clipped 1", cerr)
	} else if err != nil && st.Clips.Clipped > 0 {
		fmt.Fprintf(stderr, "embed: %s\n", st.Clips.Summary())
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
	if st.Clips.Clipped > 0 {
		fmt.Fprintf(stderr, "embed: %s (within --max-clipped %g)\n", st.Clips.Summary(), *maxClipped)
	}
	if st.Invalid+st.Empty > 0 {
		fmt.Fprintf(stderr, "embed: %d sets, %d invalid lines and %d sets without points skipped\n", st.Sets, st.Invalid, st.Empty)
	}
	return nil
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

// loadPredictor loads the model file of --model and refuses one fitted under another spec
// or width, or without an interval at --coverage.
func loadPredictor(path string, coverage float64, emb *embedding.Embedder) (*offline.Predictor, error) {
	m, err := model.Load(path)
	if err != nil {
		return nil, fmt.Errorf("--model: %w", err)
	}
	p, err := offline.NewPredictor(m, emb, coverage)
	if model.RefusedReason(err) == model.RefusedCoverage {
		return nil, fmt.Errorf("--coverage: %w", err)
	} else if err != nil {
		return nil, fmt.Errorf("--model %s: %w", path, err)
	}
	return p, nil
}
