package numeric

import (
	"math"
	"testing"
)

// TestHDDCellsPaths: HDDCells on every path equals the scalar definition with sincos bit
// for bit: cell counts around the kernel's 8, runs of equal ln p̂ (cells at the floor),
// zeros, every quadrant of λ·ln p̂, and the fallback when |λ·ln p̂| could leave the
// polynomial kernel's range.
func TestHDDCellsPaths(t *testing.T) {
	rng := NewRNG(13, "hdd-cells")
	for _, n := range []int{1, 7, 8, 9, 64, 100, 4096} {
		for _, lam := range []float64{0.01, 0.3, 1.7, 16, 3e9, 1e12} {
			sq, lnp := make([]float64, n), make([]float64, n)
			maxAbsL := 0.0
			for c := range lnp {
				switch u := rng.Float64(); {
				case u < 0.2:
					lnp[c] = math.Log(1e-6) // the default floor
				case u < 0.3:
					lnp[c] = 0
				case u < 0.35 && c > 0:
					lnp[c] = lnp[c-1]
				default:
					lnp[c] = rng.Normal() * 5
				}
				sq[c] = math.Sqrt(math.Exp(lnp[c]))
				maxAbsL = max(maxAbsL, math.Abs(lnp[c]))
			}
			cr, ci := rng.Normal(), rng.Normal()
			wantR, wantI := make([]float64, n), make([]float64, n)
			for c, l := range lnp {
				sn, cs := Sincos(lam * l)
				re, im := float64(sq[c]*cs)-1, float64(sq[c]*sn)
				wantR[c] = float64(cr*re) - float64(ci*im)
				wantI[c] = float64(ci*re) + float64(cr*im)
			}
			for _, p := range dotPaths(t) {
				fr, fi := make([]float64, n), make([]float64, n)
				HDDCells(p, lam, cr, ci, sq, lnp, fr, fi, maxAbsL)
				for c := range fr {
					if math.Float64bits(fr[c]) != math.Float64bits(wantR[c]) || math.Float64bits(fi[c]) != math.Float64bits(wantI[c]) {
						t.Fatalf("n=%d λ=%v path %v cell %d (ln p̂ = %v): (%v, %v), definition (%v, %v)",
							n, lam, p, c, lnp[c], fr[c], fi[c], wantR[c], wantI[c])
					}
				}
			}
		}
	}
}

// TestHDDLogSqrtPaths: HDDLogSqrt on every path equals the definition (math.Sqrt, and
// Log for p > 0, else 0) bit for bit, with the same largest |ln p|: cell counts
// around the kernel's 8, runs at the floor, zeros, negative values, subnormals, +Inf and
// NaN (which send their block of 8 to the portable code), values at √2/2 and powers of 2.
func TestHDDLogSqrtPaths(t *testing.T) {
	rng := NewRNG(22, "hdd-log-sqrt")
	special := []float64{0, math.Copysign(0, -1), -1, 1, 2, 0.5, math.Sqrt2 / 2,
		math.Nextafter(math.Sqrt2/2, 0), math.Nextafter(math.Sqrt2/2, 1), 1e-6, 1e300,
		math.MaxFloat64, 0x1p-1022, 0x1p-1074, 3e-310, math.Inf(1), math.Inf(-1), math.NaN()}
	for _, n := range []int{1, 7, 8, 9, 16, 17, 100, 4096} {
		for _, mix := range []string{"plain", "special"} {
			p := make([]float64, n)
			for c := range p {
				switch u := rng.Float64(); {
				case u < 0.3:
					p[c] = 1e-6
				case mix == "special" && u < 0.35:
					p[c] = special[int(rng.Uint64()%uint64(len(special)))]
				default:
					p[c] = math.Exp(rng.Normal() * 3)
				}
			}
			wantS, wantL := make([]float64, n), make([]float64, n)
			wantMax := 0.0
			for c, v := range p {
				wantS[c] = math.Sqrt(v)
				if v > 0 {
					wantL[c] = Log(v)
				}
				wantMax = max(wantMax, math.Abs(wantL[c]))
			}
			for _, path := range dotPaths(t) {
				sq, lnp := make([]float64, n), make([]float64, n)
				gotMax := HDDLogSqrt(path, p, sq, lnp)
				if math.Float64bits(gotMax) != math.Float64bits(wantMax) {
					t.Fatalf("n=%d %s path %v: max |ln p| %v, definition %v", n, mix, path, gotMax, wantMax)
				}
				for c := range p {
					if math.Float64bits(sq[c]) != math.Float64bits(wantS[c]) || math.Float64bits(lnp[c]) != math.Float64bits(wantL[c]) {
						t.Fatalf("n=%d %s path %v cell %d (p = %v): (%v, %v), definition (%v, %v)", n, mix, path, c, p[c], sq[c], lnp[c], wantS[c], wantL[c])
					}
				}
			}
		}
	}
}

// TestHDDCellsRunsPaths: HDDCells on every path equals the scalar definition bit for bit
// when whole blocks of 8 cells repeat the cell before them (the AVX-512 kernel copies that
// cell's results) and when they only nearly do: same ln p̂ with another √p̂, same √p̂ with
// another ln p̂, +0 against −0, and runs that start or end inside a block.
func TestHDDCellsRunsPaths(t *testing.T) {
	rng := NewRNG(24, "hdd-cells-runs")
	const n = 256
	for _, lam := range []float64{0.3, 7} {
		for trial := 0; trial < 20; trial++ {
			sq, lnp := make([]float64, n), make([]float64, n)
			for c := 0; c < n; {
				run := 1 + int(rng.Uint64()%20)
				l := rng.Normal() * 4
				s := math.Sqrt(math.Exp(l))
				for k := 0; k < run && c < n; k, c = k+1, c+1 {
					sq[c], lnp[c] = s, l
					switch u := rng.Float64(); {
					case u < 0.03:
						sq[c] = math.Nextafter(s, 0) // same ln p̂, another √p̂
					case u < 0.06:
						lnp[c] = math.Nextafter(l, 0) // same √p̂, another ln p̂
					case u < 0.09:
						sq[c], lnp[c] = 1, 0
					case u < 0.12:
						sq[c], lnp[c] = 1, math.Copysign(0, -1)
					}
				}
			}
			maxAbsL := 0.0
			for _, l := range lnp {
				maxAbsL = max(maxAbsL, math.Abs(l))
			}
			cr, ci := rng.Normal(), rng.Normal()
			for _, path := range dotPaths(t) {
				fr, fi := make([]float64, n), make([]float64, n)
				HDDCells(path, lam, cr, ci, sq, lnp, fr, fi, maxAbsL)
				for c, l := range lnp {
					sn, cs := Sincos(lam * l)
					re, im := float64(sq[c]*cs)-1, float64(sq[c]*sn)
					wr, wi := float64(cr*re)-float64(ci*im), float64(ci*re)+float64(cr*im)
					if path == PathPortable && l == 0 && math.Signbit(l) {
						continue // HDDCellsGo reuses sincos across ±0 (equal as floats; ln p̂ is never −0)
					}
					if math.Float64bits(fr[c]) != math.Float64bits(wr) || math.Float64bits(fi[c]) != math.Float64bits(wi) {
						t.Fatalf("λ=%v trial %d path %v cell %d (√p̂ %v, ln p̂ %v): (%v, %v), definition (%v, %v)",
							lam, trial, path, c, sq[c], lnp[c], fr[c], fi[c], wr, wi)
					}
				}
			}
		}
	}
}
