package consumer

import (
	"context"
	"time"

	"github.com/segmentio/kafka-go"

	"github.com/distfeat/distfeat/processor"
)

// requestCloses makes idle timeouts durable (issue 13 item 4): instead of closing idle
// windows by the clock — a decision a replay after a crash could not repeat — it appends a
// close marker per idle set to this very input partition (same key, explicit partition), and
// the processor closes the set's windows when it reads the marker back, at the marker's
// position in the log. A marker that fails to be written is retried on the next tick; one
// written twice is stale when read back. Markers not yet written when the partition is
// revoked are dropped: the next owner's processor asks again after the idle timeout.
func (p *partition) requestCloses(ctx context.Context) {
	reqs := p.proc.ExpireDue()
	p.markers = append(p.markers, reqs...)
	if len(p.markers) == 0 {
		return
	}
	w := p.w
	records := make([]kafka.Record, len(p.markers))
	for i, req := range p.markers {
		key, value, hdrs := processor.ControlRecord(req, w.cfg.Group)
		headers := make([]kafka.Header, len(hdrs))
		for j, h := range hdrs {
			headers[j] = kafka.Header{Key: h.Key, Value: h.Value}
		}
		records[i] = kafka.Record{Key: kafka.NewBytes(key), Value: kafka.NewBytes(value), Headers: headers, Time: time.Now()}
	}
	pctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	resp, err := w.client.Produce(pctx, &kafka.ProduceRequest{
		Topic: w.cfg.InputTopic, Partition: p.id, RequiredAcks: kafka.RequireAll,
		Records: kafka.NewRecordReader(records...),
	})
	if err == nil && resp.Error != nil {
		err = resp.Error
	}
	if err != nil {
		if ctx.Err() == nil {
			p.markersFailed(err)
		}
		return
	}
	if w.markerStalls.clear(p.id) != "" {
		w.metrics.OutputStalled.DeleteLabelValues(p.label, "markers")
		w.log.Info("idle-close markers written again", "partition", p.id)
	}
	w.metrics.CloseMarkers.WithLabelValues("requested").Add(float64(len(p.markers)))
	w.log.Debug("idle-close markers written", "partition", p.id, "markers", len(p.markers), "base_offset", resp.BaseOffset)
	clear(p.markers)
	p.markers = p.markers[:0]
}

// markersFailed reports markers that could not be written: idle windows stay open until they
// are, so the worker is not ready meanwhile (distfeat_output_stalled{reason="markers"}).
func (p *partition) markersFailed(err error) {
	w := p.w
	kind, code := classifyError(err)
	w.metrics.OutputErrors.WithLabelValues(w.cfg.InputTopic, code).Inc()
	if w.markerStalls.set(p.id, kind) {
		w.metrics.OutputStalled.WithLabelValues(p.label, "markers").Set(1)
	}
	attrs := []any{"partition", p.id, "topic", w.cfg.InputTopic, "markers", len(p.markers), "error", code, "err", err,
		"action", "idle windows stay open until the markers are written; the worker needs Write on the input topic"}
	if kind == failPermanent {
		w.log.Error("writing idle-close markers failed, retrying on the next tick", attrs...)
		return
	}
	w.log.Warn("writing idle-close markers failed, retrying on the next tick", attrs...)
}

// clearMarkerStall forgets the partition's marker failure when it stops.
func (p *partition) clearMarkerStall() {
	if p.w.markerStalls.clear(p.id) != "" {
		p.w.metrics.OutputStalled.DeleteLabelValues(p.label, "markers")
	}
}
