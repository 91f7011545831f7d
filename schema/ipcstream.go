package schema

import (
	"bytes"
	"fmt"
	"sync"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/ipc"
	"github.com/apache/arrow/go/v15/arrow/memory"
)

// eos is the Arrow IPC end-of-stream marker (continuation token, zero length).
var eos = [8]byte{0xFF, 0xFF, 0xFF, 0xFF, 0, 0, 0, 0}

// streamEncoder writes one-batch Arrow IPC streams — schema message, one record batch, end of
// stream — as an ipc.Writer writing each stream afresh would, byte for byte, without
// serialising the schema for every record: the schema message (a flatbuffer holding the
// whole spec) is encoded once, and pooled writers that have already written it encode only
// the record batch. Building the schema message and growing the buffer were about 45% of
// encoding a feature record of the default spec (BenchmarkEncodeOutput). It is safe for
// concurrent use.
type streamEncoder struct {
	schema *arrow.Schema
	prefix []byte    // the schema message, as a fresh writer starts every stream
	pool   sync.Pool // of *batchWriter
}

// batchWriter is an ipc.Writer that has written the schema message into buf once; from
// then on each Write appends only the record batch message.
type batchWriter struct {
	buf     bytes.Buffer
	w       *ipc.Writer
	started bool // the schema message was written and cut off
}

// newStreamEncoder encodes sch's schema message once.
func newStreamEncoder(sch *arrow.Schema) *streamEncoder {
	var buf bytes.Buffer
	w := ipc.NewWriter(&buf, ipc.WithSchema(sch), ipc.WithAllocator(memory.DefaultAllocator))
	if err := w.Close(); err != nil { // an empty stream: the schema message, then end of stream
		panic("schema: encode the output schema: " + err.Error()) // a fixed schema: cannot fail short of a bug
	}
	b := buf.Bytes()
	if len(b) < len(eos) || !bytes.Equal(b[len(b)-len(eos):], eos[:]) {
		panic("schema: an empty Arrow IPC stream does not end with the end-of-stream marker")
	}
	return &streamEncoder{schema: sch, prefix: bytes.Clone(b[:len(b)-len(eos)])}
}

// empty returns a stream without a record batch: the schema message and end of stream.
func (e *streamEncoder) empty() []byte {
	return append(append(make([]byte, 0, len(e.prefix)+len(eos)), e.prefix...), eos[:]...)
}

// encode returns the one-batch stream of rec (a record of the encoder's schema).
func (e *streamEncoder) encode(rec arrow.Record) ([]byte, error) {
	bw, _ := e.pool.Get().(*batchWriter)
	if bw == nil {
		bw = &batchWriter{}
		bw.w = ipc.NewWriter(&bw.buf, ipc.WithSchema(e.schema), ipc.WithAllocator(memory.DefaultAllocator))
	}
	bw.buf.Reset()
	if err := bw.w.Write(rec); err != nil {
		return nil, err // the writer is dropped: its state is unknown
	}
	batch := bw.buf.Bytes()
	if !bw.started {
		if !bytes.HasPrefix(batch, e.prefix) {
			return nil, fmt.Errorf("schema: a new Arrow writer's schema message differs from the cached one")
		}
		batch, bw.started = batch[len(e.prefix):], true
	}
	out := make([]byte, 0, len(e.prefix)+len(batch)+len(eos))
	out = append(append(append(out, e.prefix...), batch...), eos[:]...)
	e.pool.Put(bw)
	return out, nil
}
