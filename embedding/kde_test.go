package embedding

import (
	"math"
	"testing"

	"github.com/distfeat/distfeat/internal/numeric"
	"github.com/distfeat/distfeat/spec"
)

// kdeFamily compiles a joint hdd family with the given grid, KDE bandwidth and boundary
// (the other settings are irrelevant to the KDE; features are kept tiny).
func kdeFamily(t *testing.T, dim, grid int, h float64, boundary string) *hddFamily {
	t.Helper()
	return mustCompileHDD(t, hddTestSpec(dim, func(f *spec.Family) {
		f.Grid, f.KDEBandwidth, f.Boundary, f.Features, f.Basis = grid, h, boundary, 2, 1
	}))
}

// kdeRaw returns the unnormalised binned KDE of the sketch (density units: it integrates,
// by the midpoint rule, to the kernel mass kept inside [0,1]^d).
func kdeRaw(f *hddFamily, s *hddSketch, n int) []float64 {
	sc := f.newScratch()
	out := make([]float64, f.cells)
	f.kde.kdeMass(out, s.counts, f.gd, sc.tmpA, sc.tmpB)
	scale := float64(f.cells) / (float64(n) * numeric.FixedScale)
	for i := range out {
		out[i] *= scale
	}
	return out
}

func meanOf(v []float64) float64 {
	s := 0.0
	for _, x := range v {
		s += x
	}
	return s / float64(len(v))
}

// directKDE evaluates Σ_nodes weight·Π_axes (1/G)Σ_images φ_h(c − y) at every midpoint of a
// 2-D grid by brute force over all node pairs and all images (no truncation), in the
// units of kdeMass.
func directKDE(counts []int64, g int, h float64, reflect bool) []float64 {
	n := g + 2
	gf := float64(g)
	k1 := func(c, s float64) float64 {
		phi := func(d float64) float64 { return math.Exp(-d*d/(2*h*h)) / (h * math.Sqrt(2*math.Pi)) }
		if !reflect {
			return phi(c-s) / gf
		}
		v := 0.0
		for k := -20; k <= 20; k++ {
			v += phi(c-s-2*float64(k)) + phi(c+s-2*float64(k))
		}
		return v / gf
	}
	out := make([]float64, g*g)
	for i := 0; i < g; i++ {
		for j := 0; j < g; j++ {
			ci, cj := (float64(i)+0.5)/gf, (float64(j)+0.5)/gf
			v := 0.0
			for p := 0; p < n; p++ {
				for q := 0; q < n; q++ {
					if w := counts[p*n+q]; w != 0 {
						v += float64(w) * k1(ci, (float64(p)-0.5)/gf) * k1(cj, (float64(q)-0.5)/gf)
					}
				}
			}
			out[i*g+j] = v
		}
	}
	return out
}

// TestKDEConvolutionMatchesDirect compares the separable banded convolution with a direct
// O(G²·(G+2)²) evaluation from the same binned counts, for both boundaries and for a
// bandwidth wide enough that reflections wrap several times.
func TestKDEConvolutionMatchesDirect(t *testing.T) {
	for _, tc := range []struct {
		g        int
		h        float64
		boundary string
	}{{12, 0.07, "reflect"}, {12, 0.07, "none"}, {9, 0.6, "reflect"}, {9, 0.6, "none"}, {16, 0.01, "reflect"}} {
		f := kdeFamily(t, 2, tc.g, tc.h, tc.boundary)
		s := f.newSketch().(*hddSketch)
		u := hddBenchPoints(300, 2)
		u = append(u, 0, 0, 1, 1, 0, 1, 0.001, 0.999) // corners and faces
		s.add(u, 2)
		got := make([]float64, f.cells)
		sc := f.newScratch()
		f.kde.kdeMass(got, s.counts, 2, sc.tmpA, sc.tmpB)
		want := directKDE(s.counts, tc.g, tc.h, tc.boundary == "reflect")
		// Truncation at 5h drops ≤ erfc(5/√2) ≈ 5.7e-7 of each node's kernel per axis,
		// so the difference is below 2·5.7e-7 of the largest value (plus rounding).
		peak := 0.0
		for _, v := range want {
			peak = max(peak, v)
		}
		for i := range got {
			if d := math.Abs(got[i] - want[i]); d > 1.2e-6*peak {
				t.Fatalf("G=%d h=%g %s: cell %d: convolution %.10g, direct %.10g", tc.g, tc.h, tc.boundary, i, got[i], want[i])
			}
		}
	}
}

// TestKDEBinnedMatchesExact compares the binned KDE with the exact reflected KDE of the raw
// points. Linear binning replaces a point's kernel K(x−u), u at offset δ from the node
// left of it, by (1−δ/Δ)K(x−a) + (δ/Δ)K(x−a−Δ): same mass and mean, error
// ½δ(Δ−δ)K″(x−u) + O(Δ³). Its L1 norm per axis is ½δ(Δ−δ)·∫|K″| = ½δ(Δ−δ)·4φ(1)/h²,
// which averages (δ uniform) to (Δ/h)²·φ(1)/3 ≈ 0.049 at Δ/h = 0.78; over two axes the
// triangle inequality bounds the density's L1 error by ≈ 0.098. Errors of different points
// largely cancel, so the actual distance is far below; a half-cell misplacement of the
// grid would instead cost ≈ ½Δ·∫|K′| = ½(Δ/h)·2φ(0) ≈ 0.3 per axis.
func TestKDEBinnedMatchesExact(t *testing.T) {
	const g, h = 64, 0.02
	f := kdeFamily(t, 2, g, h, "reflect")
	s := f.newSketch().(*hddSketch)
	const n = 4000
	u := hddBenchPoints(n, 2)
	s.add(u, 2)
	got := kdeRaw(f, s, n)
	phi := func(d float64) float64 { return math.Exp(-d*d/(2*h*h)) / (h * math.Sqrt(2*math.Pi)) }
	k1 := func(c, x float64) float64 { return phi(c-x) + phi(c+x) + phi(c-(2-x)) }
	// Per-axis kernel tables: the exact KDE is then Σ_p K0[i][p]·K1[j][p]/n.
	k0, kk1 := make([][]float64, g), make([][]float64, g)
	for i := 0; i < g; i++ {
		c := (float64(i) + 0.5) / g
		k0[i], kk1[i] = make([]float64, n), make([]float64, n)
		for p := 0; p < n; p++ {
			k0[i][p], kk1[i][p] = k1(c, u[2*p]), k1(c, u[2*p+1])
		}
	}
	l1 := 0.0
	for i := 0; i < g; i++ {
		for j := 0; j < g; j++ {
			v := numeric.Dot(k0[i], kk1[j]) / n
			l1 += math.Abs(got[i*g+j]-v) / (g * g)
		}
	}
	phi1 := math.Exp(-0.5) / math.Sqrt(2*math.Pi)
	bound := 2 * (1.0 / g / h) * (1.0 / g / h) * phi1 / 3
	t.Logf("L1(binned, exact KDE) = %.4f (bound %.4f)", l1, bound)
	if l1 > bound {
		t.Errorf("L1 distance between binned and exact KDE %.4f > %.4f", l1, bound)
	}
}

// TestKDEBoundary: for points spread uniformly over the square (a regular lattice, so the
// test is noise-free), reflection gives the uniform density ≈ 1 everywhere including the
// edge cells and keeps all mass; without reflection the mass that leaks across each face,
// ∫₀¹ P(N(u,h²) < 0) du ≈ h/√(2π) per face, is lost and edge cells drop to ≈ ½–⅔.
func TestKDEBoundary(t *testing.T) {
	const g, h, side = 64, 0.02, 300
	u := make([]float64, 0, 2*side*side)
	for i := 0; i < side; i++ {
		for j := 0; j < side; j++ {
			u = append(u, (float64(i)+0.5)/side, (float64(j)+0.5)/side)
		}
	}
	n := side * side
	leak := h / math.Sqrt(2*math.Pi)
	for _, b := range []string{"reflect", "none"} {
		f := kdeFamily(t, 2, g, h, b)
		s := f.newSketch().(*hddSketch)
		s.add(u, 2)
		raw := kdeRaw(f, s, n)
		mass := meanOf(raw)
		edge := 0.0
		maxDev := 0.0
		for i := 0; i < g; i++ {
			edge += raw[i*g] / g // the column of cells touching the face u₂ = 0
			for j := 0; j < g; j++ {
				maxDev = max(maxDev, math.Abs(raw[i*g+j]-1))
			}
		}
		t.Logf("%s: mass %.6f, mean edge-cell density %.4f, max |p̂−1| %.2g", b, mass, edge, maxDev)
		switch b {
		case "reflect":
			// Reflection conserves mass up to the 5h truncation (≤ 1.2e-6); the lattice
			// is 4.7 points per h, so its discreteness is invisible after smoothing, and
			// the only remaining error is the binning of a non-aligned lattice: ≤ 1e-3.
			if math.Abs(mass-1) > 2e-6 {
				t.Errorf("reflect: mass %.8f, want 1", mass)
			}
			if maxDev > 1e-3 {
				t.Errorf("reflect: max |p̂ − 1| = %.3g, want ≈ 0", maxDev)
			}
		case "none":
			want := (1 - 2*leak) * (1 - 2*leak)
			if math.Abs(mass-want) > 1e-3 {
				t.Errorf("none: mass %.6f, want (1 − 2h/√2π)² = %.6f", mass, want)
			}
			// Edge cell centre at ½Δ = 0.39h from the face: Φ(0.39) ≈ 0.65 of its mass stays.
			if edge < 0.55 || edge > 0.75 {
				t.Errorf("none: edge-cell density %.3f, want ≈ 0.65", edge)
			}
		}
	}

	// Random uniform points: with reflection, the edge columns are unbiased (their mean
	// matches the interior within sampling noise); without, they are ~35% low.
	rng := NewRNG(3, "test/kde/uniform")
	const nr = 200000
	ur := make([]float64, 2*nr)
	for i := range ur {
		ur[i] = rng.Float64()
	}
	f := kdeFamily(t, 2, g, h, "reflect")
	s := f.newSketch().(*hddSketch)
	s.add(ur, 2)
	raw := kdeRaw(f, s, nr)
	var edge, inner float64
	for i := 0; i < g; i++ {
		edge += (raw[i*g] + raw[i*g+g-1] + raw[i] + raw[(g-1)*g+i]) / (4 * g)
		inner += raw[i*g+g/2] / g
	}
	// Each mean averages ~64–256 cells of a KDE whose pointwise relative s.d. is
	// 1/√(n·4πh²) ≈ 0.045 (edge cells: ×√2, reflected kernels overlap), correlated over
	// ~2h/Δ ≈ 3 cells: s.e. of the edge mean ≲ 0.045·√2·√(3/256) ≈ 0.007. Allow 0.03.
	if math.Abs(edge-1) > 0.03 || math.Abs(inner-1) > 0.03 {
		t.Errorf("reflect, uniform sample: edge mean %.4f, interior mean %.4f, want ≈ 1", edge, inner)
	}
}

func TestKDENormalize(t *testing.T) {
	d := []float64{0, 0, 0, 0}
	normalizeDensity(d, 1e-6)
	for _, v := range d {
		if v != 1 {
			t.Fatalf("empty grid: %v, want uniform 1", d)
		}
	}
	d = []float64{3, 1, 0, 0}
	normalizeDensity(d, 0.01)
	if d[0] != 3 || d[1] != 1 || d[2] != 0.01 || d[3] != 0.01 {
		t.Errorf("normalize [3 1 0 0] (mean 1 after ×1), floor 0.01: %v", d)
	}
}

// kdeTestCounts returns binned counts of a (G+2)² grid for the named window: empty, one
// point, points on the faces and corners, a random cloud, or random raw counts (any
// non-negative int64 up to 2⁴⁴, not only sums of binned points).
func kdeTestCounts(f *hddFamily, window string, rng *RNG) []int64 {
	s := f.newSketch().(*hddSketch)
	switch window {
	case "empty":
	case "single":
		s.add([]float64{rng.Float64(), rng.Float64()}, 2)
	case "faces":
		s.add([]float64{0, 0, 1, 1, 0, 1, 1, 0, 0, 0.5, 0.5, 1, 1e-12, 0.999999, 0.5, 0}, 2)
	case "cloud":
		s.add(hddBenchPointsSeeded(500, 2, rng.Uint64()), 2)
	case "raw":
		for i := range s.counts {
			if rng.Float64() < 0.7 {
				s.counts[i] = int64(rng.Uint64() >> 20)
			}
		}
	}
	return s.counts
}

// TestKDEMass2TBitIdentical: the AVX-512 d = 2 KDE (kdeMass2T, transposed output) equals
// the portable kdeMass transposed, and normalizeDensityT equals normalizeDensity, bit for
// bit: G odd, even, below and around the kernels' 8 lanes, narrow and wide bandwidths
// (reflections wrapping several times), both boundaries, empty and edge-case windows, and
// floors that leave no cell, some cells or every cell at the floor.
func TestKDEMass2TBitIdentical(t *testing.T) {
	if !numeric.KDELanesSupported(numeric.PathAVX512) {
		t.Skip("no AVX-512 kernels on this machine or build: kdeMass is the only path")
	}
	rng := NewRNG(21, "kde-2t")
	for _, g := range []int{2, 3, 5, 7, 8, 9, 15, 16, 17, 33, 64, 65} {
		for _, h := range []float64{0.004, 0.02, 0.11, 0.6} {
			for _, boundary := range []string{"reflect", "none"} {
				f := kdeFamily(t, 2, g, h, boundary)
				sc := f.newScratch()
				ws := f.kde.newKDET()
				for _, window := range []string{"empty", "single", "faces", "cloud", "raw"} {
					counts := kdeTestCounts(f, window, rng)
					want := make([]float64, f.cells)
					f.kde.kdeMass(want, counts, 2, sc.tmpA, sc.tmpB)
					wantT := make([]float64, f.cells)
					transposeGrid(wantT, want, g)
					got := make([]float64, f.cells)
					f.kde.kdeMass2T(got, counts, ws)
					for i := range got {
						if math.Float64bits(got[i]) != math.Float64bits(wantT[i]) {
							t.Fatalf("G=%d h=%g %s %s: cell %d: kdeMass2T %v, kdeMass %v", g, h, boundary, window, i, got[i], wantT[i])
						}
					}
					for _, floor := range []float64{0, 1e-6, 0.5, 1e9} {
						d, dT := append([]float64(nil), want...), append([]float64(nil), got...)
						normalizeDensity(d, floor)
						normalizeDensityT(dT, g, floor)
						transposeGrid(wantT, d, g)
						for i := range dT {
							if math.Float64bits(dT[i]) != math.Float64bits(wantT[i]) {
								t.Fatalf("G=%d h=%g %s %s floor %g: cell %d: normalizeDensityT %v, normalizeDensity %v", g, h, boundary, window, floor, i, dT[i], wantT[i])
							}
						}
					}
				}
			}
		}
	}
}

// TestKDEOperatorWithinSpecBound: spec validation sizes an hdd family's KDE operator from
// spec.KDETaps before anything is allocated; the operator the family builds never has a
// row longer than that bound, and the bound is not loose by more than a few taps (else
// validation would refuse grids that fit).
func TestKDEOperatorWithinSpecBound(t *testing.T) {
	for _, tc := range []struct {
		grid     int
		h        float64
		boundary string
	}{
		{64, 0.02, "reflect"}, {64, 0.02, "none"}, {8, 0.02, "reflect"}, {2, 0.5, "reflect"},
		{1000, 0.001, "reflect"}, {1000, 0.0003, "none"}, {300, 0.3, "reflect"}, {50, 2, "reflect"},
		{2048, 0.02, "reflect"}, {129, 0.0117, "none"},
	} {
		k := newKDEAxis(tc.grid, tc.h, tc.boundary == "reflect")
		bound := spec.KDETaps(tc.grid, tc.h)
		longest := 0
		for i := 0; i < tc.grid; i++ {
			longest = max(longest, k.off[i+1]-k.off[i])
		}
		if float64(longest) > bound {
			t.Errorf("grid %d, h %g, %s: a row has %d taps, above the spec's bound %g", tc.grid, tc.h, tc.boundary, longest, bound)
		}
		if float64(longest) < bound-4 {
			t.Errorf("grid %d, h %g, %s: the longest row has %d taps, the spec's bound %g is loose", tc.grid, tc.h, tc.boundary, longest, bound)
		}
	}
}
