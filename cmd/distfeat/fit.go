package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"math"

	"github.com/distfeat/distfeat/cmd/distfeat/internal/cli"
	"github.com/distfeat/distfeat/embedding"
	"github.com/distfeat/distfeat/model"
	"github.com/distfeat/distfeat/offline"
	"github.com/distfeat/distfeat/spec"
)

func runFit(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("fit", "", "Embeds labelled sets (JSON lines as embed takes them, with a label field) with the spec and\nfits a linear model on the features of the chosen families: ridge regression with split-\nconformal prediction intervals, or a classifier (one-vs-rest ridge, or logistic regression\nwith class probabilities); λ is chosen by cross-validation over whole sets. Writes the model\nfile (docs/fitting.md) that embed --model applies. With --point-label, a per-point model on the\nspec's marginal_transfer families instead (each set weighing the same, λ by folds of whole\nsets), applied by embed --points --model and the worker's per-point records. Same input and\nflags, same model bytes on one platform.", stderr)
	in := fs.String("in", "-", "labelled input JSON lines `file` (- for stdin)")
	label := fs.String("label", "", "each line's label is in this JSON `field` (a number for regression, a class for classification); this or --point-label is required")
	pointLabel := fs.String("point-label", "", "fit a per-point model on the spec's marginal_transfer families: each line's per-point labels are in this JSON `field` (an array parallel to points; docs/marginal-transfer.md); --task defaults to classification")
	specPath := fs.String("spec", cli.EnvOr("SPEC", ""), "feature spec JSON `file` (DISTFEAT_SPEC); empty: the built-in default")
	families := fs.String("families", "", "comma-separated `names` of the spec's families to fit on (default: all)")
	task := fs.String("task", model.Regression, "`regression|classification`")
	classifier := fs.String("classifier", model.RidgeClassifier, "classification: `ridge|logistic` (one-vs-rest ridge scores, or logistic regression with class probabilities)")
	out := fs.String("out", "-", "model `file` (- for stdout); a file is replaced only when complete")
	folds := fs.Int("folds", 5, "cross-validation `folds` (of whole sets)")
	seed := fs.Uint64("seed", 1, "`seed` of the fold assignment and the calibration split")
	calFrac := fs.Float64("calibration", 0.2, "regression: the `share` of sets held out for the conformal intervals (the model is fitted on the rest)")
	maxSets := fs.Int("max-sets", 0, "read at most this many `sets` (0: all)")
	if err := cli.ParseArgs(fs, args); err != nil {
		return err
	}
	if *pointLabel != "" && !flagGiven(fs, "task") {
		*task = model.Classification // per-point labels are usually classes
	}
	switch {
	case *label == "" && *pointLabel == "":
		return cli.UsageError("--label FIELD is required: the JSON field holding each set's label (or --point-label FIELD: per-point labels)")
	case *label != "" && *pointLabel != "":
		return cli.UsageError("--label and --point-label exclude each other: a model predicts each set or each point")
	case *pointLabel != "" && *classifier != model.RidgeClassifier:
		return cli.UsageError(fmt.Sprintf("--point-label: a per-point model is a one-vs-rest ridge classifier (--classifier %s is not offered per point)", *classifier))
	case *task != model.Regression && *task != model.Classification:
		return cli.UsageError(fmt.Sprintf("--task %q: want regression or classification", *task))
	case !(*calFrac > 0 && *calFrac < 1):
		return cli.UsageError(fmt.Sprintf("--calibration %v: want a share in (0, 1)", *calFrac))
	case *maxSets < 0:
		return cli.UsageError("--max-sets must be ≥ 0")
	case *classifier != model.RidgeClassifier && *classifier != model.LogisticClassifier:
		return cli.UsageError(fmt.Sprintf("--classifier %q: want ridge or logistic", *classifier))
	case *classifier != model.RidgeClassifier && *task != model.Classification:
		return cli.UsageError(fmt.Sprintf("--classifier %s is for --task classification", *classifier))
	}
	if *maxSets == 0 {
		*maxSets = math.MaxInt
	}
	sp, err := spec.LoadSpec(*specPath)
	if err != nil {
		return err
	}
	emb, err := embedding.New(sp)
	if err != nil {
		return err
	}
	cols, err := offline.FitColumns(emb, *families, *pointLabel != "")
	if err != nil {
		return cli.UsageError(err.Error())
	}
	w, commit, err := openOutput(ctx, *out, stdout) // first: a bad --out fails before any work
	if err != nil {
		return err
	}
	m, err := fitModel(ctx, emb, cols, *in, *label, *pointLabel, *maxSets, model.Options{Kind: *task, Classifier: *classifier, Folds: *folds, Seed: *seed, CalibrationFraction: *calFrac}, stderr)
	var b []byte
	if err == nil {
		b, err = m.Marshal()
	}
	if err == nil {
		_, err = w.Write(b)
	}
	if cerr := commit(err == nil); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	fmt.Fprintln(stderr, "fit:"+offline.FitSummary(m))
	return nil
}

// fitModel reads the labelled sets (offline.ReadSets with the label or the per-point label),
// embeds them and fits the model on the chosen columns (offline.Fit, offline.FitPoints).
func fitModel(ctx context.Context, emb *embedding.Embedder, cols []model.Column, in, label, pointLabel string, maxSets int, o model.Options, stderr io.Writer) (*model.Model, error) {
	field := label
	if pointLabel != "" {
		field = pointLabel
	}
	other := offline.OtherFields{Read: []string{field}}
	defer other.Report(stderr, "fit")
	sets, _, err := offline.ReadSets(ctx, in, offline.ReadOptions{Dim: emb.Dim(), MaxSets: maxSets, Label: label, PointLabel: pointLabel, Other: &other})
	if err == nil && len(sets) == 0 {
		err = offline.ErrNoSets
	}
	if err != nil {
		return nil, err
	}
	prog := cli.NewProgress(stderr, "fit")
	progress := func(n int) { prog.Update("%d sets embedded", n) }
	var m *model.Model
	if pointLabel != "" {
		m, err = offline.FitPoints(ctx, emb, cols, sets, pointLabel, o, progress)
	} else {
		m, err = offline.Fit(ctx, emb, cols, sets, label, o, progress)
	}
	if err != nil {
		return nil, err
	}
	prog.Done()
	return m, nil
}

// flagGiven reports whether the flag name was set on the command line.
func flagGiven(fs *flag.FlagSet, name string) bool {
	given := false
	fs.Visit(func(f *flag.Flag) { given = given || f.Name == name })
	return given
}
