package schema

import (
	"bytes"
	"fmt"
	"math"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/array"
	"github.com/apache/arrow/go/v15/arrow/bitutil"
	"github.com/apache/arrow/go/v15/arrow/ipc"
	"github.com/apache/arrow/go/v15/arrow/memory"
)

// Input column names of the Arrow format.
const (
	colSet = "set"
	colX   = "x"
	colT   = "t"
	colEnd = "end"
)

// inputLayout locates the columns of an input stream.
type inputLayout struct {
	set, x, t, end int // column indexes; t and end are -1 when absent
	tUnit          arrow.TimeUnit
	tIsTimestamp   bool
}

func checkInputSchema(s *arrow.Schema, dim int) (inputLayout, error) {
	l := inputLayout{set: -1, x: -1, t: -1, end: -1}
	for i, f := range s.Fields() {
		var slot *int
		switch f.Name {
		case colSet:
			slot = &l.set
			switch f.Type.ID() {
			case arrow.STRING, arrow.LARGE_STRING:
			default:
				return l, invalid(ReasonDecode, fmt.Sprintf("arrow: column set has type %s, want utf8", f.Type))
			}
		case colX:
			slot = &l.x
			fsl, ok := f.Type.(*arrow.FixedSizeListType)
			if !ok {
				return l, invalid(ReasonDecode, fmt.Sprintf("arrow: column x has type %s, want fixed_size_list<float32|float64>[%d]", f.Type, dim))
			}
			switch fsl.Elem().ID() {
			case arrow.FLOAT32, arrow.FLOAT64:
			default:
				return l, invalid(ReasonDecode, fmt.Sprintf("arrow: column x has element type %s, want float32 or float64", fsl.Elem()))
			}
			if int(fsl.Len()) != dim {
				return l, invalid(ReasonDim, fmt.Sprintf("arrow: column x has list size %d, want %d", fsl.Len(), dim))
			}
		case colT:
			slot = &l.t
			switch tt := f.Type.(type) {
			case *arrow.Int64Type:
				l.tUnit = arrow.Millisecond
			case *arrow.TimestampType:
				l.tUnit, l.tIsTimestamp = tt.Unit, true
			default:
				return l, invalid(ReasonDecode, fmt.Sprintf("arrow: column t has type %s, want int64 (ms) or timestamp", f.Type))
			}
		case colEnd:
			slot = &l.end
			if f.Type.ID() != arrow.BOOL {
				return l, invalid(ReasonDecode, fmt.Sprintf("arrow: column end has type %s, want bool", f.Type))
			}
		default:
			return l, invalid(ReasonDecode, fmt.Sprintf("arrow: unknown column %s (want set, x, t, end)", quoteTrunc(f.Name)))
		}
		if *slot >= 0 {
			return l, invalid(ReasonDecode, fmt.Sprintf("arrow: duplicate column %s", f.Name))
		}
		*slot = i
	}
	switch {
	case l.set < 0:
		return l, invalid(ReasonDecode, "arrow: missing column set (utf8)")
	case l.x < 0:
		return l, invalid(ReasonDecode, fmt.Sprintf("arrow: missing column x (fixed_size_list<float64>[%d])", dim))
	}
	return l, nil
}

// toMillis converts a time value of unit u to ms since the epoch, flooring.
func toMillis(v int64, u arrow.TimeUnit) (int64, bool) {
	switch u {
	case arrow.Second:
		if v > math.MaxInt64/1000 || v < math.MinInt64/1000 {
			return 0, false
		}
		return v * 1000, true
	case arrow.Millisecond:
		return v, true
	case arrow.Microsecond:
		return floorDiv(v, 1000), true
	case arrow.Nanosecond:
		return floorDiv(v, 1000000), true
	}
	return 0, false
}

func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b != 0 && a < 0 {
		q--
	}
	return q
}

// run is a Batch under construction: points [start, start+n) of arrowDecoder.pts.
type run struct {
	set   string
	start int
	n     int
	t     int64
	end   bool
}

type arrowDecoder struct {
	key          []byte
	o            DecodeOptions
	recordTimeMs int64
	l            inputLayout
	pts          []float64
	runs         []run
	rows         int // rows decoded so far, for error details
}

func decodeArrow(key, value []byte, recordTimeMs int64, o DecodeOptions) (out []Batch, err error) {
	var alloc *budgetAllocator
	defer func() {
		if p := recover(); p != nil {
			out, err = nil, streamError(fmt.Errorf("malformed stream: %v", p), alloc)
		}
	}()
	rdr, mr, alloc, err := newSafeReader(value, int64(o.MaxPoints), inputSchemaMaxFields)
	if err != nil {
		return nil, err
	}
	defer rdr.Release()
	l, err := checkInputSchema(rdr.Schema(), o.Dim)
	if err != nil {
		return nil, err
	}
	d := arrowDecoder{key: key, o: o, recordTimeMs: recordTimeMs, l: l}
	for rdr.Next() {
		if err := d.add(rdr.Record()); err != nil {
			return nil, err
		}
	}
	if err := rdr.Err(); err != nil {
		return nil, streamError(err, alloc)
	}
	if !mr.eos || mr.pos != len(value) {
		return nil, malformed("%d unexpected bytes after the end-of-stream marker", len(value)-mr.pos)
	}
	return d.batches(), nil
}

func (d *arrowDecoder) batches() []Batch {
	if len(d.runs) == 0 {
		return nil
	}
	out := make([]Batch, len(d.runs))
	dim := d.o.Dim
	for i, r := range d.runs {
		lo, hi := r.start*dim, (r.start+r.n)*dim
		out[i] = Batch{Set: r.set, Points: d.pts[lo:hi:hi], N: r.n, EventTime: r.t, End: r.end}
	}
	return out
}

// stringColumn gives uniform access to utf8 and large_utf8 arrays.
type stringColumn interface {
	arrow.Array
	Value(i int) string
}

// add decodes one record batch: its coordinates into d.pts and its rows into runs.
func (d *arrowDecoder) add(rec arrow.Record) error {
	rows := int(rec.NumRows())
	if rows > d.o.MaxPoints-d.rows {
		return invalid(ReasonTooLarge, fmt.Sprintf("more than %d points", d.o.MaxPoints))
	}
	for i := 0; i < int(rec.NumCols()); i++ {
		if rec.Column(i).Len() != rows {
			return malformed("record batch column %d has %d rows, want %d", i, rec.Column(i).Len(), rows)
		}
	}
	// Coordinates first: they are the bulk, and checking them first bounds the allocation.
	base := len(d.pts) / d.o.Dim
	if err := d.addCoords(rec, rows); err != nil {
		return err
	}
	cols, err := d.rowColumns(rec, rows)
	if err != nil {
		return err
	}
	if err := d.addRows(cols, rows, base); err != nil {
		return err
	}
	d.rows += rows
	return nil
}

// addCoords appends the batch's x coordinates to d.pts, refusing nulls and non-finite values.
func (d *arrowDecoder) addCoords(rec arrow.Record, rows int) error {
	dim := d.o.Dim
	xl, ok := rec.Column(d.l.x).(*array.FixedSizeList)
	if !ok {
		return malformed("column x is not a fixed-size list")
	}
	if xl.NullN() > 0 {
		for r := 0; r < rows; r++ {
			if xl.IsNull(r) {
				return invalid(ReasonDecode, fmt.Sprintf("row %d: x is null", d.rows+r))
			}
		}
	}
	child := xl.ListValues()
	lo := xl.Offset() * dim
	hi := lo + rows*dim
	if child.Len() < hi {
		return malformed("column x has %d coordinates for %d rows of %d", child.Len()-lo, rows, dim)
	}
	if child.NullN() > 0 {
		for j := lo; j < hi; j++ {
			if child.IsNull(j) {
				return invalid(ReasonDecode, fmt.Sprintf("row %d: x[%d] is null", d.rows+(j-lo)/dim, (j-lo)%dim))
			}
		}
	}
	base := len(d.pts)
	d.pts = slices.Grow(d.pts, rows*dim)[:base+rows*dim]
	dst := d.pts[base:]
	switch c := child.(type) {
	case *array.Float64:
		copy(dst, c.Float64Values()[lo:hi])
	case *array.Float32:
		for j, v := range c.Float32Values()[lo:hi] {
			dst[j] = float64(v)
		}
	default:
		return malformed("column x has unexpected element array %T", child)
	}
	for j, v := range dst {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return invalid(ReasonNonFinite, fmt.Sprintf("row %d: x[%d] is %v", d.rows+j/dim, j%dim, v))
		}
	}
	return nil
}

// rowCols are a record batch's per-row columns other than x.
type rowCols struct {
	sets     stringColumn
	setNulls bool
	ts       []int64           // t as int64 ms, or
	tsT      []arrow.Timestamp // t as a timestamp
	tCol     arrow.Array       // nil: no t column
	tNull    bool
	endCol   *array.Boolean // nil: no end column
	endNull  bool
}

// rowColumns resolves the set, t and end columns of a record batch.
func (d *arrowDecoder) rowColumns(rec arrow.Record, rows int) (rowCols, error) {
	var c rowCols
	var ok bool
	if c.sets, ok = rec.Column(d.l.set).(stringColumn); !ok {
		return c, malformed("column set is not a string array")
	}
	c.setNulls = c.sets.NullN() > 0
	if d.l.t >= 0 {
		c.tCol = rec.Column(d.l.t)
		switch tc := c.tCol.(type) {
		case *array.Int64:
			c.ts = tc.Int64Values()
		case *array.Timestamp:
			c.tsT = tc.TimestampValues()
		default:
			return c, malformed("column t has unexpected array %T", c.tCol)
		}
		if len(c.ts)+len(c.tsT) < rows {
			return c, malformed("column t is shorter than its %d rows", rows)
		}
		c.tNull = c.tCol.NullN() > 0
	}
	if d.l.end >= 0 {
		if c.endCol, ok = rec.Column(d.l.end).(*array.Boolean); !ok {
			return c, malformed("column end is not a bool array")
		}
		c.endNull = c.endCol.NullN() > 0
	}
	return c, nil
}

// eventTime returns row r's event time in ms (the record timestamp when t is absent or null).
func (d *arrowDecoder) eventTime(c *rowCols, r, row int) (int64, error) {
	if c.tCol == nil || (c.tNull && c.tCol.IsNull(r)) {
		if err := checkRecordTime(d.recordTimeMs); err != nil {
			return 0, err
		}
		return d.recordTimeMs, nil
	}
	v := int64(0)
	if c.ts != nil {
		v = c.ts[r]
	} else {
		v = int64(c.tsT[r])
	}
	ms, ok := toMillis(v, d.l.tUnit)
	switch {
	case !ok:
		return 0, invalid(ReasonDecode, fmt.Sprintf("row %d: t %d is out of range", row, v))
	case ms < 0 || v < 0:
		return 0, invalid(ReasonDecode, fmt.Sprintf("row %d: negative event time t %d", row, v))
	case ms > MaxEventTime:
		return 0, invalid(ReasonDecode, fmt.Sprintf("row %d: t %d is after 9999-12-31T23:59:59.999Z (max %d ms)", row, v, int64(MaxEventTime)))
	}
	return ms, nil
}

// addRows groups the batch's rows into runs (continuing the last run of the previous batch):
// a run ends at an `end` row or where the set or the event time changes. base is the index
// of the batch's first point in d.pts.
func (d *arrowDecoder) addRows(c rowCols, rows, base int) error {
	var cur *run
	if n := len(d.runs); n > 0 {
		cur = &d.runs[n-1]
	}
	for r := 0; r < rows; r++ {
		row := d.rows + r
		if c.setNulls && c.sets.IsNull(r) {
			return invalid(ReasonDecode, fmt.Sprintf("row %d: set is null", row))
		}
		set := c.sets.Value(r)
		t, err := d.eventTime(&c, r, row)
		if err != nil {
			return err
		}
		end := c.endCol != nil && !(c.endNull && c.endCol.IsNull(r)) && c.endCol.Value(r)
		if cur == nil || cur.end || set != cur.set || t != cur.t {
			if cur == nil || set != cur.set {
				if err := checkSet(fmt.Sprintf("row %d: ", row), set, d.key, d.o); err != nil {
					return err
				}
				// The value aliases the library's buffer; keep only a copy.
				set = strings.Clone(set)
			} else {
				set = cur.set
			}
			d.runs = append(d.runs, run{set: set, start: base + r, t: t})
			cur = &d.runs[len(d.runs)-1]
		}
		cur.n++
		cur.end = end
	}
	return nil
}

// EncodeArrow encodes batches as one input record value: an Arrow IPC stream with columns
// set (utf8), x (fixed_size_list<float64>[dim]), t (int64 ms) and end (bool), one row per
// point, in one record batch. Every row of a batch carries its set and EventTime; only the
// last row of a batch with End set has end=true. Batches with no points are skipped unless
// End is set, which Arrow input cannot express (an error; use JSON for end markers).
//
// DecodeRecord returns the batches back, except that consecutive batches with the same set
// and EventTime where the first has End unset come back merged into one.
func EncodeArrow(dim int, batches []Batch) ([]byte, error) {
	if dim <= 0 {
		return nil, invalid(ReasonDim, fmt.Sprintf("dim must be > 0, got %d", dim))
	}
	rows := 0
	for i, b := range batches {
		if err := checkBatch(i, b, dim); err != nil {
			return nil, err
		}
		switch {
		case b.Set == "":
			return nil, invalid(ReasonDecode, fmt.Sprintf("batch %d: empty set ID", i))
		case b.N == 0 && b.End:
			return nil, invalid(ReasonDecode, fmt.Sprintf("batch %d (set %s): an end marker without points cannot be encoded as Arrow", i, quoteTrunc(b.Set)))
		}
		rows += b.N
	}
	// Build the columns' buffers directly: one pass, no per-row builder calls.
	setBytes := 0
	for _, b := range batches {
		setBytes += b.N * len(b.Set)
	}
	if setBytes > math.MaxInt32 {
		return nil, invalid(ReasonTooLarge, "set column exceeds 2 GiB")
	}
	offsets := make([]int32, rows+1)
	setData := make([]byte, 0, setBytes)
	endBits := make([]byte, bitutil.BytesForBits(int64(rows)))
	xs := make([]float64, 0, rows*dim)
	ts := make([]int64, 0, rows)
	row := 0
	for _, b := range batches {
		for j := 0; j < b.N; j++ {
			setData = append(setData, b.Set...)
			row++
			offsets[row] = int32(len(setData))
			ts = append(ts, b.EventTime)
		}
		if b.End && b.N > 0 {
			bitutil.SetBit(endBits, row-1)
		}
		xs = append(xs, b.Points[:b.N*dim]...)
	}
	setArr := array.NewStringData(array.NewData(arrow.BinaryTypes.String, rows, []*memory.Buffer{nil,
		memory.NewBufferBytes(arrow.Int32Traits.CastToBytes(offsets)), memory.NewBufferBytes(setData)}, nil, 0, 0))
	defer setArr.Release()
	endArr := array.NewBooleanData(array.NewData(arrow.FixedWidthTypes.Boolean, rows,
		[]*memory.Buffer{nil, memory.NewBufferBytes(endBits)}, nil, 0, 0))
	defer endArr.Release()
	xType := arrow.FixedSizeListOf(int32(dim), arrow.PrimitiveTypes.Float64)
	xArr := fixedSizeList(xType, rows, float64Data(xs))
	defer xArr.Release()
	tArr := array.NewInt64Data(array.NewData(arrow.PrimitiveTypes.Int64, rows,
		[]*memory.Buffer{nil, memory.NewBufferBytes(arrow.Int64Traits.CastToBytes(ts))}, nil, 0, 0))
	defer tArr.Release()

	sch := arrow.NewSchema([]arrow.Field{
		{Name: colSet, Type: arrow.BinaryTypes.String},
		{Name: colX, Type: xType},
		{Name: colT, Type: arrow.PrimitiveTypes.Int64},
		{Name: colEnd, Type: arrow.FixedWidthTypes.Boolean},
	}, nil)
	rec := array.NewRecord(sch, []arrow.Array{setArr, xArr, tArr, endArr}, int64(rows))
	defer rec.Release()
	var buf bytes.Buffer
	buf.Grow(512 + rows*(dim*8+24))
	w := ipc.NewWriter(&buf, ipc.WithSchema(sch), ipc.WithAllocator(memory.DefaultAllocator))
	if rows > 0 {
		if err := w.Write(rec); err != nil {
			return nil, fmt.Errorf("schema: encode arrow: %w", err)
		}
	}
	if err := w.Close(); err != nil {
		return nil, fmt.Errorf("schema: encode arrow: %w", err)
	}
	return buf.Bytes(), nil
}

// float64Data wraps vals (without copying) as float64 array data.
func float64Data(vals []float64) arrow.ArrayData {
	return array.NewData(arrow.PrimitiveTypes.Float64, len(vals),
		[]*memory.Buffer{nil, memory.NewBufferBytes(arrow.Float64Traits.CastToBytes(vals))}, nil, 0, 0)
}

// fixedSizeList builds a fixed-size list array of n lists over child (which it releases).
func fixedSizeList(t *arrow.FixedSizeListType, n int, child arrow.ArrayData) *array.FixedSizeList {
	defer child.Release()
	data := array.NewData(t, n, []*memory.Buffer{nil}, []arrow.ArrayData{child}, 0, 0)
	defer data.Release()
	return array.NewFixedSizeListData(data)
}

// checkBatch validates a batch for encoding.
func checkBatch(i int, b Batch, dim int) error {
	switch {
	case b.N < 0 || len(b.Points) != b.N*dim:
		return invalid(ReasonDim, fmt.Sprintf("batch %d: %d coordinates for %d points of dim %d", i, len(b.Points), b.N, dim))
	case !utf8.ValidString(b.Set):
		return invalid(ReasonDecode, fmt.Sprintf("batch %d: set ID is not valid UTF-8", i))
	case controlChar(b.Set) >= 0:
		return invalid(ReasonDecode, fmt.Sprintf("batch %d: set ID contains the control character %U", i, controlChar(b.Set)))
	case b.EventTime < 0 || b.EventTime > MaxEventTime:
		return invalid(ReasonDecode, fmt.Sprintf("batch %d: event time %d outside [0, %d]", i, b.EventTime, int64(MaxEventTime)))
	}
	for j, v := range b.Points {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return invalid(ReasonNonFinite, fmt.Sprintf("batch %d: points[%d][%d] is %v", i, j/dim, j%dim, v))
		}
	}
	return nil
}
