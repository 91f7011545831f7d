package schema

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/apache/arrow/go/v15/arrow"

	"github.com/distfeat/distfeat/embedding"
)

// Options of the fuzzers: small limits so that the too_large paths are reachable.
var fuzzOpt = DecodeOptions{Dim: 2, MaxPoints: 1000, MaxSetBytes: 16}

const fuzzRecordTime = 1

var reasons = map[string]bool{ReasonDecode: true, ReasonDim: true, ReasonNonFinite: true,
	ReasonSetMismatch: true, ReasonTooLarge: true}

// checkDecoded asserts DecodeRecord's contract on one result.
func checkDecoded(t *testing.T, key []byte, bs []Batch, err error, opt DecodeOptions) {
	t.Helper()
	if err != nil {
		var ie *InvalidError
		if !errors.As(err, &ie) || err != error(ie) {
			t.Fatalf("error %v (%T) is not an *InvalidError", err, err)
		}
		if !reasons[ie.Reason] || ie.Detail == "" || !utf8.ValidString(ie.Detail) || len(ie.Detail) > 1024 {
			t.Fatalf("bad InvalidError %+v", ie)
		}
		if bs != nil {
			t.Fatalf("partial result with error %v", err)
		}
		return
	}
	total := 0
	for i, b := range bs {
		if b.N < 0 || len(b.Points) != b.N*opt.Dim {
			t.Fatalf("batch %d: N=%d, %d coordinates", i, b.N, len(b.Points))
		}
		for j, v := range b.Points {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				t.Fatalf("batch %d: coordinate %d is %v", i, j, v)
			}
		}
		if b.Set == "" || len(b.Set) > opt.MaxSetBytes || !utf8.ValidString(b.Set) {
			t.Fatalf("batch %d: bad set %q", i, b.Set)
		}
		if len(key) > 0 && b.Set != string(key) {
			t.Fatalf("batch %d: set %q differs from key %q", i, b.Set, key)
		}
		if b.EventTime < 0 {
			t.Fatalf("batch %d: negative event time %d", i, b.EventTime)
		}
		total += b.N
	}
	if total > opt.MaxPoints {
		t.Fatalf("%d points, max %d", total, opt.MaxPoints)
	}
}

// checkAllocs asserts the allocation bound documented in alloc_test.go.
func checkAllocs(t *testing.T, allocated uint64, n, factor int) {
	t.Helper()
	if limit := uint64(factor*n + allocSlack); allocated > limit {
		t.Fatalf("decoding %d bytes allocated %d bytes, limit %d", n, allocated, limit)
	}
}

// FuzzDecodeJSON: no panic; an *InvalidError or exactly one well-formed batch; only valid
// JSON accepted; accepted records survive EncodeJSON→DecodeRecord unchanged; allocation
// bounded.
func FuzzDecodeJSON(f *testing.F) {
	f.Add([]byte("a"), []byte(`{"set":"a","points":[[0.1,0.2]],"t":1,"end":true}`))
	f.Add([]byte("a"), []byte(`{"label":[1,{"x":"}"}],"set":"a","points":[[0.1,0.2]],"id":null}`))
	f.Fuzz(func(t *testing.T, key, value []byte) {
		var (
			bs  []Batch
			err error
		)
		allocs := bytesAllocated(func() { bs, err = DecodeRecord(key, value, "", fuzzRecordTime, fuzzOpt) })
		checkDecoded(t, key, bs, err, fuzzOpt)
		checkAllocs(t, allocs, len(value)+len(key), jsonAllocFactor)
		// Set files' decoding (OtherField): typed errors too, valid JSON only, and the
		// strict decoding's result whenever that one accepts (no other field then).
		var others []string
		setOpt := fuzzOpt
		setOpt.OtherField = func(name string) { others = append(others, name) }
		lbs, lerr := DecodeRecord(key, value, "", fuzzRecordTime, setOpt)
		checkDecoded(t, key, lbs, lerr, setOpt)
		if lerr == nil && !json.Valid(value) {
			t.Fatalf("set-file decoding accepted invalid JSON %q", value)
		}
		if err == nil && (lerr != nil || len(others) > 0 || !batchesEqual(lbs, bs)) {
			t.Fatalf("set-file decoding of a valid record: %v, other fields %q, %+v; want %+v", lerr, others, lbs, bs)
		}
		if err != nil {
			return
		}
		if len(bs) != 1 {
			t.Fatalf("JSON decoded to %d batches", len(bs))
		}
		if !json.Valid(value) {
			t.Fatalf("accepted invalid JSON %q", value)
		}
		data, err := EncodeJSON(bs[0])
		if err != nil {
			t.Fatalf("EncodeJSON of a decoded batch: %v", err)
		}
		again, err := DecodeRecord(key, data, ContentTypeJSON, 12345, fuzzOpt)
		if err != nil || !batchesEqual(again, bs) {
			t.Fatalf("JSON round trip: %v\n%+v\n%+v", err, again, bs)
		}
	})
}

// FuzzDecodeArrow: no panic or crash; an *InvalidError or well-formed batches with maximal
// runs; accepted records survive EncodeArrow→DecodeRecord unchanged; allocation bounded.
func FuzzDecodeArrow(f *testing.F) {
	f.Fuzz(func(t *testing.T, key, value []byte) {
		var (
			bs  []Batch
			err error
		)
		allocs := bytesAllocated(func() { bs, err = DecodeRecord(key, value, ContentTypeArrow, fuzzRecordTime, fuzzOpt) })
		checkDecoded(t, key, bs, err, fuzzOpt)
		checkAllocs(t, allocs, len(value)+len(key), arrowAllocFactor)
		if err != nil {
			return
		}
		for i := 1; i < len(bs); i++ {
			p, b := bs[i-1], bs[i]
			if b.N == 0 || (p.Set == b.Set && p.EventTime == b.EventTime && !p.End) {
				t.Fatalf("runs %d and %d should have been one: %+v %+v", i-1, i, p, b)
			}
		}
		data, err := EncodeArrow(fuzzOpt.Dim, bs)
		if err != nil {
			t.Fatalf("EncodeArrow of decoded batches: %v", err)
		}
		again, err := DecodeRecord(key, data, ContentTypeArrow, 12345, fuzzOpt)
		if err != nil || !batchesEqual(again, bs) {
			t.Fatalf("Arrow round trip: %v", err)
		}
	})
}

// FuzzDecodeFeatures: no panic or crash on any output-topic value; errors are
// *InvalidError; every accepted record has a vector for every column.
func FuzzDecodeFeatures(f *testing.F) {
	o := NewOutput(testSpec(), testColumns())
	good, err := o.Encode(testRecord(rand.New(rand.NewPCG(1, 2)), o, "a", 1))
	if err != nil {
		f.Fatal(err)
	}
	fuzzOutputStream(f, good, func(value []byte) (func(*testing.T), error) {
		recs, cols, err := DecodeFeatures(value)
		return func(t *testing.T) {
			for _, r := range recs {
				if len(r.Vectors) != len(cols) {
					t.Fatalf("record has %d vectors for %d columns", len(r.Vectors), len(cols))
				}
			}
		}, err
	})
}

// FuzzDecodePoints: the same for the per-point topic: rows or an *InvalidError, and every
// row has a vector for every column.
func FuzzDecodePoints(f *testing.F) {
	o := NewPointOutput(testSpec(), []embedding.Column{{Name: "mt", Family: "mt", Len: 3}})
	good, err := o.Encode(PointBatch{Set: "a", Seq: 1, First: 4, N: 2, Vectors: [][]float32{{1, 2, 3, 4, 5, 6}}})
	if err != nil {
		f.Fatal(err)
	}
	fuzzOutputStream(f, good, func(value []byte) (func(*testing.T), error) {
		rows, cols, err := DecodePoints(value)
		return func(t *testing.T) {
			for _, r := range rows {
				if len(r.Features) != len(cols) {
					t.Fatalf("row has %d vectors for %d columns", len(r.Features), len(cols))
				}
			}
		}, err
	})
}

// FuzzDecodePredictions: the predictions topic's reader on hostile values (as
// FuzzDecodePoints), seeded with a classification record (lists of classes and scores).
func FuzzDecodePredictions(f *testing.F) {
	good, err := NewPredictionOutput().Encode(PredictionRecord{Set: "a", Seq: 1, N: 3, SpecID: "s", ModelVersion: "v",
		ModelKind: "classification", Prediction: 1, Class: "x", Classes: []string{"x", "y"}, Scores: []float32{1, -1}})
	if err != nil {
		f.Fatal(err)
	}
	fuzzOutputStream(f, good, func(value []byte) (func(*testing.T), error) {
		recs, err := DecodePredictions(value)
		return func(t *testing.T) {
			for _, r := range recs {
				if len(r.Scores) != len(r.Classes) {
					t.Fatalf("%d scores for %d classes", len(r.Scores), len(r.Classes))
				}
			}
		}, err
	})
}

// fuzzOutputStream fuzzes a decoder of output streams, seeded with a good stream and the
// cyclic-schema stream: decoding allocates within arrowAllocFactor of the input, an error is
// an *InvalidError, and an accepted stream passes the decoder's own check.
func fuzzOutputStream(f *testing.F, good []byte, decode func(value []byte) (check func(*testing.T), err error)) {
	f.Add(good)
	f.Add(cyclicSchemaStream())
	f.Fuzz(func(t *testing.T, value []byte) {
		var (
			check func(*testing.T)
			err   error
		)
		allocs := bytesAllocated(func() { check, err = decode(value) })
		checkAllocs(t, allocs, len(value), arrowAllocFactor)
		if err != nil {
			if !isInvalid(err) {
				t.Fatalf("error %v (%T) is not an *InvalidError", err, err)
			}
			return
		}
		check(t)
	})
}

var updateCorpus = flag.Bool("update-corpus", false, "rewrite the generated seed corpus in testdata/fuzz")

// TestWriteFuzzCorpus regenerates the seed corpus with -update-corpus. The files are
// checked in; without the flag the test only checks that they exist.
func TestWriteFuzzCorpus(t *testing.T) {
	corpus := map[string]map[string][2][]byte{
		"FuzzDecodeJSON":  jsonSeeds(),
		"FuzzDecodeArrow": arrowSeeds(t),
	}
	for target, seeds := range corpus {
		dir := filepath.Join("testdata", "fuzz", target)
		if !*updateCorpus {
			for name := range seeds {
				if _, err := os.Stat(filepath.Join(dir, name)); err != nil {
					t.Errorf("seed corpus file missing (run go test ./schema -run TestWriteFuzzCorpus -update-corpus): %v", err)
				}
			}
			continue
		}
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		for name, s := range seeds {
			content := fmt.Sprintf("go test fuzz v1\n[]byte(%q)\n[]byte(%q)\n", s[0], s[1])
			if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
}

func jsonSeeds() map[string][2][]byte {
	rng := rand.New(rand.NewPCG(11, 12))
	seeds := map[string][2][]byte{}
	add := func(name, key, value string) { seeds["seed-"+name] = [2][]byte{[]byte(key), []byte(value)} }
	b := randomBatch(rng, "s", 20, 2, 1732000000123, true)
	enc, _ := EncodeJSON(b)
	add("encoded-20", "s", string(enc))
	b.Set = ""
	enc, _ = EncodeJSON(b)
	add("encoded-no-set", "k", string(enc))
	add("design-example", "a", `{"set": "a", "points": [[0.1, 0.2], [0.3, 0.4]], "t": 1732000000123, "end": false}`)
	add("end-marker", "a", `{"end":true}`)
	add("nulls", "a", `{"set":null,"points":null,"t":null,"end":null}`)
	add("escapes", "", `{"s\u0065t":"\u00e9\/\"x\ud83d\ude00","points":[[0,0]]}`)
	add("numbers", "a", `{"points":[[-0.0,1e-400],[123456789012345678901234567890,0.000001234],[1E+2,-7e-3]]}`)
	add("overflow", "a", `{"points":[[1,1e999]]}`)
	add("dim-mismatch", "a", `{"points":[[1,2],[3,4,5]]}`)
	add("set-mismatch", "a", `{"set":"b"}`)
	add("unknown-field", "a", `{"points":[],"foo":1}`)
	add("duplicate-field", "a", `{"t":1,"t":2}`)
	add("t-fraction", "a", `{"t":1.5}`)
	add("too-many-points", "a", `{"points":[`+strings.Repeat("[1,2],", 1000)+`[1,2]]}`)
	add("long-set", "", `{"set":"`+strings.Repeat("x", 17)+`"}`)
	add("nested-brackets", "a", `{"points":[[`+strings.Repeat("[", 100))
	add("whitespace", "a", " \n\t{ \"points\" : [ [ 1 , -2 ] ,\r\n[3e2,4E-1] ] , \"t\" : 0 } \n")
	return seeds
}

func arrowSeeds(t *testing.T) map[string][2][]byte {
	rng := rand.New(rand.NewPCG(13, 14))
	seeds := map[string][2][]byte{}
	add := func(name, key string, value []byte) { seeds["seed-"+name] = [2][]byte{[]byte(key), value} }
	enc := func(bs ...Batch) []byte {
		data, err := EncodeArrow(2, bs)
		if err != nil {
			t.Fatal(err)
		}
		return data
	}
	f32, f64 := arrow.PrimitiveTypes.Float32, arrow.PrimitiveTypes.Float64
	add("one-set", "a", enc(randomBatch(rng, "a", 5, 2, 100, true)))
	add("runs", "", enc(randomBatch(rng, "a", 2, 2, 100, false), randomBatch(rng, "b", 1, 2, 100, true),
		randomBatch(rng, "a", 3, 2, 101, true), randomBatch(rng, "a", 1, 2, 101, false)))
	add("empty", "", enc())
	add("float32-no-t", "", writeStream(t, []arrowCol{{"set", strs("a", "a")}, {"x", xCol(f32, 2, []float64{0.5, 0.25}, []float64{1, 2})}}))
	add("timestamp-ns", "", writeStream(t, []arrowCol{{"set", strs("a")}, {"x", xCol(f64, 2, []float64{1, 2})}, {"t", tsCol(arrow.Nanosecond, 1732000000123456789)}}))
	add("nulls", "", writeStream(t, []arrowCol{{"set", strs("a", "a")}, {"x", xCol(f64, 2, []float64{1, 2}, []float64{3, 4})},
		{"t", i64Col(ptr[int64](5), nil)}, {"end", boolCol(nil, ptr(true))}}))
	add("null-x", "", writeStream(t, []arrowCol{{"set", strs("a", "a")}, {"x", xCol(f64, 2, []float64{1, 2}, nil)}}))
	add("multi-batch", "", writeStream(t,
		[]arrowCol{{"set", strs("a", "b")}, {"x", xCol(f64, 2, []float64{1, 2}, []float64{3, 4})}},
		[]arrowCol{{"set", strs("b")}, {"x", xCol(f64, 2, []float64{5, 6})}}))
	add("dim-3", "", writeStream(t, []arrowCol{{"set", strs("a")}, {"x", xCol(f64, 3, []float64{1, 2, 3})}}))
	add("set-mismatch", "a", enc(randomBatch(rng, "b", 1, 2, 1, false)))
	add("cyclic-schema", "", cyclicSchemaStream())
	return seeds
}
