package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/distfeat/distfeat/calibrate"
	"github.com/distfeat/distfeat/cmd/distfeat/internal/cli"
	"github.com/distfeat/distfeat/internal/outfile"
	"github.com/distfeat/distfeat/kafkaio"
	"github.com/distfeat/distfeat/offline"
	"github.com/distfeat/distfeat/spec"
)

// calibrateFlags are the calibrate command's settings.
type calibrateFlags struct {
	in, topic, families, specPath, out, report string
	label                                      string
	brokers                                    string
	maxSets, dim                               int
	topicTimeout                               time.Duration
	opts                                       calibrate.Options
	twoSample                                  twoSampleFlags
}

func runCalibrate(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	f, mf, cc, err := parseCalibrateFlags(args, stderr)
	if err != nil {
		return err
	}
	if f.twoSample.on {
		return runCalibrateTwoSample(ctx, f, stdout, stderr)
	}
	specOut, reportOut, err := openCalibrationOutputs(ctx, f)
	if err != nil {
		return err
	}
	defer specOut.Abort()
	defer reportOut.Abort()
	var base *spec.Spec
	if f.specPath != "" {
		if base, err = spec.LoadSpec(f.specPath); err != nil {
			return err
		}
		if f.dim == 0 {
			f.dim = base.Dim
		}
		mf.kept = calibrate.SplitMarginalFamilies(base)
	}
	if f.families != "" {
		f.opts.Families = strings.Split(f.families, ",")
	}
	var order []string // the base spec's families, in order, when --families tunes some of them
	if base != nil && f.families != "" {
		for _, fam := range base.Families {
			order = append(order, fam.Name)
		}
	}
	prog := cli.NewProgress(stderr, "calibrate")
	defer prog.Done()
	sets, labelled, err := readCalibrationInput(ctx, &f, mf, cc, stderr, prog)
	if err != nil {
		return err
	}
	if err := calibrate.CheckSample(sets, f.dim); err != nil {
		return err
	}
	f.opts.Progress = func(stage string, done, total int) { prog.Update("%s %d/%d", stage, done, total) }
	res, err := calibrate.Calibrate(ctx, sets, f.dim, base, f.opts)
	if err != nil {
		return err
	}
	kept, err := calibrate.KeepUntouchedFamilies(res, base, order)
	if err != nil {
		return err
	}
	var grid string
	if mf.label != "" {
		if grid, err = calibrate.AddMarginalFamily(ctx, res, labelled, mf.name); err != nil {
			return err
		}
	} else if grid, err = calibrate.KeepMarginalFamilies(res, mf.kept); err != nil {
		return err
	}
	prog.Done()
	if err := writeCalibration(res, f, specOut, reportOut, stdout); err != nil || kept+grid == "" || f.out == "-" {
		return err // with --out -, stdout stays a valid spec
	}
	_, err = io.WriteString(stdout, kept+grid)
	return err
}

// parseCalibrateFlags defines and parses calibrate's flags and checks their combinations.
func parseCalibrateFlags(args []string, stderr io.Writer) (calibrateFlags, marginalFlags, kafkaio.Cluster, error) {
	fs := newFlagSet("calibrate", "", "Reads a sample of sets (JSON lines as embed takes them, or the first sets of a points topic),\nproposes dim, bounds, bandwidths, hdd grid/basis/lambdas, the l2 basis, sigmas and feature\ncounts with the rule for each (by cross-validated accuracy when the sets carry --label),\nchecks the proposal against the kernel between the true distributions as estimated from the\nsample (R² per family), and writes the spec (and optionally an HTML report). Same input and\nflags, same spec bytes.", stderr)
	var f calibrateFlags
	fs.StringVar(&f.in, "in", "", "input JSON lines, one set per line as embed takes them (`file`, - for stdin)")
	fs.StringVar(&f.topic, "from-topic", "", "read the first --max-sets sets of this points `topic` instead of --in")
	fs.StringVar(&f.brokers, "brokers", cli.EnvOr("BROKERS", "127.0.0.1:9092"), "bootstrap brokers for --from-topic (DISTFEAT_BROKERS; `host:port,...`)")
	fs.DurationVar(&f.topicTimeout, "topic-timeout", time.Minute, "--from-topic: give up reading after this `duration`")
	fs.IntVar(&f.maxSets, "max-sets", 1000, "read at most this many `sets`")
	fs.IntVar(&f.dim, "dim", 0, "point `dimension` (0: from --spec, else from the first JSON record)")
	fs.StringVar(&f.families, "families", "", "families to calibrate, comma-separated (`names`; default: all of --spec, or mmd,hdd_js,l2)")
	fs.StringVar(&f.specPath, "spec", "", "base spec whose families are tuned; its other fields are kept (`file`)")
	fs.StringVar(&f.out, "out", "", "write the proposed spec to this `file` (required; - for stdout)")
	fs.StringVar(&f.report, "report", "", "also write a self-contained HTML report to this `file`")
	fs.StringVar(&f.label, "label", "", "--in: each line's class is in this JSON `field` (removed before decoding); labelled sets make calibrate choose bandwidths and feature counts by cross-validated accuracy")
	fs.IntVar(&f.opts.MaxSets, "sample-sets", calibrate.DefaultMaxSets, "`sets` in the Gram matrices (sub-sampled with the spec's seed)")
	fs.IntVar(&f.opts.MaxPoints, "sample-points", calibrate.DefaultMaxPoints, "`points` per set in the exact mean-map kernels")
	fs.Float64Var(&f.opts.Error, "error", calibrate.DefaultError, "target RMS error of one approximate kernel value (`ε`, e.g. 0.03)")
	fs.Float64Var(&f.opts.TargetR2, "r2", calibrate.DefaultTargetR2, "R² against the true kernel the choices aim for (`0..1`; below it when the data cannot support it, as the summary says)")
	var mf marginalFlags
	fs.StringVar(&mf.label, "point-label", "", "marginal transfer: the input lines' per-point label array `field`; adds a marginal_transfer family whose sigma_p, sigma_x and features are chosen by cross-validation over sets (needs --in)")
	fs.StringVar(&mf.name, "point-family", "mt", "with --point-label: the `name` of the marginal_transfer family")
	f.twoSample.register(fs)
	cc, err := parseClientFlags(fs, args)
	if err == nil {
		err = f.check()
	}
	if err != nil || f.twoSample.on {
		return f, mf, cc, err
	}
	switch {
	case f.out == "":
		err = cli.UsageError("--out is required")
	case (f.in == "") == (f.topic == ""):
		err = cli.UsageError("give exactly one of --in FILE or --from-topic TOPIC")
	case mf.label != "" && f.in == "":
		err = cli.UsageError("--point-label FIELD needs --in FILE (labelled JSON lines)")
	case f.label != "" && f.in == "":
		err = cli.UsageError("--label FIELD needs --in FILE (labelled JSON lines; a points topic's records carry no labels)")
	case f.report != "" && f.report == f.out:
		err = cli.UsageError("--report and --out name the same file")
	}
	return f, mf, cc, err
}

// check refuses numeric flags outside the range they mean something in, naming the flag
// (the calibrate package would take a zero or negative value for its default).
func (f calibrateFlags) check() error {
	bad := func(flag string, v any, want string) error {
		return cli.UsageError(fmt.Sprintf("%s %v: want %s", flag, v, want))
	}
	switch o := f.opts; {
	case !(o.TargetR2 > 0 && o.TargetR2 < 1):
		return bad("--r2", o.TargetR2, "a target R² between 0 and 1 (exclusive; e.g. 0.99)")
	case !(o.Error > 0 && o.Error < 1):
		return bad("--error", o.Error, "an RMS kernel error between 0 and 1 (exclusive; e.g. 0.03)")
	case o.MaxPoints < 2:
		return bad("--sample-points", o.MaxPoints, "2 or more points per set")
	case o.MaxSets < 2:
		return bad("--sample-sets", o.MaxSets, "2 or more sets")
	case f.maxSets < 1:
		return bad("--max-sets", f.maxSets, "1 or more sets")
	case f.dim < 0:
		return bad("--dim", f.dim, "0 (inferred) or more")
	case f.topicTimeout <= 0:
		return bad("--topic-timeout", f.topicTimeout, "a positive duration")
	case f.twoSample.window < 2:
		return bad("--window", f.twoSample.window, "2 or more points")
	case !(f.twoSample.alpha > 0 && f.twoSample.alpha < 1):
		return bad("--alpha", f.twoSample.alpha, "a level between 0 and 1 (exclusive)")
	}
	return nil
}

// readCalibrationInput reads the sample from --in (with per-point labels for
// --point-label) or from --from-topic, and sets f.dim when it was 0.
func readCalibrationInput(ctx context.Context, f *calibrateFlags, mf marginalFlags, cc kafkaio.Cluster, stderr io.Writer, prog *cli.Progress) (sets []calibrate.Set, labelled []calibrate.LabelledSet, err error) {
	other := offline.OtherFields{Read: []string{f.label, mf.label}}
	defer other.Report(stderr, "calibrate")
	switch {
	case mf.label != "":
		sets, labelled, f.dim, err = readLabelledLines(ctx, f.in, f.dim, f.maxSets, mf.label, &other)
	case f.in != "":
		var lc labelCounts
		if sets, f.dim, lc, err = readCalibrationLines(ctx, f.in, f.dim, f.maxSets, f.label, &other); err == nil {
			err = lc.check(len(sets), stderr)
		}
	default:
		cc.Brokers = strings.Split(f.brokers, ",")
		tctx, cancel := context.WithTimeout(ctx, f.topicTimeout)
		sets, f.dim, err = readCalibrationTopic(tctx, cc, f.topic, f.dim, f.maxSets, stderr, prog)
		cancel()
	}
	return sets, labelled, err
}

// openCalibrationOutputs opens --out (nil for -) and --report (nil when not asked for) with
// outfile.CreateContext before any input is read, so a bad path fails at once.
func openCalibrationOutputs(ctx context.Context, f calibrateFlags) (specOut, reportOut *outfile.File, err error) {
	if f.out != "-" {
		if specOut, err = outfile.CreateContext(ctx, f.out); err != nil {
			return nil, nil, fmt.Errorf("--out: %w", err)
		}
	}
	if f.report != "" {
		if reportOut, err = outfile.CreateContext(ctx, f.report); err != nil {
			specOut.Abort()
			return nil, nil, fmt.Errorf("--report: %w", err)
		}
	}
	return specOut, reportOut, nil
}

// writeCalibration writes the spec (indented canonical JSON) to specOut (nil: stdout), the
// report to reportOut (nil: none), commits both once both are written, and writes the summary.
func writeCalibration(res *calibrate.Result, f calibrateFlags, specOut, reportOut *outfile.File, stdout io.Writer) error {
	var spec bytes.Buffer
	if err := json.Indent(&spec, res.Spec.CanonicalJSON(), "", "  "); err != nil {
		return err
	}
	spec.WriteByte('\n')
	if specOut == nil {
		if _, err := stdout.Write(spec.Bytes()); err != nil {
			return err
		}
	} else if _, err := specOut.Write(spec.Bytes()); err != nil {
		return err
	}
	if reportOut != nil {
		var html bytes.Buffer
		if err := res.WriteReport(&html); err != nil {
			return fmt.Errorf("report: %w", err)
		}
		if _, err := reportOut.Write(html.Bytes()); err != nil {
			return err
		}
	}
	if specOut != nil {
		if err := specOut.Commit(); err != nil {
			return err
		}
	}
	if reportOut != nil {
		if err := reportOut.Commit(); err != nil {
			return err
		}
	}
	w := stdout
	if f.out == "-" {
		w = io.Discard // keep stdout a valid spec
	}
	return res.WriteSummary(w)
}

// labelCounts describes the --label field over the input lines read.
type labelCounts struct {
	field    string
	missing  int            // lines without the field, or with null
	classes  map[string]int // sets per class
	labelled int
}

// check refuses a --label that cross-validation cannot use (no labels, one class) and says
// on w how many sets are left out of it for want of a label.
func (c labelCounts) check(sets int, w io.Writer) error {
	switch {
	case c.field == "":
		return nil
	case c.labelled == 0:
		return fmt.Errorf("--label %q: none of the %d sets has this field (or only null): give the field that holds each set's class, or no --label", c.field, sets)
	case len(c.classes) == 1:
		for class := range c.classes {
			return fmt.Errorf("--label %q: all %d labelled sets are of the one class %q: cross-validated accuracy needs two classes or more (or no --label)", c.field, c.labelled, class)
		}
	}
	if c.missing > 0 {
		fmt.Fprintf(w, "calibrate: --label %q: %d of %d sets have no label (field absent or null): they count for the unlabelled rules, not for the cross-validated accuracy\n", c.field, c.missing, sets)
	}
	return nil
}

// readCalibrationLines reads up to maxSets sets of a set file (offline.ReadSets). dim 0
// takes the dimension of the first point. With label, each set's class is that field's
// value (offline.LabelValue), counted in the labelCounts.
func readCalibrationLines(ctx context.Context, path string, dim, maxSets int, label string, other *offline.OtherFields) ([]calibrate.Set, int, labelCounts, error) {
	lc := labelCounts{field: label, classes: map[string]int{}}
	sets, dim, err := offline.ReadSets(ctx, path, offline.ReadOptions{Dim: dim, MaxSets: maxSets, Label: label, Other: other})
	if err == nil && len(sets) == 0 {
		err = offline.ErrNoSets
	}
	if err != nil {
		return nil, 0, lc, err
	}
	for _, s := range sets {
		switch {
		case label == "":
		case s.Labelled:
			lc.labelled++
			lc.classes[s.Label]++
		default:
			lc.missing++
		}
	}
	return offline.CalibrationSets(sets), dim, lc, nil
}

// readCalibrationTopic reads the points topic partition by partition, from the oldest
// record to the end offset at the start, until maxSets sets have ended (offline.TopicSample).
func readCalibrationTopic(ctx context.Context, cc kafkaio.Cluster, topic string, dim, maxSets int, stderr io.Writer, prog *cli.Progress) ([]calibrate.Set, int, error) {
	ts := offline.NewTopicSample(topic, dim, maxSets)
	if err := kafkaio.ReadFromStart(ctx, cc, topic, func(r kafkaio.Record) bool {
		more := ts.Add(r.Key, r.Value, r.ContentType(), r.Time.UnixMilli())
		sets, ended := ts.Count()
		prog.Update("read %d sets (%d ended) from %s", sets, ended, topic)
		return more
	}); err != nil {
		return nil, 0, err
	}
	sets, dim, bad, open, err := ts.Result()
	if err != nil {
		return nil, 0, err
	}
	if bad > 0 || open > 0 {
		fmt.Fprintf(stderr, "calibrate: %s: %d invalid records skipped; %d sets without end: true used as they are\n", topic, bad, open)
	}
	if len(sets) == 0 {
		return nil, 0, fmt.Errorf("no sets read from topic %q", topic)
	}
	return sets, dim, nil
}
