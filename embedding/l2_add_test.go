package embedding

import (
	"fmt"
	"math"
	"slices"
	"testing"

	"github.com/distfeat/distfeat/internal/numeric"
)

// l2AddReference is the original l2 add, verbatim (per point: the factor tables with
// cosPi, then each ψ_α over its non-zero axes through start/fidx, numeric.ToFixed per term). The
// specialised paths must reproduce it bit for bit.
func l2AddReference(l *l2Family, acc []int64, u []float64, d int) {
	stride := l.kmax + 1
	tab := make([]float64, d*stride)
	start, fidx := l.start, l.fidx
	acc = acc[:len(start)-1]
	for i := 0; i+d <= len(u); i += d {
		for j := 0; j < d; j++ {
			row := tab[j*stride : (j+1)*stride]
			row[0] = 1
			if stride == 1 {
				continue
			}
			c1 := numeric.CosPi(u[i+j])
			row[1] = c1
			two := 2 * c1
			for k := 2; k < stride; k++ {
				row[k] = math.FMA(two, row[k-1], -row[k-2])
			}
		}
		for m := range acc {
			a, b := start[m], start[m+1]
			if a == b {
				acc[m] += 1 << 32
				continue
			}
			p := tab[fidx[a]]
			for _, f := range fidx[a+1 : b] {
				p = float64(p * tab[f])
			}
			acc[m] += numeric.ToFixed(p)
		}
	}
}

// l2TestPoints draws n points: mostly uniform in [0,1]^d, with exact 0, ½ and 1
// coordinates and a few outside the unit cube (Add does not require normalised input to
// be in range for bit-identity).
func l2TestPoints(rng *RNG, n, d int) []float64 {
	u := make([]float64, n*d)
	for i := range u {
		switch v := rng.Float64(); {
		case v < 0.05:
			u[i] = 0
		case v < 0.08:
			u[i] = 1
		case v < 0.10:
			u[i] = 0.5
		case v < 0.12:
			u[i] = rng.Normal() * 10
		default:
			u[i] = rng.Float64()
		}
	}
	return u
}

// TestL2AddPathsBitIdentical compares, bit for bit, the accumulators of add (specialised
// for d ≤ 3, on every numeric.L2Products kernel path), addGeneric and the original code, for
// d = 1..4, several bases and point counts around the block sizes, added in one call and
// in uneven pieces.
func TestL2AddPathsBitIdentical(t *testing.T) {
	rng := NewRNG(11, "l2-add-bits")
	paths := dotPaths(t)
	for d := 1; d <= 4; d++ {
		for _, basis := range []int{1, 2, 3, 5, 10, 37, 100, 333, 1000, 5000} {
			if d == 4 && basis > 1000 {
				continue
			}
			fam := mustNew(t, l2Spec(d, basis)).fams[0].(*l2Family)
			wantSpec := 0
			switch {
			case basis == 1 || d > 3:
			case d == 1:
				wantSpec = 1
			case d*(fam.kmax+1)*numeric.L2Block <= l2MaxFlatTable:
				wantSpec = d
			}
			if fam.spec != wantSpec {
				t.Errorf("d=%d basis=%d: sp = %d, want %d", d, basis, fam.spec, wantSpec)
			}
			for _, n := range []int{1, 3, 4, 7, 8, 9, 15, 16, 17, 100, 1003} {
				if basis >= 1000 && n > 100 {
					continue
				}
				u := l2TestPoints(rng, n, d)
				want := make([]int64, basis)
				l2AddReference(fam, want, u, d)
				g := fam.newSketch().(*l2Sketch)
				g.addGeneric(u, d)
				if !slices.Equal(g.acc, want) {
					t.Fatalf("d=%d basis=%d n=%d: addGeneric differs from the original code at %d", d, basis, n, firstDiff(g.acc, want))
				}
				for _, p := range paths {
					fam.path = p
					s := fam.newSketch().(*l2Sketch)
					s.add(u, d)
					if !slices.Equal(s.acc, want) {
						t.Fatalf("d=%d basis=%d n=%d path %v: add (sp %d) differs from the original code at %d",
							d, basis, n, p, fam.spec, firstDiff(s.acc, want))
					}
					// Uneven pieces: block boundaries fall elsewhere; integer sums must agree.
					s = fam.newSketch().(*l2Sketch)
					for i := 0; i < n; {
						k := min(n-i, 1+int(rng.Uint64()%13))
						s.add(u[i*d:(i+k)*d], d)
						i += k
					}
					if !slices.Equal(s.acc, want) {
						t.Fatalf("d=%d basis=%d n=%d path %v: add in pieces differs from the original code at %d",
							d, basis, n, p, firstDiff(s.acc, want))
					}
				}
			}
		}
	}
}

func firstDiff(a, b []int64) int {
	for i := range a {
		if a[i] != b[i] {
			return i
		}
	}
	return -1
}

// BenchmarkL2AddPaths compares the specialised add on every kernel path with addGeneric
// (|V| = 100).
func BenchmarkL2AddPaths(b *testing.B) {
	for _, d := range []int{1, 2, 3} {
		e := mustNew(b, l2Spec(d, 100))
		fam := e.fams[0].(*l2Family)
		u := uniformPoints(NewRNG(1, "bench"), benchBatch, d)
		for _, p := range []numeric.Path{numeric.PathAVX512, numeric.PathAVX2, numeric.PathPortable} {
			if d == 1 && p != numeric.PathPortable {
				continue // add1 has no kernel
			}
			b.Run(fmt.Sprintf("d=%d/%v", d, p), func(b *testing.B) {
				if !numeric.PathSupported(p) {
					b.Skipf("path %v is not supported on this machine", p)
				}
				saved := fam.path
				fam.path = p
				defer func() { fam.path = saved }()
				s := fam.newSketch().(*l2Sketch)
				for b.Loop() {
					s.add(u, d)
				}
				reportPoints(b, benchBatch)
			})
		}
		b.Run(fmt.Sprintf("d=%d/generic", d), func(b *testing.B) {
			s := fam.newSketch().(*l2Sketch)
			for b.Loop() {
				s.addGeneric(u, d)
			}
			reportPoints(b, benchBatch)
		})
	}
}
