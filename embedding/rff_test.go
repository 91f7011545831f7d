package embedding

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"testing"

	"github.com/distfeat/distfeat/internal/numeric"
)

// dotPaths lists every numeric.RFFDot path this machine can run, portable first.
func dotPaths(tb testing.TB) []numeric.Path {
	var ps []numeric.Path
	for _, p := range []numeric.Path{numeric.PathPortable, numeric.PathAVX2, numeric.PathAVX512} {
		if numeric.PathSupported(p) {
			ps = append(ps, p)
		} else {
			tb.Logf("numeric.RFFDot path %v is not supported on this machine; compared paths exclude it", p)
		}
	}
	return ps
}

// rffDotValue draws a test value: mostly normal at the given scale, sometimes ±0, values
// whose products underflow (so that a lane can become −0), or huge values.
func rffDotValue(rng *RNG, scale float64) float64 {
	switch u := rng.Float64(); {
	case u < 0.03:
		return 0
	case u < 0.06:
		return math.Copysign(0, -1)
	case u < 0.10:
		return rng.Normal() * 1e-170
	case u < 0.11:
		return rng.Normal() * 1e150
	default:
		return rng.Normal() * scale
	}
}

// TestRFFApplyPathsBitIdentical runs whole feature maps (the hdd and l2 shapes) on every path.
func TestRFFApplyPathsBitIdentical(t *testing.T) {
	for _, tc := range []struct{ in, features int }{{1000, 4096}, {100, 1024}, {13, 130}, {1, 2}, {7, 258}} {
		m := newRFF(NewRNG(1, "rff-apply"), tc.in, tc.features, 0.5)
		rng := NewRNG(2, "rff-apply-input")
		a := make([]float64, tc.in)
		for i := range a {
			a[i] = rng.Normal() * 0.1
		}
		var want []float32
		for _, p := range dotPaths(t) {
			m.path = p
			out := make([]float32, tc.features)
			m.apply(a, out)
			if want == nil {
				want = out
				continue
			}
			for i := range out {
				if math.Float32bits(out[i]) != math.Float32bits(want[i]) {
					t.Fatalf("in=%d D=%d path %v feature %d: %v, portable %v", tc.in, tc.features, p, i, out[i], want[i])
				}
			}
		}
		// The map itself: z_{2r} = √(2/D) sin(ω_r·a), z_{2r+1} = √(2/D) cos(ω_r·a).
		theta := make([]float64, 1)
		for r := 0; r < tc.features/2; r++ {
			numeric.RFFDot(numeric.PathPortable, m.omega[r*tc.in:(r+1)*tc.in], tc.in, a, theta) // its order: TestRFFDotPathsBitIdentical (internal/numeric)
			s, c := math.Sincos(theta[0])
			if math.Abs(float64(want[2*r])-m.scale*s) > 1e-7 || math.Abs(float64(want[2*r+1])-m.scale*c) > 1e-7 {
				t.Fatalf("in=%d D=%d row %d: (%v, %v), want (%v, %v)", tc.in, tc.features, r, want[2*r], want[2*r+1], m.scale*s, m.scale*c)
			}
		}
	}
}

// setRFFPath forces the numeric.RFFDot path of every RFF stage of e (a private Embedder), and the
// numeric.L2Products path of its l2 families.
func setRFFPath(e *Embedder, p numeric.Path) {
	setPath := func(m *rff) {
		m.path = p
		if m.orth != nil {
			m.orth.path = p
		}
	}
	for _, f := range e.fams {
		switch f := f.(type) {
		case *hddFamily:
			setPath(f.rff)
			f.plan.path = p
		case *l2Family:
			if f.spec >= 2 {
				f.path = p
			}
			if f.rff != nil {
				setPath(f.rff)
			}
		case *mmdFamily:
			if f.rbf != nil {
				setPath(f.rbf)
			}
		}
	}
}

// TestGoldenRFFPaths checks testdata/golden.json on every numeric.RFFDot and numeric.L2Products path
// (TestGolden checks it on every mmd kernel path with the best of those).
func TestGoldenRFFPaths(t *testing.T) {
	if *updateGolden {
		t.Skip("regenerating golden.json")
	}
	b, err := os.ReadFile(goldenPath)
	if err != nil {
		t.Fatal(err)
	}
	var g golden
	if err := json.Unmarshal(b, &g); err != nil {
		t.Fatal(err)
	}
	for name, sp := range testSpecs(t) {
		e := mustNew(t, sp)
		u := uniformPoints(NewRNG(g.Input.Seed, g.Input.Stream), g.Input.Points, e.Dim())
		for _, p := range dotPaths(t) {
			setRFFPath(e, p)
			out := e.Embed(u)
			for i, c := range e.Columns() {
				key := name + "/" + c.Name
				if got := vectorSum(out[i]); got != g.Features[key] {
					t.Errorf("features of %s on numeric.RFFDot/numeric.L2Products path %v: sha256 %s, golden %s", key, p, got, g.Features[key])
				}
			}
		}
	}
}

// BenchmarkRFFApply measures one application of the RFF map on every path: the hdd shapes
// (2M|V| = 1000 inputs, D = 4096 and 7000), mmd's rbf stage (1024 → 1024) and l2's (100 → 1024).
func BenchmarkRFFApply(b *testing.B) {
	for _, tc := range []struct{ in, features int }{{1000, 4096}, {1000, 7000}, {1024, 1024}, {100, 1024}} {
		m := newRFF(NewRNG(1, "bench-rff"), tc.in, tc.features, 0.5)
		a := make([]float64, tc.in)
		rng := NewRNG(2, "bench-rff-input")
		for i := range a {
			a[i] = rng.Normal() * 0.1
		}
		out := make([]float32, tc.features)
		for _, p := range []numeric.Path{numeric.PathAVX512, numeric.PathAVX2, numeric.PathPortable} {
			b.Run(fmt.Sprintf("in=%d,D=%d/%v", tc.in, tc.features, p), func(b *testing.B) {
				if !numeric.PathSupported(p) {
					b.Skipf("path %v is not supported on this machine", p)
				}
				m.path = p
				b.ReportAllocs()
				for b.Loop() {
					m.apply(a, out)
				}
			})
		}
	}
}

// BenchmarkHDDFinalizeDefaultD is BenchmarkHDDFinalize with the default D = 4096.
func BenchmarkHDDFinalizeDefaultD(b *testing.B) {
	f := mustCompileHDD(b, hddTestSpec(2, nil))
	s := f.newSketch()
	s.add(hddBenchPoints(2500, 2), 2)
	out := [][]float32{make([]float32, 4096)}
	s.finalize(2500, out)
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		s.finalize(2500, out)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N), "ns/window")
}
