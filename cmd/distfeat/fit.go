package main

import (
	"context"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"

	"github.com/distfeat/distfeat/cmd/distfeat/internal/cli"
	"github.com/distfeat/distfeat/embedding"
	"github.com/distfeat/distfeat/model"
	"github.com/distfeat/distfeat/offline"
	"github.com/distfeat/distfeat/spec"
)

func runFit(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("fit", "", "Embeds labelled sets (JSON lines as embed takes them, with a label field) with the spec and\nfits a linear model on the features of the chosen families: ridge regression with split-\nconformal prediction intervals, or a classifier (one-vs-rest ridge, or logistic regression\nwith class probabilities); λ is chosen by cross-validation over whole sets. Writes the model\nfile (docs/fitting.md) that embed --model applies. Same input and flags, same model bytes on one platform.", stderr)
	in := fs.String("in", "-", "labelled input JSON lines `file` (- for stdin)")
	label := fs.String("label", "", "each line's label is in this JSON `field` (a number for regression, a class for classification); required")
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
	switch {
	case *label == "":
		return cli.UsageError("--label FIELD is required: the JSON field holding each set's label")
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
	cols, err := fitColumns(emb.Columns(), *families)
	if err != nil {
		return err
	}
	w, commit, err := openOutput(ctx, *out, stdout) // first: a bad --out fails before any work
	if err != nil {
		return err
	}
	m, err := fitModel(ctx, emb, cols, *in, *label, *maxSets, model.Options{Kind: *task, Classifier: *classifier, Folds: *folds, Seed: *seed, CalibrationFraction: *calFrac}, stderr)
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
	fmt.Fprintf(stderr, "fit: %s model %s on %d sets, width %d, λ=%.4g, cross-validated %s %.4g", m.Kind, m.ModelVersion, m.NSets, m.Width, m.Lambda, m.CV.Metric, m.CV.Scores[slices.Index(m.CV.Lambdas, m.Lambda)])
	if m.Kind == model.Regression {
		fmt.Fprintf(stderr, "; held-out RMSE %.4g (constant predictor %.4g) on %d sets", m.Holdout.RMSE, m.Holdout.RMSEMean, m.Holdout.N)
	}
	fmt.Fprintln(stderr)
	return nil
}

// fitColumns are the embedder's columns of the named families (all for "").
func fitColumns(all []spec.Column, families string) ([]model.Column, error) {
	var want []string
	if families != "" {
		want = strings.Split(families, ",")
		for _, f := range want {
			if !slices.ContainsFunc(all, func(c spec.Column) bool { return c.Family == f }) {
				return nil, cli.UsageError(fmt.Sprintf("--families: the spec has no family %q", f))
			}
		}
	}
	var cols []model.Column
	for _, c := range all {
		if want == nil || slices.Contains(want, c.Family) {
			cols = append(cols, model.Column{Name: c.Name, Len: c.Len})
		}
	}
	return cols, nil
}

// fitModel reads the labelled sets (offline.ReadSets with the label), embeds them and fits
// the model on the chosen columns (offline.Fit).
func fitModel(ctx context.Context, emb *embedding.Embedder, cols []model.Column, in, label string, maxSets int, o model.Options, stderr io.Writer) (*model.Model, error) {
	other := offline.OtherFields{Read: []string{label}}
	defer other.Report(stderr, "fit")
	sets, _, err := offline.ReadSets(ctx, in, offline.ReadOptions{Dim: emb.Dim(), MaxSets: maxSets, Label: label, Other: &other})
	if err == nil && len(sets) == 0 {
		err = offline.ErrNoSets
	}
	if err != nil {
		return nil, err
	}
	prog := cli.NewProgress(stderr, "fit")
	m, err := offline.Fit(ctx, emb, cols, sets, label, o, func(n int) { prog.Update("%d sets embedded", n) })
	if err != nil {
		return nil, err
	}
	prog.Done()
	return m, nil
}
