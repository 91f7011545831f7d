package embedding

import (
	"errors"
	"fmt"
	"math"
	"sync"
	"testing"

	"github.com/distfeat/distfeat/internal/numeric"
	"github.com/distfeat/distfeat/spec"
)

// hddTestSpec is a resolved spec with one hdd family at the default spec's settings
// (hdd_js), modified by mod.
func hddTestSpec(dim int, mod func(*spec.Family)) *spec.Spec {
	fam := spec.Family{Name: "hdd_js", Kind: "hdd", Divergence: "js", Features: 4096, Sigma: 0.5,
		Lambdas: 5, LambdaSampling: "stratified", Basis: 100, Grid: 64, KDEBandwidth: 0.02,
		Boundary: "reflect", DensityFloor: 1e-6, Mode: "joint"}
	if mod != nil {
		mod(&fam)
	}
	lo, hi := make([]float64, dim), make([]float64, dim)
	for i := range hi {
		hi[i] = 1
	}
	return &spec.Spec{Version: 1, Seed: 42, Dim: dim, Bounds: spec.Bounds{Lo: lo, Hi: hi},
		OutOfBounds: "clip", Families: []spec.Family{fam}}
}

func mustCompileHDD(tb testing.TB, sp *spec.Spec) *hddFamily {
	tb.Helper()
	f, err := compileHDD(sp, 0)
	if err != nil {
		tb.Fatalf("compileHDD: %v", err)
	}
	return f.(*hddFamily)
}

// truncNormal is the N(m, s²) density truncated to [0, 1].
func truncNormal(x, m, s float64) float64 {
	if x < 0 || x > 1 {
		return 0
	}
	z := 0.5 * (math.Erf((1-m)/(s*math.Sqrt2)) - math.Erf(-m/(s*math.Sqrt2)))
	d := (x - m) / s
	return math.Exp(-0.5*d*d) / (s * math.Sqrt(2*math.Pi) * z)
}

// convergence test densities on [0,1]², smooth and bounded away from 0.
func exactP(x, y float64) float64 { return truncNormal(x, 0.35, 0.2) * truncNormal(y, 0.6, 0.25) }
func exactQ(x, y float64) float64 {
	return 0.6*truncNormal(x, 0.65, 0.15)*truncNormal(y, 0.4, 0.2) + 0.4
}

// exactRho2 is ∫∫ κ(p, q) over [0,1]² by tensor composite Gauss–Legendre (panels × 8
// nodes per axis).
func exactRho2(div divergence, p, q func(x, y float64) float64, panels int) float64 {
	gx, gw := numeric.GaussLegendre(8)
	var xs, ws []float64
	for k := 0; k < panels; k++ {
		for i, x := range gx {
			xs = append(xs, (float64(k)+0.5+0.5*x)/float64(panels))
			ws = append(ws, gw[i]*0.5/float64(panels))
		}
	}
	sum := 0.0
	for i, x := range xs {
		for j, y := range xs {
			sum += ws[i] * ws[j] * div.kappa(p(x, y), q(x, y))
		}
	}
	return sum
}

// gridValues samples f at the G² midpoints (row-major, axis 0 = x slowest).
func gridValues(f func(x, y float64) float64, g int) []float64 {
	v := make([]float64, g*g)
	for i := 0; i < g; i++ {
		for j := 0; j < g; j++ {
			v[i*g+j] = f((float64(i)+0.5)/float64(g), (float64(j)+0.5)/float64(g))
		}
	}
	return v
}

func sqDist(a, b []float64) float64 {
	s := 0.0
	for i := range a {
		d := a[i] - b[i]
		s += d * d
	}
	return s
}

// lambdaOnlyRho2 is the M-λ stratified estimate of ρ² with the x-integral done exactly
// (tensor Gauss–Legendre, no grid, no basis): the error of step 2 alone.
func lambdaOnlyRho2(div divergence, m int, p, q func(x, y float64) float64, panels int) float64 {
	lams := drawLambdas(div, m, false, nil)
	gx, gw := numeric.GaussLegendre(8)
	var xs, ws []float64
	for k := 0; k < panels; k++ {
		for i, x := range gx {
			xs = append(xs, (float64(k)+0.5+0.5*x)/float64(panels))
			ws = append(ws, gw[i]*0.5/float64(panels))
		}
	}
	sum := 0.0
	for i, x := range xs {
		for j, y := range xs {
			pv, qv := p(x, y), q(x, y)
			s := 0.0
			for _, l := range lams {
				s += fugledeTerm(pv, qv, l)
			}
			sum += ws[i] * ws[j] * s
		}
	}
	return div.mass() * sum / float64(m)
}

// TestHDDExactDensityConvergence feeds exact densities (a truncated Gaussian and a
// Gaussian/uniform mixture on [0,1]², both smooth and bounded below) straight into the
// projection, bypassing the KDE, and checks ‖A(p) − A(q)‖² → ρ²(p,q) as the grid G, the
// basis |V| and the number of λs M grow together. ρ² is computed by 512² tensor
// Gauss–Legendre quadrature (the 1024² rule agrees to 1e-7). The "λ only" column is the
// M-λ stratified estimate with the x-integral done exactly: for js it accounts for almost
// all of the error (the midpoint rule in q = F(λ) converges like 1/M because F⁻¹ has a
// log singularity at q = 1), so the js error halves with each doubling of M.
func TestHDDExactDensityConvergence(t *testing.T) {
	ladder := []struct{ g, basis, m int }{{16, 30, 2}, {32, 120, 4}, {64, 500, 8}, {128, 2000, 16}}
	// Tolerances on the final level: js is limited by its λ rule (−1.2% at M = 16);
	// hellinger has no λ error and smooth g functions (error ~1e-6); tv's heavy-tailed
	// λs make g oscillate fast, and the basis misses part of the top strata (−0.6%).
	// Slack in "decreasing": tv's λ error alternates in sign at small M (+3.3%, +3.3%,
	// +0.4%, −0.6%), so successive |errors| may tie; hellinger sits at rounding level.
	final := map[divergence]float64{divJS: 0.015, divHellinger: 1e-4, divTV: 0.02}
	slack := map[divergence]float64{divJS: 0, divHellinger: 1e-5, divTV: 0.005}
	for _, div := range allDivergences {
		want := exactRho2(div, exactP, exactQ, 64)
		t.Logf("%v: ρ²(p,q) = %.6f", div, want)
		t.Logf("  %4s %5s %4s  %10s %9s  %9s", "G", "|V|", "M", "‖ΔA‖²", "rel.err", "λ only")
		prev := math.Inf(1)
		for _, lv := range ladder {
			f := mustCompileHDD(t, hddTestSpec(2, func(fm *spec.Family) {
				fm.Divergence, fm.Grid, fm.Basis, fm.Lambdas, fm.Features = div.String(), lv.g, lv.basis, lv.m, 2
			}))
			a := f.coefficientsFromDensity(gridValues(exactP, lv.g))
			b := f.coefficientsFromDensity(gridValues(exactQ, lv.g))
			got := sqDist(a, b)
			rel := (got - want) / want
			lonly := (lambdaOnlyRho2(div, lv.m, exactP, exactQ, 16) - want) / want
			t.Logf("  %4d %5d %4d  %10.6f %+9.5f  %+9.5f", lv.g, lv.basis, lv.m, got, rel, lonly)
			if math.Abs(rel) > prev+slack[div] {
				t.Errorf("%v: error grew from %.4f to %.4f at G=%d |V|=%d M=%d", div, prev, math.Abs(rel), lv.g, lv.basis, lv.m)
			}
			prev = math.Abs(rel)
		}
		if prev > final[div] {
			t.Errorf("%v: final relative error %.4f > %.4f", div, prev, final[div])
		}
	}
}

func TestHDDColumns(t *testing.T) {
	for _, tc := range []struct {
		dim      int
		mode     string
		coef     bool
		wantCoef int
	}{
		{2, "joint", false, 0},
		{2, "joint", true, 2 * 5 * 100},
		{5, "marginal", true, 2 * 5 * 40 * 5},
		{1, "joint", true, 2 * 5 * 40},
	} {
		sp := hddTestSpec(tc.dim, func(f *spec.Family) {
			f.Mode, f.Coefficients, f.Features = tc.mode, tc.coef, 64
			if tc.dim != 2 {
				f.Basis = 40
			}
		})
		f := mustCompileHDD(t, sp)
		cols := f.columns()
		want := []Column{{Name: "hdd_js", Family: "hdd_js", Len: 64}}
		if tc.coef {
			want = append(want, Column{Name: "hdd_js_coef", Family: "hdd_js", Len: tc.wantCoef})
		}
		if len(cols) != len(want) {
			t.Fatalf("%+v: columns %+v, want %+v", tc, cols, want)
		}
		for i := range want {
			if cols[i] != want[i] {
				t.Errorf("%+v: column %d = %+v, want %+v", tc, i, cols[i], want[i])
			}
		}
		// finalize fills exactly those lengths
		s := f.newSketch()
		s.add(hddBenchPoints(100, tc.dim), tc.dim)
		out := make([][]float32, len(cols))
		for i, c := range cols {
			out[i] = make([]float32, c.Len)
		}
		s.finalize(100, out)
	}
}

// TestHDDEmptyWindow: an empty window's density is uniform, so g_λ(1) = 0 and A = 0
// exactly, and the features are z(0) = √(2/D)·[sin 0, cos 0, …].
func TestHDDEmptyWindow(t *testing.T) {
	for _, div := range []string{"js", "hellinger", "tv"} {
		f := mustCompileHDD(t, hddTestSpec(2, func(fm *spec.Family) { fm.Divergence, fm.Coefficients, fm.Features = div, true, 64 }))
		s := f.newSketch()
		out := [][]float32{make([]float32, 64), make([]float32, f.coefLen)}
		for i := range out[1] {
			out[1][i] = 7 // must be overwritten
		}
		s.finalize(0, out)
		for i, v := range out[1] {
			if v != 0 {
				t.Fatalf("%s: empty window A[%d] = %v, want 0", div, i, v)
			}
		}
		c := float32(math.Sqrt(2.0 / 64))
		for r := 0; r < 32; r++ {
			if out[0][2*r] != 0 || out[0][2*r+1] != c {
				t.Fatalf("%s: empty window z[%d:%d] = %v, want [0 %v]", div, 2*r, 2*r+2, out[0][2*r:2*r+2], c)
			}
		}
		// The KDE path agrees: the uniform density is what a perfectly uniform sample gives.
		sc := f.newScratch()
		f.densities(sc.dens, s.(*hddSketch).counts, 0, sc)
		for _, v := range sc.dens {
			if v != 1 {
				t.Fatalf("%s: empty window density %v, want 1", div, v)
			}
		}
	}
}

// TestHDDStreaming: binning all points at once, in uneven chunks, and as merged partial
// sketches gives bit-identical counts and features.
func TestHDDStreaming(t *testing.T) {
	for _, tc := range []struct {
		dim  int
		mode string
	}{{1, "joint"}, {2, "joint"}, {3, "joint"}, {4, "marginal"}} {
		f := mustCompileHDD(t, hddTestSpec(tc.dim, func(fm *spec.Family) {
			fm.Mode, fm.Features, fm.Coefficients, fm.Grid, fm.Basis = tc.mode, 32, true, 24, 20
		}))
		d := tc.dim
		const n = 1001
		u := hddBenchPoints(n, d)
		all := f.newSketch().(*hddSketch)
		all.add(u, d)
		chunks := f.newSketch().(*hddSketch)
		for i, step := 0, 1; i < n; i, step = i+step, step%7+1 {
			j := min(n, i+step)
			chunks.add(u[i*d:j*d], d)
		}
		left, right := f.newSketch(), f.newSketch()
		left.add(u[:400*d], d)
		right.add(u[400*d:], d)
		right.merge(left)
		for name, s := range map[string]*hddSketch{"chunks": chunks, "merged": right.(*hddSketch)} {
			for i := range all.counts {
				if all.counts[i] != s.counts[i] {
					t.Fatalf("d=%d %s: count %d = %d, all-at-once %d", d, name, i, s.counts[i], all.counts[i])
				}
			}
			o1 := [][]float32{make([]float32, 32), make([]float32, f.coefLen)}
			o2 := [][]float32{make([]float32, 32), make([]float32, f.coefLen)}
			all.finalize(n, o1)
			s.finalize(n, o2)
			for c := range o1 {
				for i := range o1[c] {
					if math.Float32bits(o1[c][i]) != math.Float32bits(o2[c][i]) {
						t.Fatalf("d=%d %s: column %d[%d] = %v, all-at-once %v", d, name, c, i, o2[c][i], o1[c][i])
					}
				}
			}
		}
		// reset empties it
		all.reset()
		for _, c := range all.counts {
			if c != 0 {
				t.Fatalf("reset left count %d", c)
			}
		}
	}
}

// TestHDDBinning: every point adds exactly 2³² (one unit) of weight, the weights keep the
// point's position as their mean (linear binning), and the d = 2 fast path equals the
// generic d-dimensional path bit for bit.
func TestHDDBinning(t *testing.T) {
	f := mustCompileHDD(t, hddTestSpec(2, func(fm *spec.Family) { fm.Grid, fm.Basis, fm.Features = 8, 10, 2 }))
	n := f.g + 2
	rng := NewRNG(5, "test/binning")
	fast, generic := f.newSketch().(*hddSketch), f.newSketch().(*hddSketch)
	for i := 0; i < 2000; i++ {
		u := []float64{rng.Float64(), rng.Float64()}
		switch i {
		case 0:
			u = []float64{0, 0}
		case 1:
			u = []float64{1, 1}
		case 2:
			u = []float64{0.5 / 8, 1}
		case 3:
			u = []float64{-0.5, 1.5} // clamped
		}
		one := f.newSketch().(*hddSketch)
		one.add(u, 2)
		var total int64
		var mx, my float64
		for p := 0; p < n; p++ {
			for q := 0; q < n; q++ {
				w := one.counts[p*n+q]
				total += w
				mx += float64(w) * (float64(p) - 0.5) / 8
				my += float64(w) * (float64(q) - 0.5) / 8
			}
		}
		if total != fixedOne {
			t.Fatalf("point %v: total weight %d, want 2³²", u, total)
		}
		cx, cy := min(1, max(0, u[0])), min(1, max(0, u[1]))
		// Rounding each of three weights to 2⁻³² moves the mean by < 2·2⁻³².
		if math.Abs(mx/numeric.FixedScale-cx) > 1e-9 || math.Abs(my/numeric.FixedScale-cy) > 1e-9 {
			t.Fatalf("point %v: binned mean (%v, %v)", u, mx/numeric.FixedScale, my/numeric.FixedScale)
		}
		fast.add2(u)
		generic.addJoint(u, 2)
	}
	for i := range fast.counts {
		if fast.counts[i] != generic.counts[i] {
			t.Fatalf("node %d: d=2 fast path %d, generic %d", i, fast.counts[i], generic.counts[i])
		}
	}
	if got, want := fast.sizeBytes(), 8*n*n; got < want {
		t.Errorf("sizeBytes %d < counts %d", got, want)
	}
}

func TestHDDSpecErrors(t *testing.T) {
	for _, tc := range []struct {
		field string
		dim   int
		mod   func(*spec.Family)
	}{
		{"families[0].basis", 2, func(f *spec.Family) { f.Grid, f.Basis = 8, 100 }}, // index ≥ grid aliases
		{"families[0].basis", 1, func(f *spec.Family) { f.Basis = 100 }},            // 1-D: index 99 ≥ 64
		{"families[0].grid", 2, func(f *spec.Family) { f.Grid = 1 }},
		{"families[0].grid", 3, func(f *spec.Family) { f.Grid = 1000 }},
		{"families[0].divergence", 2, func(f *spec.Family) { f.Divergence = "kl" }},
		{"families[0].mode", 2, func(f *spec.Family) { f.Mode = "both" }},
		{"families[0].lambdas", 2, func(f *spec.Family) { f.Lambdas = 0 }},
		{"families[0].lambda_sampling", 2, func(f *spec.Family) { f.LambdaSampling = "sobol" }},
		{"families[0].kde_bandwidth", 2, func(f *spec.Family) { f.KDEBandwidth = 0 }},
		{"families[0].boundary", 2, func(f *spec.Family) { f.Boundary = "wrap" }},
		{"families[0].density_floor", 2, func(f *spec.Family) { f.DensityFloor = -1 }},
		{"families[0].features", 2, func(f *spec.Family) { f.Features = 7 }},
		{"families[0].sigma", 2, func(f *spec.Family) { f.Sigma = 0 }},
		{"families[0].features", 2, func(f *spec.Family) { f.Features = 1 << 20; f.Lambdas = 100 }},
	} {
		_, err := New(hddTestSpec(tc.dim, tc.mod))
		var se *spec.SpecError
		if !errors.As(err, &se) || se.Field != tc.field {
			t.Errorf("want a *spec.SpecError for %s, got %v", tc.field, err)
		}
	}
}

// TestHDDProjection: cosine basis functions sampled at the midpoints project onto unit
// vectors (midpoint-sampled cosines with index < G are exactly orthogonal: DCT-II), for
// d = 1, 2, 3 and odd and even G; project2 equals project.
func TestHDDProjection(t *testing.T) {
	for _, tc := range []struct{ d, g, basis int }{{1, 9, 9}, {1, 16, 10}, {2, 7, 20}, {2, 64, 100}, {3, 6, 30}} {
		basis := numeric.CosineIndices(tc.d, tc.basis)
		p := newProjPlan(tc.g, basis)
		sc := p.newScratch()
		cells := ipow(tc.g, tc.d)
		for bi, alpha := range basis {
			fn := make([]float64, cells)
			for c := range fn {
				v, rem := 1.0, c
				for j := tc.d - 1; j >= 0; j-- {
					k := rem % tc.g
					rem /= tc.g
					v *= cosineFactor(alpha[j], (float64(k)+0.5)/float64(tc.g))
				}
				fn[c] = v
			}
			got := make([]float64, len(basis))
			p.project(got, fn, &sc)
			for i, v := range got {
				want := 0.0
				if i == bi {
					want = 1
				}
				if math.Abs(v-want) > 1e-12 {
					t.Fatalf("d=%d G=%d: a(φ_%v)[%v] = %v, want %v", tc.d, tc.g, alpha, basis[i], v, want)
				}
			}
			// project2 on (φ, 2φ+1)
			fn2 := make([]float64, cells)
			for c := range fn {
				fn2[c] = 2*fn[c] + 1
			}
			r, im := make([]float64, len(basis)), make([]float64, len(basis))
			p.project2(r, im, fn, fn2, &sc)
			for i := range r {
				want := 0.0
				if i == bi {
					want = 2
				}
				if i == 0 {
					want++
				}
				if math.Abs(r[i]-got[i]) > 1e-14 || math.Abs(im[i]-want) > 1e-12 {
					t.Fatalf("d=%d G=%d: project2 = (%v, %v) at %v, want (%v, %v)", tc.d, tc.g, r[i], im[i], basis[i], got[i], want)
				}
			}
		}
	}
}

// TestHDDConcurrentFinalize: the compiled family is shared; concurrent finalisations of
// different sketches (scratch from the pool) give the sequential results. Run with -race.
func TestHDDConcurrentFinalize(t *testing.T) {
	f := mustCompileHDD(t, hddTestSpec(2, func(fm *spec.Family) { fm.Features, fm.Coefficients = 256, true }))
	const k = 6
	sketches := make([]familySketch, k)
	want := make([][][]float32, k)
	for i := range sketches {
		sketches[i] = f.newSketch()
		sketches[i].add(hddBenchPoints(200+50*i, 2), 2)
		want[i] = [][]float32{make([]float32, 256), make([]float32, f.coefLen)}
		sketches[i].finalize(int64(200+50*i), want[i])
	}
	var wg sync.WaitGroup
	errs := make(chan string, k*4)
	for rep := 0; rep < 4; rep++ {
		for i := range sketches {
			wg.Add(1)
			go func() {
				defer wg.Done()
				out := [][]float32{make([]float32, 256), make([]float32, f.coefLen)}
				sketches[i].finalize(int64(200+50*i), out)
				for c := range out {
					for j := range out[c] {
						if out[c][j] != want[i][c][j] {
							errs <- fmt.Sprintf("sketch %d column %d[%d]: %v, sequential %v", i, c, j, out[c][j], want[i][c][j])
							return
						}
					}
				}
			}()
		}
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
}

// TestHDDMarginal: marginal mode's A is the concatenation of the per-dimension 1-D
// blocks, each identical to what a 1-D joint family computes on that coordinate, so
// ‖A − A′‖² = Σ_j ‖A_j − A′_j‖² ≈ Σ_j ρ²(p_j, q_j).
func TestHDDMarginal(t *testing.T) {
	const d, n = 3, 500
	mod := func(fm *spec.Family) { fm.Basis, fm.Features, fm.Coefficients = 30, 16, true }
	marg := mustCompileHDD(t, hddTestSpec(d, func(fm *spec.Family) { mod(fm); fm.Mode = "marginal" }))
	one := mustCompileHDD(t, hddTestSpec(1, func(fm *spec.Family) { mod(fm); fm.Mode = "joint" }))
	u := hddBenchPoints(n, d)
	s := marg.newSketch()
	s.add(u, d)
	out := [][]float32{make([]float32, 16), make([]float32, marg.coefLen)}
	s.finalize(n, out)
	for j := 0; j < d; j++ {
		col := make([]float64, n)
		for i := range col {
			col[i] = u[i*d+j]
		}
		s1 := one.newSketch()
		s1.add(col, 1)
		o1 := [][]float32{make([]float32, 16), make([]float32, one.coefLen)}
		s1.finalize(n, o1)
		blk := out[1][j*one.coefLen : (j+1)*one.coefLen]
		for i := range blk {
			if blk[i] != o1[1][i] {
				t.Fatalf("dimension %d: marginal A[%d] = %v, 1-D family %v", j, i, blk[i], o1[1][i])
			}
		}
	}
	// The default mode (filled in by ParseSpec) is joint for d ≤ 3 and marginal above.
	for dim, want := range map[int]bool{3: false, 4: true} {
		s, err := spec.ParseSpec([]byte(fmt.Sprintf(`{"dim": %d, "families": [{"name": "hdd_js", "kind": "hdd",
			"divergence": "js", "sigma": 0.5, "basis": 5, "grid": 8, "features": 2}]}`, dim)))
		if err != nil {
			t.Fatal(err)
		}
		f := mustCompileHDD(t, s)
		if f.marginal != want {
			t.Errorf("dim %d: default marginal = %v, want %v", dim, f.marginal, want)
		}
	}
}

// TestHDDDraws: the λs and RFF frequencies come from the documented streams: stratified
// λs are the quantiles (no randomness), iid λs are F⁻¹ of NewRNG(seed, name+"/lambda")
// uniforms, ω from NewRNG(seed, name).
func TestHDDDraws(t *testing.T) {
	sp := hddTestSpec(2, func(fm *spec.Family) { fm.LambdaSampling, fm.Features, fm.Divergence = "iid", 8, "tv" })
	f := mustCompileHDD(t, sp)
	rng := NewRNG(sp.Seed, "hdd_js/lambda")
	for j, l := range f.lambdas {
		if want := 0.5 * math.Tan(0.5*math.Pi*rng.Float64()); l != want {
			t.Errorf("iid λ_%d = %v, want %v", j, l, want)
		}
	}
	w := newRFF(NewRNG(sp.Seed, "hdd_js"), f.coefLen, 8, 0.5)
	for i := range w.omega {
		if w.omega[i] != f.rff.omega[i] {
			t.Fatalf("ω[%d] = %v, want %v", i, f.rff.omega[i], w.omega[i])
		}
	}
	st := mustCompileHDD(t, hddTestSpec(2, func(fm *spec.Family) { fm.Features, fm.Divergence = 8, "tv" }))
	for j, l := range st.lambdas {
		if want := 0.5 * math.Tan(0.5*math.Pi*(float64(j)+0.5)/5); math.Abs(l-want) > 1e-15*want {
			t.Errorf("stratified λ_%d = %v, want %v", j, l, want)
		}
	}
	h := mustCompileHDD(t, hddTestSpec(2, func(fm *spec.Family) { fm.Features, fm.Divergence, fm.Lambdas = 8, "hellinger", 3 }))
	for _, l := range h.lambdas {
		if l != 0 {
			t.Errorf("hellinger λ = %v, want 0", l)
		}
	}
}

// TestHDDKernelEstimate: z(A)ᵀz(A′) estimates exp(−‖A − A′‖²/(2σ²)) with the RFF error
// of D features: each estimate is a mean of D/2 bounded terms (|cos| ≤ 1), s.d. ≤ 1/√D.
func TestHDDKernelEstimate(t *testing.T) {
	const D = 4096
	f := mustCompileHDD(t, hddTestSpec(2, func(fm *spec.Family) { fm.Features, fm.Coefficients = D, true }))
	var zs, as [][]float32
	for i := 0; i < 4; i++ {
		s := f.newSketch()
		pts := hddBenchPoints(800, 2)
		for k := range pts {
			pts[k] = math.Mod(pts[k]+0.13*float64(i*(k%2+1)), 1) // shifted copies
		}
		s.add(pts, 2)
		out := [][]float32{make([]float32, D), make([]float32, f.coefLen)}
		s.finalize(800, out)
		zs, as = append(zs, out[0]), append(as, out[1])
	}
	for i := range zs {
		for j := range zs {
			est, d2 := 0.0, 0.0
			for k := range zs[i] {
				est += float64(zs[i][k]) * float64(zs[j][k])
			}
			for k := range as[i] {
				d := float64(as[i][k]) - float64(as[j][k])
				d2 += d * d
			}
			want := math.Exp(-d2 / (2 * 0.5 * 0.5))
			if math.Abs(est-want) > 4/math.Sqrt(D) {
				t.Errorf("pair (%d,%d): z·z′ = %.4f, exp(−‖ΔA‖²/2σ²) = %.4f", i, j, est, want)
			}
		}
	}
}

// TestHDDFinalizePathsBitIdentical: a window's features and coefficients are the same bits
// on every kernel path (the AVX-512 one takes kdeMass2T, the transposed layout, numeric.HDDLogSqrt's
// and project2DT's kernels), for d = 2 with G odd and even, both boundaries, floors that
// put no, some or all cells at the floor, and windows that are empty, one point, points
// on the faces and a cloud; and for d = 1, d = 3 and marginal mode, which take other code.
func TestHDDFinalizePathsBitIdentical(t *testing.T) {
	type variant struct {
		dim int
		mod func(*spec.Family)
	}
	var variants []variant
	for _, g := range []int{7, 16, 33, 64} {
		for _, boundary := range []string{"reflect", "none"} {
			for _, floor := range []float64{0, 1e-6, 0.9} {
				for _, div := range []string{"js", "hellinger"} {
					variants = append(variants, variant{2, func(fm *spec.Family) {
						fm.Grid, fm.Boundary, fm.DensityFloor, fm.Divergence = g, boundary, floor, div
					}})
				}
			}
		}
	}
	variants = append(variants,
		variant{1, func(fm *spec.Family) { fm.Grid, fm.Basis = 33, 10 }},
		variant{3, func(fm *spec.Family) { fm.Grid, fm.Basis = 9, 20 }},
		variant{2, func(fm *spec.Family) { fm.Mode, fm.Basis = "marginal", 10 }})
	rng := NewRNG(23, "hdd-paths")
	for vi, v := range variants {
		f := mustCompileHDD(t, hddTestSpec(v.dim, func(fm *spec.Family) {
			fm.Features, fm.Coefficients = 64, true
			v.mod(fm)
		}))
		windows := map[string][]float64{"empty": nil, "single": make([]float64, v.dim),
			"faces": make([]float64, 0, 4*v.dim), "cloud": make([]float64, 300*v.dim)}
		for i := range windows["single"] {
			windows["single"][i] = rng.Float64()
		}
		for _, c := range []float64{0, 1, 0.5, 1e-12} {
			for j := 0; j < v.dim; j++ {
				windows["faces"] = append(windows["faces"], c)
			}
		}
		for i := range windows["cloud"] {
			windows["cloud"][i] = min(1, max(0, 0.4+0.15*rng.Normal()))
		}
		for name, u := range windows {
			s := f.newSketch()
			s.add(u, v.dim)
			n := int64(len(u) / v.dim)
			var want [][]float32
			var wantA []float64
			for _, path := range dotPaths(t) {
				f.plan.path = path
				out := [][]float32{make([]float32, 64), make([]float32, f.coefLen)}
				s.finalize(n, out)
				a := make([]float64, f.coefLen) // A before its rounding to float32
				f.sketchCoefficients(a, s.(*hddSketch).counts, n, out, f.newScratch())
				if want == nil {
					want, wantA = out, a
					continue
				}
				for i := range a {
					if math.Float64bits(a[i]) != math.Float64bits(wantA[i]) {
						t.Fatalf("variant %d (d=%d G=%d floor %g) window %s path %v: A[%d] = %v, portable %v",
							vi, v.dim, f.g, f.floor, name, path, i, a[i], wantA[i])
					}
				}
				for c := range out {
					for i := range out[c] {
						if math.Float32bits(out[c][i]) != math.Float32bits(want[c][i]) {
							t.Fatalf("variant %d (d=%d G=%d %s floor %g) window %s path %v: column %d[%d] = %v, portable %v",
								vi, v.dim, f.g, map[bool]string{true: "transposed", false: "row-major"}[f.transposed()], f.floor, name, path, c, i, out[c][i], want[c][i])
						}
					}
				}
			}
		}
	}
}

// TestProject2DTPathsBitIdentical: project2DT on the AVX-512 path (its fold kernel, the
// dual-table second contraction and numeric.ProjLanes's kernels) equals the portable project and
// project2 on the row-major functions bit for bit, for G odd and even, below and around 8,
// basis sizes that give second-axis groups of one to many lanes, and values with signed
// zeros, tiny and huge magnitudes.
func TestProject2DTPathsBitIdentical(t *testing.T) {
	if !numeric.PathSupported(numeric.PathAVX512) {
		t.Skip("no AVX-512 on this machine or build: project2DT is only taken there")
	}
	rng := NewRNG(25, "proj-2dt")
	for _, g := range []int{2, 3, 5, 8, 9, 16, 17, 33, 64} {
		for _, nb := range []int{1, 3, 10, 100} {
			basis := numeric.CosineIndices(2, nb)
			fast, ref := newProjPlan(g, basis), newProjPlan(g, basis)
			fast.path, ref.path = numeric.PathAVX512, numeric.PathPortable
			if !fast.use2D() || ref.use2D() {
				t.Fatalf("G=%d: use2D %v (AVX-512), %v (portable)", g, fast.use2D(), ref.use2D())
			}
			fsc, rsc := fast.newScratch(), ref.newScratch()
			for trial := 0; trial < 3; trial++ {
				fr, fi := make([]float64, g*g), make([]float64, g*g)
				for i := range fr {
					fr[i], fi[i] = rffDotValue(rng, 1), rffDotValue(rng, 1)
				}
				frT, fiT := make([]float64, g*g), make([]float64, g*g)
				transposeGrid(frT, fr, g)
				transposeGrid(fiT, fi, g)
				n := len(basis)
				wantR, wantI, want1 := make([]float64, n), make([]float64, n), make([]float64, n)
				ref.project2(wantR, wantI, fr, fi, &rsc)
				ref.project(want1, fr, &rsc)
				gotR, gotI, got1 := make([]float64, n), make([]float64, n), make([]float64, n)
				fast.project2DT(gotR, gotI, frT, fiT, fsc.d2)
				fast.project2DT(got1, nil, frT, nil, fsc.d2)
				for s := 0; s < n; s++ {
					for w, c := range [][2]float64{{gotR[s], wantR[s]}, {gotI[s], wantI[s]}, {got1[s], want1[s]}} {
						if math.Float64bits(c[0]) != math.Float64bits(c[1]) {
							t.Fatalf("G=%d |V|=%d trial %d output %d (function %d): AVX-512 %v, portable %v", g, nb, trial, s, w, c[0], c[1])
						}
					}
				}
			}
		}
	}
}
