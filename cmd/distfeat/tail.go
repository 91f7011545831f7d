package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/distfeat/distfeat/cmd/distfeat/internal/cli"
	"github.com/distfeat/distfeat/kafkaio"
	"github.com/distfeat/distfeat/schema"
)

func runTail(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("tail", "", "Prints a worker output topic's records as JSON lines: feature records, per-point records\n(DISTFEAT_POINT_FEATURES_TOPIC) or predictions (DISTFEAT_PREDICTIONS_TOPIC), whichever each record is.\nOther records are reported on stderr and skipped; but a record without a spec-id header read\nbefore any output record ends tail with an error (--topic is then not an output topic).\n--max stops after N records, --idle-exit after a quiet spell (exit 0), --timeout after a\nfixed time (exit 1 if --max records have not arrived).", stderr)
	brokers := fs.String("brokers", cli.EnvOr("BROKERS", "127.0.0.1:9092"), "bootstrap brokers, comma-separated (DISTFEAT_BROKERS; `host:port,...`)")
	topic := fs.String("topic", cli.EnvOr("OUTPUT_TOPIC", "features"), "output `topic`: features (DISTFEAT_OUTPUT_TOPIC), per-point or predictions")
	fromBeginning := fs.Bool("from-beginning", false, "start at the oldest record instead of new ones")
	max := fs.Int("max", 0, "stop after N records (0: run until interrupted)")
	idle := fs.Duration("idle-exit", 0, "stop after this long without records (0: never)")
	timeout := fs.Duration("timeout", 0, "stop after this long in all; an error if --max records have not arrived by then (0: no limit)")
	cc, err := parseClientFlags(fs, args)
	if err != nil {
		return err
	}
	switch {
	case *max < 0:
		return cli.UsageError(fmt.Sprintf("--max %d: want 0 (no limit) or more", *max))
	case *idle < 0:
		return cli.UsageError(fmt.Sprintf("--idle-exit %s: want 0 (never) or more", *idle))
	case *timeout < 0:
		return cli.UsageError(fmt.Sprintf("--timeout %s: want 0 (no limit) or more", *timeout))
	}
	cc.Brokers = strings.Split(*brokers, ",")
	out := bufio.NewWriter(stdout)
	defer out.Flush()
	tctx, cancel := context.WithCancel(ctx)
	if *timeout > 0 {
		tctx, cancel = context.WithTimeout(ctx, *timeout)
	}
	defer cancel()
	n := 0
	var wrongTopic error
	err = kafkaio.Consume(tctx, cc, *topic, *fromBeginning, *idle, func(m kafkaio.Record) bool {
		if wrongTopic != nil {
			return false // stopping: records already fetched add nothing
		}
		lines, err := decodeOutput(m.Value)
		if err != nil {
			if _, ok := m.Header(schema.HeaderSpecID); n == 0 && !ok {
				wrongTopic = fmt.Errorf("topic %q: partition %d offset %d is not a worker output record and has no %s header (%v): is --topic the feature topic (DISTFEAT_OUTPUT_TOPIC) or one of the worker's other output topics?",
					*topic, m.Partition, m.Offset, schema.HeaderSpecID, err)
				cancel()
				return false
			}
			fmt.Fprintf(stderr, "tail: partition %d offset %d: not a feature, per-point or prediction record: %v\n", m.Partition, m.Offset, err)
			return true
		}
		for _, l := range lines {
			b, err := json.Marshal(l)
			if err != nil {
				fmt.Fprintf(stderr, "tail: partition %d offset %d: %v\n", m.Partition, m.Offset, err)
				continue
			}
			out.Write(b)
			out.WriteByte('\n')
			n++
		}
		out.Flush()
		return *max == 0 || n < *max
	})
	switch {
	case wrongTopic != nil:
		return wrongTopic
	case err == nil && ctx.Err() == nil && errors.Is(tctx.Err(), context.DeadlineExceeded) && *max > 0 && n < *max:
		return fmt.Errorf("%d of --max %d records within --timeout %s", n, *max, *timeout)
	}
	return err
}

// decodeOutput decodes a record of one of the worker's output topics into its JSON-lines
// rows: feature records (schema.FeatureLine), per-point records (schema.PointLine) or
// predictions (schema.PredictionLine), whichever its Arrow schema is.
func decodeOutput(value []byte) ([]any, error) {
	var lines []any
	recs, cols, err := schema.DecodeFeatures(value)
	if err == nil {
		for _, r := range recs {
			lines = append(lines, schema.LineFromRecord(r, cols))
		}
		return lines, nil
	}
	if preds, perr := schema.DecodePredictions(value); perr == nil {
		for _, r := range preds {
			lines = append(lines, schema.LineFromPrediction(r))
		}
		return lines, nil
	}
	if rows, _, perr := schema.DecodePoints(value); perr == nil {
		for _, r := range rows {
			lines = append(lines, r)
		}
		return lines, nil
	}
	return nil, err
}
