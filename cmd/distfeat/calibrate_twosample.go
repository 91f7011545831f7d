package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"path/filepath"

	"github.com/distfeat/distfeat/calibrate"
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
func runCalibrateTwoSample(ctx context.Context, f calibrateFlags, stdout io.Writer) error {
	if f.out == "" {
		return usageError("--out is required")
	}
	if f.in == "" || f.in == "-" {
		return usageError("--two-sample takes the reference as --in FILE")
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
		f.dim = base.Dim
	}
	ref, dim, err := readPoints(f.in, f.dim)
	if err != nil {
		return fmt.Errorf("--in: %w", err)
	}
	var alt []float64
	if f.twoSample.alternative != "" {
		if alt, _, err = readPoints(f.twoSample.alternative, dim); err != nil {
			return fmt.Errorf("--alternative: %w", err)
		}
	}
	lo, hi := make([]float64, dim), make([]float64, dim)
	if base != nil {
		copy(lo, base.Bounds.Lo)
		copy(hi, base.Bounds.Hi)
	} else {
		lo, hi = pointBounds(append(append([]float64(nil), ref...), alt...), dim)
	}
	norm := func(x []float64) []float64 {
		u := make([]float64, len(x))
		for i, v := range x {
			j := i % dim
			u[i] = min(max((v-lo[j])/(hi[j]-lo[j]), 0), 1)
		}
		return u
	}
	res, err := calibrate.TwoSample(norm(ref), norm(alt), dim, calibrate.TwoSampleOptions{Window: f.twoSample.window, Alpha: f.twoSample.alpha})
	if err != nil {
		return err
	}
	refPath, err := filepath.Abs(f.in)
	if err != nil {
		return err
	}
	doc := map[string]any{
		"version": calibrate.NewestVersion, "dim": dim, "bounds": map[string]any{"lo": lo, "hi": hi},
		"families": []any{map[string]any{"name": "drift", "kind": "two_sample", "reference": refPath,
			"bandwidth": res.Bandwidth, "bands": res.Bands, "frequencies": res.Frequencies, "alpha": f.twoSample.alpha}},
	}
	b, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		return err
	}
	b = append(b, '\n')
	if _, err := spec.ParseSpec(b); err != nil { // the proposal must load
		return fmt.Errorf("proposed spec: %w", err)
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

// readPoints pools the points of every set of a JSON-lines file.
func readPoints(path string, dim int) ([]float64, int, error) {
	sets, dim, err := readCalibrationLines(path, dim, math.MaxInt, "")
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

// pointBounds is the points' box widened by 5% of its width on each side (±0.5 when flat).
func pointBounds(pts []float64, dim int) (lo, hi []float64) {
	lo, hi = make([]float64, dim), make([]float64, dim)
	for j := range lo {
		lo[j], hi[j] = math.Inf(1), math.Inf(-1)
	}
	for i, v := range pts {
		lo[i%dim], hi[i%dim] = min(lo[i%dim], v), max(hi[i%dim], v)
	}
	for j := range lo {
		pad := 0.05 * (hi[j] - lo[j])
		if pad == 0 {
			pad = 0.5
		}
		lo[j], hi[j] = lo[j]-pad, hi[j]+pad
	}
	return lo, hi
}
