package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/distfeat/distfeat/cmd/distfeat/internal/cli"
	"github.com/distfeat/distfeat/internal/outfile"
	"github.com/distfeat/distfeat/internal/synth"
	"github.com/distfeat/distfeat/kafkaio"
	"github.com/distfeat/distfeat/offline"
	"github.com/distfeat/distfeat/schema"
)

// produceOptions are the produce command's settings (also used by demo and bench).
type produceOptions struct {
	brokers   []string
	topic     string
	format    string
	synthetic string
	sets      int
	points    int
	dim       int
	seed      uint64
	chunk     int
	in        string
	out       string
	cluster   kafkaio.Cluster // TLS/SASL (its brokers are brokers); zero: plain TCP
}

func runProduce(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("produce", "", "Give exactly one of --synthetic gmm or --in FILE. With --out FILE the sets are written as JSON\nlines (one set per line, the format embed --in and produce --in read) instead of published;\nsynthetic sets then get event times 0, 1, 2, … ms, so the file depends on --seed only.", stderr)
	brokers := fs.String("brokers", cli.EnvOr("BROKERS", "127.0.0.1:9092"), "bootstrap brokers, comma-separated (DISTFEAT_BROKERS; `host:port,...`)")
	var o produceOptions
	fs.StringVar(&o.topic, "topic", cli.EnvOr("INPUT_TOPIC", "points"), "input `topic` (DISTFEAT_INPUT_TOPIC)")
	fs.StringVar(&o.format, "format", "json", "record format (`json|arrow`)")
	fs.StringVar(&o.synthetic, "synthetic", "", "generate sets (`gmm`: truncated Gaussian mixtures on [0,1]^dim)")
	fs.IntVar(&o.sets, "sets", 10, "synthetic: number of sets")
	fs.IntVar(&o.points, "points", 2500, "synthetic: points per set")
	fs.IntVar(&o.dim, "dim", 2, "point dimension (must match the worker's spec)")
	fs.Uint64Var(&o.seed, "seed", 1, "synthetic: seed")
	fs.IntVar(&o.chunk, "chunk", 500, "points per record; a set spans several records, the last has end=true")
	fs.StringVar(&o.in, "in", "", "JSON-lines `file` of input records (one set per line), - for stdin")
	fs.StringVar(&o.out, "out", "", "write the sets as JSON lines to this `file` (- for stdout) instead of publishing")
	cc, err := parseClientFlags(fs, args)
	if err != nil {
		return err
	}
	o.brokers = strings.Split(*brokers, ",")
	cc.Brokers = o.brokers
	o.cluster = cc
	if (o.synthetic == "") == (o.in == "") {
		return fmt.Errorf("give exactly one of --synthetic gmm or --in FILE")
	}
	if o.synthetic != "" && o.synthetic != "gmm" {
		return fmt.Errorf("--synthetic %q: only gmm is available", o.synthetic)
	}
	if o.format != "json" && o.format != "arrow" {
		return fmt.Errorf("--format %q: want json or arrow", o.format)
	}
	if err := o.check(); err != nil {
		return err
	}
	formatSet := false
	fs.Visit(func(f *flag.Flag) { formatSet = formatSet || f.Name == "format" })
	if o.out != "" && formatSet {
		return cli.UsageError("--format applies to publishing; --out always writes JSON lines")
	}
	// The output is opened before the sets are read or drawn, so a directory or an
	// unwritable path fails at once.
	var out *outfile.File
	if o.out != "" && o.out != "-" {
		if out, err = outfile.CreateContext(ctx, o.out); err != nil {
			return fmt.Errorf("--out: %w", err)
		}
		defer out.Abort()
	}
	var batches []schema.Batch
	switch {
	case o.in != "":
		var other offline.OtherFields
		if batches, err = readInputLines(ctx, o.in, o.dim, &other); err != nil {
			return err
		}
		other.Report(stderr, "produce")
	case o.out != "":
		batches = synth.Batches(o.seed, o.sets, o.points, o.dim, 0)
	default:
		batches = synth.Batches(o.seed, o.sets, o.points, o.dim, time.Now().UnixMilli())
	}
	if o.out != "" {
		return writeSetsFile(out, batches, stdout, stderr)
	}
	start := time.Now()
	records, points, err := publish(ctx, o, batches, cli.NewProgress(stderr, "produce"))
	if err != nil {
		return cc.Explain(ctx, err, "write", fmt.Sprintf("topic %q", o.topic))
	}
	el := time.Since(start)
	fmt.Fprintf(stdout, "produced %d sets, %d records, %d points to %s in %s (%.0f points/s)\n",
		len(batches), records, points, o.topic, el.Round(time.Millisecond), float64(points)/el.Seconds())
	return nil
}

// maxSyntheticValues bounds the coordinates produce --synthetic draws: it holds every set in
// memory before writing (2^27 float64 values are 1 GiB).
const maxSyntheticValues = 1 << 27

// check refuses the settings produce cannot honour, naming the flag, before anything is
// drawn or read: counts below 1 (a negative count used to panic deep in the generator)
// and synthetic sets too large to hold in memory.
func (o produceOptions) check() error {
	for _, c := range []struct {
		flag  string
		value int
		on    bool
	}{{"--dim", o.dim, true}, {"--chunk", o.chunk, true}, {"--sets", o.sets, o.synthetic != ""}, {"--points", o.points, o.synthetic != ""}} {
		if c.on && c.value < 1 {
			return cli.UsageError(fmt.Sprintf("%s %d: must be at least 1", c.flag, c.value))
		}
	}
	if o.synthetic != "" {
		if v := float64(o.sets) * float64(o.points) * float64(o.dim); v > maxSyntheticValues {
			return cli.UsageError(fmt.Sprintf("--sets %d × --points %d × --dim %d = %.3g coordinates: produce --synthetic holds them all in memory, at most %d (1 GiB); produce fewer sets per run",
				o.sets, o.points, o.dim, v, maxSyntheticValues))
		}
	}
	return nil
}

// publish writes every batch, split into records of at most o.chunk points
// (kafkaio.Publish).
func publish(ctx context.Context, o produceOptions, batches []schema.Batch, prog *cli.Progress) (records, points int, err error) {
	c := o.cluster
	c.Brokers = o.brokers
	records, points, err = kafkaio.Publish(ctx, c, o.topic, o.format, o.dim, o.chunk, batches,
		func(sets, points int) { prog.Update("%d/%d sets, %d points", sets, len(batches), points) })
	prog.Done()
	return records, points, err
}

// readInputLines reads a set file of JSON-lines input records (one set per line;
// offline.ReadSets). Fields other than a record's (labels, ids) are skipped, counted in
// other: the records published or written carry set, points, t and end only.
func readInputLines(ctx context.Context, path string, dim int, other *offline.OtherFields) ([]schema.Batch, error) {
	sets, _, err := offline.ReadSets(ctx, path, offline.ReadOptions{Dim: dim, EventTime: time.Now().UnixMilli(), DecodeSpaces: true, Other: other})
	if err != nil {
		var le *offline.LineError
		if errors.As(err, &le) {
			return nil, fmt.Errorf("%s %w", path, err) // "FILE line N: …"
		}
		return nil, err
	}
	out := make([]schema.Batch, len(sets))
	for i, s := range sets {
		out[i] = s.Batch
	}
	return out, nil
}

// writeSetsFile writes one JSON line per set to out and commits it, or to stdout when out is
// nil. The summary goes to stdout, or stderr when stdout holds the data.
func writeSetsFile(out *outfile.File, batches []schema.Batch, stdout, stderr io.Writer) error {
	var points int
	write := func(w io.Writer) (err error) {
		points, err = offline.WriteSets(w, batches)
		return err
	}
	if out == nil {
		if err := write(stdout); err != nil {
			return err
		}
		fmt.Fprintf(stderr, "wrote %d sets, %d points to stdout\n", len(batches), points)
		return nil
	}
	if err := write(out); err != nil {
		return err
	}
	if err := out.Commit(); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "wrote %d sets, %d points to %s\n", len(batches), points, out.Name())
	return nil
}
