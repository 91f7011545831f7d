package schema

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/ipc"

	"github.com/distfeat/distfeat/embedding"
	"github.com/distfeat/distfeat/spec"
)

// testSpec is a small resolved spec; testColumns its embedder's columns (as the embedding
// package lays them out: each family's vector, an hdd family's coefficients right after it).
func testSpec() *spec.Spec {
	return &spec.Spec{
		Version: 1, Seed: 42, Dim: 2,
		Bounds:      spec.Bounds{Lo: []float64{0, 0}, Hi: []float64{1, 1}},
		OutOfBounds: "clip",
		Families: []spec.Family{
			{Name: "mmd", Kind: "mmd", Features: 8, Bandwidth: 0.1},
			{Name: "hdd_js", Kind: "hdd", Divergence: "js", Features: 6, Sigma: 0.5, Lambdas: 2,
				LambdaSampling: "stratified", Basis: 3, Grid: 8, KDEBandwidth: 0.02, Boundary: "reflect",
				DensityFloor: 1e-6, Mode: "joint", Coefficients: true},
		},
	}
}

func testColumns() []embedding.Column {
	return []embedding.Column{
		{Name: "mmd", Family: "mmd", Len: 8},
		{Name: "hdd_js", Family: "hdd_js", Len: 6},
		{Name: "hdd_js_coef", Family: "hdd_js", Len: 24},
	}
}

func testRecord(rng *rand.Rand, o *Output, set string, seq uint64) FeatureRecord {
	r := FeatureRecord{Set: set, WindowStart: 1732000000000 + int64(seq), WindowEnd: 1732000005000 + int64(seq),
		Seq: seq, N: 2500, SpecID: o.specID}
	for _, n := range o.lens {
		v := make([]float32, n)
		for i := range v {
			v[i] = float32(rng.NormFloat64())
		}
		r.Vectors = append(r.Vectors, v)
	}
	return r
}

func TestOutputSchema(t *testing.T) {
	spec := testSpec()
	o := NewOutput(spec, testColumns())
	ts := &arrow.TimestampType{Unit: arrow.Millisecond, TimeZone: "UTC"}
	want := []struct {
		name string
		typ  arrow.DataType
	}{
		{"set", arrow.BinaryTypes.String},
		{"window_start", ts},
		{"window_end", ts},
		{"seq", arrow.PrimitiveTypes.Uint64},
		{"n", arrow.PrimitiveTypes.Int64},
		{"spec_id", arrow.BinaryTypes.String},
		{"mmd", arrow.FixedSizeListOf(8, arrow.PrimitiveTypes.Float32)},
		{"hdd_js", arrow.FixedSizeListOf(6, arrow.PrimitiveTypes.Float32)},
		{"hdd_js_coef", arrow.FixedSizeListOf(24, arrow.PrimitiveTypes.Float32)},
	}
	s := o.Schema()
	if s.NumFields() != len(want) {
		t.Fatalf("schema has %d fields, want %d: %s", s.NumFields(), len(want), s)
	}
	for i, w := range want {
		f := s.Field(i)
		if f.Name != w.name || !arrow.TypeEqual(f.Type, w.typ) || f.Nullable {
			t.Errorf("field %d = %s %s nullable=%v, want %s %s non-nullable", i, f.Name, f.Type, f.Nullable, w.name, w.typ)
		}
	}
	canon, id := spec.CanonicalJSON(), spec.ID()
	md := s.Metadata()
	if !reflect.DeepEqual(md.Keys(), []string{"distfeat.spec", "distfeat.spec_id"}) ||
		!reflect.DeepEqual(md.Values(), []string{string(canon), id}) {
		t.Errorf("metadata = %v %v", md.Keys(), md.Values())
	}
	if len(id) != 16 {
		t.Errorf("spec id %q is not 16 hex digits", id)
	}
	// The encoded stream carries exactly this schema, metadata included, for any reader.
	data, err := o.Encode(testRecord(rand.New(rand.NewPCG(1, 1)), o, "a", 0))
	if err != nil {
		t.Fatal(err)
	}
	rdr, err := ipc.NewReader(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	defer rdr.Release()
	if !rdr.Schema().Equal(s) || !rdr.Schema().Metadata().Equal(s.Metadata()) {
		t.Errorf("stream schema %s\ndiffers from %s", rdr.Schema(), s)
	}
	n := 0
	for rdr.Next() {
		n++
		if rdr.Record().NumRows() != 1 {
			t.Errorf("record batch has %d rows, want 1", rdr.Record().NumRows())
		}
	}
	if n != 1 || rdr.Err() != nil {
		t.Errorf("stream has %d record batches (err %v), want 1", n, rdr.Err())
	}
}

func TestEncodeDeterministic(t *testing.T) {
	rng := rand.New(rand.NewPCG(2, 2))
	o1 := NewOutput(testSpec(), testColumns())
	o2 := NewOutput(testSpec(), testColumns())
	r := testRecord(rng, o1, "set-1", 77)
	a, err := o1.Encode(r)
	if err != nil {
		t.Fatal(err)
	}
	// Same record from fresh memory, through another Output for the same spec.
	r2 := r
	r2.Set = strings.Clone(r.Set)
	r2.Vectors = nil
	for _, v := range r.Vectors {
		r2.Vectors = append(r2.Vectors, append([]float32(nil), v...))
	}
	for i := 0; i < 3; i++ {
		b, err := o2.Encode(r2)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(a, b) {
			t.Fatalf("Encode is not deterministic (run %d)", i)
		}
	}
	// And the bytes do depend on the record.
	r2.Vectors[0][0]++
	if b, _ := o2.Encode(r2); bytes.Equal(a, b) {
		t.Fatal("different records encode to the same bytes")
	}
}

// TestEncodeConcurrent: one Output encodes from many goroutines at once (the worker encodes
// the windows one call closes in parallel, and partitions share an Output) with the bytes of
// encoding one record at a time. Run with -race, it also checks that Encode writes nothing
// shared.
func TestEncodeConcurrent(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	o := NewOutput(testSpec(), testColumns())
	recs := make([]FeatureRecord, 64)
	want := make([][]byte, len(recs))
	for i := range recs {
		recs[i] = testRecord(rng, o, fmt.Sprintf("set-%d", i), uint64(i))
		var err error
		if want[i], err = o.Encode(recs[i]); err != nil {
			t.Fatal(err)
		}
	}
	const goroutines = 8
	got := make([][][]byte, goroutines)
	var wg sync.WaitGroup
	for g := range goroutines {
		got[g] = make([][]byte, len(recs))
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := range recs {
				i := (k + g*len(recs)/goroutines) % len(recs) // each goroutine starts elsewhere
				b, err := o.Encode(recs[i])
				if err != nil {
					t.Error(err)
					return
				}
				got[g][i] = b
			}
		}()
	}
	wg.Wait()
	for g := range got {
		for i := range recs {
			if !bytes.Equal(got[g][i], want[i]) {
				t.Fatalf("goroutine %d, record %d: concurrent Encode gave other bytes than a serial one", g, i)
			}
		}
	}
}

func TestEncodeDecodeFeatures(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 3))
	o := NewOutput(testSpec(), testColumns())
	for _, set := range []string{"a", "", "ünïcode\x00set"} {
		r := testRecord(rng, o, set, rng.Uint64())
		data, err := o.Encode(r)
		if err != nil {
			t.Fatal(err)
		}
		recs, cols, err := DecodeFeatures(data)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(cols, []string{"mmd", "hdd_js", "hdd_js_coef"}) {
			t.Errorf("cols = %v", cols)
		}
		if len(recs) != 1 || !reflect.DeepEqual(recs[0], r) {
			t.Fatalf("DecodeFeatures(Encode(r)) = %+v, want %+v", recs, r)
		}
	}
	// An empty SpecID is filled in with the output's.
	r := testRecord(rng, o, "a", 1)
	r.SpecID = ""
	data, err := o.Encode(r)
	if err != nil {
		t.Fatal(err)
	}
	recs, _, err := DecodeFeatures(data)
	if err != nil || recs[0].SpecID != o.specID {
		t.Fatalf("spec id not filled in: %+v %v", recs, err)
	}
}

func TestEncodeInvalid(t *testing.T) {
	rng := rand.New(rand.NewPCG(4, 4))
	o := NewOutput(testSpec(), testColumns())
	tests := []struct {
		name   string
		mutate func(r *FeatureRecord)
		want   string
	}{
		{"spec id", func(r *FeatureRecord) { r.SpecID = "0123456789abcdef" }, "spec_id"},
		{"vector count", func(r *FeatureRecord) { r.Vectors = r.Vectors[:2] }, "2 vectors, want 3"},
		{"vector length", func(r *FeatureRecord) { r.Vectors[1] = r.Vectors[1][:5] }, "hdd_js has length 5, want 6"},
		{"set UTF-8", func(r *FeatureRecord) { r.Set = "\xff" }, "UTF-8"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := testRecord(rng, o, "a", 1)
			tc.mutate(&r)
			_, err := o.Encode(r)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Encode error %v, want one containing %q", err, tc.want)
			}
			if err := o.NewStreamWriter(&bytes.Buffer{}).Write(r); err == nil {
				t.Fatal("StreamWriter.Write accepted an invalid record")
			}
		})
	}
}

func TestStreamWriter(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 5))
	o := NewOutput(testSpec(), testColumns())
	for _, n := range []int{0, 1, streamBatchRows, 2*streamBatchRows + 7} {
		var buf bytes.Buffer
		sw := o.NewStreamWriter(&buf)
		var want []FeatureRecord
		for i := 0; i < n; i++ {
			r := testRecord(rng, o, "s"+strings.Repeat("x", i%5), uint64(i))
			if err := sw.Write(r); err != nil {
				t.Fatal(err)
			}
			want = append(want, r)
			// Write copies: reusing the caller's vectors must not change the stream.
			cp := r
			cp.Vectors = nil
			for _, v := range r.Vectors {
				cp.Vectors = append(cp.Vectors, append([]float32(nil), v...))
			}
			want[i] = cp
			r.Vectors[0][0] = -1
		}
		if err := sw.Close(); err != nil {
			t.Fatal(err)
		}
		if err := sw.Write(testRecord(rng, o, "late", 0)); err == nil {
			t.Error("Write after Close succeeded")
		}
		if err := sw.Close(); err == nil {
			t.Error("second Close succeeded")
		}
		recs, cols, err := DecodeFeatures(buf.Bytes())
		if err != nil {
			t.Fatalf("n=%d: %v", n, err)
		}
		if len(cols) != 3 || len(recs) != n || (n > 0 && !reflect.DeepEqual(recs, want)) {
			t.Fatalf("n=%d: decoded %d records", n, len(recs))
		}
	}
}

func TestFeatureLine(t *testing.T) {
	o := NewOutput(testSpec(), testColumns())
	r := testRecord(rand.New(rand.NewPCG(6, 6)), o, "a", 3)
	line := o.Line(r)
	if !reflect.DeepEqual(line, LineFromRecord(r, []string{"mmd", "hdd_js", "hdd_js_coef"})) {
		t.Fatal("Line and LineFromRecord differ")
	}
	data, err := json.Marshal(line)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatal(err)
	}
	var keys []string
	for k := range m {
		keys = append(keys, k)
	}
	for _, k := range []string{"set", "seq", "n", "window_start", "window_end", "spec_id", "features"} {
		if _, ok := m[k]; !ok {
			t.Errorf("line lacks %q: %s", k, data)
		}
	}
	if len(m) != 7 {
		t.Errorf("line has keys %v", keys)
	}
	var back FeatureLine
	if err := json.Unmarshal(data, &back); err != nil || !reflect.DeepEqual(back, line) {
		t.Fatalf("line does not round-trip: %v", err)
	}
}

func TestDecodeFeaturesInvalid(t *testing.T) {
	input, err := EncodeArrow(2, []Batch{{Set: "a", Points: []float64{1, 2}, N: 1}})
	if err != nil {
		t.Fatal(err)
	}
	o := NewOutput(testSpec(), testColumns())
	good, err := o.Encode(testRecord(rand.New(rand.NewPCG(7, 7)), o, "a", 1))
	if err != nil {
		t.Fatal(err)
	}
	for name, data := range map[string][]byte{
		"empty":        nil,
		"garbage":      []byte("not arrow"),
		"input stream": input,
		"truncated":    good[:len(good)-30],
	} {
		t.Run(name, func(t *testing.T) {
			_, _, err := DecodeFeatures(data)
			wantInvalid(t, err, ReasonDecode)
		})
	}
}
