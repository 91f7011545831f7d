package embedding

import (
	"math"
	"sync"

	"github.com/distfeat/distfeat/internal/numeric"
)

// Linear binning and the binned Gaussian KDE of the hdd family (docs/math.md, hdd step 1).
//
// Grid. Each axis of [0,1] is cut into G cells with midpoints c_i = (i+½)/G, i = 0..G−1.
// Binning uses G+2 nodes per axis: the G midpoints plus a ghost node half a cell outside
// each face, at −½/G and 1+½/G ("padded" node p sits at (p−½)/G, p = 0..G+1). A point
// u ∈ [0,1] lies between two consecutive nodes and is split between them linearly, so no
// point is ever clamped onto a node: binning preserves each point's mass and mean, and
// its error in the KDE is second order (on average over positions, like raising the
// kernel variance by 1/(6G²)).
//
// KDE. The density at midpoint c_i is Σ_nodes count·Π_axes K[i][p] with the 1-D operator
//
//	K[i][p] = (1/G)·Σ_{images y of node p} φ_h(c_i − y),   φ_h = N(0, h²) density,
//
// applied one axis at a time (separable), so a window costs O(G^d·(2R+1)·d) with
// R = ⌈5h·G⌉ instead of O(n·G^d). The images are the node itself for `boundary: none`
// (plain KDE: kernel mass that falls outside [0,1] is lost, the paper's estimator) and
// the orbit of the node under reflections about 0 and 1 (y = ±(p−½)/G + 2k) for
// `boundary: reflect`, which folds the mass that would leave a face back inside: the
// KDE of the data together with its mirror images. Reflection maps the ghost node −½/G
// onto the first midpoint, so points within half a cell of a face are handled exactly.
//
// Truncation. Images farther than kdeCutoff·h from the target are dropped. With
// kdeCutoff = 5 the neglected Gaussian mass is erfc(5/√2) ≈ 5.7e-7 of a point's kernel,
// below the default density floor (1e-6) and float32 output precision, while the band
// stays narrow (13 taps for h = 0.02, G = 64).

// Kernels. kdeMass applies K axis by axis in Go: along the last axis each output is a dot
// (four partial sums, rff.go), along the others one sum in tap order. For d = 2 on the
// AVX-512 path, kdeMass2T computes the same sums in the same order with each SIMD lane a
// different output (never splitting one sum), and leaves the result in the column-major
// layout that the projection takes (TestKDEMass2TBitIdentical).

// kdeCutoff is the truncation radius of the Gaussian kernel in bandwidths.
const kdeCutoff = 5

// kdeAxis is the 1-D operator K from the G+2 binning nodes of one axis to its G midpoints,
// stored by rows: row i has weights w[off[i]:off[i+1]] for nodes start[i], start[i]+1, ….
type kdeAxis struct {
	g     int
	start []int
	off   []int
	w     []float64
	// The second pass of kdeMass2T: outputs in blocks of 8 lanes (lanes(), built on first use).
	lanesOnce sync.Once
	lanes     *kdeLanes
}

// kdeLanes is the operator K rearranged for kdeMass2T's second pass, which computes 8
// consecutive outputs i = 8b+l (l < 8) of one line at once. Block b reads the line from
// node base_b on: at step u, lane l adds w_b[8u+l]·line[base_b + u + l], where
// w_b[8u+l] = K's weight t = u − δ_l of row i (δ_l = start[i] − l − base_b ≥ 0) and 0
// before and after the row's taps. A lane thus adds its row's products in order, preceded
// and followed only by exact zeros (+0 + (±0) = +0, x + (±0) = x for x ≠ 0; a sum that
// starts at +0 is never −0), which is kdeAxis.apply's order bit for bit.
type kdeLanes struct {
	base  []int       // per block; may be negative (the line is padded with zeros)
	w     [][]float64 // per block, 8·steps
	padL  int         // zeros needed before node 0: max(0, −min base)
	reach int         // nodes read from node 0 on: max over blocks of base + steps + 7
}

// laneTable returns (and builds once) the kdeLanes of k.
func (k *kdeAxis) laneTable() *kdeLanes {
	k.lanesOnce.Do(func() {
		nb := (k.g + 7) / 8
		t := &kdeLanes{base: make([]int, nb), w: make([][]float64, nb)}
		for b := 0; b < nb; b++ {
			nl := min(8, k.g-8*b)
			base := k.start[8*b]
			for l := 0; l < nl; l++ {
				base = min(base, k.start[8*b+l]-l)
			}
			steps := 0
			for l := 0; l < nl; l++ {
				i := 8*b + l
				steps = max(steps, k.start[i]-l-base+k.off[i+1]-k.off[i])
			}
			w := make([]float64, 8*steps)
			for l := 0; l < nl; l++ {
				i := 8*b + l
				d := k.start[i] - l - base
				for t, wt := range k.w[k.off[i]:k.off[i+1]] {
					w[8*(d+t)+l] = wt
				}
			}
			t.base[b], t.w[b] = base, w
			t.padL = max(t.padL, -base)
			t.reach = max(t.reach, base+steps+7)
		}
		k.lanes = t
	})
	return k.lanes
}

// kdeT is the workspace of kdeMass2T, allocated for one axis; the padding it relies on
// stays zero because the kernels never write it.
type kdeT struct {
	ldA  int       // lanes of the transposed counts: G+2 rounded up to a multiple of 8
	ldB  int       // row stride of the first pass's output
	offB int       // where node 0 sits in a row of the first pass's output
	cur  []float64 // (G+2) × ldA: cur[p1·ldA + p0] = count of node (p0, p1)
	mid  []float64 // G × ldB: mid[i1·ldB + offB + p0] = first pass output (p0, i1)
}

// newKDET allocates kdeMass2T's workspace for k.
func (k *kdeAxis) newKDET() *kdeT {
	n := k.g + 2
	lt := k.laneTable()
	ldA := (n + 7) &^ 7
	ldB := lt.padL + max(ldA, lt.reach)
	return &kdeT{ldA: ldA, ldB: ldB, offB: lt.padL,
		cur: make([]float64, n*ldA), mid: make([]float64, k.g*ldB)}
}

// kdeMass2T is kdeMass for gd = 2 on the AVX-512 kernels (the caller checked
// numeric.KDELanesSupported), bit for bit, with the result transposed: dstT[i1·G + i0] is kdeMass's
// dst[i0·G + i1]. The first pass (contracting axis 1 with dot's order of four partial
// sums) takes the lines p0 as lanes of transposed counts; the second (contracting axis 0,
// one sum in tap order) takes 8 consecutive outputs i0 as lanes (kdeLanes) of the first
// pass's output lines, which it reads in the layout it writes.
func (k *kdeAxis) kdeMass2T(dstT []float64, counts []int64, ws *kdeT) {
	g, n := k.g, k.g+2
	counts = counts[:n*n]
	cur := ws.cur
	numeric.KDECountsT(counts, n, cur, ws.ldA)
	for i1 := 0; i1 < g; i1++ {
		w := k.w[k.off[i1]:k.off[i1+1]]
		numeric.KDEDotLanes(w, cur[k.start[i1]*ws.ldA:], ws.ldA, ws.mid[i1*ws.ldB+ws.offB:i1*ws.ldB+ws.offB+ws.ldA])
	}
	lt := k.laneTable()
	dstT = dstT[:g*g]
	for b, w := range lt.w {
		numeric.KDESeqLanes(w, ws.mid[ws.offB+lt.base[b]:], ws.ldB, dstT[8*b:], g, g, min(8, g-8*b))
	}
}

// newKDEAxis builds the operator for G cells, bandwidth h (normalised units) and the
// boundary rule.
func newKDEAxis(g int, h float64, reflect bool) *kdeAxis {
	k := &kdeAxis{g: g, start: make([]int, g), off: make([]int, g+1)}
	gf := float64(g)
	cut := float64(kdeCutoff * h)
	norm := 1 / (gf * h * math.Sqrt(2*math.Pi))
	inv2h2 := 1 / (2 * h * h)
	// Reflection images y = ±s + 2k with |c − y| ≤ cut need |k| ≤ (cut + 2)/2.
	kmax := 0
	if reflect {
		kmax = int(math.Ceil((cut+2)/2)) + 1
	}
	row := make([]float64, g+2)
	for i := 0; i < g; i++ {
		c := (float64(i) + 0.5) / gf
		first, last := -1, -1
		for p := 0; p < g+2; p++ {
			s := (float64(p) - 0.5) / gf
			v := 0.0
			add := func(y float64) {
				if d := c - y; math.Abs(d) <= cut {
					v += numeric.Exp(-d * d * inv2h2)
				}
			}
			if reflect {
				for kk := -kmax; kk <= kmax; kk++ {
					add(s + 2*float64(kk))
					add(-s + 2*float64(kk))
				}
			} else {
				add(s)
			}
			row[p] = v * norm
			if v != 0 {
				if first < 0 {
					first = p
				}
				last = p
			}
		}
		k.start[i] = first
		k.w = append(k.w, row[first:last+1]...)
		k.off[i+1] = len(k.w)
	}
	return k
}

// apply convolves src, of shape [outer][G+2][inner] (row-major), along its middle axis
// into dst of shape [outer][G][inner].
func (k *kdeAxis) apply(dst, src []float64, outer, inner int) {
	g, n := k.g, k.g+2
	if inner == 1 {
		for o := 0; o < outer; o++ {
			line := src[o*n : (o+1)*n]
			out := dst[o*g : (o+1)*g]
			for i := range out {
				w := k.w[k.off[i]:k.off[i+1]]
				out[i] = numeric.Dot(w, line[k.start[i]:])
			}
		}
		return
	}
	for o := 0; o < outer; o++ {
		for i := 0; i < g; i++ {
			out := dst[(o*g+i)*inner : (o*g+i+1)*inner]
			clear(out)
			w := k.w[k.off[i]:k.off[i+1]]
			for t, wt := range w {
				p := k.start[i] + t
				in := src[(o*n+p)*inner : (o*n+p+1)*inner]
				in = in[:len(out)]
				for x := range out {
					out[x] += float64(wt * in[x])
				}
			}
		}
	}
}

// kdeMass computes the binned KDE of one grid: counts are the (G+2)^gd fixed-point node
// weights of a sketch (row-major, last axis fastest), dst receives the G^gd values
// Σ count·ΠK — density × (total fixed-point weight) / G^gd, i.e. the kernel mass per
// cell. tmpA and tmpB are scratch of at least (G+2)^gd elements.
func (k *kdeAxis) kdeMass(dst []float64, counts []int64, gd int, tmpA, tmpB []float64) {
	g, n := k.g, k.g+2
	cur := tmpA[:len(counts)]
	for i, c := range counts {
		cur[i] = float64(c)
	}
	if gd == 1 {
		k.apply(dst, cur, 1, 1)
		return
	}
	// Contract the last axis first (contiguous lines), then the others from the inside
	// out; after axis j is done, axes j..gd−1 have length G and axes < j length G+2. The
	// intermediates alternate between tmpB and tmpA; the last one lands in dst.
	bufs := [2][]float64{tmpB, tmpA}
	inner := 1
	for step, j := 0, gd-1; j >= 0; step, j = step+1, j-1 {
		outer := ipow(n, j)
		out := dst
		if j > 0 {
			out = bufs[step%2]
		}
		out = out[:outer*g*inner]
		k.apply(out, cur, outer, inner)
		cur = out
		inner *= g
	}
}

// normalizeDensity turns kernel masses into a density that integrates to 1 over the grid
// by the midpoint rule (mean value 1), floored at floor. A grid without mass (an empty
// window) becomes the uniform density 1 — the limit of the normalisation, and the density
// whose hdd coefficients A are exactly zero.
func normalizeDensity(dens []float64, floor float64) {
	total := 0.0
	for _, v := range dens {
		total += v
	}
	if !(total > 0) {
		for i := range dens {
			dens[i] = 1
		}
		return
	}
	scale := float64(len(dens)) / total
	for i, v := range dens {
		v *= scale
		if v < floor {
			v = floor
		}
		dens[i] = v
	}
}

// normalizeDensityT is normalizeDensity on the transposed G×G grid densT
// (densT[i1·G + i0] = dens[i0·G + i1]), bit for bit: the total is summed in dens's order.
func normalizeDensityT(densT []float64, g int, floor float64) {
	densT = densT[:g*g]
	total := 0.0
	for i0 := 0; i0 < g; i0++ {
		for i := i0; i < len(densT); i += g {
			total += densT[i]
		}
	}
	if !(total > 0) {
		for i := range densT {
			densT[i] = 1
		}
		return
	}
	scale := float64(len(densT)) / total
	// Only kdeMass2T's AVX-512 path calls normalizeDensityT (numeric.ScaleFloorSIMD's kernel is
	// then available); the Go loop does the values the kernel leaves.
	k := numeric.ScaleFloorSIMD(densT, scale, floor)
	for i, v := range densT[k:] {
		i += k
		v *= scale
		if v < floor {
			v = floor
		}
		densT[i] = v
	}
}

// ipow is bᵉ for small non-negative integers.
func ipow(b, e int) int {
	r := 1
	for ; e > 0; e-- {
		r *= b
	}
	return r
}

// binCoord returns the binning node p (0..G) left of u·G+½ and the weight of node p+1.
// u is clamped to [0, 1] (NaN → 0); Normalize already keeps points in the unit cube.
func binCoord(u, g float64) (int, float64) {
	if !(u > 0) {
		u = 0
	} else if u > 1 {
		u = 1
	}
	t := float64(u*g) + 0.5
	p := int(t)
	return p, t - float64(p)
}
