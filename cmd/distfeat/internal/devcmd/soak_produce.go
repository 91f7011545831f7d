//go:build dev

package devcmd

// Producing the soak's input.

import (
	"context"
	"fmt"
	"time"

	"github.com/distfeat/distfeat/embedding"
	"github.com/distfeat/distfeat/internal/synth"
	"github.com/distfeat/distfeat/internal/testbroker"
	"github.com/distfeat/distfeat/kafkaio"
	"github.com/distfeat/distfeat/schema"
	"github.com/distfeat/distfeat/spec"
)

// sampleRecordBytes is the size of one encoded feature record of the spec (value plus a
// generous allowance for key and headers).
func sampleRecordBytes(spec *spec.Spec, emb *embedding.Embedder) int {
	u := make([]float64, spec.Dim)
	for i := range u {
		u[i] = 0.5
	}
	rec := schema.FeatureRecord{Set: "key-000000", Seq: 1 << 40, N: 4, SpecID: spec.ID(), Vectors: emb.Embed(u)}
	b, err := schema.NewOutput(spec, emb.Columns()).Encode(rec)
	if err != nil {
		return 0
	}
	return len(b) + 256
}

// soakKeyID is the set ID of key k in --keys mode.
func soakKeyID(k int) string { return fmt.Sprintf("key-%06d", k) }

// soakProduce writes the input: in set mode synthetic mixtures, a group of --interleave sets
// at a time with their records interleaved, never more than --lead points ahead of the
// points in received windows; in --keys mode every key's first record, then every key's
// second record, and so on, as fast as the broker takes them.
func soakProduce(ctx context.Context, o *soakOptions, brokers []string, dim int, col *soakCollector, report func(records, points int64)) error {
	pw := kafkaio.NewPointWriter(kafkaio.WriterConfig{Brokers: brokers, Topic: testbroker.TopicPoints, Format: o.format, Dim: dim})
	defer pw.Close()
	w := &soakWriter{pw: pw, report: report}
	t0 := time.Now().UnixMilli()
	if o.keysMode() {
		return soakProduceKeys(ctx, o, w, dim, t0)
	}
	return soakProduceSets(ctx, o, w, dim, t0, col)
}

// soakWriter writes batches in calls of at most 512 and reports the running totals.
type soakWriter struct {
	pw              *kafkaio.PointWriter
	records, points int64
	report          func(records, points int64)
}

func (w *soakWriter) write(ctx context.Context, bs []schema.Batch) error {
	for len(bs) > 0 {
		n := min(len(bs), 512)
		if err := w.pw.Write(ctx, bs[:n]...); err != nil {
			return err
		}
		for _, b := range bs[:n] {
			w.records++
			w.points += int64(b.N)
		}
		w.report(w.records, w.points)
		bs = bs[n:]
	}
	return nil
}

// soakProduceKeys writes --key-records rounds, each with one record for every key.
func soakProduceKeys(ctx context.Context, o *soakOptions, w *soakWriter, dim int, t0 int64) error {
	rng := embedding.NewRNG(o.seed, "soak/keys")
	base, extra := o.keyPoints/o.keyRecords, o.keyPoints%o.keyRecords
	buf := make([]schema.Batch, 0, 512)
	for r := 0; r < o.keyRecords; r++ {
		n := base
		if r < extra {
			n++
		}
		for k := 0; k < o.keys; k++ {
			pts := make([]float64, n*dim)
			for i := range pts {
				pts[i] = rng.Float64()
			}
			buf = append(buf, schema.Batch{Set: soakKeyID(k), Points: pts, N: n, EventTime: t0 + int64(k), End: r == o.keyRecords-1})
			if len(buf) == cap(buf) {
				if err := w.write(ctx, buf); err != nil {
					return err
				}
				buf = buf[:0]
			}
		}
	}
	return w.write(ctx, buf)
}

// soakProduceSets writes the synthetic sets --interleave at a time, records interleaved
// round-robin, staying at most --lead points ahead of the received windows.
func soakProduceSets(ctx context.Context, o *soakOptions, w *soakWriter, dim int, t0 int64, col *soakCollector) error {
	for g := 0; g < o.sets; g += o.interleave {
		for {
			if _, recv := col.progress(); w.points-recv < int64(o.lead) {
				break
			}
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(20 * time.Millisecond):
			}
		}
		var parts [][]schema.Batch
		for i := g; i < min(g+o.interleave, o.sets); i++ {
			s := synth.SetAt(o.seed, i, o.points, dim)
			b := schema.Batch{Set: s.ID, Points: s.Points, N: o.points, EventTime: t0 + int64(i), End: true}
			parts = append(parts, kafkaio.Split(b, o.chunk))
		}
		var batch []schema.Batch
		for r := 0; ; r++ {
			added := false
			for _, p := range parts {
				if r < len(p) {
					batch = append(batch, p[r])
					added = true
				}
			}
			if !added {
				break
			}
		}
		if err := w.write(ctx, batch); err != nil {
			return err
		}
	}
	return nil
}
