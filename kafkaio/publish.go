package kafkaio

import (
	"context"

	"github.com/distfeat/distfeat/schema"
)

// Publish writes every batch to topic in format (FormatJSON or FormatArrow), split into
// records of at most chunk points (Split), 64 records a call; onProgress, if not nil, hears
// the sets and points written after each set.
func Publish(ctx context.Context, c Cluster, topic, format string, dim, chunk int, batches []schema.Batch,
	onProgress func(sets, points int)) (records, points int, err error) {
	wc := WriterConfig{Brokers: c.Brokers, Topic: topic, Format: format, Dim: dim}
	if c.transport != nil {
		wc.Transport = c.transport
	}
	w := NewPointWriter(wc)
	defer func() {
		if cerr := w.Close(); err == nil {
			err = cerr
		}
	}()
	const perCall = 64
	var pending []schema.Batch
	flush := func() error {
		if len(pending) == 0 {
			return nil
		}
		if err := w.Write(ctx, pending...); err != nil {
			return err
		}
		pending = pending[:0]
		return nil
	}
	for i, b := range batches {
		for _, part := range Split(b, chunk) {
			pending = append(pending, part)
			records++
			points += part.N
			if len(pending) >= perCall {
				if err := flush(); err != nil {
					return records, points, err
				}
			}
		}
		if onProgress != nil {
			onProgress(i+1, points)
		}
	}
	return records, points, flush()
}
