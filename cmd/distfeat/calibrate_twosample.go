package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"slices"

	"github.com/distfeat/distfeat/calibrate"
	"github.com/distfeat/distfeat/cmd/distfeat/internal/cli"
	"github.com/distfeat/distfeat/offline"
	"github.com/distfeat/distfeat/spec"
)

// twoSampleFlags are calibrate's flags for a two_sample family (docs/drift.md).
type twoSampleFlags struct {
	on          bool
	alternative string
	window      int
	alpha       float64
}

func (t *twoSampleFlags) register(fs *flag.FlagSet) {
	fs.BoolVar(&t.on, "two-sample", false, "propose a two_sample family with --in as its reference (docs/drift.md)")
	fs.StringVar(&t.alternative, "alternative", "", "--two-sample: a sample of the change that matters (`file`, JSON lines); the bandwidth is chosen by estimated power")
	fs.IntVar(&t.window, "window", 400, "--two-sample: window size the power is estimated for (`points`)")
	fs.Float64Var(&t.alpha, "alpha", 0.05, "--two-sample: test level (`α`)")
}

// runCalibrateTwoSample proposes a two_sample family for the reference --in (and the
// alternative): a spec naming the reference by its path, the power curve on stdout and in
// --report.
func runCalibrateTwoSample(ctx context.Context, f calibrateFlags, stdout, stderr io.Writer) error {
	if f.out == "" {
		return cli.UsageError("--out is required")
	}
	if f.in == "" || f.in == "-" {
		return cli.UsageError("--two-sample takes the reference as --in FILE")
	}
	specOut, reportOut, err := openCalibrationOutputs(ctx, f)
	if err != nil {
		return err
	}
	defer specOut.Abort()
	defer reportOut.Abort()
	var other offline.OtherFields
	defer other.Report(stderr, "calibrate")
	in, err := readTwoSampleInputs(ctx, f, &other)
	if err != nil {
		return err
	}
	res, err := calibrate.TwoSample(calibrate.Normalise(in.ref, in.lo, in.hi), calibrate.Normalise(in.alt, in.lo, in.hi), in.dim,
		calibrate.TwoSampleOptions{Window: f.twoSample.window, Alpha: f.twoSample.alpha})
	if err != nil {
		return err
	}
	b, err := calibrate.TwoSampleSpec(res, in.dim, in.lo, in.hi, in.refPath, f.twoSample.alpha)
	if err != nil {
		return err
	}
	if specOut == nil {
		_, err = stdout.Write(b)
	} else {
		_, err = specOut.Write(b)
	}
	if err != nil {
		return err
	}
	if reportOut != nil {
		var page bytes.Buffer
		if err := res.WriteReport(&page); err != nil {
			return err
		}
		if _, err := reportOut.Write(page.Bytes()); err != nil {
			return err
		}
		if err := reportOut.Commit(); err != nil {
			return err
		}
	}
	if specOut != nil {
		if err := specOut.Commit(); err != nil {
			return err
		}
	}
	w := stdout
	if f.out == "-" {
		w = io.Discard
	}
	return res.WriteSummary(w)
}

// twoSampleInputs are calibrate --two-sample's points and the bounds they are normalised with.
type twoSampleInputs struct {
	refPath  string    // the reference file, absolute: the proposed spec names it
	ref, alt []float64 // the reference's and the alternative's points (row-major)
	dim      int
	lo, hi   []float64 // the base spec's bounds, or the points' own
}

// readTwoSampleInputs reads the reference (--in), the alternative (--alternative, optional)
// and the bounds: the base spec's (--spec), or the points' own range.
func readTwoSampleInputs(ctx context.Context, f calibrateFlags, other *offline.OtherFields) (twoSampleInputs, error) {
	var in twoSampleInputs
	var base *spec.Spec
	if f.specPath != "" {
		var err error
		if base, err = spec.LoadSpec(f.specPath); err != nil {
			return in, err
		}
		f.dim = base.Dim
	}
	var err error
	if in.ref, in.dim, err = readPoints(ctx, f.in, f.dim, other); err != nil {
		return in, fmt.Errorf("--in: %w", err)
	}
	if f.twoSample.alternative != "" {
		if in.alt, _, err = readPoints(ctx, f.twoSample.alternative, in.dim, other); err != nil {
			return in, fmt.Errorf("--alternative: %w", err)
		}
	}
	if base != nil {
		in.lo, in.hi = slices.Clone(base.Bounds.Lo), slices.Clone(base.Bounds.Hi)
	} else {
		in.lo, in.hi = calibrate.PointBounds(append(slices.Clone(in.ref), in.alt...), in.dim)
	}
	if in.refPath, err = filepath.Abs(f.in); err != nil {
		return in, err
	}
	return in, nil
}

// readPoints pools the points of every set of a JSON-lines file.
func readPoints(ctx context.Context, path string, dim int, other *offline.OtherFields) ([]float64, int, error) {
	sets, dim, _, err := readCalibrationLines(ctx, path, dim, math.MaxInt, "", other)
	if err != nil {
		return nil, 0, err
	}
	var pts []float64
	for _, s := range sets {
		pts = append(pts, s.Points...)
	}
	if len(pts) == 0 {
		return nil, 0, errors.New("no points")
	}
	return pts, dim, nil
}
