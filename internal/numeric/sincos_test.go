package numeric

import (
	"math"
	"testing"
)

// TestSincosAccuracy checks the polynomial kernel against math.Sin/math.Cos (accurate to
// about 1 ulp) over several argument scales up to SincosMaxArg. The brief requires 1e-7
// absolute; the kernel is designed for ~1e-15, so the test asserts 1e-13: any loss of a
// coefficient or reduction step would show up by orders of magnitude, not in the last bits.
func TestSincosAccuracy(t *testing.T) {
	rng := NewRNG(1, "Sincos-accuracy")
	const tol = 1e-13
	for _, scale := range []float64{1, math.Pi / 4, 10, 100, 1e4, 1e6, 1e9, SincosMaxArg} {
		worst := 0.0
		for i := 0; i < 200000; i++ {
			theta := (2*rng.Float64() - 1) * scale
			s, c := sincosPoly(theta)
			es, ec := math.Sin(theta), math.Cos(theta)
			worst = max(worst, math.Abs(s-es), math.Abs(c-ec))
		}
		t.Logf("|θ| ≤ %g: max abs error %.3g", scale, worst)
		if worst > tol {
			t.Errorf("|θ| ≤ %g: max abs error %g > %g", scale, worst, tol)
		}
	}
	// Quadrant boundaries and special points.
	for k := -40; k <= 40; k++ {
		for _, off := range []float64{-1e-9, 0, 1e-9} {
			theta := float64(k)*math.Pi/4 + off
			s, c := sincosPoly(theta)
			if math.Abs(s-math.Sin(theta)) > tol || math.Abs(c-math.Cos(theta)) > tol {
				t.Errorf("θ=%v: got (%v, %v), want (%v, %v)", theta, s, c, math.Sin(theta), math.Cos(theta))
			}
		}
	}
	if s, c := sincosPoly(0); s != 0 || c != 1 {
		t.Errorf("sincosPoly(0) = (%v, %v), want (0, 1)", s, c)
	}
}

// TestSincosFallback checks sincos beyond the polynomial range and on non-finite input.
func TestSincosFallback(t *testing.T) {
	for _, theta := range []float64{3 * SincosMaxArg, -1e300, math.MaxFloat64} {
		s, c := Sincos(theta)
		es, ec := math.Sincos(theta)
		if s != es || c != ec {
			t.Errorf("Sincos(%g) = (%v, %v), want math.Sincos (%v, %v)", theta, s, c, es, ec)
		}
	}
	for _, theta := range []float64{math.NaN(), math.Inf(1), math.Inf(-1)} {
		if s, c := Sincos(theta); !math.IsNaN(s) || !math.IsNaN(c) {
			t.Errorf("Sincos(%v) = (%v, %v), want NaN", theta, s, c)
		}
	}
}

func fmaF(x, y, z float64) float64 { return math.FMA(x, y, z) }

// TestSincosFlat requires SincosFlat and CosPiFlat to match sincos and cosPi bit for bit:
// random arguments at several scales, quadrant boundaries, signed zeros, the polynomial
// range's edge and the fallback beyond it.
func TestSincosFlat(t *testing.T) {
	check := func(theta float64) {
		t.Helper()
		s, c := SincosFlat(theta)
		ws, wc := Sincos(theta)
		if math.Float64bits(s) != math.Float64bits(ws) || math.Float64bits(c) != math.Float64bits(wc) {
			if !(math.IsNaN(s) && math.IsNaN(ws) && math.IsNaN(c) && math.IsNaN(wc)) {
				t.Fatalf("SincosFlat(%v) = (%v, %v), Sincos (%v, %v)", theta, s, c, ws, wc)
			}
		}
	}
	rng := NewRNG(8, "numeric.Sincos-flat")
	for _, scale := range []float64{1e-300, 1e-8, 1, math.Pi, 10, 1e4, 1e9, SincosMaxArg, 4 * SincosMaxArg} {
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
	for _, theta := range []float64{0, math.Copysign(0, -1), SincosMaxArg, -SincosMaxArg,
		math.Nextafter(SincosMaxArg, math.Inf(1)), math.MaxFloat64, math.Inf(1), math.Inf(-1), math.NaN()} {
		check(theta)
	}
	for range 100000 {
		x := rng.Float64()*3 - 1
		if a, b := CosPiFlat(x), CosPi(x); math.Float64bits(a) != math.Float64bits(b) {
			t.Fatalf("CosPiFlat(%v) = %v, CosPi %v", x, a, b)
		}
	}
}
