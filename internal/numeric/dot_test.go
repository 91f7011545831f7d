package numeric

import (
	"math"
	"math/big"
	"testing"
)

// dotPaths lists every Path this machine can run, portable first.
func dotPaths(tb testing.TB) []Path {
	var ps []Path
	for _, p := range []Path{PathPortable, PathAVX2, PathAVX512} {
		if PathSupported(p) {
			ps = append(ps, p)
		} else {
			tb.Logf("path %v is not supported on this machine; compared paths exclude it", p)
		}
	}
	return ps
}

// rffDotDefinition is the summation order of RFFDot written as directly as possible: lane
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

// TestRFFDotPathsBitIdentical forces every RFFDot path on the same inputs and requires
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
				RFFDot(p, omega, n, a, got[:rows])
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
			RFFDot(p, omega, n, a, theta)
			if theta[0] != 0 || !math.Signbit(theta[0]) {
				t.Errorf("n=%d path %v: θ = %v (signbit %v), want −0", n, p, theta[0], math.Signbit(theta[0]))
			}
		}
	}
	for _, p := range dotPaths(t) { // n = 0: θ = +0
		theta := []float64{7, 7}
		RFFDot(p, nil, 0, nil, theta)
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
			RFFDot(p, omega, n, a, theta)
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

// TestRFFDotBatchBitIdentical: every θ of RFFDotBatch, on every path, equals the definition
// of RFFDot's summation order bit for bit, for window and row counts around the tile
// kernels' 4 rows × 6 and × 4 windows and lengths with every tail n mod 8, including values
// that make −0 lanes.
func TestRFFDotBatchBitIdentical(t *testing.T) {
	rng := NewRNG(11, "rffdot-batch")
	for _, n := range []int{1, 2, 7, 8, 9, 15, 16, 17, 63, 100, 1000, 1001} {
		for _, rows := range []int{1, 3, 4, 5, 8, 11, 12} {
			for _, nw := range []int{1, 3, 4, 5, 6, 7, 9, 10, 11, 12, 13, 16} {
				omega := make([]float64, rows*n)
				for i := range omega {
					omega[i] = rffDotValue(rng, 1)
				}
				a := make([]float64, nw*n)
				for i := range a {
					a[i] = rffDotValue(rng, 1)
				}
				if (n+rows+nw)%7 == 0 { // −0 inputs: lanes must stay +0 (see TestRFFDotNegativeZeroLane)
					for i := range a[:n] {
						a[i] = math.Copysign(0, -1)
					}
				}
				ldt := rows + 3
				for _, p := range dotPaths(t) {
					theta := make([]float64, (nw-1)*ldt+rows+1)
					sentinel := len(theta) - 1
					theta[sentinel] = 777
					RFFDotBatch(p, omega, n, rows, a, nw, theta[:sentinel], ldt)
					if theta[sentinel] != 777 {
						t.Fatalf("n=%d rows=%d nw=%d path %v wrote past theta", n, rows, nw, p)
					}
					for w := 0; w < nw; w++ {
						for r := 0; r < rows; r++ {
							want := rffDotDefinition(omega[r*n:(r+1)*n], a[w*n:(w+1)*n])
							if got := theta[w*ldt+r]; math.Float64bits(got) != math.Float64bits(want) {
								t.Fatalf("n=%d rows=%d nw=%d path %v window %d row %d: %v (%#x), definition %v (%#x)",
									n, rows, nw, p, w, r, got, math.Float64bits(got), want, math.Float64bits(want))
							}
						}
					}
				}
			}
		}
	}
}

// rffEmitGo is the portable twin of RFFEmitSIMD (the loop of embedding's rff.emit):
// out[2i] = float32(scale·sin θ_i), out[2i+1] = float32(scale·cos θ_i).
func rffEmitGo(theta []float64, scale float64, out []float32) {
	out = out[:2*len(theta)]
	for i, t := range theta {
		s, c := SincosFlat(t)
		out[2*i] = float32(scale * s)
		out[2*i+1] = float32(scale * c)
	}
}

// TestRFFEmitSIMDBitIdentical: the frequencies RFFEmitSIMD does (a multiple of 8 with
// AVX-512, none otherwise) have rffEmitGo's bits, for lengths around 8 and arguments in
// every quadrant up to SincosMaxArg, ±0 and multiples of π/2 (the caller checks the range).
func TestRFFEmitSIMDBitIdentical(t *testing.T) {
	rng := NewRNG(14, "rff-emit-simd")
	for _, n := range []int{1, 7, 8, 9, 16, 100, 3500} {
		theta := make([]float64, n)
		for i := range theta {
			switch u := rng.Float64(); {
			case u < 0.05:
				theta[i] = math.Copysign(0, -1)
			case u < 0.15:
				theta[i] = float64(int(rng.Float64()*40)-20) * math.Pi / 2
			case u < 0.2:
				theta[i] = (2*rng.Float64() - 1) * SincosMaxArg
			default:
				theta[i] = rng.Normal() * 30
			}
		}
		scale := math.Sqrt(2 / float64(2*n))
		want := make([]float32, 2*n)
		rffEmitGo(theta, scale, want)
		for _, p := range dotPaths(t) {
			got := make([]float32, 2*n)
			k := RFFEmitSIMD(p, theta, scale, got)
			if k%8 != 0 || k > n || (k == 0) == (p == PathAVX512 && n >= 8 && PathSupported(PathAVX512)) {
				t.Fatalf("n=%d path %v: RFFEmitSIMD did %d frequencies", n, p, k)
			}
			for i := range got[:2*k] {
				if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
					t.Fatalf("n=%d path %v feature %d (θ = %v): %v, portable %v", n, p, i, theta[i/2], got[i], want[i])
				}
			}
		}
	}
}
