package schema

import (
	"bytes"
	"math"
	"strings"
	"testing"

	"github.com/distfeat/distfeat/embedding"
	"github.com/distfeat/distfeat/spec"
)

func TestPointOutputRoundTrip(t *testing.T) {
	sp := spec.DefaultSpec()
	o := NewPointOutput(sp, []embedding.Column{{Name: "mt", Family: "mt", Len: 4}})
	batches := []PointBatch{
		{Set: "a", Seq: 0, First: 0, N: 2, Vectors: [][]float32{{1, 2, 3, 4, 5, 6, 7, float32(math.Pi)}}},
		{Set: "a", Seq: 0, First: 2, N: 1, Vectors: [][]float32{{-1, -2, -3, -4}}},
		{Set: "b", Seq: 3, First: 0, N: 0, Vectors: [][]float32{{}}},
	}
	var buf bytes.Buffer
	w := o.NewStreamWriter(&buf)
	var want []PointLine
	for _, b := range batches {
		if err := w.Write(b); err != nil {
			t.Fatal(err)
		}
		want = append(want, o.Lines(b)...)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	got, cols, err := DecodePoints(buf.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	if len(cols) != 1 || cols[0] != "mt" || len(got) != 3 || len(want) != 3 {
		t.Fatalf("cols %v, %d rows (want 3)", cols, len(got))
	}
	for i := range got {
		g, w := got[i], want[i]
		if g.Set != w.Set || g.Seq != w.Seq || g.Index != w.Index || g.SpecID != sp.ID() ||
			!slicesEqual(g.Features["mt"], w.Features["mt"]) {
			t.Errorf("row %d: got %+v, want %+v", i, g, w)
		}
	}
	if got[2].Index != 2 {
		t.Errorf("third point's index %d, want 2 (First + i)", got[2].Index)
	}
	one, err := o.Encode(batches[0])
	if err != nil {
		t.Fatal(err)
	}
	if len(one) > o.EncodedSize(2) {
		t.Errorf("Encode gave %d bytes, EncodedSize(2) = %d is not an upper bound", len(one), o.EncodedSize(2))
	}
	if md := o.Schema().Metadata(); md.FindKey("distfeat.spec") < 0 || md.FindKey("distfeat.spec_id") < 0 {
		t.Errorf("spec metadata missing: %v", md)
	}
}

func slicesEqual(a, b []float32) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if math.Float32bits(a[i]) != math.Float32bits(b[i]) {
			return false
		}
	}
	return true
}

func TestPointOutputErrors(t *testing.T) {
	o := NewPointOutput(spec.DefaultSpec(), []embedding.Column{{Name: "mt", Len: 2}})
	for _, tc := range []struct {
		b    PointBatch
		want string
	}{
		{PointBatch{Set: "a", N: 2, Vectors: [][]float32{{1, 2, 3}}}, "has 3 values, want 2 points × 2"},
		{PointBatch{Set: "a", N: 1, Vectors: nil}, "has 0 vectors, want 1"},
		{PointBatch{Set: "a", N: 1, SpecID: "ffff", Vectors: [][]float32{{1, 2}}}, "does not match"},
		{PointBatch{Set: "\xff", N: 1, Vectors: [][]float32{{1, 2}}}, "not valid UTF-8"},
	} {
		if _, err := o.Encode(tc.b); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: got %v, want an error containing %q", tc.b, err, tc.want)
		}
	}
	if _, _, err := DecodePoints([]byte("not arrow")); err == nil {
		t.Errorf("DecodePoints accepted garbage")
	}
	// A window feature stream is not a per-point stream.
	fo := NewOutput(spec.DefaultSpec(), []embedding.Column{{Name: "x", Len: 1}})
	v, err := fo.Encode(FeatureRecord{Set: "a", Vectors: [][]float32{{1}}})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := DecodePoints(v); err == nil || !strings.Contains(err.Error(), "want seq") {
		t.Errorf("DecodePoints of a window stream: %v, want a column error", err)
	}
}
