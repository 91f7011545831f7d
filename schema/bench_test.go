package schema

import (
	"io"
	"math/rand/v2"
	"testing"

	"github.com/distfeat/distfeat/embedding"
)

// benchBatch is the benchmark workload: one set of 2500 uniform points in [0,1)², the
// paper's set size.
func benchBatch() Batch {
	return randomBatch(rand.New(rand.NewPCG(7, 7)), "galaxy-cluster-000042", 2500, 2, 1732000000123, true)
}

func reportPoints(b *testing.B, n int) {
	b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "points/s")
}

// BenchmarkDecodeJSON decodes a 2500-point d=2 JSON record (coordinates in shortest
// round-trip form, ~18 significant digits).
func BenchmarkDecodeJSON(b *testing.B) {
	batch := benchBatch()
	data, err := EncodeJSON(batch)
	if err != nil {
		b.Fatal(err)
	}
	opt := DecodeOptions{Dim: 2}
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := DecodeRecord([]byte(batch.Set), data, ContentTypeJSON, 0, opt); err != nil {
			b.Fatal(err)
		}
	}
	reportPoints(b, batch.N)
}

// BenchmarkDecodeJSONShort is BenchmarkDecodeJSON with coordinates rounded to 6 decimals,
// as many producers write them.
func BenchmarkDecodeJSONShort(b *testing.B) {
	batch := benchBatch()
	for i, v := range batch.Points {
		batch.Points[i] = float64(int(v*1e6)) / 1e6
	}
	data, err := EncodeJSON(batch)
	if err != nil {
		b.Fatal(err)
	}
	opt := DecodeOptions{Dim: 2}
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := DecodeRecord([]byte(batch.Set), data, ContentTypeJSON, 0, opt); err != nil {
			b.Fatal(err)
		}
	}
	reportPoints(b, batch.N)
}

// BenchmarkDecodeArrow decodes a 2500-point d=2 Arrow record (x as float64, with t and end),
// as written by EncodeArrow.
func BenchmarkDecodeArrow(b *testing.B) {
	batch := benchBatch()
	data, err := EncodeArrow(2, []Batch{batch})
	if err != nil {
		b.Fatal(err)
	}
	opt := DecodeOptions{Dim: 2}
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := DecodeRecord([]byte(batch.Set), data, ContentTypeArrow, 0, opt); err != nil {
			b.Fatal(err)
		}
	}
	reportPoints(b, batch.N)
}

// BenchmarkEncodeJSON encodes a 2500-point d=2 JSON record (the producer's side).
func BenchmarkEncodeJSON(b *testing.B) {
	batch := benchBatch()
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if _, err := EncodeJSON(batch); err != nil {
			b.Fatal(err)
		}
	}
	reportPoints(b, batch.N)
}

// BenchmarkEncodeArrow encodes a 2500-point d=2 Arrow record (the producer's side).
func BenchmarkEncodeArrow(b *testing.B) {
	batches := []Batch{benchBatch()}
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if _, err := EncodeArrow(2, batches); err != nil {
			b.Fatal(err)
		}
	}
	reportPoints(b, batches[0].N)
}

// BenchmarkEncodeOutput encodes one feature record of the default spec's size
// (mmd 1024 + hdd_js 4096 + l2 100 floats).
func BenchmarkEncodeOutput(b *testing.B) {
	spec := testSpec()
	cols := []embedding.Column{{Name: "mmd", Len: 1024}, {Name: "hdd_js", Len: 4096}, {Name: "l2", Len: 100}}
	o := NewOutput(spec, cols)
	r := testRecord(rand.New(rand.NewPCG(1, 1)), o, "galaxy-cluster-000042", 42)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := o.Encode(r); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkDecodeFeatures decodes one such feature record (the `tail` side).
func BenchmarkDecodeFeatures(b *testing.B) {
	cols := []embedding.Column{{Name: "mmd", Len: 1024}, {Name: "hdd_js", Len: 4096}, {Name: "l2", Len: 100}}
	o := NewOutput(testSpec(), cols)
	data, err := o.Encode(testRecord(rand.New(rand.NewPCG(1, 1)), o, "galaxy-cluster-000042", 42))
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, _, err := DecodeFeatures(data); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkStreamWriterWide writes 80 records with one 7000-float column through a
// StreamWriter (what `embed --format arrow` does for an hdd family with D = 7000), in
// ns per record.
func BenchmarkStreamWriterWide(b *testing.B) {
	o := NewOutput(testSpec(), []embedding.Column{{Name: "hdd_js", Len: 7000}})
	recs := make([]FeatureRecord, 80)
	rng := rand.New(rand.NewPCG(1, 1))
	for i := range recs {
		recs[i] = testRecord(rng, o, "galaxy-cluster-000042", uint64(i))
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		sw := o.NewStreamWriter(io.Discard)
		for _, r := range recs {
			if err := sw.Write(r); err != nil {
				b.Fatal(err)
			}
		}
		if err := sw.Close(); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(recs)), "ns/record")
}
