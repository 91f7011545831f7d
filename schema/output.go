package schema

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/array"
	"github.com/apache/arrow/go/v15/arrow/ipc"
	"github.com/apache/arrow/go/v15/arrow/memory"

	"github.com/distfeat/distfeat/spec"
)

// Output column names and schema metadata keys (docs/input-output.md).
const (
	colWindowStart = "window_start"
	colWindowEnd   = "window_end"
	colSeq         = "seq"
	colN           = "n"
	colSpecID      = "spec_id"

	metaSpec   = "distfeat.spec"    // schema metadata: the resolved spec's canonical JSON
	metaSpecID = "distfeat.spec_id" // schema metadata: the spec ID
)

// numFixedCols is the number of output columns before the feature vectors.
const numFixedCols = 6

// FeatureRecord is one closed window's features: one row of the output schema.
type FeatureRecord struct {
	// Set is the set ID.
	Set string
	// WindowStart and WindowEnd are in ms since the epoch: the window bounds for time
	// windows, the event times of the first and last point otherwise.
	WindowStart, WindowEnd int64
	// Seq is the replay-stable window number within the set.
	Seq uint64
	// N is the number of points in the window.
	N int64
	// SpecID identifies the spec that produced the features.
	SpecID string
	// Vectors holds one vector per output column, in Columns order.
	Vectors [][]float32
}

// WindowLine is a window's fields in the JSON-lines forms of its feature record and its
// prediction (FeatureLine, PredictionLine).
type WindowLine struct {
	Set         string `json:"set"`
	Seq         uint64 `json:"seq"`
	N           int64  `json:"n"`
	WindowStart int64  `json:"window_start"`
	WindowEnd   int64  `json:"window_end"`
	SpecID      string `json:"spec_id"`
}

// FeatureLine is the JSON-lines form of a FeatureRecord (docs/input-output.md), written by
// `embed` and `tail`: the window's fields, then its features.
type FeatureLine struct {
	WindowLine
	Features map[string][]float32 `json:"features"`
}

// LineFromRecord converts r to its JSON-lines form; cols names r's vectors in order (as
// returned by DecodeFeatures). Vectors without a name, or names without a vector, are left
// out.
func LineFromRecord(r FeatureRecord, cols []string) FeatureLine {
	n := min(len(cols), len(r.Vectors))
	feats := make(map[string][]float32, n)
	for i := 0; i < n; i++ {
		feats[cols[i]] = r.Vectors[i]
	}
	return FeatureLine{WindowLine: windowLine(r), Features: feats}
}

// windowLine is r's window fields.
func windowLine(r FeatureRecord) WindowLine {
	return WindowLine{Set: r.Set, Seq: r.Seq, N: r.N, WindowStart: r.WindowStart, WindowEnd: r.WindowEnd, SpecID: r.SpecID}
}

// Output encodes feature records for one spec and column layout. It is safe for concurrent
// use.
type Output struct{ outputLayout }

// outputLayout is what the feature output and the per-point output share: the schema (their
// fixed columns, then one fixed_size_list<float32> per vector column, the spec in the
// metadata), the vector columns, and the encoder of one-record streams.
type outputLayout struct {
	schema *arrow.Schema
	names  []string // vector columns
	lens   []int
	specID string
	enc    *streamEncoder
}

// newOutputLayout is the layout of the fixed columns followed by cols, with sp's canonical
// JSON and spec_id as the schema metadata (distfeat.spec, distfeat.spec_id, in that order),
// then the extra metadata pairs.
func newOutputLayout(sp *spec.Spec, fixed []arrow.Field, cols []spec.Column, extra ...[2]string) outputLayout {
	canon, id := specIdentity(sp)
	l := outputLayout{specID: id}
	fields := fixed
	for _, c := range cols {
		fields = append(fields, arrow.Field{Name: c.Name, Type: arrow.FixedSizeListOf(int32(c.Len), arrow.PrimitiveTypes.Float32)})
		l.names = append(l.names, c.Name)
		l.lens = append(l.lens, c.Len)
	}
	keys, vals := []string{metaSpec, metaSpecID}, []string{string(canon), id}
	for _, kv := range extra {
		keys, vals = append(keys, kv[0]), append(vals, kv[1])
	}
	md := arrow.NewMetadata(keys, vals)
	l.schema = arrow.NewSchema(fields, &md)
	l.enc = newStreamEncoder(l.schema)
	return l
}

// NewOutput returns the output encoder for spec (which must not be nil) and its embedder's
// columns.
//
// The schema is (docs/input-output.md): set utf8, window_start and window_end timestamp[ms,
// UTC], seq uint64, n int64, spec_id utf8, then one fixed_size_list<float32>[Len] per column,
// named by Column.Name. All columns are non-nullable; the list items use Arrow's default element
// field ("item", nullable), matching pyarrow's pa.list_(pa.float32(), n). The schema metadata
// holds distfeat.spec (the spec's canonical JSON) and distfeat.spec_id, in that order.
func NewOutput(spec *spec.Spec, cols []spec.Column) *Output {
	ts := &arrow.TimestampType{Unit: arrow.Millisecond, TimeZone: "UTC"}
	return &Output{newOutputLayout(spec, []arrow.Field{
		{Name: colSet, Type: arrow.BinaryTypes.String},
		{Name: colWindowStart, Type: ts},
		{Name: colWindowEnd, Type: ts},
		{Name: colSeq, Type: arrow.PrimitiveTypes.Uint64},
		{Name: colN, Type: arrow.PrimitiveTypes.Int64},
		{Name: colSpecID, Type: arrow.BinaryTypes.String},
	}, cols)}
}

// NewOutputMeta is NewOutput with extra schema metadata pairs (key, value) after
// distfeat.spec and distfeat.spec_id: embed --model names its model there.
func NewOutputMeta(spec *spec.Spec, cols []spec.Column, meta ...[2]string) *Output {
	o := NewOutput(spec, nil)
	return &Output{newOutputLayout(spec, o.schema.Fields()[:numFixedCols], cols, meta...)}
}

// specIdentity returns the spec's canonical JSON and ID.
func specIdentity(spec *spec.Spec) ([]byte, string) {
	return spec.CanonicalJSON(), spec.ID()
}

// Schema returns the output schema (shared; do not modify).
func (o *Output) Schema() *arrow.Schema { return o.schema }

// Line converts r to its JSON-lines form, naming vectors by this output's columns.
func (o *Output) Line(r FeatureRecord) FeatureLine { return LineFromRecord(r, o.names) }

// check validates r against the layout. An empty SpecID is allowed (the output's is used).
func (o *Output) check(r FeatureRecord) error {
	if r.SpecID != "" && r.SpecID != o.specID {
		return fmt.Errorf("schema: record spec_id %q does not match the output's %q", r.SpecID, o.specID)
	}
	if !utf8.ValidString(r.Set) {
		return fmt.Errorf("schema: record set ID %s is not valid UTF-8", quoteTrunc(r.Set))
	}
	if len(r.Vectors) != len(o.lens) {
		return fmt.Errorf("schema: record has %d vectors, want %d", len(r.Vectors), len(o.lens))
	}
	for i, v := range r.Vectors {
		if len(v) != o.lens[i] {
			return fmt.Errorf("schema: vector %s has length %d, want %d", o.names[i], len(v), o.lens[i])
		}
	}
	return nil
}

// Encode encodes r as one Arrow IPC stream: the schema, one record batch of one row and the
// end-of-stream marker. The bytes are a deterministic function of r and the output (no
// timestamps, no map iteration), so a replayed window produces an identical value. It is
// safe for concurrent use.
func (o *Output) Encode(r FeatureRecord) ([]byte, error) {
	if err := o.check(r); err != nil {
		return nil, err
	}
	var rows rowBuffer
	rows.init(len(o.lens))
	rows.add(r, o.specID, false)
	rec := rows.record(o)
	defer rec.Release()
	value, err := o.enc.encode(rec)
	if err != nil {
		return nil, fmt.Errorf("schema: encode features: %w", err)
	}
	return value, nil
}

// rowBuffer accumulates feature records column-wise.
type rowBuffer struct {
	sets, specIDs []string
	starts, ends  []int64
	seqs          []uint64
	ns            []int64
	vecs          [][]float32 // per column, row-major
}

func (b *rowBuffer) init(cols int) { b.vecs = make([][]float32, cols) }

func (b *rowBuffer) len() int { return len(b.sets) }

// add appends r; with copyVecs false a single-row buffer aliases r's vectors.
func (b *rowBuffer) add(r FeatureRecord, specID string, copyVecs bool) {
	b.sets = append(b.sets, r.Set)
	b.specIDs = append(b.specIDs, specID)
	b.starts = append(b.starts, r.WindowStart)
	b.ends = append(b.ends, r.WindowEnd)
	b.seqs = append(b.seqs, r.Seq)
	b.ns = append(b.ns, r.N)
	for i, v := range r.Vectors {
		if copyVecs || b.vecs[i] != nil {
			b.vecs[i] = appendRow(b.vecs[i], v)
		} else {
			b.vecs[i] = v
		}
	}
}

// appendRow appends one row's vector to a column. A column that must grow is given room for
// a whole batch (streamBatchRows rows) at once: append's own growth of a large slice (1.25×)
// would copy a wide column several times over, touching several times its size in fresh
// pages, before a batch is full. Capacity not yet written costs no memory (the pages of a
// fresh allocation are not touched), and reset keeps it for the next batch.
func appendRow(col, v []float32) []float32 {
	if n := len(col) + len(v); n > cap(col) {
		grown := make([]float32, len(col), max(streamBatchRows*len(v), n))
		copy(grown, col)
		col = grown
	}
	return append(col, v...)
}

func (b *rowBuffer) reset() {
	b.sets, b.specIDs = b.sets[:0], b.specIDs[:0]
	b.starts, b.ends, b.seqs, b.ns = b.starts[:0], b.ends[:0], b.seqs[:0], b.ns[:0]
	for i := range b.vecs {
		b.vecs[i] = b.vecs[i][:0]
	}
}

// record builds a record batch over the buffered rows without copying them.
func (b *rowBuffer) record(o *Output) arrow.Record {
	n := b.len()
	cols := make([]arrow.Array, 0, numFixedCols+len(o.lens))
	cols = append(cols,
		stringArray(b.sets),
		fixedArray(o.schema.Field(1).Type, n, arrow.Int64Traits.CastToBytes(b.starts)),
		fixedArray(o.schema.Field(2).Type, n, arrow.Int64Traits.CastToBytes(b.ends)),
		fixedArray(arrow.PrimitiveTypes.Uint64, n, arrow.Uint64Traits.CastToBytes(b.seqs)),
		fixedArray(arrow.PrimitiveTypes.Int64, n, arrow.Int64Traits.CastToBytes(b.ns)),
		stringArray(b.specIDs),
	)
	for i, v := range b.vecs {
		child := array.NewData(arrow.PrimitiveTypes.Float32, len(v),
			[]*memory.Buffer{nil, memory.NewBufferBytes(arrow.Float32Traits.CastToBytes(v))}, nil, 0, 0)
		cols = append(cols, fixedSizeList(o.schema.Field(numFixedCols+i).Type.(*arrow.FixedSizeListType), n, child))
	}
	rec := array.NewRecord(o.schema, cols, int64(n))
	for _, c := range cols {
		c.Release()
	}
	return rec
}

// fixedArray wraps raw little-endian values as an n-element fixed-width array of type t.
func fixedArray(t arrow.DataType, n int, raw []byte) arrow.Array {
	data := array.NewData(t, n, []*memory.Buffer{nil, memory.NewBufferBytes(raw)}, nil, 0, 0)
	defer data.Release()
	return array.MakeFromData(data)
}

// stringArray builds a utf8 array of vals.
func stringArray(vals []string) arrow.Array {
	size := 0
	for _, s := range vals {
		size += len(s)
	}
	offsets := make([]int32, len(vals)+1)
	data := make([]byte, 0, size)
	for i, s := range vals {
		data = append(data, s...)
		offsets[i+1] = int32(len(data))
	}
	d := array.NewData(arrow.BinaryTypes.String, len(vals), []*memory.Buffer{nil,
		memory.NewBufferBytes(arrow.Int32Traits.CastToBytes(offsets)), memory.NewBufferBytes(data)}, nil, 0, 0)
	defer d.Release()
	return array.NewStringData(d)
}

// streamBatchRows is the number of rows a StreamWriter buffers per record batch.
const streamBatchRows = 256

// StreamWriter writes many feature records as one Arrow IPC stream. Rows are buffered and
// written as record batches of up to 256 rows (Write copies the vectors, so the caller may
// reuse them); Close writes the remaining rows and the end-of-stream marker. The stream
// starts with the schema even when no row is written. A StreamWriter is not safe for
// concurrent use, and it does not close the underlying writer.
type StreamWriter struct {
	o    *Output
	w    *ipc.Writer
	rows rowBuffer
	err  error
}

// NewStreamWriter returns a StreamWriter writing to w.
func (o *Output) NewStreamWriter(w io.Writer) *StreamWriter {
	sw := &StreamWriter{o: o, w: ipc.NewWriter(w, ipc.WithSchema(o.schema), ipc.WithAllocator(memory.DefaultAllocator))}
	sw.rows.init(len(o.lens))
	return sw
}

// errClosed is returned by StreamWriter methods after Close.
var errClosed = errors.New("schema: stream writer is closed")

// Write adds r to the stream. It returns an error for a record that does not fit the
// output's layout and, once writing has failed, the first write error.
func (sw *StreamWriter) Write(r FeatureRecord) error {
	if sw.err != nil {
		return sw.err
	}
	if err := sw.o.check(r); err != nil {
		return err
	}
	sw.rows.add(r, sw.o.specID, true)
	if sw.rows.len() >= streamBatchRows {
		return sw.flush()
	}
	return nil
}

func (sw *StreamWriter) flush() error {
	if sw.rows.len() == 0 {
		return nil
	}
	rec := sw.rows.record(sw.o)
	err := sw.w.Write(rec)
	rec.Release()
	sw.rows.reset()
	if err != nil {
		sw.err = fmt.Errorf("schema: write features: %w", err)
	}
	return sw.err
}

// Close writes any buffered rows and the end-of-stream marker. Further calls return an
// error.
func (sw *StreamWriter) Close() error {
	if sw.err != nil {
		return sw.err
	}
	err := sw.flush()
	if err == nil {
		if cerr := sw.w.Close(); cerr != nil {
			err = fmt.Errorf("schema: close feature stream: %w", cerr)
		}
	}
	sw.err = errClosed
	return err
}

// DecodeFeatures reads every row of every record batch of an output stream (as written by
// Encode or a StreamWriter) and returns the records and the vector column names. The first
// six columns must be set, window_start, window_end (timestamp of any unit, converted to
// ms, or int64 ms), seq, n and spec_id, and every further column a fixed_size_list<float32>;
// nulls are errors. Errors are *InvalidError (reason decode). The input is treated as
// untrusted, as for DecodeRecord.
func DecodeFeatures(value []byte) (recs []FeatureRecord, cols []string, err error) {
	err = readOutputStream(value, func(sch *arrow.Schema) error {
		if err := checkOutputSchema(sch); err != nil {
			return err
		}
		for _, f := range sch.Fields()[numFixedCols:] {
			cols = append(cols, f.Name)
		}
		return nil
	}, func(rec arrow.Record) (err error) {
		recs, err = appendFeatureRows(recs, rec)
		return err
	})
	if err != nil {
		return nil, nil, err
	}
	return recs, cols, nil
}

// readOutputStream reads an output stream (feature or per-point records) as untrusted input:
// schema checks the schema, batch takes every record batch in order, and the stream must end
// with the end-of-stream marker and nothing after it. A panic in the Arrow reader is a decode
// error like the others (*InvalidError, reason decode).
func readOutputStream(value []byte, schema func(*arrow.Schema) error, batch func(arrow.Record) error) (err error) {
	var alloc *budgetAllocator
	defer func() {
		if p := recover(); p != nil {
			err = streamError(fmt.Errorf("malformed stream: %v", p), alloc)
		}
	}()
	rdr, mr, alloc, err := newSafeReader(value, 0, outputSchemaMaxFields)
	if err != nil {
		return err
	}
	defer rdr.Release()
	if err := schema(rdr.Schema()); err != nil {
		return err
	}
	for rdr.Next() {
		if err := batch(rdr.Record()); err != nil {
			return err
		}
	}
	if err := rdr.Err(); err != nil {
		return streamError(err, alloc)
	}
	if !mr.eos || mr.pos != len(value) {
		return malformed("%d unexpected bytes after the end-of-stream marker", len(value)-mr.pos)
	}
	return nil
}

func checkOutputSchema(s *arrow.Schema) error {
	if s.NumFields() < numFixedCols {
		return malformed("feature stream has %d columns, want at least %d", s.NumFields(), numFixedCols)
	}
	want := [numFixedCols]struct {
		name string
		ok   func(arrow.DataType) bool
		desc string
	}{
		{colSet, isType(arrow.STRING), "utf8"},
		{colWindowStart, isType(arrow.TIMESTAMP, arrow.INT64), "timestamp"},
		{colWindowEnd, isType(arrow.TIMESTAMP, arrow.INT64), "timestamp"},
		{colSeq, isType(arrow.UINT64), "uint64"},
		{colN, isType(arrow.INT64), "int64"},
		{colSpecID, isType(arrow.STRING), "utf8"},
	}
	for i, w := range want {
		f := s.Field(i)
		if f.Name != w.name || !w.ok(f.Type) {
			return malformed("feature stream column %d is %s %s, want %s %s", i, quoteTrunc(f.Name), f.Type, w.name, w.desc)
		}
	}
	for i, f := range s.Fields()[numFixedCols:] {
		t, ok := f.Type.(*arrow.FixedSizeListType)
		if !ok || t.Elem().ID() != arrow.FLOAT32 {
			return malformed("feature stream column %d (%s) is %s, want fixed_size_list<float32>", numFixedCols+i, quoteTrunc(f.Name), f.Type)
		}
	}
	return nil
}

func isType(ids ...arrow.Type) func(arrow.DataType) bool {
	return func(t arrow.DataType) bool {
		for _, id := range ids {
			if t.ID() == id {
				return true
			}
		}
		return false
	}
}

func appendFeatureRows(recs []FeatureRecord, rec arrow.Record) ([]FeatureRecord, error) {
	rows := int(rec.NumRows())
	for i, c := range rec.Columns() {
		if c.Len() != rows {
			return nil, malformed("feature record batch column %d has %d rows, want %d", i, c.Len(), rows)
		}
		if c.NullN() > 0 {
			return nil, malformed("feature column %s has nulls", rec.ColumnName(i))
		}
	}
	sets, ok1 := rec.Column(0).(*array.String)
	seqs, ok2 := rec.Column(3).(*array.Uint64)
	ns, ok3 := rec.Column(4).(*array.Int64)
	ids, ok4 := rec.Column(5).(*array.String)
	if !ok1 || !ok2 || !ok3 || !ok4 {
		return nil, malformed("feature record batch has unexpected arrays")
	}
	starts, err := millisColumn(rec.Column(1))
	if err != nil {
		return nil, err
	}
	ends, err := millisColumn(rec.Column(2))
	if err != nil {
		return nil, err
	}
	type vecCol struct {
		vals []float32
		n    int
	}
	vcs := make([]vecCol, rec.NumCols()-numFixedCols)
	for j := range vcs {
		l, ok := rec.Column(numFixedCols + j).(*array.FixedSizeList)
		if !ok {
			return nil, malformed("feature column %d is not a fixed-size list", numFixedCols+j)
		}
		n := int(l.DataType().(*arrow.FixedSizeListType).Len())
		child, ok := l.ListValues().(*array.Float32)
		if !ok {
			return nil, malformed("feature column %d has unexpected values", numFixedCols+j)
		}
		lo, hi := l.Offset()*n, (l.Offset()+rows)*n
		if child.Len() < hi || child.NullN() > 0 {
			return nil, malformed("feature column %d has missing or null values", numFixedCols+j)
		}
		vcs[j] = vecCol{vals: child.Float32Values()[lo:hi], n: n}
	}
	for r := 0; r < rows; r++ {
		fr := FeatureRecord{
			Set:         sets.Value(r),
			WindowStart: starts[r],
			WindowEnd:   ends[r],
			Seq:         seqs.Value(r),
			N:           ns.Value(r),
			SpecID:      ids.Value(r),
			Vectors:     make([][]float32, len(vcs)),
		}
		// Value aliases the library's buffer (which nothing else references): copy.
		fr.Set = strings.Clone(fr.Set)
		fr.SpecID = strings.Clone(fr.SpecID)
		for j, vc := range vcs {
			fr.Vectors[j] = append([]float32(nil), vc.vals[r*vc.n:(r+1)*vc.n]...)
		}
		recs = append(recs, fr)
	}
	return recs, nil
}

// millisColumn returns a timestamp or int64 column's values in ms.
func millisColumn(a arrow.Array) ([]int64, error) {
	switch c := a.(type) {
	case *array.Int64:
		return c.Int64Values(), nil
	case *array.Timestamp:
		unit := c.DataType().(*arrow.TimestampType).Unit
		out := make([]int64, c.Len())
		for i, v := range c.TimestampValues() {
			ms, ok := toMillis(int64(v), unit)
			if !ok {
				return nil, malformed("timestamp %d out of range", v)
			}
			out[i] = ms
		}
		return out, nil
	}
	return nil, malformed("unexpected time column %T", a)
}
