package embedding

import (
	"fmt"
	"math"
	"sync"

	"github.com/distfeat/distfeat/internal/numeric"
	"github.com/distfeat/distfeat/internal/parallel"
	"github.com/distfeat/distfeat/spec"
)

// The hdd family: random features for kernels K = exp(−ρ²(p,q)/(2σ²)) on homogeneous
// density distances ρ²(p,q) = ∫ κ(p(x), q(x)) dx (docs/math.md; paper §3, thesis §4.3).
//
// Sketch: the window's points linearly binned onto the G+2 nodes per axis described in
// kde.go — a (G+2)^d grid in joint mode, d separate lines of G+2 in marginal mode —
// as fixed-point int64 weights. Each point contributes exactly 2³² in total (corner 0 takes
// the remainder of the other, rounded, corners), so merging is integer addition and
// streaming = batch = merged halves bit for bit. Memory is independent of n.
//
// Finalisation, per grid (the joint grid, or each marginal line):
//
//  1. p̂: binned Gaussian KDE at the G^gd midpoints (kde.go), normalised to mean 1 (it
//     integrates to 1 by the midpoint rule), floored at density_floor. An empty window
//     has no mass and gets the uniform density p̂ ≡ 1, for which g_λ(1) = 0: A = 0 and
//     the features are z(0) = √(2/D)·[0, 1, 0, 1, …].
//  2. For each λ_j (fuglede.go: stratified quantiles or seeded i.i.d. draws of μ/Z),
//     g_λ(p̂) = √Z c_λ (p̂^{½+iλ} − 1), c_λ = (−½+iλ)/(½+iλ) = (λ²−¼+iλ)/(λ²+¼), with
//     p̂^{½+iλ} = √p̂·(cos(λ ln p̂) + i sin(λ ln p̂)); ln p̂ and √p̂ are computed once per
//     cell and reused across λs (a cell with p̂ = 0, possible only with density_floor 0,
//     takes the limit p̂^{½+iλ} = 0).
//  3. Re and Im of g_λ are projected onto the cosine basis V (basis.go) by the midpoint
//     rule a_α(f) = G^{−gd} Σ_c φ_α(u_c) f(u_c), one axis at a time with a G×(numeric.MaxIndex+1)
//     table (projPlan); the first contraction uses φ's mirror symmetry about ½ to halve
//     its work. Midpoint-sampled cosines with index < G are exactly orthogonal (DCT-II),
//     so the map is a partial isometry and ‖A(p)−A(q)‖² ≤ the discrete L2 distance.
//  4. A = M^{−½}[a(Re g_λ1), a(Im g_λ1), …, a(Re g_λM), a(Im g_λM)] ∈ ℝ^{2M|V|}, so that
//     ‖A(p)−A(q)‖² ≈ (1/M)Σ_j ‖g_λj(p) − g_λj(q)‖²_{L2} ≈ ρ²(p,q). Marginal mode
//     concatenates the d per-dimension blocks: ‖A−A′‖² ≈ Σ_j ρ²(p_j, q_j).
//  5. Output z(A): random Fourier features with ω ~ N(0, σ⁻² I) drawn from
//     NewRNG(seed, name), and optionally A itself as `<name>_coef`.
//
// Hellinger's measure is an atom at 0, so all M λs are 0: the M blocks of A are identical
// copies of [a(Re g_0), a(Im g_0) = 0], each scaled by M^{−½}, and ‖A−A′‖² is exact in λ
// for any M (the duplicates cost only RFF input width; they are computed once).

// Limits that keep a spec from compiling into an unusable family.
const (
	// fixedOne is the total fixed-point weight of one point (1.0 · 2³²).
	fixedOne = int64(1) << 32
	// maxJointDim bounds d in joint mode (G ≥ 2 and the cell limit imply d ≤ 24 anyway).
	maxJointDim = 24
)

// hddFamily is a compiled hdd family; it is read-only after compileHDD and shared by all
// sketches and goroutines (finalisation scratch comes from pool).
type hddFamily struct {
	name     string
	dim      int  // point dimension d
	marginal bool // one 1-D grid per dimension
	g        int  // cells per axis G
	gd       int  // axes per grid: d (joint) or 1 (marginal)
	ngrids   int  // 1 (joint) or d (marginal)
	cells    int  // G^gd midpoints per grid
	padCells int  // (G+2)^gd binning nodes per grid
	strides  []int
	floor    float64
	div      divergence
	lambdas  []float64
	cr, ci   []float64 // √(Z/M)·c_λj, real and imaginary parts
	needLog  bool      // some λ ≠ 0
	kde      *kdeAxis
	plan     *projPlan
	nv       int // |V|
	blockLen int // 2M|V|: A's length per grid
	coefLen  int // blockLen·ngrids
	rff      *rff
	coef     bool
	cols     []Column
	pool     sync.Pool // *hddScratch
}

// compileHDD compiles spec.Families[idx] (kind hdd) of a validated, defaulted spec; it
// trusts validation (Spec.validate checks every value, limit and the grid's resolution).
func compileHDD(sp *spec.Spec, idx int) (family, error) {
	fam := &sp.Families[idx]
	d := sp.Dim
	f := &hddFamily{name: fam.Name, dim: d, g: fam.Grid, coef: fam.Coefficients}
	f.div, _ = parseDivergence(fam.Divergence)
	f.marginal = fam.Mode == "marginal"
	if f.marginal {
		f.gd, f.ngrids = 1, d
	} else {
		f.gd, f.ngrids = d, 1
	}
	f.cells = ipow(f.g, f.gd)
	f.padCells = ipow(f.g+2, f.gd)
	f.strides = make([]int, f.gd)
	for j := range f.strides {
		f.strides[j] = ipow(f.g+2, f.gd-1-j)
	}

	basis := numeric.CosineIndices(f.gd, fam.Basis)
	f.nv = len(basis)
	f.plan = newProjPlan(f.g, basis)

	m := fam.Lambdas
	iid := fam.LambdaSampling == "iid"
	f.lambdas = drawLambdas(f.div, m, iid, NewRNG(sp.Seed, fam.Name+"/lambda"))
	scale := math.Sqrt(f.div.mass() / float64(m))
	f.cr, f.ci = make([]float64, m), make([]float64, m)
	for j, l := range f.lambdas {
		den := float64(l*l) + 0.25
		f.cr[j] = scale * (float64(l*l) - 0.25) / den
		f.ci[j] = scale * l / den
		if math.IsInf(l, 0) { // unreachable for q < 1; keep |c_λ| = 1 regardless
			f.cr[j], f.ci[j] = scale, 0
		}
		if l != 0 {
			f.needLog = true
		}
	}

	f.kde = newKDEAxis(f.g, fam.KDEBandwidth, fam.Boundary == "reflect")
	f.floor = fam.DensityFloor
	f.blockLen = 2 * m * f.nv
	f.coefLen = f.blockLen * f.ngrids
	f.rff = newProjectionRFF(sp.ProjectionOf(fam), NewRNG(sp.Seed, fam.Name), f.coefLen, fam.Features, fam.Sigma)

	f.cols = []Column{{Name: fam.Name, Family: fam.Name, Len: fam.Features}}
	if f.coef {
		f.cols = append(f.cols, Column{Name: fam.Name + "_coef", Family: fam.Name, Len: f.coefLen})
	}
	f.pool.New = func() any { return f.newScratch() }
	return f, nil
}

func (f *hddFamily) columns() []Column { return f.cols }

func (f *hddFamily) newSketch() familySketch {
	return &hddSketch{f: f, counts: make([]int64, f.ngrids*f.padCells)}
}

// hddScratch is the finalisation workspace of one goroutine.
type hddScratch struct {
	tmpA, tmpB []float64 // KDE intermediates, padCells each
	dens       []float64 // ngrids·cells
	sq, lnp    []float64 // √p̂ and ln p̂ per cell
	fr, fi     []float64 // Re and Im of g_λ per cell
	densT      []float64 // gd = 2: the column-major copy of one grid's densities
	kdeT       *kdeT     // kdeMass2T's workspace, allocated on first use
	proj       projScratch
	a          []float64 // A
}

// transposed reports whether densities and gridCoefficients use the column-major layout
// of a G×G grid (densT[c·G + o] = dens[o·G + c]): with the gd = 2 AVX-512 kernels, whose
// projection takes that layout (projPlan.use2D) and whose KDE produces it (kdeMass2T).
func (f *hddFamily) transposed() bool {
	return f.plan.use2D() && numeric.KDELanesSupported(f.plan.path)
}

func (f *hddFamily) newScratch() *hddScratch {
	return &hddScratch{
		tmpA:  make([]float64, f.padCells),
		tmpB:  make([]float64, f.padCells),
		dens:  make([]float64, f.ngrids*f.cells),
		sq:    make([]float64, f.cells),
		lnp:   make([]float64, f.cells),
		fr:    make([]float64, f.cells),
		fi:    make([]float64, f.cells),
		densT: make([]float64, f.cells),
		proj:  f.plan.newScratch(),
		a:     make([]float64, f.coefLen),
	}
}

// hddSketch holds a window's binned counts. Not safe for concurrent use.
type hddSketch struct {
	f      *hddFamily
	counts []int64 // ngrids × padCells fixed-point node weights
}

func (s *hddSketch) add(u []float64, d int) {
	switch {
	case s.f.marginal || d == 1:
		s.addMarginal(u, d)
	case d == 2:
		s.add2(u)
	default:
		s.addJoint(u, d)
	}
}

// addMarginal bins each coordinate on its own line (also joint mode for d = 1).
func (s *hddSketch) addMarginal(u []float64, d int) {
	g := float64(s.f.g)
	n := s.f.g + 2
	c := s.counts[:d*n]
	for i := 0; i+d <= len(u); i += d {
		pt := u[i : i+d]
		for j, x := range pt {
			p, w := binCoord(x, g)
			f1 := numeric.ToFixed(w)
			b := j*n + p
			c[b] += fixedOne - f1
			c[b+1] += f1
		}
	}
}

// add2 is the joint d = 2 fast path of addJoint (same weights, same corner that takes
// the rounding remainder, so both are bit-identical; TestHDDBinning checks it).
func (s *hddSketch) add2(u []float64) {
	g := float64(s.f.g)
	n := s.f.g + 2
	c := s.counts[:n*n]
	for i := 0; i+2 <= len(u); i += 2 {
		px, wx := binCoord(u[i], g)
		py, wy := binCoord(u[i+1], g)
		f01 := numeric.ToFixed((1 - wx) * wy)
		f10 := numeric.ToFixed(wx * (1 - wy))
		f11 := numeric.ToFixed(wx * wy)
		b := px*n + py
		c[b] += fixedOne - f01 - f10 - f11
		c[b+1] += f01
		c[b+n] += f10
		c[b+n+1] += f11
	}
}

// addJoint bins points onto the (G+2)^d nodes: corner bits select node p_j+1 (bit set,
// weight w_j) or p_j (weight 1−w_j) per axis, axis 0 in the highest bit. Corners
// 1..2^d−1 are rounded with numeric.ToFixed; corner 0 takes the remainder so each point adds
// exactly 2³².
func (s *hddSketch) addJoint(u []float64, d int) {
	f := s.f
	g := float64(f.g)
	c := s.counts
	var w1 [maxJointDim]float64
	ncorner := 1 << d
	for i := 0; i+d <= len(u); i += d {
		base := 0
		for j := 0; j < d; j++ {
			p, w := binCoord(u[i+j], g)
			base += p * f.strides[j]
			w1[j] = w
		}
		rem := fixedOne
		for corner := 1; corner < ncorner; corner++ {
			wt, off := 1.0, 0
			for j := 0; j < d; j++ {
				if corner>>(d-1-j)&1 == 1 {
					wt *= w1[j]
					off += f.strides[j]
				} else {
					wt *= 1 - w1[j]
				}
			}
			fx := numeric.ToFixed(wt)
			rem -= fx
			c[base+off] += fx
		}
		c[base] += rem
	}
}

func (s *hddSketch) merge(other familySketch) {
	o := other.(*hddSketch)
	oc := o.counts[:len(s.counts)]
	for i := range s.counts {
		s.counts[i] += oc[i]
	}
}

func (s *hddSketch) reset() { clear(s.counts) }

func (s *hddSketch) sizeBytes() int { return 8*len(s.counts) + 48 }

// addNanos: linear binning, ≈ 5 ns per point and grid.
func (s *hddSketch) addNanos() float64 { return 5 * float64(s.f.ngrids) }

func (s *hddSketch) finalize(n int64, out [][]float32) {
	f := s.f
	sc := f.pool.Get().(*hddScratch)
	defer f.pool.Put(sc)
	f.sketchCoefficients(sc.a, s.counts, n, out, sc)
	f.rff.apply(sc.a, out[0])
}

// finalizeBatch is finalize for many windows: A of each window (the windows shared among
// the workers), then one batched RFF pass.
func (f *hddFamily) finalizeBatch(ns []int64, parts []familySketch, outs [][][]float32, workers int) {
	b := f.rff.getBatch(len(parts))
	defer f.rff.putBatch(b)
	parallel.Share(workers, len(parts), 1, func(_, lo, hi int) {
		sc := f.pool.Get().(*hddScratch)
		defer f.pool.Put(sc)
		for w := lo; w < hi; w++ {
			f.sketchCoefficients(b.a[w*f.coefLen:(w+1)*f.coefLen], parts[w].(*hddSketch).counts, ns[w], outs[w], sc)
		}
	})
	feats := make([][]float32, len(parts))
	for w := range parts {
		feats[w] = outs[w][0]
	}
	f.rff.applyBatch(b, feats, workers)
}

// sketchCoefficients computes a window's A (coefLen) from its binned counts into a, and
// writes it to the `<name>_coef` column out[1] when the family has one.
func (f *hddFamily) sketchCoefficients(a []float64, counts []int64, n int64, out [][]float32, sc *hddScratch) {
	f.densities(sc.dens, counts, n, sc)
	for k := 0; k < f.ngrids; k++ {
		f.gridCoefficients(a[k*f.blockLen:(k+1)*f.blockLen], sc.dens[k*f.cells:(k+1)*f.cells], sc)
	}
	if f.coef {
		dst := out[1][:len(a)]
		for i, v := range a {
			dst[i] = float32(v)
		}
	}
}

// densities computes every grid's normalised, floored density p̂ from binned counts, in
// the column-major layout when f.transposed() (the layout gridCoefficients takes).
func (f *hddFamily) densities(dst []float64, counts []int64, n int64, sc *hddScratch) {
	for k := 0; k < f.ngrids; k++ {
		dens := dst[k*f.cells : (k+1)*f.cells]
		if n == 0 {
			for i := range dens {
				dens[i] = 1
			}
			continue
		}
		grid := counts[k*f.padCells : (k+1)*f.padCells]
		if f.transposed() {
			if sc.kdeT == nil {
				sc.kdeT = f.kde.newKDET()
			}
			f.kde.kdeMass2T(dens, grid, sc.kdeT)
			normalizeDensityT(dens, f.g, f.floor)
			continue
		}
		f.kde.kdeMass(dens, grid, f.gd, sc.tmpA, sc.tmpB)
		normalizeDensity(dens, f.floor)
	}
}

// gridCoefficients is coefficients for one grid's densities as densities lays them out.
func (f *hddFamily) gridCoefficients(a, dens []float64, sc *hddScratch) {
	if f.transposed() {
		f.cellCoefficients(a, dens, true, sc)
		return
	}
	f.coefficients(a, dens, sc)
}

// coefficients writes one grid's block A (2M|V|) for density values dens at its
// midpoints. It does not renormalise dens: tests feed exact densities through it.
func (f *hddFamily) coefficients(a, dens []float64, sc *hddScratch) {
	twoD := f.plan.use2D()
	if twoD {
		// The per-cell values below do not depend on the order of the cells: compute them
		// in the column-major order that project2DT takes.
		transposeGrid(sc.densT, dens, f.g)
		dens = sc.densT
	}
	f.cellCoefficients(a, dens, twoD, sc)
}

// cellCoefficients is coefficients on densities in project2DT's column-major layout
// (twoD, which needs f.plan.use2D()) or in the row-major one.
func (f *hddFamily) cellCoefficients(a, dens []float64, twoD bool, sc *hddScratch) {
	nv := f.nv
	sq, lnp, fr, fi := sc.sq[:len(dens)], sc.lnp[:len(dens)], sc.fr[:len(dens)], sc.fi[:len(dens)]
	maxAbsL := 0.0
	if f.needLog {
		maxAbsL = numeric.HDDLogSqrt(f.plan.path, dens, sq, lnp)
	} else {
		for c, p := range dens {
			sq[c] = math.Sqrt(p)
		}
	}
	for j, lam := range f.lambdas {
		blk := a[2*j*nv : 2*(j+1)*nv]
		if j > 0 && lam == f.lambdas[j-1] {
			copy(blk, a[2*(j-1)*nv:2*j*nv])
			continue
		}
		cr, ci := f.cr[j], f.ci[j]
		if lam == 0 {
			// p^{½} − 1 is real; c_0 = −1, so Im g_0 ≡ 0.
			for c, s := range sq {
				fr[c] = cr * (s - 1)
			}
			if twoD {
				f.plan.project2DT(blk[:nv], nil, fr, nil, sc.proj.d2)
			} else {
				f.plan.project(blk[:nv], fr, &sc.proj)
			}
			clear(blk[nv:])
			continue
		}
		numeric.HDDCells(f.plan.path, lam, cr, ci, sq, lnp, fr, fi, maxAbsL)
		if twoD {
			f.plan.project2DT(blk[:nv], blk[nv:], fr, fi, sc.proj.d2)
		} else {
			f.plan.project2(blk[:nv], blk[nv:], fr, fi, &sc.proj)
		}
	}
}

// coefficientsFromDensity returns A for density values given directly at the midpoints of
// every grid (ngrids·cells values, no KDE, no normalisation, no floor). Tests use it to
// check the projection against exact densities.
func (f *hddFamily) coefficientsFromDensity(dens []float64) []float64 {
	sc := f.pool.Get().(*hddScratch)
	defer f.pool.Put(sc)
	a := make([]float64, f.coefLen)
	for k := 0; k < f.ngrids; k++ {
		f.coefficients(a[k*f.blockLen:(k+1)*f.blockLen], dens[k*f.cells:(k+1)*f.cells], sc)
	}
	return a
}

// projPlan projects a function sampled at the G^gd midpoints onto the cosine basis V by
// the midpoint rule, contracting one axis at a time from the last. Step j contracts axis
// j: its outputs are the distinct suffixes (α_j, …, α_{gd−1}) of V, each a (table row
// m = α_j, suffix index src in step j+1's outputs) pair; step 0's outputs are V in order.
type projPlan struct {
	g, gd int
	half  int         // ⌈G/2⌉
	th    [][]float64 // th[m][c] = c(m)·cos(π m (c+½)/G)/G for c < ⌈G/2⌉
	t     [][]float64 // the full rows, c < G, exactly mirror-symmetric: t[m][G−1−c] = (−1)^m t[m][c]
	steps []projStep
	path  numeric.Path // kernel of numeric.ProjLanes (project2D, gd = 2); every path gives the same bits
	sec   []secGroup   // project2DT's second-axis groups (gd = 2)
}

type projStep struct{ m, src []int }

type projScratch struct {
	plus, minus, plus2, minus2 []float64
	step, step2                [][]float64    // outputs of steps 1..gd−1 (step2 for project2's second function)
	d2                         *proj2DScratch // project2D's workspace (gd = 2 only)
}

func newProjPlan(g int, basis [][]int) *projPlan {
	gd := len(basis[0])
	k := numeric.MaxIndex(basis)
	p := &projPlan{g: g, gd: gd, half: (g + 1) / 2, path: numeric.BestPath()}
	p.th, p.t = make([][]float64, k+1), make([][]float64, k+1)
	for m := 0; m <= k; m++ {
		p.th[m], p.t[m] = make([]float64, p.half), make([]float64, g)
		for c := 0; c < p.half; c++ {
			v := cosineFactor(m, (float64(c)+0.5)/float64(g)) / float64(g)
			if g%2 == 1 && c == p.half-1 && m%2 == 1 {
				v = 0 // cos(πm/2) for odd m: exactly zero at the centre cell
			}
			p.th[m][c] = v
			p.t[m][c] = v
			if m%2 == 1 {
				v = -v
			}
			p.t[m][g-1-c] = v
		}
	}
	p.steps = make([]projStep, gd)
	prev := map[string]int{fmt.Sprint([]int{}): 0}
	for j := gd - 1; j >= 0; j-- {
		cur := map[string]int{}
		var st projStep
		for _, a := range basis {
			key := fmt.Sprint(a[j:])
			if _, ok := cur[key]; ok {
				continue
			}
			cur[key] = len(st.m)
			st.m = append(st.m, a[j])
			st.src = append(st.src, prev[fmt.Sprint(a[j+1:])])
		}
		p.steps[j] = st
		prev = cur
	}
	if gd == 2 {
		p.sec = p.newSecGroups()
	}
	return p
}

func (p *projPlan) newScratch() projScratch {
	s := projScratch{
		plus: make([]float64, p.half), minus: make([]float64, p.half),
		plus2: make([]float64, p.half), minus2: make([]float64, p.half),
		step: make([][]float64, p.gd), step2: make([][]float64, p.gd),
	}
	for j := 1; j < p.gd; j++ {
		s.step[j] = make([]float64, ipow(p.g, j)*len(p.steps[j].m))
		s.step2[j] = make([]float64, ipow(p.g, j)*len(p.steps[j].m))
	}
	if p.gd == 2 {
		s.d2 = p.newProj2DScratch()
	}
	return s
}

// project writes the |V| coefficients of fn (G^gd values, last axis fastest) into dst.
func (p *projPlan) project(dst, fn []float64, sc *projScratch) {
	if p.use2D() {
		p.project2D(dst, nil, fn, nil, sc.d2)
		return
	}
	g := p.g
	// Innermost axis: Σ_c t[m][c]·x[c] = Σ_{c<G/2} t[m][c]·(x[c] ± x[G−1−c]) (+ centre).
	j := p.gd - 1
	st := &p.steps[j]
	ns := len(st.m)
	rows := len(fn) / g
	out := dst
	if j > 0 {
		out = sc.step[j][:rows*ns]
	}
	plus, minus := sc.plus, sc.minus
	for o := 0; o < rows; o++ {
		line := fn[o*g : (o+1)*g]
		for c := 0; c < g/2; c++ {
			a, b := line[c], line[g-1-c]
			plus[c], minus[c] = a+b, a-b
		}
		if g%2 == 1 {
			plus[p.half-1], minus[p.half-1] = line[p.half-1], line[p.half-1]
		}
		o2 := out[o*ns : (o+1)*ns]
		for s, m := range st.m {
			v := plus
			if m&1 == 1 {
				v = minus
			}
			o2[s] = numeric.Dot(p.th[m], v)
		}
	}
	cur, nsIn := out, ns
	// Remaining axes, gathering the needed suffix column with stride nsIn.
	for j := p.gd - 2; j >= 0; j-- {
		st := &p.steps[j]
		ns := len(st.m)
		rows := ipow(g, j)
		out := dst
		if j > 0 {
			out = sc.step[j][:rows*ns]
		}
		for o := 0; o < rows; o++ {
			in := cur[o*g*nsIn : (o+1)*g*nsIn]
			for s, m := range st.m {
				t := p.t[m]
				col := in[st.src[s]:]
				var a0, a1 float64
				c := 0
				for ; c+2 <= g; c += 2 {
					a0 += float64(t[c] * col[c*nsIn])
					a1 += float64(t[c+1] * col[(c+1)*nsIn])
				}
				if c < g {
					a0 += float64(t[c] * col[c*nsIn])
				}
				out[o*ns+s] = a0 + a1
			}
		}
		cur, nsIn = out, ns
	}
}

// project2 projects two functions at once (Re and Im of g_λ) sharing the table loads;
// for each it computes exactly what project computes up to the order of partial sums.
func (p *projPlan) project2(dstR, dstI, fr, fi []float64, sc *projScratch) {
	if p.use2D() {
		p.project2D(dstR, dstI, fr, fi, sc.d2)
		return
	}
	g := p.g
	j := p.gd - 1
	st := &p.steps[j]
	ns := len(st.m)
	rows := len(fr) / g
	outR, outI := dstR, dstI
	if j > 0 {
		outR, outI = sc.step[j][:rows*ns], sc.step2[j][:rows*ns]
	}
	plusR, minusR, plusI, minusI := sc.plus, sc.minus, sc.plus2, sc.minus2
	for o := 0; o < rows; o++ {
		lr := fr[o*g : (o+1)*g]
		li := fi[o*g : (o+1)*g]
		for c := 0; c < g/2; c++ {
			a, b := lr[c], lr[g-1-c]
			plusR[c], minusR[c] = a+b, a-b
			a, b = li[c], li[g-1-c]
			plusI[c], minusI[c] = a+b, a-b
		}
		if g%2 == 1 {
			h := p.half - 1
			plusR[h], minusR[h], plusI[h], minusI[h] = lr[h], lr[h], li[h], li[h]
		}
		oR, oI := outR[o*ns:(o+1)*ns], outI[o*ns:(o+1)*ns]
		for s, m := range st.m {
			vr, vi := plusR, plusI
			if m&1 == 1 {
				vr, vi = minusR, minusI
			}
			oR[s], oI[s] = numeric.Dot2(p.th[m], vr, vi)
		}
	}
	curR, curI, nsIn := outR, outI, ns
	for j := p.gd - 2; j >= 0; j-- {
		st := &p.steps[j]
		ns := len(st.m)
		rows := ipow(g, j)
		outR, outI := dstR, dstI
		if j > 0 {
			outR, outI = sc.step[j][:rows*ns], sc.step2[j][:rows*ns]
		}
		for o := 0; o < rows; o++ {
			inR := curR[o*g*nsIn : (o+1)*g*nsIn]
			inI := curI[o*g*nsIn : (o+1)*g*nsIn]
			for s, m := range st.m {
				t := p.t[m]
				k := st.src[s]
				var a0, a1, b0, b1 float64
				c := 0
				for ; c+2 <= g; c += 2 {
					i0, i1 := c*nsIn+k, (c+1)*nsIn+k
					a0 += float64(t[c] * inR[i0])
					b0 += float64(t[c] * inI[i0])
					a1 += float64(t[c+1] * inR[i1])
					b1 += float64(t[c+1] * inI[i1])
				}
				if c < g {
					i0 := c*nsIn + k
					a0 += float64(t[c] * inR[i0])
					b0 += float64(t[c] * inI[i0])
				}
				outR[o*ns+s], outI[o*ns+s] = a0+a1, b0+b1
			}
		}
		curR, curI, nsIn = outR, outI, ns
	}
}
