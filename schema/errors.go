package schema

import "errors"

// Dead-letter reasons (docs/input-output.md): the values of the `error` header on the DLQ topic.
const (
	// ReasonDecode: the record is not a well-formed input record.
	ReasonDecode = "decode"
	// ReasonDim: a point does not have the spec's dimension.
	ReasonDim = "dim"
	// ReasonNonFinite: a coordinate is NaN or ±Inf (or overflows float64).
	ReasonNonFinite = "nonfinite"
	// ReasonSetMismatch: the set ID in the value disagrees with the record key.
	ReasonSetMismatch = "set_mismatch"
	// ReasonTooLarge: the record holds more points than allowed, or its set ID is too long.
	ReasonTooLarge = "too_large"
	// ReasonLate: the record belongs to an already closed window (assigned by the window layer).
	ReasonLate = "late"
	// ReasonOutOfBounds: a point lies outside the spec's bounds in reject mode (embedding layer).
	ReasonOutOfBounds = "out_of_bounds"
	// ReasonNoKey: the record has no Kafka key while its value names a set (processor layer).
	// Partitioners place keyless records anywhere, so one set's records would be windowed on
	// several partitions and emitted as several different windows with the same window-id.
	ReasonNoKey = "no_key"
	// ReasonFuture: an event time t runs ahead of the record's Kafka timestamp by more than
	// the worker's maximum lead (processor layer): one such record would move a partition's
	// watermark so far that every later valid record on it is late.
	ReasonFuture = "future"
)

// InvalidError reports an input record that cannot be processed. Reason is one of the
// Reason* constants and becomes the dead letter's `error` header; Detail is a short
// human-readable explanation (e.g. "points[3]: got 3 coordinates, want 2") and becomes the
// `error-detail` header.
type InvalidError struct {
	Reason string
	Detail string
}

// Error returns Reason + ": " + Detail.
func (e *InvalidError) Error() string { return e.Reason + ": " + e.Detail }

// ReasonOf returns the reason of the *InvalidError in err's chain, or ReasonDecode when there
// is none.
func ReasonOf(err error) string {
	var ie *InvalidError
	if errors.As(err, &ie) && ie.Reason != "" {
		return ie.Reason
	}
	return ReasonDecode
}

func invalid(reason, detail string) *InvalidError {
	return &InvalidError{Reason: reason, Detail: detail}
}
