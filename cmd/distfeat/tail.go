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
	fs := newFlagSet("tail", "", "Records that are not feature records are reported on stderr and skipped; but a record\nwithout a spec-id header read before any feature record ends tail with an error (--topic\nis then not a feature topic). --max stops after N records, --idle-exit after a quiet spell\n(exit 0), --timeout after a fixed time (exit 1 if --max records have not arrived).", stderr)
	brokers := fs.String("brokers", cli.EnvOr("BROKERS", "127.0.0.1:9092"), "bootstrap brokers, comma-separated (DISTFEAT_BROKERS; `host:port,...`)")
	topic := fs.String("topic", cli.EnvOr("OUTPUT_TOPIC", "features"), "feature `topic` (DISTFEAT_OUTPUT_TOPIC)")
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
	err = kafkaio.ConsumeFeatures(tctx, cc, *topic, *fromBeginning, *idle, func(m kafkaio.Record, recs []schema.FeatureRecord, cols []string) bool {
		for _, r := range recs {
			b, err := json.Marshal(schema.LineFromRecord(r, cols))
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
	}, func(m kafkaio.Record, err error) {
		if wrongTopic != nil {
			return // stopping: records already fetched add nothing
		}
		if _, ok := m.Header(schema.HeaderSpecID); n == 0 && !ok {
			wrongTopic = fmt.Errorf("topic %q: partition %d offset %d is not a feature record and has no %s header (%v): is --topic the feature topic (DISTFEAT_OUTPUT_TOPIC)?",
				*topic, m.Partition, m.Offset, schema.HeaderSpecID, err)
			cancel()
			return
		}
		fmt.Fprintf(stderr, "tail: partition %d offset %d: not a feature record: %v\n", m.Partition, m.Offset, err)
	})
	switch {
	case wrongTopic != nil:
		return wrongTopic
	case err == nil && ctx.Err() == nil && errors.Is(tctx.Err(), context.DeadlineExceeded) && *max > 0 && n < *max:
		return fmt.Errorf("%d of --max %d records within --timeout %s", n, *max, *timeout)
	}
	return err
}
