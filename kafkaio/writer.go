package kafkaio

// Publishing point batches to distfeat's input topic (docs/input-output.md,
// docs/guarantees.md): one Kafka record per set chunk, keyed by set ID, placed by a
// Java-compatible murmur2 partitioner, acknowledged by all in-sync replicas.

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"
	"unicode/utf8"

	"github.com/distfeat/distfeat/schema"
	"github.com/segmentio/kafka-go"
)

// Formats of WriterConfig.Format.
const (
	FormatJSON  = "json"  // value = schema.EncodeJSON, content-type application/json
	FormatArrow = "arrow" // value = schema.EncodeArrow of one batch, content-type application/vnd.apache.arrow.stream
)

// HeaderContentType is the record header that names the value's format (docs/input-output.md);
// it is schema.HeaderContentType, kept here for the producer's callers.
const HeaderContentType = schema.HeaderContentType

// Writer defaults (see NewWriter).
const (
	// DefaultBatchTimeout bounds how long kafka-go waits to fill a batch. kafka-go's own
	// default of 1 s would add a second to every synchronous write (docs/guarantees.md).
	DefaultBatchTimeout = 5 * time.Millisecond
	// DefaultBatchSize is the most records kafka-go sends to one partition in one request.
	DefaultBatchSize = 1000
	// DefaultBatchBytes caps one produce request per partition, and so also one record:
	// 1 MiB, just under Kafka's default message.max.bytes (1 MiB + 12 bytes of overhead).
	DefaultBatchBytes = 1 << 20

	// maxSetBytes is the limit on a set ID, the record key (docs/input-output.md).
	maxSetBytes = 256
	// maxRecordBytes is the largest value PointWriter puts in one record; larger chunks are
	// split. It leaves room under DefaultBatchBytes for the key, headers and framing.
	maxRecordBytes = DefaultBatchBytes - 64<<10
)

// ErrInvalidBatch is wrapped by PointWriter.Write for a batch it refuses before sending
// anything: an empty, over-long or non-UTF-8 set ID, a negative N, Points not of length N·Dim,
// a non-finite coordinate, or a single point too large for a record.
var ErrInvalidBatch = errors.New("producer: invalid batch")

// WriterConfig configures NewPointWriter and NewWriter.
type WriterConfig struct {
	// Brokers are the bootstrap addresses (host:port).
	Brokers []string
	// Topic is the destination topic.
	Topic string
	// Format is FormatJSON (the default when empty) or FormatArrow. Only PointWriter uses it.
	Format string
	// Dim is the dimension of every point; PointWriter requires it (> 0).
	Dim int
	// BatchTimeout is kafka-go's batching delay; 0 means DefaultBatchTimeout.
	BatchTimeout time.Duration
	// Transport carries the requests (TLS/SASL live here). Nil: NewPointWriter creates a
	// private kafka.Transport and closes its connections on Close; NewWriter leaves the
	// Writer's Transport nil, i.e. kafka.DefaultTransport.
	Transport kafka.RoundTripper
}

// NewWriter returns a kafka-go Writer with distfeat's producer settings, shared by the point
// producer and anything else that writes keyed records (the worker's feature and dead-letter
// output may use it too):
//
//   - Balancer NewBalancer() (records keyed by set ID land where the Java client puts them);
//   - RequiredAcks RequireAll: a write returns only once all in-sync replicas have the
//     records (the worker's commit rule, docs/guarantees.md, depends on it);
//   - BatchTimeout cfg.BatchTimeout or DefaultBatchTimeout, BatchSize DefaultBatchSize,
//     BatchBytes DefaultBatchBytes (also the largest single record it accepts);
//   - no compression, no topic auto-creation, kafka-go's default retries (10 attempts with
//     backoff). Retries are not idempotent: an ambiguous failure may duplicate a record,
//     but the records of one partition keep their order.
//
// Format and Dim are ignored. The caller owns the Writer and must Close it.
func NewWriter(cfg WriterConfig) *kafka.Writer {
	bt := cfg.BatchTimeout
	if bt <= 0 {
		bt = DefaultBatchTimeout
	}
	return &kafka.Writer{
		Addr:         kafka.TCP(cfg.Brokers...),
		Topic:        cfg.Topic,
		Balancer:     NewBalancer(),
		RequiredAcks: kafka.RequireAll,
		BatchTimeout: bt,
		BatchSize:    DefaultBatchSize,
		BatchBytes:   DefaultBatchBytes,
		Transport:    cfg.Transport,
	}
}

// PointWriter publishes point batches (input records, docs/input-output.md). It is safe for
// concurrent use; records of one set written by one goroutine keep their order.
type PointWriter struct {
	w           *kafka.Writer
	format      string
	contentType string
	dim         int
	ownedTr     *kafka.Transport // closed by Close when we created it
	err         error            // configuration error, returned by every Write
}

// NewPointWriter returns a PointWriter for cfg. A bad configuration (unknown Format,
// Dim ≤ 0, no Brokers or Topic) is reported by the first Write, so that the constructor's
// signature stays error-free as the package contract requires.
func NewPointWriter(cfg WriterConfig) *PointWriter {
	pw := &PointWriter{dim: cfg.Dim}
	switch cfg.Format {
	case "", FormatJSON:
		pw.format, pw.contentType = FormatJSON, schema.ContentTypeJSON
	case FormatArrow:
		pw.format, pw.contentType = FormatArrow, schema.ContentTypeArrow
	default:
		pw.err = fmt.Errorf("producer: unknown format %q (want %q or %q)", cfg.Format, FormatJSON, FormatArrow)
	}
	switch {
	case pw.err != nil:
	case cfg.Dim <= 0:
		pw.err = fmt.Errorf("producer: dim must be > 0, got %d", cfg.Dim)
	case len(cfg.Brokers) == 0:
		pw.err = errors.New("producer: no brokers")
	case cfg.Topic == "":
		pw.err = errors.New("producer: no topic")
	}
	if cfg.Transport == nil {
		pw.ownedTr = &kafka.Transport{}
		cfg.Transport = pw.ownedTr
	}
	pw.w = NewWriter(cfg)
	return pw
}

// Write publishes the batches, in order, and returns once the broker has acknowledged all of
// them (RequiredAcks: all) or ctx is done.
//
// Each batch becomes one record, keyed by its set ID, with header content-type, value
// schema.EncodeJSON(b) or schema.EncodeArrow(dim, [b]) (one set per record, so that the key
// and hence the partition is the set's), and record timestamp = the batch's event time.
// Details:
//
//   - EventTime ≤ 0 means "now": the current time (ms) is written into the value and used
//     as the record timestamp, so the worker never sees an event time of 1970.
//   - A batch whose encoded value would exceed the record size limit (about 1 MiB) is split
//     into consecutive records of the same set, as Split does, with End only on the last.
//   - A batch with no points and End unset carries nothing and sends nothing. An end marker
//     without points cannot be expressed in Arrow (zero rows), so in the arrow format it is
//     sent as a JSON record (content-type application/json); the worker decodes records by
//     their header, so this is transparent.
//
// Batches are validated before anything is sent; an invalid one fails the whole call with an
// error wrapping ErrInvalidBatch. On a send failure the error is kafka-go's (a
// kafka.WriteErrors lists the records that failed; the others were written).
func (w *PointWriter) Write(ctx context.Context, batches ...schema.Batch) error {
	if w.err != nil {
		return w.err
	}
	now := time.Now().UnixMilli()
	msgs := make([]kafka.Message, 0, len(batches))
	for i, b := range batches {
		if err := w.check(b); err != nil {
			return fmt.Errorf("%w: batch %d (set %q): %v", ErrInvalidBatch, i, truncate(b.Set), err)
		}
		if b.N == 0 && !b.End {
			continue
		}
		if b.EventTime <= 0 {
			b.EventTime = now
		}
		var err error
		if msgs, err = w.appendMessages(msgs, b); err != nil {
			return fmt.Errorf("producer: batch %d (set %q): %w", i, truncate(b.Set), err)
		}
	}
	if len(msgs) == 0 {
		return nil
	}
	if err := w.w.WriteMessages(ctx, msgs...); err != nil {
		return fmt.Errorf("producer: write %d records to %s: %w", len(msgs), w.w.Topic, err)
	}
	return nil
}

// check validates a batch's shape and set ID.
func (w *PointWriter) check(b schema.Batch) error {
	switch {
	case b.Set == "":
		return errors.New("empty set ID (records are keyed by set)")
	case len(b.Set) > maxSetBytes:
		return fmt.Errorf("set ID of %d bytes, limit %d", len(b.Set), maxSetBytes)
	case !utf8.ValidString(b.Set):
		return errors.New("set ID is not valid UTF-8")
	case b.N < 0:
		return fmt.Errorf("negative N %d", b.N)
	case len(b.Points) != b.N*w.dim:
		return fmt.Errorf("%d coordinates for %d points of dim %d", len(b.Points), b.N, w.dim)
	}
	for j, v := range b.Points {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Errorf("point %d has a non-finite coordinate %v", j/w.dim, v)
		}
	}
	return nil
}

// appendMessages encodes b as one record, or, when the value would be too large, as the
// records of its two halves (recursively).
func (w *PointWriter) appendMessages(msgs []kafka.Message, b schema.Batch) ([]kafka.Message, error) {
	contentType := w.contentType
	var value []byte
	var err error
	if w.format == FormatArrow && b.N > 0 {
		value, err = schema.EncodeArrow(w.dim, []schema.Batch{b})
	} else {
		contentType = schema.ContentTypeJSON
		value, err = schema.EncodeJSON(b)
	}
	if err != nil {
		return msgs, err
	}
	if len(value) > maxRecordBytes {
		if b.N <= 1 {
			return msgs, fmt.Errorf("%w: one point encodes to %d bytes, over the %d-byte record limit", ErrInvalidBatch, len(value), maxRecordBytes)
		}
		for _, half := range Split(b, (b.N+1)/2) {
			if msgs, err = w.appendMessages(msgs, half); err != nil {
				return msgs, err
			}
		}
		return msgs, nil
	}
	return append(msgs, kafka.Message{
		Key:     []byte(b.Set),
		Value:   value,
		Headers: []kafka.Header{{Key: HeaderContentType, Value: []byte(contentType)}},
		Time:    time.UnixMilli(b.EventTime),
	}), nil
}

// Close flushes nothing (Write is synchronous), closes the kafka-go Writer and, when the
// PointWriter created its own transport, that transport's connections.
func (w *PointWriter) Close() error {
	err := w.w.Close()
	if w.ownedTr != nil {
		w.ownedTr.CloseIdleConnections()
	}
	return err
}

// Split cuts b into consecutive chunks of at most maxPoints points, for producing a large set
// as several records: every chunk keeps b's Set and EventTime, and only the last carries
// b.End. The chunks share b.Points' backing array (no copy). maxPoints ≤ 0, a batch of at
// most maxPoints points, and a malformed batch (len(Points) not a multiple of N) are returned
// whole, as the only element.
func Split(b schema.Batch, maxPoints int) []schema.Batch {
	if maxPoints <= 0 || b.N <= maxPoints || len(b.Points)%b.N != 0 {
		return []schema.Batch{b}
	}
	dim := len(b.Points) / b.N
	out := make([]schema.Batch, 0, (b.N+maxPoints-1)/maxPoints)
	for lo := 0; lo < b.N; lo += maxPoints {
		hi := min(lo+maxPoints, b.N)
		out = append(out, schema.Batch{
			Set:       b.Set,
			Points:    b.Points[lo*dim : hi*dim : hi*dim],
			N:         hi - lo,
			EventTime: b.EventTime,
			End:       b.End && hi == b.N,
		})
	}
	return out
}

// truncate shortens a set ID for error messages.
func truncate(s string) string {
	if len(s) <= 64 {
		return s
	}
	return s[:64] + "…"
}
