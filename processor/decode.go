package processor

import (
	"errors"
	"fmt"

	"github.com/distfeat/distfeat/embedding"
	"github.com/distfeat/distfeat/schema"
)

// Decoded is one input record's batches with their points normalised into the unit cube.
type Decoded struct {
	// Batches are the record's batches in order; their Points are the raw points.
	Batches []schema.Batch
	// Points holds the normalised points of every batch, concatenated in batch order.
	Points []float64
	// Clipped is the number of points clamped into the spec's bounds (out_of_bounds: clip).
	Clipped int
	// BatchClipped is Clipped per batch, or nil when no point was clipped.
	BatchClipped []int
}

// Decode decodes one input record value (schema.DecodeRecord) and normalises all of its
// points (Embedder.Normalize) into buf, grown as needed: a record is all in or all out.
// Every error is a *schema.InvalidError whose Reason is the dead-letter reason. It is the
// first half of the worker's processing of a record, shared with `distfeat embed`, and
// safe for concurrent use with distinct bufs.
func Decode(emb *embedding.Embedder, key, value []byte, contentType string, recordTimeMs int64,
	opt schema.DecodeOptions, buf []float64) (Decoded, error) {
	batches, err := schema.DecodeRecord(key, value, contentType, recordTimeMs, opt)
	if err != nil {
		return Decoded{}, err
	}
	total := 0
	for _, b := range batches {
		total += len(b.Points)
	}
	if cap(buf) < total {
		buf = make([]float64, total)
	}
	norm := buf[:total]
	at, clipped := 0, 0
	var per []int
	for i, b := range batches {
		c, err := emb.Normalize(norm[at:at+len(b.Points)], b.Points)
		if err != nil {
			// The batches stay: they say how many points the dead-lettered record held.
			return Decoded{Batches: batches}, normalizeError(err, i, b.Set)
		}
		if c > 0 && per == nil {
			per = make([]int, len(batches))
		}
		if c > 0 {
			per[i] = c
		}
		clipped += c
		at += len(b.Points)
	}
	return Decoded{Batches: batches, Points: norm, Clipped: clipped, BatchClipped: per}, nil
}

// normalizeError maps a normalisation error to its dead-letter reason.
func normalizeError(err error, batch int, set string) *schema.InvalidError {
	reason := schema.ReasonDecode
	switch {
	case errors.Is(err, embedding.ErrOutOfBounds):
		reason = schema.ReasonOutOfBounds
	case errors.Is(err, embedding.ErrNonFinite):
		reason = schema.ReasonNonFinite
	}
	return &schema.InvalidError{Reason: reason, Detail: fmt.Sprintf("batch %d (set %q): %v", batch, set, err)}
}
