package embedding

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/distfeat/distfeat/spec"
)

// testSpecs are the specs the sketch tests run on: the default (mmd, hdd, l2), one with
// the optional second stages (mmd rbf, l2 rff) in 3 dimensions, and a version-3 one in 2
// dimensions whose mmd families use the nufft method (auto, explicit with the rbf stage)
// next to a direct one.
func testSpecs(t testing.TB) map[string]*spec.Spec {
	t.Helper()
	stages, err := spec.ParseSpec([]byte(`{"dim": 3, "seed": 9, "families": [
		{"name": "mmd_rbf", "kind": "mmd", "features": 256, "bandwidth": 0.2, "rbf_sigma": 0.7, "rbf_features": 128},
		{"name": "l2_rff", "kind": "l2", "basis": 40, "sigma": 0.3, "features": 64},
		{"name": "mmd", "kind": "mmd", "features": 100, "bandwidth": 0.05},
		{"name": "l2", "kind": "l2", "basis": 30}]}`))
	if err != nil {
		t.Fatal(err)
	}
	nufft, err := spec.ParseSpec([]byte(`{"version": 3, "dim": 2, "seed": 10, "families": [
		{"name": "mmd_auto", "kind": "mmd", "features": 1024, "bandwidth": 0.1},
		{"name": "mmd_nufft_rbf", "kind": "mmd", "features": 256, "bandwidth": 0.3, "method": "nufft", "rbf_sigma": 0.7, "rbf_features": 128},
		{"name": "mmd_direct", "kind": "mmd", "features": 64, "bandwidth": 0.2, "method": "direct"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	drift, err := spec.ParseSpec([]byte(`{"dim": 2, "seed": 5, "families": [
		{"name": "drift", "kind": "two_sample", "reference": "testdata/two_sample_ref.jsonl"},
		{"name": "drift_fixed", "kind": "two_sample", "reference": "testdata/two_sample_ref.jsonl",
		 "bandwidth": 0.3, "bands": 3, "frequencies": 8, "ridge": 0.05}]}`))
	if err != nil {
		t.Fatal(err)
	}
	// "default_v1" is the built-in default of earlier releases: running groups pin it, so its
	// bytes stay guarded after the default moved on.
	return map[string]*spec.Spec{"default": spec.DefaultSpec(), "default_v1": spec.DefaultSpecV1(), "stages": stages, "nufft": nufft, "two_sample": drift}
}

func mustNew(t testing.TB, s *spec.Spec) *Embedder {
	t.Helper()
	e, err := New(s)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return e
}

// compiled caches embedders by spec_id for tests that only read them: compiling the default
// spec draws ~2M normals for hdd, which takes seconds under the race detector.
var compiled sync.Map // spec ID → *Embedder

// sharedNew is mustNew for read-only use: tests must not modify the returned Embedder.
func sharedNew(t testing.TB, s *spec.Spec) *Embedder {
	t.Helper()
	if e, ok := compiled.Load(s.ID()); ok {
		return e.(*Embedder)
	}
	e := mustNew(t, s)
	compiled.Store(s.ID(), e)
	return e
}

// uniformPoints draws n points uniform in [0,1]^d from the frozen RNG.
func uniformPoints(rng *RNG, n, d int) []float64 {
	u := make([]float64, n*d)
	for i := range u {
		u[i] = rng.Float64()
	}
	return u
}

func equalVectors(a, b [][]float32) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if len(a[i]) != len(b[i]) {
			return false
		}
		for j := range a[i] {
			if math.Float32bits(a[i][j]) != math.Float32bits(b[i][j]) {
				return false
			}
		}
	}
	return true
}

// TestStreamingEqualsBatchEqualsMerged: a window's features are the same bits whether its
// points arrive in one Add, in random chunks, or in partial sketches merged in any order.
func TestStreamingEqualsBatchEqualsMerged(t *testing.T) {
	for name, sp := range testSpecs(t) {
		t.Run(name, func(t *testing.T) {
			e := sharedNew(t, sp)
			d := e.Dim()
			rng := NewRNG(11, "streaming")
			const n = 1537
			u := uniformPoints(rng, n, d)
			batch := e.Embed(u)

			// Random chunk sizes, including empty chunks.
			s := e.NewSketch()
			for i := 0; i < n; {
				k := min(int(rng.Uint64()%97), n-i)
				s.Add(u[i*d : (i+k)*d])
				i += k
			}
			if s.Count() != n {
				t.Fatalf("Count = %d, want %d", s.Count(), n)
			}
			if !equalVectors(s.Finalize(nil), batch) {
				t.Error("streaming in random chunks differs from batch")
			}

			// Two halves merged, either way round.
			half := n / 2 * d
			a, b := e.NewSketch(), e.NewSketch()
			a.Add(u[:half])
			b.Add(u[half:])
			ab := e.NewSketch()
			if err := ab.Merge(a); err != nil {
				t.Fatal(err)
			}
			if err := ab.Merge(b); err != nil {
				t.Fatal(err)
			}
			if !equalVectors(ab.Finalize(nil), batch) {
				t.Error("merged halves differ from batch")
			}
			if err := b.Merge(a); err != nil { // b = second half + first half
				t.Fatal(err)
			}
			if !equalVectors(b.Finalize(nil), batch) {
				t.Error("halves merged in the other order differ from batch")
			}

			// Three parts, merged in every order and association.
			cuts := []int{0, 400 * d, 1100 * d, n * d}
			parts := func() []*Sketch {
				ps := make([]*Sketch, 3)
				for i := range ps {
					ps[i] = e.NewSketch()
					ps[i].Add(u[cuts[i]:cuts[i+1]])
				}
				return ps
			}
			for _, order := range [][3]int{{0, 1, 2}, {2, 1, 0}, {1, 2, 0}, {2, 0, 1}} {
				ps := parts()
				// ((x ⊕ y) ⊕ z) into x, and x ⊕ (y ⊕ z) into a fresh sketch.
				x, y, z := ps[order[0]], ps[order[1]], ps[order[2]]
				if err := y.Merge(z); err != nil {
					t.Fatal(err)
				}
				if err := x.Merge(y); err != nil {
					t.Fatal(err)
				}
				if x.Count() != n || !equalVectors(x.Finalize(nil), batch) {
					t.Errorf("three parts merged in order %v differ from batch", order)
				}
			}
			// Finalize does not consume the sketch.
			if !equalVectors(s.Finalize(nil), batch) {
				t.Error("a second Finalize differs")
			}
		})
	}
}

func TestSketchResetSizeAndEmpty(t *testing.T) {
	for name, sp := range testSpecs(t) {
		t.Run(name, func(t *testing.T) {
			e := sharedNew(t, sp)
			rng := NewRNG(12, "reset")
			s := e.NewSketch()
			empty := s.SizeBytes()
			if empty <= 0 {
				t.Fatalf("SizeBytes = %d", empty)
			}
			s.Add(uniformPoints(rng, 5000, e.Dim()))
			if s.SizeBytes() != empty {
				t.Errorf("SizeBytes grew with n: %d → %d", empty, s.SizeBytes())
			}
			u := uniformPoints(rng, 300, e.Dim())
			s.Reset()
			if s.Count() != 0 {
				t.Errorf("Count after Reset = %d", s.Count())
			}
			s.Add(u)
			if !equalVectors(s.Finalize(nil), e.Embed(u)) {
				t.Error("a reset sketch remembers its previous window")
			}

			// Empty window: mmd and l2 columns are zero vectors of the right length.
			cols := e.Columns()
			out := e.NewSketch().Finalize(nil)
			if len(out) != len(cols) {
				t.Fatalf("Finalize returned %d vectors for %d columns", len(out), len(cols))
			}
			kinds := map[string]string{}
			for _, f := range sp.Families {
				kinds[f.Name] = f.Kind
			}
			for i, c := range cols {
				if len(out[i]) != c.Len {
					t.Errorf("column %s: length %d, want %d", c.Name, len(out[i]), c.Len)
				}
				if k := kinds[c.Family]; k == spec.KindMMD || k == spec.KindL2 {
					for _, v := range out[i] {
						if v != 0 {
							t.Errorf("empty window: column %s has non-zero %v", c.Name, v)
							break
						}
					}
				}
			}
		})
	}
}

func TestFinalizeHookAndColumns(t *testing.T) {
	s := spec.DefaultSpec()
	s.Families[1].Coefficients = true
	e := sharedNew(t, s)
	var names []string
	cols := e.Columns()
	wantCols := []string{"mmd", "hdd_js", "hdd_js_coef", "l2"}
	var got []string
	for _, c := range cols {
		got = append(got, c.Name)
	}
	if !slices.Equal(got, wantCols) {
		t.Errorf("columns %v, want %v", got, wantCols)
	}
	if cols[0].Len != 1024 || cols[1].Len != 4096 || cols[3].Len != 100 {
		t.Errorf("column lengths %+v", cols)
	}
	sk := e.NewSketch()
	sk.Add(uniformPoints(NewRNG(1, "hook"), 100, 2))
	out := sk.Finalize(func(family string, elapsed time.Duration) {
		if elapsed < 0 {
			t.Errorf("negative elapsed for %s", family)
		}
		names = append(names, family)
	})
	if !slices.Equal(names, []string{"mmd", "hdd_js", "l2"}) {
		t.Errorf("hook saw families %v", names)
	}
	for i, c := range cols {
		if len(out[i]) != c.Len {
			t.Errorf("%s: len %d, want %d", c.Name, len(out[i]), c.Len)
		}
	}
	// Columns returns a copy.
	cols[0].Name = "changed"
	if e.Columns()[0].Name != "mmd" {
		t.Error("Columns exposes the embedder's slice")
	}
}

func TestMergeIncompatible(t *testing.T) {
	specs := testSpecs(t)
	a, b := sharedNew(t, specs["default"]), sharedNew(t, specs["stages"])
	sa, sb := a.NewSketch(), b.NewSketch()
	sb.Add([]float64{0.5, 0.5, 0.5})
	if err := sa.Merge(sb); !errors.Is(err, ErrIncompatible) {
		t.Errorf("merging sketches of different specs: %v", err)
	}
	if sa.Count() != 0 {
		t.Error("a failed merge changed the sketch")
	}
	if err := sa.Merge(nil); !errors.Is(err, ErrIncompatible) {
		t.Errorf("merging nil: %v", err)
	}
	// Two embedders compiled from the same spec make mergeable sketches.
	b2 := mustNew(t, specs["stages"])
	s1, s2 := b.NewSketch(), b2.NewSketch()
	s1.Add([]float64{0.1, 0.2, 0.3})
	s2.Add([]float64{0.25, 0.75, 0.5})
	if err := s1.Merge(s2); err != nil {
		t.Errorf("same sp, different embedder: %v", err)
	}
	if !equalVectors(s1.Finalize(nil), b.Embed([]float64{0.1, 0.2, 0.3, 0.25, 0.75, 0.5})) {
		t.Error("merge across embedders of one sp changed the features")
	}
}

func TestAddPanicsOnPartialPoint(t *testing.T) {
	e := sharedNew(t, spec.DefaultSpec())
	defer func() {
		if r := recover(); r == nil || !strings.Contains(fmt.Sprint(r), "whole points") {
			t.Errorf("recovered %v", r)
		}
	}()
	e.NewSketch().Add([]float64{0.1, 0.2, 0.3})
}

func TestAddDoesNotAllocate(t *testing.T) {
	for name, sp := range testSpecs(t) {
		e := sharedNew(t, sp)
		s := e.NewSketch()
		u := uniformPoints(NewRNG(2, "alloc"), 500, e.Dim())
		s.Add(u) // warm up (pools, lazily built state)
		if allocs := testing.AllocsPerRun(20, func() { s.Add(u) }); allocs != 0 {
			t.Errorf("%s: Add allocates %v times per call", name, allocs)
		}
	}
}

func TestNormalize(t *testing.T) {
	sp, err := spec.ParseSpec([]byte(`{"dim": 2, "bounds": {"lo": [-1, 10], "hi": [1, 20]},
		"families": [{"name": "l", "kind": "l2", "basis": 3}]}`))
	if err != nil {
		t.Fatal(err)
	}
	e := mustNew(t, sp)
	x := []float64{0, 15, -1, 10, 1, 20, -2, 15, 0, 25, 5, 5}
	dst := make([]float64, len(x))
	clipped, err := e.Normalize(dst, x)
	if err != nil {
		t.Fatal(err)
	}
	want := []float64{0.5, 0.5, 0, 0, 1, 1, 0, 0.5, 0.5, 1, 1, 0}
	if clipped != 3 || !slices.Equal(dst, want) {
		t.Errorf("clip: clipped %d, dst %v; want 3, %v", clipped, dst, want)
	}
	// In place.
	y := slices.Clone(x)
	if c, err := e.Normalize(y, y); err != nil || c != 3 || !slices.Equal(y, want) {
		t.Errorf("in place: %v %d %v", y, c, err)
	}

	sp.OutOfBounds = "reject"
	r := mustNew(t, sp)
	_, err = r.Normalize(dst, x)
	if !errors.Is(err, ErrOutOfBounds) || !strings.Contains(err.Error(), "point 3") {
		t.Errorf("reject: %v, want ErrOutOfBounds naming point 3", err)
	}
	if c, err := r.Normalize(dst, x[:6]); err != nil || c != 0 {
		t.Errorf("reject of in-bounds points (bounds inclusive): %d, %v", c, err)
	}

	for _, bad := range []float64{math.NaN(), math.Inf(1), math.Inf(-1)} {
		x := []float64{0, 15, 0.5, bad}
		for _, emb := range []*Embedder{e, r} {
			_, err := emb.Normalize(dst, x)
			if !errors.Is(err, ErrNonFinite) || !strings.Contains(err.Error(), "point 1") {
				t.Errorf("%v: %v, want ErrNonFinite naming point 1", bad, err)
			}
			if errors.Is(err, ErrOutOfBounds) {
				t.Errorf("%v: non-finite reported as out of bounds", bad)
			}
		}
	}
}

// TestEmbedderConcurrentUse: one Embedder serves many goroutines (each with its own
// sketches); under -race this also checks that compiled families are only read.
func TestEmbedderConcurrentUse(t *testing.T) {
	e := sharedNew(t, spec.DefaultSpec())
	u := uniformPoints(NewRNG(15, "concurrent"), 400, 2)
	want := e.Embed(u)
	errs := make(chan error, 4)
	for g := 0; g < 4; g++ {
		go func() {
			s := e.NewSketch()
			s.Add(u[:200])
			s.Add(u[200:])
			if !equalVectors(s.Finalize(nil), want) {
				errs <- errors.New("concurrent embedding differs")
				return
			}
			errs <- nil
		}()
	}
	for g := 0; g < 4; g++ {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
}

// TestAddWorkersMatchOneGoroutine: an embedder built WithAddWorkers gives, for every family and
// spec variant, exactly the features of one without, whatever the size of the Add calls
// (too small to share, shared for some families only, shared for all, uneven shares) and the
// worker count; the helper sketches go back to the pool empty, so a later window is not
// polluted.
func TestAddWorkersMatchOneGoroutine(t *testing.T) {
	specs := batchTestSpecs(t)
	rng := NewRNG(31, "add-workers")
	for _, name := range []string{"default", "stages", "hdd-variants", "hdd-d1", "hdd-d3", "orthogonal"} {
		serial := mustNew(t, specs[name])
		for _, workers := range []int{2, 3, 7} {
			par, err := New(specs[name], WithAddWorkers(workers))
			if err != nil {
				t.Fatal(err)
			}
			for _, calls := range [][]int{{1}, {5}, {50}, {600}, {4001}, {300, 1500, 2, 7777}, {6, 4000}, {70001}} {
				a, b := serial.NewSketch(), par.NewSketch()
				for _, n := range calls {
					u := uniformPoints(rng, n, serial.Dim())
					a.Add(u)
					b.Add(u)
				}
				if a.Count() != b.Count() || !equalVectors(a.Finalize(nil), b.Finalize(nil)) {
					t.Fatalf("spec %s, %d workers, adds of %v points: features differ from one goroutine's", name, workers, calls)
				}
			}
		}
	}
	// The shared path does run: for the version-1 default spec (direct mmd, ≈ 300 ns/point),
	// 2500 points split mmd and l2 (not hdd, whose 35 KB of counts cost more to merge than
	// 1250 points to bin), 4001 split all three; 600 points are not worth waking another
	// core for. The version-3 default's mmd spreads onto the NUFFT grid (≈ 40 ns/point), so
	// a 2500-point Add is below parallelAddMinNanos and only 4001 points are shared.
	for name, shared := range map[string]map[int]bool{
		"default_v1": {20: false, 600: false, 2500: true, 4001: true},
		"default":    {20: false, 600: false, 2500: false, 4001: true},
	} {
		e, err := New(specs[name], WithAddWorkers(2))
		if err != nil {
			t.Fatal(err)
		}
		for n, want := range shared {
			if got := e.NewSketch().addShared(uniformPoints(rng, n, 2), 2, n); got != want {
				t.Errorf("%d points of spec %s shared among goroutines: %v, want %v", n, name, got, want)
			}
		}
	}
}
