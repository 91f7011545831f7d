package schema

import (
	"bytes"
	"errors"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/array"
	"github.com/apache/arrow/go/v15/arrow/ipc"
	"github.com/apache/arrow/go/v15/arrow/memory"
)

// randomBatch returns a batch of n uniform points in [0,1)^dim from a seeded generator.
func randomBatch(rng *rand.Rand, set string, n, dim int, t int64, end bool) Batch {
	pts := make([]float64, n*dim)
	for i := range pts {
		pts[i] = rng.Float64()
	}
	if n == 0 {
		pts = nil
	}
	return Batch{Set: set, Points: pts, N: n, EventTime: t, End: end}
}

// wantInvalid asserts that err is an *InvalidError with the given reason.
func wantInvalid(t *testing.T, err error, reason string) *InvalidError {
	t.Helper()
	if err == nil {
		t.Fatalf("got no error, want reason %q", reason)
	}
	ie, ok := err.(*InvalidError)
	if !ok {
		t.Fatalf("error %v has type %T, want *InvalidError", err, err)
	}
	if ie.Reason != reason {
		t.Fatalf("reason %q (detail %q), want %q", ie.Reason, ie.Detail, reason)
	}
	if ie.Detail == "" {
		t.Fatalf("empty detail for reason %q", reason)
	}
	return ie
}

// batchesEqual compares batches bit for bit (NaN never occurs; -0 and 0 differ).
func batchesEqual(a, b []Batch) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		x, y := a[i], b[i]
		if x.Set != y.Set || x.N != y.N || x.EventTime != y.EventTime || x.End != y.End || len(x.Points) != len(y.Points) {
			return false
		}
		for j := range x.Points {
			if math.Float64bits(x.Points[j]) != math.Float64bits(y.Points[j]) {
				return false
			}
		}
	}
	return true
}

// arrowCol is one column of a hand-built test stream.
type arrowCol struct {
	name string
	arr  arrow.Array
}

// writeStream writes one record batch per group of columns (all groups share the first
// group's schema) as an IPC stream.
func writeStream(t testing.TB, groups ...[]arrowCol) []byte {
	t.Helper()
	var fields []arrow.Field
	for _, c := range groups[0] {
		fields = append(fields, arrow.Field{Name: c.name, Type: c.arr.DataType(), Nullable: true})
	}
	sch := arrow.NewSchema(fields, nil)
	var buf bytes.Buffer
	w := ipc.NewWriter(&buf, ipc.WithSchema(sch))
	for _, g := range groups {
		arrs := make([]arrow.Array, len(g))
		for i, c := range g {
			arrs[i] = c.arr
		}
		rec := array.NewRecord(sch, arrs, int64(arrs[0].Len()))
		if err := w.Write(rec); err != nil {
			t.Fatal(err)
		}
		rec.Release()
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// Column constructors for test streams. A nil entry in a *Ptr slice is a null.
var testMem = memory.NewGoAllocator()

func strCol(vals ...*string) arrow.Array {
	b := array.NewStringBuilder(testMem)
	defer b.Release()
	for _, v := range vals {
		if v == nil {
			b.AppendNull()
		} else {
			b.Append(*v)
		}
	}
	return b.NewArray()
}

func strs(vals ...string) arrow.Array {
	ps := make([]*string, len(vals))
	for i := range vals {
		ps[i] = &vals[i]
	}
	return strCol(ps...)
}

// xCol builds fixed_size_list<elem>[dim] from rows; a nil row is a null list, and a NaN
// with payload 1 (nullCoord) is a null coordinate.
func xCol(elem arrow.DataType, dim int, rows ...[]float64) arrow.Array {
	b := array.NewFixedSizeListBuilder(testMem, int32(dim), elem)
	defer b.Release()
	for _, r := range rows {
		if r == nil {
			b.AppendNull()
			continue
		}
		b.Append(true)
		for _, v := range r {
			switch vb := b.ValueBuilder().(type) {
			case *array.Float64Builder:
				if math.Float64bits(v) == math.Float64bits(nullCoord) {
					vb.AppendNull()
				} else {
					vb.Append(v)
				}
			case *array.Float32Builder:
				if math.Float64bits(v) == math.Float64bits(nullCoord) {
					vb.AppendNull()
				} else {
					vb.Append(float32(v))
				}
			}
		}
	}
	return b.NewArray()
}

var nullCoord = math.Float64frombits(0x7ff80000000bad01)

func i64Col(vals ...*int64) arrow.Array {
	b := array.NewInt64Builder(testMem)
	defer b.Release()
	for _, v := range vals {
		if v == nil {
			b.AppendNull()
		} else {
			b.Append(*v)
		}
	}
	return b.NewArray()
}

func tsCol(unit arrow.TimeUnit, vals ...int64) arrow.Array {
	b := array.NewTimestampBuilder(testMem, &arrow.TimestampType{Unit: unit, TimeZone: "UTC"})
	defer b.Release()
	for _, v := range vals {
		b.Append(arrow.Timestamp(v))
	}
	return b.NewArray()
}

func boolCol(vals ...*bool) arrow.Array {
	b := array.NewBooleanBuilder(testMem)
	defer b.Release()
	for _, v := range vals {
		if v == nil {
			b.AppendNull()
		} else {
			b.Append(*v)
		}
	}
	return b.NewArray()
}

func ptr[T any](v T) *T { return &v }

func isInvalid(err error) bool {
	var ie *InvalidError
	return errors.As(err, &ie)
}
