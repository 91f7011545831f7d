package schema

import (
	"fmt"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Content types of input records (the Kafka `content-type` header). A missing header means
// JSON.
const (
	// ContentTypeJSON is a JSON input record.
	ContentTypeJSON = "application/json"
	// ContentTypeArrow is an Arrow IPC stream input record (and every output record).
	ContentTypeArrow = "application/vnd.apache.arrow.stream"
)

// MaxEventTime is the latest event time accepted (`t`, in ms since the epoch):
// 9999-12-31T23:59:59.999Z, the last instant of the four-digit years of RFC 3339 and ISO 8601
// timestamps. A later `t` is a decode error: no real event is that late, and the bound keeps
// window arithmetic (window ends, session gaps, watermarks) far from int64 overflow.
const MaxEventTime = 253_402_300_799_999

// Defaults for DecodeOptions fields left at zero.
const (
	defaultMaxPoints   = 1 << 20
	defaultMaxSetBytes = 256
)

// Batch is one set's points from one input record.
type Batch struct {
	// Set is the set ID (the record key unless the value names it).
	Set string
	// Points holds the raw (not normalised) points, row-major, len N*Dim.
	Points []float64
	// N is the number of points.
	N int
	// EventTime is in ms since the epoch; the record timestamp when the input has none.
	EventTime int64
	// End asks to close the set's window after adding these points.
	End bool
}

// DecodeOptions configures DecodeRecord.
type DecodeOptions struct {
	// Dim is the dimension of every point (required, > 0).
	Dim int
	// MaxPoints caps the points in one record (all sets together); 0 means 1<<20. More
	// points are rejected as too_large, detected while decoding and before allocating for
	// them.
	MaxPoints int
	// MaxSetBytes caps the length of a set ID in bytes; 0 means 256. Longer IDs are
	// rejected as too_large.
	MaxSetBytes int
	// OtherField, when set, makes a JSON record's top-level fields other than set, points,
	// t and end acceptable: each such field's value must still be valid JSON, is skipped,
	// and its name is passed to OtherField. Nil (the worker, the topic's records): such a
	// field is a decode error. Set files (embed --in, produce --in, calibrate --in) carry
	// labels and ids this way. Arrow records ignore it.
	OtherField func(name string)
}

func (o DecodeOptions) resolve() (DecodeOptions, error) {
	if o.Dim <= 0 {
		return o, invalid(ReasonDecode, fmt.Sprintf("decode options: dim must be > 0, got %d", o.Dim))
	}
	if o.MaxPoints < 0 || o.MaxSetBytes < 0 {
		return o, invalid(ReasonDecode, "decode options: negative limit")
	}
	if o.MaxPoints == 0 {
		o.MaxPoints = defaultMaxPoints
	}
	if o.MaxSetBytes == 0 {
		o.MaxSetBytes = defaultMaxSetBytes
	}
	return o, nil
}

// checkRecordTime accepts the Kafka timestamp of a record without its own t as its event
// time only within [0, MaxEventTime], like a t: windows and the output's timestamps need a
// real time. (The processor passes a record without any timestamp as 0.) Outside, the
// record is a decode error that says how to fix it.
func checkRecordTime(ms int64) error {
	if ms < 0 || ms > MaxEventTime {
		return invalid(ReasonDecode, fmt.Sprintf("no event time: the value has no t and the Kafka record timestamp (%d ms) is outside [0, %d]; give each record a t or a timestamp", ms, int64(MaxEventTime)))
	}
	return nil
}

// DecodeRecord decodes one input record (docs/input-output.md) into batches of points.
//
// The content type selects the format: "" or application/json (parameters such as
// "; charset=utf-8" are ignored) → JSON, which yields exactly one Batch;
// application/vnd.apache.arrow.stream → an Arrow IPC stream, which yields one Batch per run of
// consecutive rows with the same set, event time and no `end` before the run's last row, in
// row order (zero rows yield no batches). Anything else is a decode error.
//
// The key is the record key. When it is non-empty every set named in the value must equal it
// (else set_mismatch); when the JSON value names no set the key is the set ID. recordTimeMs is
// the Kafka record timestamp, used as event time where the value has none.
//
// Every error is an *InvalidError whose Reason is a dead-letter reason; no partial result is
// returned with an error. Decoding never panics on any input, and the memory it allocates is
// bounded by a small multiple of len(value) plus a constant (JSON: at most 4·len(value) bytes
// of points plus the set ID; Arrow: at most 2·len(value)+1 MiB of Arrow buffers plus at most
// twice that in points), so a tiny hostile record cannot make it allocate gigabytes.
//
// JSON rules: the value is one object with only the fields "set" (string), "points" (array of
// arrays of exactly Dim numbers), "t" (integer ms in [0, MaxEventTime]) and "end" (bool); each
// may be null or absent, meaning absent. Unknown or duplicate fields, trailing data, invalid
// UTF-8 or a control character in the set ID (or key) and an empty set ID are decode errors;
// a point of the wrong length is a dim error naming its index; a number overflowing float64
// (e.g. 1e999) and the non-JSON literals NaN, Infinity and -Infinity that some encoders emit
// for non-finite floats are nonfinite.
//
// Arrow rules: columns `set` (utf8 or large_utf8, no nulls), `x`
// (fixed_size_list<float32|float64>[Dim], no null lists or coordinates; another list size is
// a dim error), optional `t` (int64 ms, or timestamp of any unit, converted to ms and floored;
// null → recordTimeMs; negative or after MaxEventTime → decode) and optional `end` (bool,
// null → false). Other columns, dictionary batches and compressed bodies are decode errors,
// as are bytes after the end-of-stream marker. A stream may hold several record batches; runs continue across
// batch boundaries.
func DecodeRecord(key, value []byte, contentType string, recordTimeMs int64, opt DecodeOptions) ([]Batch, error) {
	o, err := opt.resolve()
	if err != nil {
		return nil, err
	}
	switch mediaType(contentType) {
	case ContentTypeJSON:
		b, err := decodeJSON(key, value, recordTimeMs, o)
		if err != nil {
			return nil, err
		}
		return []Batch{b}, nil
	case ContentTypeArrow:
		bs, err := decodeArrow(key, value, recordTimeMs, o)
		if err != nil {
			return nil, err
		}
		return bs, nil
	default:
		return nil, invalid(ReasonDecode, fmt.Sprintf("unsupported content-type %s (want %s or %s)",
			quoteTrunc(contentType), ContentTypeJSON, ContentTypeArrow))
	}
}

// mediaType returns ContentTypeJSON, ContentTypeArrow or "" for a content-type header value.
func mediaType(ct string) string {
	switch ct {
	case "", ContentTypeJSON:
		return ContentTypeJSON
	case ContentTypeArrow:
		return ContentTypeArrow
	}
	if i := strings.IndexByte(ct, ';'); i >= 0 {
		ct = ct[:i]
	}
	ct = strings.TrimSpace(ct)
	switch {
	case ct == "" || strings.EqualFold(ct, ContentTypeJSON):
		return ContentTypeJSON
	case strings.EqualFold(ct, ContentTypeArrow):
		return ContentTypeArrow
	}
	return ""
}

// checkSet validates a set ID taken from the value (fromKey false) or the key, and its
// agreement with a non-empty key. where prefixes the error detail (e.g. "row 3: ").
func checkSet(where, set string, key []byte, o DecodeOptions) error {
	switch {
	case set == "":
		return invalid(ReasonDecode, where+"empty set ID")
	case len(set) > o.MaxSetBytes:
		return invalid(ReasonTooLarge, fmt.Sprintf("%sset ID is %d bytes, max %d", where, len(set), o.MaxSetBytes))
	case !utf8.ValidString(set):
		return invalid(ReasonDecode, fmt.Sprintf("%sset ID %s is not valid UTF-8", where, quoteTrunc(set)))
	case controlChar(set) >= 0:
		return invalid(ReasonDecode, fmt.Sprintf("%sset ID %s contains the control character %U (set IDs are printable text)",
			where, quoteTrunc(set), controlChar(set)))
	case len(key) > 0 && set != string(key):
		return invalid(ReasonSetMismatch, fmt.Sprintf("%sset %s does not match record key %s",
			where, quoteTrunc(set), quoteTrunc(string(key))))
	}
	return nil
}

// controlChar returns the first control character (Unicode category Cc: U+0000–U+001F,
// U+007F–U+009F) in s, or -1. Set IDs with NUL, newlines or escape sequences break
// line-oriented tools (kcat -f '%k\n', logs, terminals) and C-string consumers, so they are
// refused at the door.
func controlChar(s string) rune {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c == 0x7f {
			return rune(c)
		} else if c >= utf8.RuneSelf {
			for _, r := range s[i:] {
				if unicode.IsControl(r) {
					return r
				}
			}
			return -1
		}
	}
	return -1
}

// quoteTrunc quotes s for an error detail, truncated to a readable length.
func quoteTrunc(s string) string {
	const max = 64
	if len(s) <= max {
		return strconv.Quote(s)
	}
	cut := max
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return strconv.Quote(s[:cut]) + "…"
}
