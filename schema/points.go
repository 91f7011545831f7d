package schema

import (
	"fmt"
	"io"
	"unicode/utf8"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/array"
	"github.com/apache/arrow/go/v15/arrow/ipc"
	"github.com/apache/arrow/go/v15/arrow/memory"

	"github.com/distfeat/distfeat/spec"
)

// Per-point output (marginal transfer, docs/marginal-transfer.md): one row per point of a
// closed window, with the point's features conditioned on its window's distribution.
const (
	colIndex = "index"
	// maxSetIDBytes is the longest set ID the input accepts.
	maxSetIDBytes = 256
	// numPointFixedCols is the number of per-point columns before the feature vectors:
	// set, seq, index, spec_id.
	numPointFixedCols = 4
)

// PointBatch is the per-point features of consecutive points of one window: points
// First, First+1, …, First+N−1 in the window's arrival order (a window's points may be
// split over several batches).
type PointBatch struct {
	// Set is the set ID.
	Set string
	// Seq is the window's number within the set (the Seq of its FeatureRecord).
	Seq uint64
	// First is the index of the batch's first point within the window (0-based).
	First int64
	// N is the number of points.
	N int
	// SpecID identifies the spec that produced the features.
	SpecID string
	// Vectors holds one row-major block per point column: N·Len values, point i at
	// [i·Len, (i+1)·Len).
	Vectors [][]float32
}

// PointLine is the JSON-lines form of one point's row.
type PointLine struct {
	Set      string               `json:"set"`
	Seq      uint64               `json:"seq"`
	Index    int64                `json:"index"`
	SpecID   string               `json:"spec_id"`
	Features map[string][]float32 `json:"features"`
}

// PointOutput encodes per-point batches for one spec and per-point column layout. It is
// safe for concurrent use.
type PointOutput struct{ outputLayout }

// NewPointOutput returns the per-point encoder for spec and its per-point columns.
//
// The schema is: set utf8, seq uint64, index int64 (the point's position in its window,
// from 0 in arrival order), spec_id utf8, then one fixed_size_list<float32>[Len] per
// column, named by Column.Name (the marginal_transfer families' names). All columns are
// non-nullable. The schema metadata holds distfeat.spec and distfeat.spec_id as in the
// window output.
func NewPointOutput(spec *spec.Spec, cols []spec.Column) *PointOutput {
	return &PointOutput{newOutputLayout(spec, []arrow.Field{
		{Name: colSet, Type: arrow.BinaryTypes.String},
		{Name: colSeq, Type: arrow.PrimitiveTypes.Uint64},
		{Name: colIndex, Type: arrow.PrimitiveTypes.Int64},
		{Name: colSpecID, Type: arrow.BinaryTypes.String},
	}, cols)}
}

// NewPointOutputMeta is NewPointOutput with more columns after the marginal_transfer ones (a
// per-point model's prediction columns) and more schema metadata (the model's).
func NewPointOutputMeta(spec *spec.Spec, cols []spec.Column, meta ...[2]string) *PointOutput {
	o := NewPointOutput(spec, nil)
	return &PointOutput{newOutputLayout(spec, o.schema.Fields()[:numPointFixedCols], cols, meta...)}
}

// Schema returns the per-point schema (shared; do not modify).
func (o *PointOutput) Schema() *arrow.Schema { return o.schema }

// Lines converts b to its JSON-lines form, one line per point.
func (o *PointOutput) Lines(b PointBatch) []PointLine {
	lines := make([]PointLine, b.N)
	for i := range lines {
		feats := make(map[string][]float32, len(o.names))
		for c, name := range o.names {
			if c < len(b.Vectors) {
				feats[name] = b.Vectors[c][i*o.lens[c] : (i+1)*o.lens[c]]
			}
		}
		id := b.SpecID
		if id == "" {
			id = o.specID
		}
		lines[i] = PointLine{Set: b.Set, Seq: b.Seq, Index: b.First + int64(i), SpecID: id, Features: feats}
	}
	return lines
}

func (o *PointOutput) check(b PointBatch) error {
	if b.SpecID != "" && b.SpecID != o.specID {
		return fmt.Errorf("schema: point batch spec_id %q does not match the output's %q", b.SpecID, o.specID)
	}
	if !utf8.ValidString(b.Set) {
		return fmt.Errorf("schema: point batch set ID %s is not valid UTF-8", quoteTrunc(b.Set))
	}
	if b.N < 0 || b.First < 0 {
		return fmt.Errorf("schema: point batch with first %d, n %d", b.First, b.N)
	}
	if len(b.Vectors) != len(o.lens) {
		return fmt.Errorf("schema: point batch has %d vectors, want %d", len(b.Vectors), len(o.lens))
	}
	for i, v := range b.Vectors {
		if len(v) != b.N*o.lens[i] {
			return fmt.Errorf("schema: point column %s has %d values, want %d points × %d", o.names[i], len(v), b.N, o.lens[i])
		}
	}
	return nil
}

// record builds the record batch of b (aliasing its vectors).
func (o *PointOutput) record(b PointBatch) arrow.Record {
	n := b.N
	sets, ids := make([]string, n), make([]string, n)
	seqs, idx := make([]uint64, n), make([]int64, n)
	for i := range sets {
		sets[i], ids[i], seqs[i], idx[i] = b.Set, o.specID, b.Seq, b.First+int64(i)
	}
	cols := []arrow.Array{
		stringArray(sets),
		fixedArray(arrow.PrimitiveTypes.Uint64, n, arrow.Uint64Traits.CastToBytes(seqs)),
		fixedArray(arrow.PrimitiveTypes.Int64, n, arrow.Int64Traits.CastToBytes(idx)),
		stringArray(ids),
	}
	for i, v := range b.Vectors {
		child := array.NewData(arrow.PrimitiveTypes.Float32, len(v),
			[]*memory.Buffer{nil, memory.NewBufferBytes(arrow.Float32Traits.CastToBytes(v))}, nil, 0, 0)
		cols = append(cols, fixedSizeList(o.schema.Field(numPointFixedCols+i).Type.(*arrow.FixedSizeListType), n, child))
	}
	rec := array.NewRecord(o.schema, cols, int64(n))
	for _, c := range cols {
		c.Release()
	}
	return rec
}

// Encode encodes b as one Arrow IPC stream (schema, one record batch of b.N rows,
// end-of-stream marker): the value of one record on the per-point topic. The bytes are a
// deterministic function of b and the output.
func (o *PointOutput) Encode(b PointBatch) ([]byte, error) {
	if err := o.check(b); err != nil {
		return nil, err
	}
	if b.N == 0 { // as PointStreamWriter: no record batch, the schema and end of stream only
		return o.enc.empty(), nil
	}
	rec := o.record(b)
	defer rec.Release()
	value, err := o.enc.encode(rec)
	if err != nil {
		return nil, fmt.Errorf("schema: encode point features: %w", err)
	}
	return value, nil
}

// EncodedSize is an upper bound of len(Encode(b)) for a batch of n points of any set ID
// (up to 256 bytes): the schema message with the spec, and n rows.
func (o *PointOutput) EncodedSize(n int) int {
	size := 1536 + 2*len(o.schema.Metadata().Values()[0])
	row := 64 + len(o.specID) + maxSetIDBytes
	for _, l := range o.lens {
		row += 4 * l
	}
	return size + n*row
}

// PointStreamWriter writes many point batches as one Arrow IPC stream, one record batch per
// PointBatch. It is not safe for concurrent use and does not close the underlying writer.
type PointStreamWriter struct {
	o   *PointOutput
	w   *ipc.Writer
	err error
}

// NewStreamWriter returns a PointStreamWriter writing to w. The stream starts with the
// schema even when no batch is written.
func (o *PointOutput) NewStreamWriter(w io.Writer) *PointStreamWriter {
	return &PointStreamWriter{o: o, w: ipc.NewWriter(w, ipc.WithSchema(o.schema), ipc.WithAllocator(memory.DefaultAllocator))}
}

// Write adds b to the stream (an empty batch writes nothing).
func (sw *PointStreamWriter) Write(b PointBatch) error {
	if sw.err != nil {
		return sw.err
	}
	if err := sw.o.check(b); err != nil {
		return err
	}
	if b.N == 0 {
		return nil
	}
	rec := sw.o.record(b)
	err := sw.w.Write(rec)
	rec.Release()
	if err != nil {
		sw.err = fmt.Errorf("schema: write point features: %w", err)
	}
	return sw.err
}

// Close writes the end-of-stream marker. Further calls return an error.
func (sw *PointStreamWriter) Close() error {
	if sw.err != nil {
		return sw.err
	}
	sw.err = errClosed
	if err := sw.w.Close(); err != nil {
		return fmt.Errorf("schema: close point stream: %w", err)
	}
	return nil
}

// DecodePoints reads every row of a per-point stream (as written by PointOutput) and
// returns them as JSON-lines rows, with the vector column names. Errors are *InvalidError
// (reason decode); the input is treated as untrusted.
func DecodePoints(value []byte) (rows []PointLine, cols []string, err error) {
	var lens []int
	err = readOutputStream(value, func(sch *arrow.Schema) error {
		want := [numPointFixedCols]struct {
			name string
			id   arrow.Type
		}{{colSet, arrow.STRING}, {colSeq, arrow.UINT64}, {colIndex, arrow.INT64}, {colSpecID, arrow.STRING}}
		if sch.NumFields() < numPointFixedCols {
			return malformed("point stream has %d columns, want at least %d", sch.NumFields(), numPointFixedCols)
		}
		for i, w := range want {
			if f := sch.Field(i); f.Name != w.name || f.Type.ID() != w.id {
				return malformed("point stream column %d is %s %s, want %s", i, quoteTrunc(f.Name), f.Type, w.name)
			}
		}
		for i, f := range sch.Fields()[numPointFixedCols:] {
			t, ok := f.Type.(*arrow.FixedSizeListType)
			if !ok || t.Elem().ID() != arrow.FLOAT32 {
				return malformed("point stream column %d (%s) is %s, want fixed_size_list<float32>", numPointFixedCols+i, quoteTrunc(f.Name), f.Type)
			}
			cols, lens = append(cols, f.Name), append(lens, int(t.Len()))
		}
		return nil
	}, func(rec arrow.Record) error {
		n := int(rec.NumRows())
		for i, c := range rec.Columns() {
			if c.Len() != n || c.NullN() > 0 {
				return malformed("point column %d has %d rows (%d null), want %d", i, c.Len(), c.NullN(), n)
			}
		}
		sets, _ := rec.Column(0).(*array.String)
		seqs, _ := rec.Column(1).(*array.Uint64)
		idx, _ := rec.Column(2).(*array.Int64)
		ids, _ := rec.Column(3).(*array.String)
		vals := make([][]float32, len(lens))
		for j := range lens {
			l := rec.Column(numPointFixedCols + j).(*array.FixedSizeList)
			child, ok := l.ListValues().(*array.Float32)
			if !ok {
				return malformed("point column %s has unexpected values", cols[j])
			}
			vals[j] = child.Float32Values()[l.Offset()*lens[j] : (l.Offset()+n)*lens[j]]
		}
		for i := 0; i < n; i++ {
			feats := make(map[string][]float32, len(cols))
			for j, name := range cols {
				feats[name] = append([]float32(nil), vals[j][i*lens[j]:(i+1)*lens[j]]...)
			}
			rows = append(rows, PointLine{Set: sets.Value(i), Seq: seqs.Value(i), Index: idx.Value(i), SpecID: ids.Value(i), Features: feats})
		}
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	return rows, cols, nil
}
