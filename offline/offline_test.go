package offline

import (
	"context"
	"errors"
	"math"
	"testing"

	"github.com/distfeat/distfeat/calibrate"
	"github.com/distfeat/distfeat/embedding"
	"github.com/distfeat/distfeat/spec"
)

// testSets draws ragged sets of uniform points (sizes from 1 to 300) from the frozen RNG.
func testSets(sizes []int, dim int) Sets {
	rng := embedding.NewRNG(3, "offline-test")
	s := Sets{Dim: dim, Offsets: []int64{0}}
	for _, n := range sizes {
		for i := 0; i < n*dim; i++ {
			s.Points = append(s.Points, rng.Float64())
		}
		s.Offsets = append(s.Offsets, s.Offsets[len(s.Offsets)-1]+int64(n))
	}
	return s
}

func mustSpec(t *testing.T, doc string) *embedding.Embedder {
	t.Helper()
	sp, err := spec.ParseSpec([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	emb, err := embedding.New(sp)
	if err != nil {
		t.Fatal(err)
	}
	return emb
}

// TestEmbedEqualsOneShot: each set's row is Embedder.Embed of its points (the one-shot
// path), bit for bit, across finalisation batches and for any workers.
func TestEmbedEqualsOneShot(t *testing.T) {
	emb, err := embedding.New(spec.DefaultSpec())
	if err != nil {
		t.Fatal(err)
	}
	sizes := make([]int, 0, 70) // more than one finalisation batch
	for i := 0; i < 70; i++ {
		sizes = append(sizes, 1+(i*37)%300)
	}
	sets := testSets(sizes, 2)
	w := Width(emb)
	for _, workers := range []int{1, 3} {
		out := make([]float32, sets.Len()*w)
		if err := Embed(emb, sets, out, workers); err != nil {
			t.Fatal(err)
		}
		for i := 0; i < sets.Len(); i++ {
			u := append([]float64(nil), sets.Set(i)...) // in the unit cube: normalising is the identity
			row := out[i*w : (i+1)*w]
			for _, v := range emb.Embed(u) {
				for j, x := range v {
					if math.Float32bits(x) != math.Float32bits(row[j]) {
						t.Fatalf("workers %d, set %d, value %d: %v, one-shot %v", workers, i, j, row[j], x)
					}
				}
				row = row[len(v):]
			}
		}
	}
}

func TestEmbedErrors(t *testing.T) {
	emb, err := embedding.New(spec.DefaultSpec())
	if err != nil {
		t.Fatal(err)
	}
	good := testSets([]int{3, 4}, 2)
	nan := testSets([]int{3, 4}, 2)
	nan.Points[9] = math.NaN()
	for _, c := range []struct {
		name  string
		sets  Sets
		out   int
		index int
		is    error
	}{
		{"nan", nan, 2, 1, embedding.ErrNonFinite},
		{"empty set", Sets{Dim: 2, Points: good.Points[:6], Offsets: []int64{0, 3, 3}}, 2, 1, ErrNoPoints},
		{"offsets past the buffer", Sets{Dim: 2, Points: good.Points, Offsets: []int64{0, 3, 9}}, 2, -1, nil},
		{"decreasing offsets", Sets{Dim: 2, Points: good.Points, Offsets: []int64{0, 5, 3, 7}}, 3, -1, nil},
		{"dim", Sets{Dim: 3, Points: good.Points[:12], Offsets: []int64{0, 4}}, 1, -1, nil},
		{"short output", good, 1, -1, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := Embed(emb, c.sets, make([]float32, c.out*Width(emb)), 1)
			if err == nil {
				t.Fatal("no error")
			}
			var se *SetError
			if c.index < 0 {
				if errors.As(err, &se) {
					t.Fatalf("a layout error reported as a set's: %v", err)
				}
				return
			}
			if !errors.As(err, &se) || se.Index != c.index || !errors.Is(err, c.is) {
				t.Fatalf("got %v, want set %d wrapping %v", err, c.index, c.is)
			}
		})
	}
}

// TestPointsEqualPointMap: the per-point rows are PointMap.Points against each set's own
// window features, in set order.
func TestPointsEqualPointMap(t *testing.T) {
	emb := mustSpec(t, `{"version":1,"seed":42,"dim":2,"families":[
		{"name":"mmd","kind":"mmd","features":64,"bandwidth":0.26},
		{"name":"mt","kind":"marginal_transfer","set_family":"mmd","sigma_p":0.36,"sigma_x":0.17,"features":32}]}`)
	sets := testSets([]int{5, 1, 40}, 2)
	windows := make([]float32, sets.Len()*Width(emb))
	if err := Embed(emb, sets, windows, 1); err != nil {
		t.Fatal(err)
	}
	pw := PointWidth(emb)
	out := make([]float32, int(sets.Offsets[sets.Len()])*pw)
	if err := Points(emb, sets, windows, out, 2); err != nil {
		t.Fatal(err)
	}
	m := emb.PointMaps()[0]
	for i := 0; i < sets.Len(); i++ {
		u := sets.Set(i)
		a := m.SetPart(emb.Embed(append([]float64(nil), u...)), nil)
		want := make([]float32, len(u)/2*m.Len())
		m.Points(a, u, want)
		got := out[int(sets.Offsets[i])*pw : int(sets.Offsets[i+1])*pw]
		for j := range want {
			if math.Float32bits(got[j]) != math.Float32bits(want[j]) {
				t.Fatalf("set %d value %d: %v, want %v", i, j, got[j], want[j])
			}
		}
	}
}

// TestCalibrateKeepsOrder: sets are named by index, so the proposal is calibrate's on the
// same sets, and a label count mismatch is an error.
func TestCalibrateKeepsOrder(t *testing.T) {
	sets := testSets([]int{60, 60, 60, 60, 60, 60}, 2)
	if _, err := Calibrate(context.Background(), sets, []string{"a"}, nil, calibrate.Options{}); err == nil {
		t.Fatal("1 label for 6 sets accepted")
	}
	cal, err := Calibrate(context.Background(), sets, nil, nil, calibrate.Options{Families: []string{"mmd"}})
	if err != nil {
		t.Fatal(err)
	}
	if cal.Spec.Dim != 2 || len(cal.Spec.Families) != 1 || len(cal.Checks) != 1 {
		t.Fatalf("proposal %s, %d checks", cal.Spec.CanonicalJSON(), len(cal.Checks))
	}
}

// TestStreamEqualsEmbed: a set added in parts (of 1, 7 and the rest of its points) has the
// features of the whole set, and a bad part adds nothing.
func TestStreamEqualsEmbed(t *testing.T) {
	emb, err := embedding.New(spec.DefaultSpec())
	if err != nil {
		t.Fatal(err)
	}
	sets := testSets([]int{250}, 2)
	whole := make([]float32, Width(emb))
	if err := Embed(emb, sets, whole, 1); err != nil {
		t.Fatal(err)
	}
	s := NewStream(emb)
	if err := s.Features(make([]float32, Width(emb)), 1); !errors.Is(err, ErrNoPoints) {
		t.Fatalf("empty stream: %v", err)
	}
	x := sets.Set(0)
	for _, part := range [][]float64{x[:2], x[2:16], x[16:]} {
		if err := s.Add(part); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Add([]float64{0.5, math.Inf(1)}); !errors.Is(err, embedding.ErrNonFinite) {
		t.Fatalf("non-finite part: %v", err)
	}
	if s.Count() != 250 {
		t.Fatalf("count %d, want 250", s.Count())
	}
	got := make([]float32, Width(emb))
	if err := s.Features(got, 2); err != nil {
		t.Fatal(err)
	}
	for j := range got {
		if math.Float32bits(got[j]) != math.Float32bits(whole[j]) {
			t.Fatalf("value %d: streamed %v, whole %v", j, got[j], whole[j])
		}
	}
}
