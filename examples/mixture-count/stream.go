package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"os"
	"runtime"
	"slices"
	"strconv"
	"time"

	"github.com/distfeat/distfeat/config"
	"github.com/distfeat/distfeat/consumer"
	"github.com/distfeat/distfeat/embedding"
	"github.com/distfeat/distfeat/internal/metrics"
	"github.com/distfeat/distfeat/internal/testbroker"
	"github.com/distfeat/distfeat/kafkaio"
	"github.com/distfeat/distfeat/model"
	"github.com/distfeat/distfeat/schema"
	"github.com/distfeat/distfeat/spec"
	"github.com/distfeat/distfeat/window"
)

// streamed is what a worker with the model wrote to the predictions topic for the held-out
// sets, scored against their true counts.
type streamed struct {
	Preds    map[string]schema.PredictionRecord
	RMSE     float64
	Coverage float64 // of the intervals, at the model's 0.9 level
	Elapsed  time.Duration
}

// stream runs the held-out sets (their points as test.jsonl holds them) through a worker with the model file on an embedded broker
// (DISTFEAT_MODEL, coverage 0.9): produce every set, read the predictions topic until every
// set has its prediction, and score them.
func stream(ctx context.Context, specPath, modelPath string, testSets []mixtureSet) (streamed, error) {
	const predictions = "features.predictions"
	sp, err := spec.LoadSpec(specPath)
	if err != nil {
		return streamed{}, err
	}
	emb, err := embedding.New(sp, embedding.WithAddWorkers(runtime.GOMAXPROCS(0)))
	if err != nil {
		return streamed{}, err
	}
	b, err := testbroker.Start(ctx, testbroker.Options{Partitions: 2,
		Topics: []string{testbroker.TopicPoints, testbroker.TopicFeatures, "points.dlq", predictions}})
	if err != nil {
		return streamed{}, err
	}
	defer b.Close()
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	w, err := consumer.NewWorker(consumer.Config{
		Topics:   config.Topics{Brokers: b.Addrs(), Group: "mixture-count"},
		Models:   config.Models{PredictionsTopic: predictions, Model: modelPath, ModelCoverage: 0.9},
		Window:   window.Config{Mode: window.ModeSet, MaxOpen: 1000, IdleTimeout: time.Minute},
		Delivery: config.Delivery{CommitInterval: 100 * time.Millisecond},
	}, emb, schema.NewOutput(sp, emb.Columns()), metrics.New(nil, "mixture-count"), log, nil)
	if err != nil {
		return streamed{}, err
	}
	wctx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- w.Run(wctx) }()
	defer func() {
		stop()
		<-done
	}()

	start := time.Now()
	var batches []schema.Batch
	for _, s := range testSets {
		batches = append(batches, schema.Batch{Set: s.ID, Points: asWritten(s.Points), N: len(s.Points) / 2, End: true})
	}
	pw := kafkaio.NewPointWriter(kafkaio.WriterConfig{Brokers: b.Addrs(), Topic: testbroker.TopicPoints, Dim: 2})
	if err := pw.Write(ctx, batches...); err != nil {
		return streamed{}, err
	}
	if err := pw.Close(); err != nil {
		return streamed{}, err
	}
	out := streamed{Preds: map[string]schema.PredictionRecord{}}
	var decodeErr error
	err = kafkaio.Follow(ctx, kafkaio.PlainCluster(b.Addrs()), predictions, "mixture-count-reader", func(r kafkaio.Record) bool {
		recs, err := schema.DecodePredictions(r.Value)
		if err != nil {
			decodeErr = err
			return false
		}
		for _, p := range recs {
			out.Preds[p.Set] = p
		}
		return len(out.Preds) < len(testSets)
	})
	if err == nil {
		err = decodeErr
	}
	if err != nil {
		return streamed{}, fmt.Errorf("reading the predictions after %d of %d sets: %w", len(out.Preds), len(testSets), err)
	}
	out.Elapsed = time.Since(start)
	in, se := 0, 0.0
	for _, s := range testSets {
		p, ok := out.Preds[s.ID]
		if !ok || p.Interval == nil {
			return streamed{}, fmt.Errorf("set %s: no prediction with an interval", s.ID)
		}
		y := float64(s.Components)
		d := float64(p.Prediction) - y
		se += d * d
		if y >= float64(p.Interval[0]) && y <= float64(p.Interval[1]) {
			in++
		}
	}
	n := float64(len(testSets))
	out.RMSE, out.Coverage = math.Sqrt(se/n), float64(in)/n
	return out, nil
}

// asWritten is the points as -write writes them (four decimals), so that the streamed sets
// are those of test.jsonl, which embed --model reads.
func asWritten(pts []float64) []float64 {
	out := make([]float64, len(pts))
	for i, x := range pts {
		out[i], _ = strconv.ParseFloat(strconv.FormatFloat(x, 'f', 4, 64), 64)
	}
	return out
}

// compareEmbed checks that every streamed prediction has the bits of `distfeat embed --model
// --coverage 0.9 --format arrow`'s model.prediction and model.interval for the same set, and
// returns how many sets it compared.
func compareEmbed(path string, preds map[string]schema.PredictionRecord) (int, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, err
	}
	recs, cols, err := schema.DecodeFeatures(b)
	if err != nil {
		return 0, err
	}
	vi, ii := slices.Index(cols, "model.prediction"), slices.Index(cols, "model.interval")
	if vi < 0 || ii < 0 {
		return 0, fmt.Errorf("%s has no model.prediction and model.interval columns (embed --model --format arrow)", path)
	}
	for _, r := range recs {
		p, ok := preds[r.Set]
		if !ok {
			return 0, fmt.Errorf("set %s of %s was not streamed", r.Set, path)
		}
		v, iv := r.Vectors[vi], r.Vectors[ii]
		if math.Float32bits(p.Prediction) != math.Float32bits(v[0]) || p.Interval == nil ||
			math.Float32bits(p.Interval[0]) != math.Float32bits(iv[0]) || math.Float32bits(p.Interval[1]) != math.Float32bits(iv[1]) {
			return 0, fmt.Errorf("set %s: streamed %v %v, embed --model %v %v", r.Set, p.Prediction, p.Interval, v[0], iv)
		}
	}
	if len(recs) != len(preds) {
		return 0, fmt.Errorf("%s holds %d sets, %d were streamed", path, len(recs), len(preds))
	}
	return len(recs), nil
}

// runStream is -stream: the held-out sets through a worker with the model, scored, and
// compared with embed --model's output when compare is set.
func runStream(specPath, modelPath, compare string, testSets []mixtureSet) error {
	m, err := model.Load(modelPath)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	s, err := stream(ctx, specPath, modelPath, testSets)
	if err != nil {
		return err
	}
	fmt.Printf("model %s (%d training sets, λ %.3g): %d held-out sets streamed through a worker in %.1f s\n",
		m.ModelVersion, m.NSets, m.Lambda, len(s.Preds), s.Elapsed.Seconds())
	fmt.Printf("streamed predictions: RMSE %.3f, 90%% interval coverage %.3f\n", s.RMSE, s.Coverage)
	if compare == "" {
		return nil
	}
	n, err := compareEmbed(compare, s.Preds)
	if err != nil {
		return errors.Join(errors.New("the streamed predictions differ from embed --model's"), err)
	}
	fmt.Printf("the streamed predictions equal embed --model's (%s) bit for bit on all %d sets\n", compare, n)
	return nil
}
