package schema

import (
	"bytes"
	"encoding/binary"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/array"
	"github.com/apache/arrow/go/v15/arrow/ipc"
)

func TestArrowRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	tests := []struct {
		name    string
		key     string
		batches []Batch
	}{
		{"empty", "", nil},
		{"one set", "a", []Batch{randomBatch(rng, "a", 10, 2, 100, true)}},
		{"several sets", "", []Batch{
			randomBatch(rng, "a", 3, 2, 100, false),
			randomBatch(rng, "b", 1, 2, 100, true),
			randomBatch(rng, "a", 4, 2, 101, false),
			randomBatch(rng, "a", 2, 2, 102, true),
			randomBatch(rng, "a", 2, 2, 102, true), // same set and time: split by the end before it
			randomBatch(rng, "é", 5, 2, 0, false),
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			data, err := EncodeArrow(2, tc.batches)
			if err != nil {
				t.Fatal(err)
			}
			got, err := DecodeRecord([]byte(tc.key), data, ContentTypeArrow, 7, DecodeOptions{Dim: 2})
			if err != nil {
				t.Fatal(err)
			}
			if !batchesEqual(got, tc.batches) {
				t.Fatalf("got %+v\nwant %+v", got, tc.batches)
			}
		})
	}
}

func TestArrowRoundTripDims(t *testing.T) {
	rng := rand.New(rand.NewPCG(8, 9))
	for _, dim := range []int{1, 3, 16} {
		in := []Batch{randomBatch(rng, "a", 7, dim, 1, false), randomBatch(rng, "b", 2, dim, 1, true)}
		data, err := EncodeArrow(dim, in)
		if err != nil {
			t.Fatal(err)
		}
		got, err := DecodeRecord(nil, data, ContentTypeArrow+"; x=y", 0, DecodeOptions{Dim: dim})
		if err != nil {
			t.Fatal(err)
		}
		if !batchesEqual(got, in) {
			t.Fatalf("dim %d: round trip changed the batches", dim)
		}
	}
}

// TestArrowMergesAdjacentBatches documents the one way EncodeArrow→DecodeRecord is not the
// identity: runs are maximal.
func TestArrowMergesAdjacentBatches(t *testing.T) {
	in := []Batch{
		{Set: "a", Points: []float64{1, 2}, N: 1, EventTime: 5},
		{Set: "a", Points: []float64{3, 4}, N: 1, EventTime: 5, End: true},
	}
	data, err := EncodeArrow(2, in)
	if err != nil {
		t.Fatal(err)
	}
	got, err := DecodeRecord(nil, data, ContentTypeArrow, 0, DecodeOptions{Dim: 2})
	if err != nil {
		t.Fatal(err)
	}
	want := []Batch{{Set: "a", Points: []float64{1, 2, 3, 4}, N: 2, EventTime: 5, End: true}}
	if !batchesEqual(got, want) {
		t.Fatalf("got %+v, want %+v", got, want)
	}
}

func TestDecodeArrowColumns(t *testing.T) {
	const rt = int64(999)
	f32 := arrow.PrimitiveTypes.Float32
	f64 := arrow.PrimitiveTypes.Float64
	tests := []struct {
		name   string
		key    string
		groups [][]arrowCol
		want   []Batch
	}{
		{"float32 x without t and end", "", [][]arrowCol{{
			{"x", xCol(f32, 2, []float64{0.5, 0.25}, []float64{1, 2})},
			{"set", strs("a", "a")},
		}}, []Batch{{Set: "a", Points: []float64{0.5, 0.25, 1, 2}, N: 2, EventTime: rt}}},
		{"float64 x with key", "a", [][]arrowCol{{
			{"set", strs("a", "a")},
			{"x", xCol(f64, 2, []float64{0.1, 0.2}, []float64{0.3, 0.4})},
		}}, []Batch{{Set: "a", Points: []float64{0.1, 0.2, 0.3, 0.4}, N: 2, EventTime: rt}}},
		{"int64 t splits runs, null t is record time", "", [][]arrowCol{{
			{"set", strs("a", "a", "a", "a")},
			{"x", xCol(f64, 1, []float64{1}, []float64{2}, []float64{3}, []float64{4})},
			{"t", i64Col(ptr[int64](10), ptr[int64](10), ptr[int64](11), nil)},
		}}, []Batch{
			{Set: "a", Points: []float64{1, 2}, N: 2, EventTime: 10},
			{Set: "a", Points: []float64{3}, N: 1, EventTime: 11},
			{Set: "a", Points: []float64{4}, N: 1, EventTime: rt},
		}},
		{"end closes a run; null end is false", "", [][]arrowCol{{
			{"set", strs("a", "a", "a", "b", "b")},
			{"x", xCol(f64, 1, []float64{1}, []float64{2}, []float64{3}, []float64{4}, []float64{5})},
			{"end", boolCol(ptr(false), ptr(true), nil, ptr(true), ptr(false))},
		}}, []Batch{
			{Set: "a", Points: []float64{1, 2}, N: 2, EventTime: rt, End: true},
			{Set: "a", Points: []float64{3}, N: 1, EventTime: rt},
			{Set: "b", Points: []float64{4}, N: 1, EventTime: rt, End: true},
			{Set: "b", Points: []float64{5}, N: 1, EventTime: rt},
		}},
		{"runs continue across record batches", "", [][]arrowCol{
			{{"set", strs("a", "b")}, {"x", xCol(f64, 1, []float64{1}, []float64{2})}},
			{{"set", strs("b", "b")}, {"x", xCol(f64, 1, []float64{3}, []float64{4})}},
			{{"set", strs()}, {"x", xCol(f64, 1)}},
			{{"set", strs("a")}, {"x", xCol(f64, 1, []float64{5})}},
		}, []Batch{
			{Set: "a", Points: []float64{1}, N: 1, EventTime: rt},
			{Set: "b", Points: []float64{2, 3, 4}, N: 3, EventTime: rt},
			{Set: "a", Points: []float64{5}, N: 1, EventTime: rt},
		}},
	}
	for _, unit := range []struct {
		u     arrow.TimeUnit
		scale int64
	}{{arrow.Second, 1}, {arrow.Millisecond, 1000}, {arrow.Microsecond, 1000000}, {arrow.Nanosecond, 1000000000}} {
		// 1732000000.123456789 s, truncated to the unit, floored to ms.
		v := int64(1732000000123456789) / (1000000000 / unit.scale)
		want := int64(1732000000000)
		if unit.scale > 1 {
			want = 1732000000123
		}
		tests = append(tests, struct {
			name   string
			key    string
			groups [][]arrowCol
			want   []Batch
		}{"timestamp " + unit.u.String(), "", [][]arrowCol{{
			{"set", strs("a")}, {"x", xCol(f64, 1, []float64{1})}, {"t", tsCol(unit.u, v)},
		}}, []Batch{{Set: "a", Points: []float64{1}, N: 1, EventTime: want}}})
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			data := writeStream(t, tc.groups...)
			d := 0
			for _, c := range tc.groups[0] {
				if c.name == "x" {
					d = int(c.arr.DataType().(*arrow.FixedSizeListType).Len())
				}
			}
			got, err := DecodeRecord([]byte(tc.key), data, ContentTypeArrow, rt, DecodeOptions{Dim: d})
			if err != nil {
				t.Fatal(err)
			}
			if !batchesEqual(got, tc.want) {
				t.Fatalf("got %+v\nwant %+v", got, tc.want)
			}
		})
	}
}

func TestDecodeArrowInvalid(t *testing.T) {
	f64 := arrow.PrimitiveTypes.Float64
	okX := func(n int) arrow.Array {
		rows := make([][]float64, n)
		for i := range rows {
			rows[i] = []float64{float64(i), 0}
		}
		return xCol(f64, 2, rows...)
	}
	valid := writeStream(t, []arrowCol{{"set", strs("a", "a")}, {"x", okX(2)}})
	var lz4 bytes.Buffer
	{
		sch := arrow.NewSchema([]arrow.Field{{Name: "set", Type: arrow.BinaryTypes.String}, {Name: "x", Type: arrow.FixedSizeListOf(2, f64)}}, nil)
		w := ipc.NewWriter(&lz4, ipc.WithSchema(sch), ipc.WithLZ4())
		rec := array.NewRecord(sch, []arrow.Array{strs("a"), okX(1)}, 1)
		if err := w.Write(rec); err != nil {
			t.Fatal(err)
		}
		_ = w.Close()
	}
	dictSet := func() arrow.Array {
		b := array.NewDictionaryBuilder(testMem, &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int8, ValueType: arrow.BinaryTypes.String})
		defer b.Release()
		_ = b.(*array.BinaryDictionaryBuilder).AppendString("a")
		return b.NewArray()
	}
	hugeMeta := []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f, 1, 2, 3}

	tests := []struct {
		name   string
		key    string
		value  []byte
		opt    DecodeOptions
		reason string
		detail string
	}{
		{"empty value", "", nil, DecodeOptions{}, ReasonDecode, "arrow"},
		{"JSON sent as arrow", "", []byte(`{"points":[]}`), DecodeOptions{}, ReasonDecode, "arrow"},
		{"huge metadata length", "", hugeMeta, DecodeOptions{}, ReasonDecode, "metadata length"},
		{"truncated", "", valid[:len(valid)-20], DecodeOptions{}, ReasonDecode, "arrow"},
		{"trailing bytes", "", append(append([]byte{}, valid...), 0, 0, 0, 0), DecodeOptions{}, ReasonDecode, "after the end-of-stream"},
		{"compressed", "", lz4.Bytes(), DecodeOptions{}, ReasonDecode, "compressed"},
		{"dictionary set", "", writeStream(t, []arrowCol{{"set", dictSet()}, {"x", okX(1)}}), DecodeOptions{}, ReasonDecode, "dictionary"},
		{"missing set", "", writeStream(t, []arrowCol{{"x", okX(1)}}), DecodeOptions{}, ReasonDecode, "missing column set"},
		{"missing x", "", writeStream(t, []arrowCol{{"set", strs("a")}}), DecodeOptions{}, ReasonDecode, "missing column x"},
		{"unknown column", "", writeStream(t, []arrowCol{{"set", strs("a")}, {"x", okX(1)}, {"time", i64Col(ptr[int64](1))}}), DecodeOptions{}, ReasonDecode, `unknown column "time"`},
		{"duplicate column", "", writeStream(t, []arrowCol{{"set", strs("a")}, {"x", okX(1)}, {"set", strs("a")}}), DecodeOptions{}, ReasonDecode, "duplicate column set"},
		{"set not utf8", "", writeStream(t, []arrowCol{{"set", i64Col(ptr[int64](1))}, {"x", okX(1)}}), DecodeOptions{}, ReasonDecode, "column set has type int64"},
		{"x not a list", "", writeStream(t, []arrowCol{{"set", strs("a")}, {"x", i64Col(ptr[int64](1))}}), DecodeOptions{}, ReasonDecode, "column x has type"},
		{"x of int64", "", writeStream(t, []arrowCol{{"set", strs("a")}, {"x", func() arrow.Array {
			b := array.NewFixedSizeListBuilder(testMem, 2, arrow.PrimitiveTypes.Int64)
			defer b.Release()
			b.Append(true)
			b.ValueBuilder().(*array.Int64Builder).AppendValues([]int64{1, 2}, nil)
			return b.NewArray()
		}()}}), DecodeOptions{}, ReasonDecode, "element type int64"},
		{"t of float", "", writeStream(t, []arrowCol{{"set", strs("a")}, {"x", okX(1)}, {"t", xCol(f64, 1, []float64{1})}}), DecodeOptions{}, ReasonDecode, "column t has type"},
		{"end of int", "", writeStream(t, []arrowCol{{"set", strs("a")}, {"x", okX(1)}, {"end", i64Col(ptr[int64](1))}}), DecodeOptions{}, ReasonDecode, "column end has type"},
		{"null set", "", writeStream(t, []arrowCol{{"set", strCol(ptr("a"), nil)}, {"x", okX(2)}}), DecodeOptions{}, ReasonDecode, "row 1: set is null"},
		{"empty set", "", writeStream(t, []arrowCol{{"set", strs("a", "")}, {"x", okX(2)}}), DecodeOptions{}, ReasonDecode, "row 1: empty set"},
		{"invalid UTF-8 set", "", writeStream(t, []arrowCol{{"set", strs("\xff")}, {"x", okX(1)}}), DecodeOptions{}, ReasonDecode, "UTF-8"},
		{"null x", "", writeStream(t, []arrowCol{{"set", strs("a", "a")}, {"x", xCol(f64, 2, []float64{1, 2}, nil)}}), DecodeOptions{}, ReasonDecode, "row 1: x is null"},
		{"null coordinate", "", writeStream(t, []arrowCol{{"set", strs("a")}, {"x", xCol(f64, 2, []float64{1, nullCoord})}}), DecodeOptions{}, ReasonDecode, "row 0: x[1] is null"},
		{"negative t", "", writeStream(t, []arrowCol{{"set", strs("a")}, {"x", okX(1)}, {"t", i64Col(ptr[int64](-1))}}), DecodeOptions{}, ReasonDecode, "negative"},
		{"t after year 9999", "", writeStream(t, []arrowCol{{"set", strs("a")}, {"x", okX(1)}, {"t", i64Col(ptr[int64](MaxEventTime + 1))}}), DecodeOptions{}, ReasonDecode, "after 9999-12-31"},
		{"t at int64 max", "", writeStream(t, []arrowCol{{"set", strs("a")}, {"x", okX(1)}, {"t", i64Col(ptr[int64](math.MaxInt64))}}), DecodeOptions{}, ReasonDecode, "after 9999-12-31"},
		{"NUL in set", "", writeStream(t, []arrowCol{{"set", strs("a\x00")}, {"x", okX(1)}}), DecodeOptions{}, ReasonDecode, "control character U+0000"},
		{"newline in set", "", writeStream(t, []arrowCol{{"set", strs("a", "a\n")}, {"x", okX(2)}}), DecodeOptions{}, ReasonDecode, "row 1: set ID"},
		{"t seconds overflow", "", writeStream(t, []arrowCol{{"set", strs("a")}, {"x", okX(1)}, {"t", tsCol(arrow.Second, math.MaxInt64/10)}}), DecodeOptions{}, ReasonDecode, "out of range"},

		{"list size", "", writeStream(t, []arrowCol{{"set", strs("a")}, {"x", xCol(f64, 3, []float64{1, 2, 3})}}), DecodeOptions{}, ReasonDim, "list size 3, want 2"},

		{"NaN", "", writeStream(t, []arrowCol{{"set", strs("a", "a")}, {"x", xCol(f64, 2, []float64{1, 2}, []float64{3, math.NaN()})}}), DecodeOptions{}, ReasonNonFinite, "row 1: x[1] is NaN"},
		{"Inf float32", "", writeStream(t, []arrowCol{{"set", strs("a")}, {"x", xCol(arrow.PrimitiveTypes.Float32, 2, []float64{math.Inf(1), 2})}}), DecodeOptions{}, ReasonNonFinite, "row 0: x[0] is +Inf"},

		{"set differs from key", "a", writeStream(t, []arrowCol{{"set", strs("a", "b")}, {"x", okX(2)}}), DecodeOptions{}, ReasonSetMismatch, `row 1: set "b" does not match record key "a"`},

		{"too many rows", "", valid, DecodeOptions{MaxPoints: 1}, ReasonTooLarge, "more than 1 points"},
		{"too many rows over batches", "", writeStream(t,
			[]arrowCol{{"set", strs("a", "a")}, {"x", okX(2)}},
			[]arrowCol{{"set", strs("a", "a")}, {"x", okX(2)}}), DecodeOptions{MaxPoints: 3}, ReasonTooLarge, "more than 3 points"},
		{"set too long", "", writeStream(t, []arrowCol{{"set", strs(strings.Repeat("s", 300))}, {"x", okX(1)}}), DecodeOptions{}, ReasonTooLarge, "300 bytes, max 256"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			opt := tc.opt
			opt.Dim = 2
			got, err := DecodeRecord([]byte(tc.key), tc.value, ContentTypeArrow, 0, opt)
			ie := wantInvalid(t, err, tc.reason)
			if got != nil {
				t.Errorf("partial result returned with error")
			}
			if !strings.Contains(ie.Detail, tc.detail) {
				t.Errorf("detail %q does not contain %q", ie.Detail, tc.detail)
			}
		})
	}
}

func TestEncodeArrowInvalid(t *testing.T) {
	tests := []struct {
		name    string
		dim     int
		batches []Batch
		reason  string
	}{
		{"dim", 0, nil, ReasonDim},
		{"ragged", 2, []Batch{{Set: "a", Points: []float64{1}, N: 1}}, ReasonDim},
		{"empty set", 1, []Batch{{Points: []float64{1}, N: 1}}, ReasonDecode},
		{"end marker without points", 1, []Batch{{Set: "a", End: true}}, ReasonDecode},
		{"NaN", 1, []Batch{{Set: "a", Points: []float64{math.NaN()}, N: 1}}, ReasonNonFinite},
		{"control character in set", 1, []Batch{{Set: "a\tb", Points: []float64{1}, N: 1}}, ReasonDecode},
		{"t after year 9999", 1, []Batch{{Set: "a", Points: []float64{1}, N: 1, EventTime: MaxEventTime + 1}}, ReasonDecode},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := EncodeArrow(tc.dim, tc.batches)
			wantInvalid(t, err, tc.reason)
		})
	}
	// A batch without points and without end carries nothing and is skipped.
	data, err := EncodeArrow(1, []Batch{{Set: "a"}, {Set: "b", Points: []float64{1}, N: 1}})
	if err != nil {
		t.Fatal(err)
	}
	got, err := DecodeRecord(nil, data, ContentTypeArrow, 0, DecodeOptions{Dim: 1})
	if err != nil || len(got) != 1 || got[0].Set != "b" {
		t.Fatalf("got %+v, %v", got, err)
	}
}

// TestDecodeArrowHostileSizes checks that lengths in the stream are checked against the
// bytes present before anything is allocated for them.
func TestDecodeArrowHostileSizes(t *testing.T) {
	valid := writeStream(t, []arrowCol{{"set", strs("a")}, {"x", xCol(arrow.PrimitiveTypes.Float64, 2, []float64{1, 2})}})
	// Patch every 8-byte little-endian word of the stream with huge values one at a time:
	// this hits the body length, buffer offsets and lengths, and row and null counts.
	for off := 0; off+8 <= len(valid); off += 8 {
		for _, v := range []uint64{1 << 40, 1<<63 - 1, 1 << 31, 0xFFFFFFFF} {
			data := append([]byte(nil), valid...)
			binary.LittleEndian.PutUint64(data[off:], v)
			var err error
			allocs := bytesAllocated(func() {
				_, err = DecodeRecord(nil, data, ContentTypeArrow, 0, DecodeOptions{Dim: 2})
			})
			if err != nil && !isInvalid(err) {
				t.Fatalf("offset %d: error %v is not an *InvalidError", off, err)
			}
			if limit := uint64(arrowAllocFactor*len(data) + allocSlack); allocs > limit {
				t.Fatalf("offset %d value %#x: allocated %d bytes, limit %d", off, v, allocs, limit)
			}
		}
	}
}

// cyclicSchemaStream is a 136-byte IPC stream whose schema message has a fixed_size_list
// field whose children vector contains the field itself (a flatbuffers offset that wraps
// around 2^32 to point backwards). The arrow library's reader recurses on it until the
// goroutine stack overflows, a fatal error that recover cannot catch.
func cyclicSchemaStream() []byte {
	m := make([]byte, 120)
	u16 := func(p int, v uint16) { binary.LittleEndian.PutUint16(m[p:], v) }
	u32 := func(p int, v uint32) { binary.LittleEndian.PutUint32(m[p:], v) }
	u32(0, 16) // root: Message table at 16
	// Message vtable at 4: 4 slots (version, header_type, header, bodyLength).
	u16(4, 12)
	u16(6, 20)
	u16(8, 4)
	u16(10, 6)
	u16(12, 8)
	u16(14, 12)
	u32(16, 12) // Message table: vtable 12 bytes back
	u16(20, 4)  // version V5
	m[22] = 1   // header_type Schema
	u32(24, 20) // header → Schema table at 44
	// Schema vtable at 36: slots endianness (absent), fields.
	u16(36, 8)
	u16(38, 8)
	u16(42, 4)
	u32(44, 8) // Schema table
	u32(48, 4) // fields → vector at 52
	u32(52, 1) // one field
	u32(56, 20)
	// Field vtable at 60: name, nullable, type_type, type, dictionary, children.
	u16(60, 16)
	u16(62, 20)
	u16(64, 4)
	u16(68, 8)
	u16(70, 12)
	u16(74, 16)
	u32(76, 16) // Field table at 76
	u32(80, 32) // name → string at 112
	m[84] = 16  // type_type FixedSizeList
	u32(88, 16) // type → table at 104
	back := int32(52 - 92)
	u32(92, uint32(back)) // children → the vector at 52, which holds this field
	// FixedSizeList vtable at 96 and table at 104 (listSize 2).
	u16(96, 6)
	u16(98, 8)
	u16(100, 4)
	u32(104, 8)
	u32(108, 2)
	u32(112, 1) // name "x"
	m[116] = 'x'
	out := []byte{0xff, 0xff, 0xff, 0xff, 120, 0, 0, 0}
	out = append(out, m...)
	return append(out, 0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0)
}

func TestDecodeArrowCyclicSchema(t *testing.T) {
	data := cyclicSchemaStream()
	_, err := DecodeRecord(nil, data, ContentTypeArrow, 0, DecodeOptions{Dim: 2})
	wantInvalid(t, err, ReasonDecode)
	_, _, err = DecodeFeatures(data)
	wantInvalid(t, err, ReasonDecode)
}

// TestDecodeArrowRunsModel compares the run splitting with a direct model of the rules on
// random streams: a new batch starts at row 0, when the set or the event time changes, and
// after a row with end=true; batches keep row order across record batches.
func TestDecodeArrowRunsModel(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 22))
	const rt = 500
	for iter := 0; iter < 200; iter++ {
		elem := arrow.PrimitiveTypes.Float64
		if iter%2 == 1 {
			elem = arrow.PrimitiveTypes.Float32
		}
		var (
			groups [][]arrowCol
			want   []Batch
			prev   *Batch
		)
		for g := rng.IntN(4); g >= 0; g-- {
			n := rng.IntN(6)
			var (
				sets []string
				xs   [][]float64
				ts   []*int64
				ends []*bool
			)
			for r := 0; r < n; r++ {
				set := []string{"a", "b"}[rng.IntN(2)]
				x := []float64{float64(rng.IntN(100)) / 4, float64(rng.IntN(100)) / 8}
				var tp *int64
				tv := int64(rt)
				if rng.IntN(3) > 0 {
					tv = int64(rng.IntN(2))
					tp = &tv
				}
				var ep *bool
				end := false
				if rng.IntN(3) > 0 {
					end = rng.IntN(3) == 0
					ep = &end
				}
				sets, xs, ts, ends = append(sets, set), append(xs, x), append(ts, tp), append(ends, ep)
				if prev == nil || prev.End || prev.Set != set || prev.EventTime != tv {
					want = append(want, Batch{Set: set, EventTime: tv})
					prev = &want[len(want)-1]
				}
				prev.Points = append(prev.Points, x...)
				prev.N++
				prev.End = end
			}
			groups = append(groups, []arrowCol{{"set", strs(sets...)}, {"x", xCol(elem, 2, xs...)},
				{"t", i64Col(ts...)}, {"end", boolCol(ends...)}})
		}
		got, err := DecodeRecord(nil, writeStream(t, groups...), ContentTypeArrow, rt, DecodeOptions{Dim: 2})
		if err != nil {
			t.Fatal(err)
		}
		if !batchesEqual(got, want) {
			t.Fatalf("iteration %d:\ngot  %+v\nwant %+v", iter, got, want)
		}
	}
}
