package embedding

import (
	"encoding/json"
	"fmt"
	"math"
	"math/big"
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

// rffDotDefinition is the summation order of numeric.RFFDot written as directly as possible: lane
// j mod 8 gets fma(ω_j, a_j, lane) in increasing j, then the fixed reduction tree.
func rffDotDefinition(row, a []float64) float64 {
	var l [8]float64
	for j := range row {
		l[j%8] = math.FMA(row[j], a[j], l[j%8])
	}
	return ((l[0] + l[4]) + (l[2] + l[6])) + ((l[1] + l[5]) + (l[3] + l[7]))
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

// TestRFFDotPathsBitIdentical forces every numeric.RFFDot path on the same inputs and requires
// bit-identical θ, equal to the definition (rffDotDefinition): lengths around every
// multiple of 8 (tails 0..7, tiny n), row counts that exercise the 8-row (AVX-512) and
// 6-row (AVX2) groups and the single-row remainder, and values that produce −0 lanes,
// signed zeros and overflow.
func TestRFFDotPathsBitIdentical(t *testing.T) {
	paths := dotPaths(t)
	rng := NewRNG(5, "rffdot-bits")
	var ns []int
	for n := 1; n <= 26; n++ {
		ns = append(ns, n)
	}
	ns = append(ns, 31, 63, 64, 65, 100, 127, 999, 1000, 1001, 1024, 1031)
	rowCounts := []int{1, 2, 3, 4, 5, 6, 7, 8, 9, 12, 13, 15, 16, 17, 31, 64}
	for _, n := range ns {
		for _, rows := range rowCounts {
			if n >= 500 && rows > 17 {
				continue
			}
			scale := []float64{1, 1e-3, 1e3}[(n+rows)%3]
			omega := make([]float64, rows*n)
			for i := range omega {
				omega[i] = rffDotValue(rng, scale)
			}
			a := make([]float64, n)
			for i := range a {
				a[i] = rffDotValue(rng, 1)
			}
			if (n+rows)%5 == 0 { // all-negative-zero products with a zero start: lanes stay +0
				for i := range a {
					a[i] = math.Copysign(0, -1)
				}
			}
			want := make([]float64, rows)
			for r := range want {
				want[r] = rffDotDefinition(omega[r*n:(r+1)*n], a)
			}
			for _, p := range paths {
				got := make([]float64, rows+1)
				got[rows] = 12345 // sentinel: nothing is written past theta
				numeric.RFFDot(p, omega, n, a, got[:rows])
				if got[rows] != 12345 {
					t.Fatalf("n=%d rows=%d path %v wrote past theta", n, rows, p)
				}
				for r := range want {
					if math.Float64bits(got[r]) != math.Float64bits(want[r]) {
						t.Fatalf("n=%d rows=%d path %v row %d: θ = %v (%#x), definition %v (%#x)",
							n, rows, p, r, got[r], math.Float64bits(got[r]), want[r], math.Float64bits(want[r]))
					}
				}
			}
		}
	}
}

// TestRFFDotNegativeZeroLane pins the tail semantics: a lane left at −0 by an underflowing
// product must not be touched by an incomplete last block (a fma(0, 0, −0) would make it +0).
func TestRFFDotNegativeZeroLane(t *testing.T) {
	for _, n := range []int{9, 10, 15, 17} {
		omega := make([]float64, n)
		a := make([]float64, n)
		for j := range a {
			omega[j], a[j] = -1e-200, 1e-200 // every product underflows to −0
		}
		for _, p := range dotPaths(t) {
			theta := []float64{1}
			numeric.RFFDot(p, omega, n, a, theta)
			if theta[0] != 0 || !math.Signbit(theta[0]) {
				t.Errorf("n=%d path %v: θ = %v (signbit %v), want −0", n, p, theta[0], math.Signbit(theta[0]))
			}
		}
	}
	for _, p := range dotPaths(t) { // n = 0: θ = +0
		theta := []float64{7, 7}
		numeric.RFFDot(p, nil, 0, nil, theta)
		if theta[0] != 0 || math.Signbit(theta[0]) || theta[1] != 0 {
			t.Errorf("n=0 path %v: θ = %v, want +0", p, theta)
		}
	}
}

// TestRFFDotAccuracy compares θ with the exactly rounded inner product (math/big): the
// error must stay within the usual bound γ_{n/8+3}·Σ|ω_j a_j| for this summation tree.
func TestRFFDotAccuracy(t *testing.T) {
	rng := NewRNG(6, "rffdot-accuracy")
	for _, n := range []int{1, 5, 8, 13, 100, 1000, 4093} {
		const rows = 9
		omega := make([]float64, rows*n)
		for i := range omega {
			omega[i] = rng.Normal() * 3
		}
		a := make([]float64, n)
		for i := range a {
			a[i] = rng.Normal()
		}
		for _, p := range dotPaths(t) {
			theta := make([]float64, rows)
			numeric.RFFDot(p, omega, n, a, theta)
			for r := range theta {
				exact := new(big.Float).SetPrec(4096)
				absSum := 0.0
				for j := 0; j < n; j++ {
					w := omega[r*n+j]
					exact.Add(exact, new(big.Float).SetPrec(4096).Mul(big.NewFloat(w), big.NewFloat(a[j])))
					absSum += math.Abs(w * a[j])
				}
				ref, _ := exact.Float64()
				k := float64(n/8 + 4)
				bound := k * 0x1p-53 / (1 - k*0x1p-53) * absSum
				if err := math.Abs(theta[r] - ref); err > bound {
					t.Errorf("n=%d path %v row %d: |θ − exact| = %g > bound %g", n, p, r, err, bound)
				}
			}
		}
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
		for r := 0; r < tc.features/2; r++ {
			s, c := math.Sincos(rffDotDefinition(m.omega[r*tc.in:(r+1)*tc.in], a))
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

// TestSincosFlat requires numeric.SincosFlat and numeric.CosPiFlat to match sincos and cosPi bit for bit:
// random arguments at several scales, quadrant boundaries, signed zeros, the polynomial
// range's edge and the fallback beyond it.
func TestSincosFlat(t *testing.T) {
	check := func(theta float64) {
		t.Helper()
		s, c := numeric.SincosFlat(theta)
		ws, wc := numeric.Sincos(theta)
		if math.Float64bits(s) != math.Float64bits(ws) || math.Float64bits(c) != math.Float64bits(wc) {
			if !(math.IsNaN(s) && math.IsNaN(ws) && math.IsNaN(c) && math.IsNaN(wc)) {
				t.Fatalf("numeric.SincosFlat(%v) = (%v, %v), numeric.Sincos (%v, %v)", theta, s, c, ws, wc)
			}
		}
	}
	rng := NewRNG(8, "numeric.Sincos-flat")
	for _, scale := range []float64{1e-300, 1e-8, 1, math.Pi, 10, 1e4, 1e9, numeric.SincosMaxArg, 4 * numeric.SincosMaxArg} {
		for range 20000 {
			check((2*rng.Float64() - 1) * scale)
		}
	}
	for k := -64; k <= 64; k++ {
		base := float64(k) * math.Pi / 4
		check(base)
		check(math.Nextafter(base, math.Inf(1)))
		check(math.Nextafter(base, math.Inf(-1)))
	}
	for _, theta := range []float64{0, math.Copysign(0, -1), numeric.SincosMaxArg, -numeric.SincosMaxArg,
		math.Nextafter(numeric.SincosMaxArg, math.Inf(1)), math.MaxFloat64, math.Inf(1), math.Inf(-1), math.NaN()} {
		check(theta)
	}
	for range 100000 {
		x := rng.Float64()*3 - 1
		if a, b := numeric.CosPiFlat(x), numeric.CosPi(x); math.Float64bits(a) != math.Float64bits(b) {
			t.Fatalf("numeric.CosPiFlat(%v) = %v, numeric.CosPi %v", x, a, b)
		}
	}
}
