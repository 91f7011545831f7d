package schema

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"

	"github.com/apache/arrow/go/v15/arrow"
)

func TestDecodeJSONValid(t *testing.T) {
	const rt = int64(1700000000000)
	opt := DecodeOptions{Dim: 2}
	tests := []struct {
		name  string
		key   string
		value string
		ct    string
		want  Batch
	}{
		{"full", "a", `{"set": "a", "points": [[0.1, 0.2], [0.3, 0.4]], "t": 1732000000123, "end": false}`, "",
			Batch{Set: "a", Points: []float64{0.1, 0.2, 0.3, 0.4}, N: 2, EventTime: 1732000000123}},
		{"key only", "k", `{"points":[[1,2]]}`, ContentTypeJSON,
			Batch{Set: "k", Points: []float64{1, 2}, N: 1, EventTime: rt}},
		{"set only", "", `{"set":"s","points":[[1,2]]}`, "application/json; charset=utf-8",
			Batch{Set: "s", Points: []float64{1, 2}, N: 1, EventTime: rt}},
		{"end marker without points", "a", `{"end":true}`, " Application/JSON ",
			Batch{Set: "a", EventTime: rt, End: true}},
		{"empty points", "a", `{"points":[],"end":true}`, "",
			Batch{Set: "a", EventTime: rt, End: true}},
		{"nulls mean absent", "a", `{"set":null,"points":null,"t":null,"end":null}`, "",
			Batch{Set: "a", EventTime: rt}},
		{"empty object", "a", `{}`, "", Batch{Set: "a", EventTime: rt}},
		{"whitespace everywhere", "a", " \n\t{ \"points\" : [ [ 1 , -2 ] ,\r\n[3e2,4E-1] ] , \"t\" : 0 } \n", "",
			Batch{Set: "a", Points: []float64{1, -2, 300, 0.4}, N: 2, EventTime: 0}},
		{"escaped set and key name", "é/\"x", `{"s\u0065t":"\u00e9\/\"x","points":[[0,0]]}`, "",
			Batch{Set: "é/\"x", Points: []float64{0, 0}, N: 1, EventTime: rt}},
		{"surrogate pair", "", `{"set":"\ud83d\ude00"}`, "", Batch{Set: "😀", EventTime: rt}},
		{"negative zero t", "a", `{"t":-0}`, "", Batch{Set: "a", EventTime: 0}},
		{"number forms", "a", `{"points":[[-0.0,1e-400],[123456789012345678901234567890,0.000001234]]}`, "",
			Batch{Set: "a", Points: []float64{math.Copysign(0, -1), 0, 1.2345678901234568e29, 1.234e-6}, N: 2, EventTime: rt}},
		{"end true", "a", `{"points":[[1,1]],"end":true}`, "",
			Batch{Set: "a", Points: []float64{1, 1}, N: 1, EventTime: rt, End: true}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := DecodeRecord([]byte(tc.key), []byte(tc.value), tc.ct, rt, opt)
			if err != nil {
				t.Fatalf("DecodeRecord: %v", err)
			}
			if !batchesEqual(got, []Batch{tc.want}) {
				t.Fatalf("got %+v, want %+v", got, tc.want)
			}
		})
	}
}

func TestDecodeJSONInvalid(t *testing.T) {
	long := strings.Repeat("x", 257)
	tests := []struct {
		name, key, value string
		opt              DecodeOptions
		reason           string
		detail           string // substring of the detail
	}{
		{"empty value", "a", ``, DecodeOptions{}, ReasonDecode, "empty"},
		{"not an object", "a", `[1,2]`, DecodeOptions{}, ReasonDecode, "object"},
		{"unknown field", "a", `{"points":[],"foo":1}`, DecodeOptions{}, ReasonDecode, `unknown field "foo"`},
		{"case-sensitive fields", "a", `{"Points":[]}`, DecodeOptions{}, ReasonDecode, "unknown field"},
		{"duplicate field", "a", `{"t":1,"t":2}`, DecodeOptions{}, ReasonDecode, "duplicate"},
		{"trailing data", "a", `{} {}`, DecodeOptions{}, ReasonDecode, "after the JSON object"},
		{"trailing comma in object", "a", `{"t":1,}`, DecodeOptions{}, ReasonDecode, "field name"},
		{"trailing comma in points", "a", `{"points":[[1,2],]}`, DecodeOptions{}, ReasonDecode, "points[1]"},
		{"trailing comma in point", "a", `{"points":[[1,2,]]}`, DecodeOptions{}, ReasonDecode, "points[0][2]"},
		{"unterminated", "a", `{"points":[[1,2]`, DecodeOptions{}, ReasonDecode, "points"},
		{"leading zero", "a", `{"points":[[01,2]]}`, DecodeOptions{}, ReasonDecode, "points[0]"},
		{"bare dot", "a", `{"points":[[.5,2]]}`, DecodeOptions{}, ReasonDecode, "points[0][0]"},
		{"dot without digits", "a", `{"points":[[1.,2]]}`, DecodeOptions{}, ReasonDecode, "points[0][0]"},
		{"plus sign", "a", `{"points":[[+1,2]]}`, DecodeOptions{}, ReasonDecode, "points[0][0]"},
		{"NaN literal", "a", `{"points":[[NaN,2]]}`, DecodeOptions{}, ReasonNonFinite, "points[0][0]: NaN is not a finite number"},
		{"Infinity literal", "a", `{"points":[[1,2],[3, Infinity ]]}`, DecodeOptions{}, ReasonNonFinite, "points[1][1]: Infinity"},
		{"-Infinity literal", "a", `{"points":[[-Infinity,2]]}`, DecodeOptions{}, ReasonNonFinite, "points[0][0]: -Infinity"},
		{"NaN-like word", "a", `{"points":[[NaNa,2]]}`, DecodeOptions{}, ReasonDecode, "points[0][0]: expected a number"},
		{"lowercase nan", "a", `{"points":[[nan,2]]}`, DecodeOptions{}, ReasonDecode, "points[0][0]: expected a number"},
		{"t after year 9999", "a", `{"t":253402300800000}`, DecodeOptions{}, ReasonDecode, "after 9999-12-31"},
		{"t at int64 max", "a", `{"t":9223372036854775807}`, DecodeOptions{}, ReasonDecode, "after 9999-12-31"},
		{"NUL in set", "", `{"set":"a\u0000b"}`, DecodeOptions{}, ReasonDecode, "control character U+0000"},
		{"newline in set", "", `{"set":"a\nb"}`, DecodeOptions{}, ReasonDecode, "control character U+000A"},
		{"C1 control in set", "", `{"set":"a\u0085"}`, DecodeOptions{}, ReasonDecode, "control character U+0085"},
		{"newline in key", "a\nb", `{}`, DecodeOptions{}, ReasonDecode, "record key: set ID"},
		{"NUL in key", "a\x00", `{}`, DecodeOptions{}, ReasonDecode, "control character U+0000"},
		{"DEL in key", "a\x7f", `{}`, DecodeOptions{}, ReasonDecode, "control character U+007F"},
		{"string coordinate", "a", `{"points":[["1",2]]}`, DecodeOptions{}, ReasonDecode, "points[0][0]"},
		{"flat points", "a", `{"points":[1,2]}`, DecodeOptions{}, ReasonDecode, "points[0]: expected an array"},
		{"points not array", "a", `{"points":{}}`, DecodeOptions{}, ReasonDecode, "points"},
		{"set not string", "a", `{"set":1}`, DecodeOptions{}, ReasonDecode, "set"},
		{"end not bool", "a", `{"end":1}`, DecodeOptions{}, ReasonDecode, "end"},
		{"t fraction", "a", `{"t":1.5}`, DecodeOptions{}, ReasonDecode, "integer"},
		{"t exponent", "a", `{"t":1e3}`, DecodeOptions{}, ReasonDecode, "integer"},
		{"t string", "a", `{"t":"1"}`, DecodeOptions{}, ReasonDecode, "t:"},
		{"t negative", "a", `{"t":-5}`, DecodeOptions{}, ReasonDecode, "negative"},
		{"t overflow", "a", `{"t":99999999999999999999}`, DecodeOptions{}, ReasonDecode, "out of range"},
		{"control char in set", "", "{\"set\":\"a\x01\"}", DecodeOptions{}, ReasonDecode, "control"},
		{"bad escape", "", `{"set":"\q"}`, DecodeOptions{}, ReasonDecode, "escape"},
		{"lone surrogate", "", `{"set":"\ud800x"}`, DecodeOptions{}, ReasonDecode, "surrogate"},
		{"invalid UTF-8 set", "", "{\"set\":\"\xff\"}", DecodeOptions{}, ReasonDecode, "UTF-8"},
		{"invalid UTF-8 key", "\xfe", `{}`, DecodeOptions{}, ReasonDecode, "UTF-8"},
		{"no set and no key", "", `{"points":[[1,2]]}`, DecodeOptions{}, ReasonDecode, "no set ID"},
		{"empty set and no key", "", `{"set":""}`, DecodeOptions{}, ReasonDecode, "empty set"},
		{"bad options", "a", `{}`, DecodeOptions{Dim: -1}, ReasonDecode, "dim"},
		{"unknown content type", "a", `{}`, DecodeOptions{}, ReasonDecode, "content-type"},

		{"too few coordinates", "a", `{"points":[[1,2],[3],[4,5]]}`, DecodeOptions{}, ReasonDim, "points[1]: got 1 coordinates, want 2"},
		{"too many coordinates", "a", `{"points":[[1,2],[3,4],[5,6],[7,8,9]]}`, DecodeOptions{}, ReasonDim, "points[3]: got 3 coordinates, want 2"},
		{"empty point", "a", `{"points":[[]]}`, DecodeOptions{}, ReasonDim, "points[0]: got 0 coordinates"},

		{"overflow", "a", `{"points":[[1,1e999]]}`, DecodeOptions{}, ReasonNonFinite, "points[0][1]: \"1e999\" overflows"},
		{"negative overflow", "a", `{"points":[[1,2],[-1.8e308,0]]}`, DecodeOptions{}, ReasonNonFinite, "points[1][0]"},

		{"set differs from key", "a", `{"set":"b"}`, DecodeOptions{}, ReasonSetMismatch, `set "b" does not match record key "a"`},
		{"empty set with key", "a", `{"set":""}`, DecodeOptions{}, ReasonDecode, "empty set"},

		{"too many points", "a", `{"points":[[1,2],[3,4],[5,6]]}`, DecodeOptions{MaxPoints: 2}, ReasonTooLarge, "more than 2 points"},
		{"set too long", "", `{"set":"` + long + `"}`, DecodeOptions{}, ReasonTooLarge, "257 bytes, max 256"},
		{"key too long", long, `{}`, DecodeOptions{}, ReasonTooLarge, "257 bytes"},
		{"set over custom limit", "", `{"set":"abcd"}`, DecodeOptions{MaxSetBytes: 3}, ReasonTooLarge, "max 3"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			opt := tc.opt
			if opt.Dim == 0 {
				opt.Dim = 2
			}
			ct := ""
			if tc.name == "unknown content type" {
				ct = "text/plain"
			}
			got, err := DecodeRecord([]byte(tc.key), []byte(tc.value), ct, 1, opt)
			ie := wantInvalid(t, err, tc.reason)
			if got != nil {
				t.Errorf("partial result %v returned with error", got)
			}
			if !strings.Contains(ie.Detail, tc.detail) {
				t.Errorf("detail %q does not contain %q", ie.Detail, tc.detail)
			}
			if ReasonOf(fmt.Errorf("wrapped: %w", err)) != tc.reason {
				t.Errorf("ReasonOf(wrapped) = %q", ReasonOf(err))
			}
		})
	}
}

func TestReasonOf(t *testing.T) {
	if got := ReasonOf(fmt.Errorf("plain")); got != ReasonDecode {
		t.Errorf("ReasonOf(plain) = %q, want decode", got)
	}
	err := fmt.Errorf("ctx: %w", &InvalidError{Reason: ReasonLate, Detail: "x"})
	if got := ReasonOf(err); got != ReasonLate {
		t.Errorf("ReasonOf = %q, want late", got)
	}
	if got := (&InvalidError{Reason: ReasonDim, Detail: "d"}).Error(); got != "dim: d" {
		t.Errorf("Error() = %q", got)
	}
}

// TestDecodeJSONNumbers checks the number parser against strconv.ParseFloat on many forms:
// it must be exact (bit-identical) on every valid JSON number.
func TestDecodeJSONNumbers(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	nums := []string{"0", "-0", "1", "-1", "0.5", "1e0", "1E+2", "1e-2", "123456789012345678",
		"1234567890123456789", "12345678901234567890", "9007199254740993", "9007199254740992",
		"0.1", "0.30000000000000004", "1e22", "1e23", "1.7976931348623157e308", "4.9e-324",
		"2.2250738585072014e-308", "0.000000000000000000000000000001", "100000000000000000000000",
		"1.00000000000000000000000000001", "7.0e-10", "123.456e-7", "0.9405090880450124"}
	for i := 0; i < 20000; i++ {
		var v float64
		switch i % 4 {
		case 0:
			v = rng.Float64()
		case 1:
			v = rng.NormFloat64() * math.Pow(10, float64(rng.IntN(40)-20))
		case 2:
			v = math.Float64frombits(rng.Uint64())
		case 3:
			v = float64(rng.IntN(1000000)) / 1000
		}
		if math.IsNaN(v) || math.IsInf(v, 0) {
			continue
		}
		nums = append(nums, strconv.FormatFloat(v, 'g', -1, 64), strconv.FormatFloat(v, 'e', rng.IntN(25), 64),
			strconv.FormatFloat(v, 'f', -1, 64))
	}
	for _, s := range nums {
		want, _ := strconv.ParseFloat(s, 64)
		d := jsonDecoder{b: []byte(s)}
		got, ok := d.number()
		if !ok || d.i != len(s) {
			t.Fatalf("number(%q): ok=%v consumed %d", s, ok, d.i)
		}
		if math.Float64bits(got) != math.Float64bits(want) {
			t.Fatalf("number(%q) = %v (%x), want %v (%x)", s, got, math.Float64bits(got), want, math.Float64bits(want))
		}
	}
}

func TestJSONRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, dim := range []int{1, 2, 3, 7} {
		for _, n := range []int{0, 1, 5, 300} {
			b := randomBatch(rng, "set-\"é\"\\/\u2028<&>", n, dim, int64(rng.IntN(1<<40)), n%2 == 0)
			// Exercise extreme magnitudes too.
			if n > 2 {
				b.Points[0], b.Points[1] = 1e-300, -math.MaxFloat64
			}
			data, err := EncodeJSON(b)
			if err != nil {
				t.Fatal(err)
			}
			if !json.Valid(data) {
				t.Fatalf("EncodeJSON produced invalid JSON: %s", data)
			}
			got, err := DecodeRecord(nil, data, "", 0, DecodeOptions{Dim: dim})
			if err != nil {
				t.Fatalf("dim %d n %d: %v\n%s", dim, n, err, data)
			}
			if !batchesEqual(got, []Batch{b}) {
				t.Fatalf("dim %d n %d: round trip changed the batch", dim, n)
			}
		}
	}
	// Without a set the key names it.
	data, err := EncodeJSON(Batch{Points: []float64{1, 2}, N: 1, EventTime: 5})
	if err != nil {
		t.Fatal(err)
	}
	got, err := DecodeRecord([]byte("k"), data, "", 0, DecodeOptions{Dim: 2})
	if err != nil || got[0].Set != "k" {
		t.Fatalf("got %v, %v", got, err)
	}
}

func TestEncodeJSONInvalid(t *testing.T) {
	tests := []struct {
		name   string
		b      Batch
		reason string
	}{
		{"ragged", Batch{Set: "a", Points: []float64{1, 2, 3}, N: 2}, ReasonDim},
		{"points without N", Batch{Set: "a", Points: []float64{1}}, ReasonDim},
		{"N without points", Batch{Set: "a", N: 2}, ReasonDim},
		{"NaN", Batch{Set: "a", Points: []float64{1, math.NaN()}, N: 1}, ReasonNonFinite},
		{"Inf", Batch{Set: "a", Points: []float64{math.Inf(-1)}, N: 1}, ReasonNonFinite},
		{"bad UTF-8", Batch{Set: "\xff"}, ReasonDecode},
		{"negative time", Batch{Set: "a", EventTime: -1}, ReasonDecode},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := EncodeJSON(tc.b)
			wantInvalid(t, err, tc.reason)
		})
	}
}

// TestDecodeJSONAllocationBound checks the documented bound: a record claiming many points
// cannot make the decoder allocate much more than its own size.
func TestDecodeJSONAllocationBound(t *testing.T) {
	opt := DecodeOptions{Dim: 2, MaxPoints: 1 << 30}
	for _, value := range []string{
		`{"points":[[` + strings.Repeat("[", 1000),
		`{"points":[` + strings.Repeat("[0,0],", 10000) + `[1e999,0]]}`,
		`{"points":[` + strings.Repeat("[0", 10000),
	} {
		allocs := bytesAllocated(func() { _, _ = DecodeRecord([]byte("k"), []byte(value), "", 0, opt) })
		if limit := uint64(jsonAllocFactor*len(value) + allocSlack); allocs > limit {
			t.Errorf("decoding %d bytes allocated %d bytes, limit %d", len(value), allocs, limit)
		}
	}
}

// TestDecodeJSONEdgesAccepted: the limits of the t and set-ID rules are inclusive and
// printable non-ASCII set IDs pass.
func TestDecodeJSONEdgesAccepted(t *testing.T) {
	for _, v := range []string{
		`{"t":253402300799999}`,
		`{"set":"ключ \u2028 € 🙂","points":[[1,2]]}`,
		`{"set":"a b~","t":0}`,
	} {
		got, err := DecodeRecord(nil, []byte(v), "", 1, DecodeOptions{Dim: 2, MaxSetBytes: 0})
		if v == `{"t":253402300799999}` {
			got, err = DecodeRecord([]byte("k"), []byte(v), "", 1, DecodeOptions{Dim: 2})
		}
		if err != nil || len(got) != 1 {
			t.Errorf("%s: %v", v, err)
		}
	}
}

// TestDecodeRecordTimeFallback: a record without its own t takes its Kafka timestamp as the
// event time, which must then be a valid event time like a t ([0, MaxEventTime]); with a t
// (or t null in Arrow, which means absent) the same rule applies to whichever is used.
func TestDecodeRecordTimeFallback(t *testing.T) {
	f64 := arrow.PrimitiveTypes.Float64
	arrowNoT := writeStream(t, []arrowCol{{"set", strs("a")}, {"x", xCol(f64, 2, []float64{0.1, 0.2})}})
	arrowT := writeStream(t, []arrowCol{{"set", strs("a")}, {"x", xCol(f64, 2, []float64{0.1, 0.2})}, {"t", i64Col(ptr[int64](7))}})
	arrowNullT := writeStream(t, []arrowCol{{"set", strs("a")}, {"x", xCol(f64, 2, []float64{0.1, 0.2})}, {"t", i64Col(nil)}})
	for _, tc := range []struct {
		name        string
		contentType string
		value       []byte
		recordTime  int64
		want        int64 // event time; -1: a decode error
	}{
		{"json, no t, timestamp", ContentTypeJSON, []byte(`{"points":[[0.1,0.2]]}`), 1732000000000, 1732000000000},
		{"json, no t, timestamp 0", ContentTypeJSON, []byte(`{"points":[[0.1,0.2]]}`), 0, 0},
		{"json, no t, negative timestamp", ContentTypeJSON, []byte(`{"points":[[0.1,0.2]]}`), -1, -1},
		{"json, no t, timestamp after 9999", ContentTypeJSON, []byte(`{"points":[[0.1,0.2]]}`), MaxEventTime + 1, -1},
		{"json, t null, negative timestamp", ContentTypeJSON, []byte(`{"points":[[0.1,0.2]],"t":null}`), -1, -1},
		{"json, t, negative timestamp", ContentTypeJSON, []byte(`{"points":[[0.1,0.2]],"t":7}`), -1, 7},
		{"arrow, no t, timestamp", ContentTypeArrow, arrowNoT, 1732000000000, 1732000000000},
		{"arrow, no t, negative timestamp", ContentTypeArrow, arrowNoT, -1, -1},
		{"arrow, t null, timestamp after 9999", ContentTypeArrow, arrowNullT, MaxEventTime + 1, -1},
		{"arrow, t, negative timestamp", ContentTypeArrow, arrowT, -1, 7},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := DecodeRecord([]byte("a"), tc.value, tc.contentType, tc.recordTime, DecodeOptions{Dim: 2})
			if tc.want < 0 {
				ie := wantInvalid(t, err, ReasonDecode)
				if !strings.Contains(ie.Detail, "no event time") || !strings.Contains(ie.Detail, "Kafka record timestamp") {
					t.Errorf("detail %q does not explain the missing event time", ie.Detail)
				}
				return
			}
			if err != nil || len(got) != 1 || got[0].EventTime != tc.want {
				t.Fatalf("got %+v, %v; want one batch at event time %d", got, err, tc.want)
			}
		})
	}
}

// TestDecodeJSONOtherFields: with DecodeOptions.OtherField (set files), top-level fields
// other than set, points, t and end are skipped and named, whatever valid JSON they hold;
// their values must still be valid JSON, and without the option they stay decode errors.
func TestDecodeJSONOtherFields(t *testing.T) {
	tests := []struct {
		name, value string
		want        []string // the fields reported; nil with wantErr
		wantErr     string
	}{
		{"labels and ids", `{"digit":7,"set":"k","id":"x-1","points":[[1,2]],"meta":{"a":[1,{"b":null}]},"end":true}`, []string{"digit", "id", "meta"}, ""},
		{"string with brace", `{"note":"}{,\"","points":[[1,2]]}`, []string{"note"}, ""},
		{"last field", `{"points":[[1,2]],"w":-1.5e3}`, []string{"w"}, ""},
		{"repeated", `{"x":1,"x":true,"points":[[1,2]]}`, []string{"x", "x"}, ""},
		{"invalid value", `{"x":[1,,2],"points":[[1,2]]}`, nil, `field "x"`},
		{"unquoted value", `{"x":abc,"points":[[1,2]]}`, nil, `field "x"`},
		{"truncated", `{"x":[1,2`, nil, `field "x"`},
		{"known field still strict", `{"x":1,"points":[[1]]}`, nil, "dim"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			opt := DecodeOptions{Dim: 2, OtherField: func(n string) { got = append(got, n) }}
			bs, err := DecodeRecord([]byte("k"), []byte(tc.value), ContentTypeJSON, 0, opt)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err %v, want one containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(bs) != 1 || bs[0].N != 1 || bs[0].Points[0] != 1 || bs[0].Points[1] != 2 {
				t.Errorf("batches %+v, want one point (1, 2)", bs)
			}
			if fmt.Sprint(got) != fmt.Sprint(tc.want) {
				t.Errorf("reported %q, want %q", got, tc.want)
			}
			if _, err := DecodeRecord([]byte("k"), []byte(tc.value), ContentTypeJSON, 0, DecodeOptions{Dim: 2}); err == nil || !strings.Contains(err.Error(), "unknown field") {
				t.Errorf("without OtherField: %v, want an unknown field error", err)
			}
		})
	}
}
