package main

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/distfeat/distfeat/config"
	"github.com/distfeat/distfeat/internal/stats"
	"github.com/distfeat/distfeat/internal/testbroker"
	"github.com/distfeat/distfeat/kafkaio"
	"github.com/distfeat/distfeat/model"
	"github.com/distfeat/distfeat/schema"
	"github.com/distfeat/distfeat/service"
)

// StreamCase streams a case's test domains through an embedded broker and a worker with a
// per-point model (DISTFEAT_SPEC, DISTFEAT_MODEL, DISTFEAT_POINT_FEATURES_TOPIC, the rest the
// defaults), reads every point's prediction back from the per-point topic and prints their
// accuracy as ScoreCase does: the streamed half of the end-to-end example.
//
// With compare (the JSON lines of embed --points --model on the same domains), it also
// counts the streamed points whose predicted class differs from embed's (there should be
// none: the worker and embed compute the same bits).
func StreamCase(ctx context.Context, w io.Writer, name string, c Config, specPath, modelPath, compare string) error {
	const pointsTopic, predictions = "points.features", "features.predictions"
	data, err := Generate(name, c)
	if err != nil {
		return err
	}
	m, err := model.Load(modelPath)
	if err != nil {
		return err
	}
	b, err := testbroker.Start(ctx, testbroker.Options{Partitions: 2,
		Topics: []string{testbroker.TopicPoints, testbroker.TopicFeatures, testbroker.TopicDLQ, pointsTopic, predictions}})
	if err != nil {
		return err
	}
	defer b.Close()
	cfg, err := config.FromEnv(map[string]string{"DISTFEAT_BROKERS": b.Addrs()[0], "DISTFEAT_SPEC": specPath, "DISTFEAT_MODEL": modelPath,
		"DISTFEAT_POINT_FEATURES_TOPIC": pointsTopic, "DISTFEAT_METRICS_ADDR": "127.0.0.1:0", "DISTFEAT_GROUP": "marginal-transfer"})
	if err != nil {
		return err
	}
	wctx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- service.Serve(wctx, cfg, service.NewLogger(io.Discard, "error", "text"), nil) }()
	defer func() {
		stop()
		<-done
	}()
	start := time.Now()
	var batches []schema.Batch
	total := 0
	for _, s := range data.Test {
		batches = append(batches, schema.Batch{Set: s.ID, Points: s.Points, N: len(s.Labels), End: true})
		total += len(s.Labels)
	}
	pw := kafkaio.NewPointWriter(kafkaio.WriterConfig{Brokers: b.Addrs(), Topic: testbroker.TopicPoints, Dim: data.Spec.Dim})
	if err := pw.Write(ctx, batches...); err != nil {
		return err
	}
	if err := pw.Close(); err != nil {
		return err
	}
	class := map[string]map[int64]string{} // set → point index → predicted class
	rows := 0
	var readErr error
	err = kafkaio.Follow(ctx, kafkaio.PlainCluster(b.Addrs()), pointsTopic, "marginal-transfer-reader", func(r kafkaio.Record) bool {
		got, _, err := schema.DecodePoints(r.Value)
		if err != nil {
			readErr = err
			return false
		}
		for _, p := range got {
			pred, ok := p.Features[model.ColPrediction]
			if !ok {
				readErr = fmt.Errorf("per-point row %s/%d has no %s column: the worker did not apply a per-point model", p.Set, p.Index, model.ColPrediction)
				return false
			}
			if class[p.Set] == nil {
				class[p.Set] = map[int64]string{}
			}
			if _, dup := class[p.Set][p.Index]; !dup {
				rows++
			}
			class[p.Set][p.Index] = m.Classes[int(pred[0])]
		}
		return rows < total
	})
	if err == nil {
		err = readErr
	}
	if err != nil {
		return fmt.Errorf("reading the per-point topic after %d of %d points: %w", rows, total, err)
	}
	elapsed := time.Since(start)
	accs := make([]float64, len(data.Test))
	for i, s := range data.Test {
		right := 0
		for j, l := range s.Labels {
			if class[s.ID][int64(j)] == l {
				right++
			}
		}
		accs[i] = float64(right) / float64(len(s.Labels)) // as ScoreCase
	}
	if compare != "" {
		offline, err := readClasses(compare)
		if err != nil {
			return err
		}
		differ := 0
		for set, pts := range class {
			for i, cl := range pts {
				if offline[set][i] != cl {
					differ++
					if differ <= 5 {
						fmt.Fprintf(w, "  %s point %d: streamed %q, %s %q\n", set, i, cl, compare, offline[set][i])
					}
				}
			}
		}
		fmt.Fprintf(w, "%d of %d streamed predictions differ from %s's\n", differ, rows, compare)
	}
	mean, se := stats.MeanSE(accs)
	fmt.Fprintf(w, "%s, streamed through a worker (model %s): accuracy on %d unseen domains %.3f ± %.3f, %d points predicted in %v\n",
		name, m.ModelVersion, len(accs), mean, se, rows, elapsed.Round(time.Millisecond))
	return nil
}
