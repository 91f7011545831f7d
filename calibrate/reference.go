package calibrate

import (
	"math"
)

// The reference densities of the truth-facing self-check (truth.go): a Gaussian KDE with
// reflection at the faces of the unit cube, evaluated at the G^gd midpoints of a grid much
// finer than the proposed spec's, and the divergences between two of them by the midpoint
// rule (no cosine basis, no λ quadrature, no random features). With a bandwidth below the
// spec's, its smoothing bias is small; its larger sampling noise is measured by splitting
// each set in halves and removed (truth.go).

// refGrid is the reference density of one set: one grid of G^gd cells (joint) or gd = 1
// lines of G cells per axis (marginal), each normalised to mean 1 (a density on [0,1]^gd
// by the midpoint rule).
type refGrid [][]float64

// refAxis is the 1-D reflected-Gaussian operator from G midpoints to G midpoints:
// row i, column j = (1/G)·Σ_images φ_h(c_i − y_j), y over the reflections of c_j about 0
// and 1 (three images cover |shift| ≤ 1 for h ≤ 0.3).
func refAxis(g int, h float64) []float64 {
	k := make([]float64, g*g)
	c := -1 / (2 * h * h)
	norm := 1 / (h * math.Sqrt(2*math.Pi) * float64(g))
	for i := 0; i < g; i++ {
		x := (float64(i) + 0.5) / float64(g)
		for j := 0; j < g; j++ {
			y := (float64(j) + 0.5) / float64(g)
			k[i*g+j] = norm * (math.Exp(c*(x-y)*(x-y)) + math.Exp(c*(x+y)*(x+y)) + math.Exp(c*(x+y-2)*(x+y-2)))
		}
	}
	return k
}

// binLinear returns the linear-binning weight of coordinate x ∈ [0,1] on the midpoints of G
// cells: node i and its weight 1−w, node i+1 its weight w (at the faces all weight on the
// outer midpoint, which reflection makes exact to first order).
func binLinear(x float64, g int) (int, float64) {
	t := x*float64(g) - 0.5
	if t <= 0 {
		return 0, 0
	}
	if t >= float64(g-1) {
		return g - 2, 1
	}
	i := int(t)
	return i, t - float64(i)
}

// refDensity computes the reference KDE of the points u (dimension d, normalised) with the
// axis operator k on G cells: joint (gd = d ≤ 3) or per axis (marginal).
func refDensity(u []float64, d int, joint bool, g int, k []float64) refGrid {
	n := len(u) / d
	if !joint || d == 1 {
		out := make(refGrid, d)
		for j := 0; j < d; j++ {
			hist := make([]float64, g)
			for p := 0; p < n; p++ {
				i, w := binLinear(u[p*d+j], g)
				hist[i] += 1 - w
				hist[i+1] += w
			}
			out[j] = normaliseDensity(applyAxis(hist, g, 1, k))
		}
		return out
	}
	cells := 1
	for j := 0; j < d; j++ {
		cells *= g
	}
	hist := make([]float64, cells)
	idx := make([]int, d)
	wts := make([]float64, d)
	for p := 0; p < n; p++ {
		for j := 0; j < d; j++ {
			idx[j], wts[j] = binLinear(u[p*d+j], g)
		}
		for corner := 0; corner < 1<<d; corner++ {
			off, w := 0, 1.0
			for j := 0; j < d; j++ {
				i := idx[j]
				if corner>>(d-1-j)&1 == 1 {
					i++
					w *= wts[j]
				} else {
					w *= 1 - wts[j]
				}
				off = off*g + i
			}
			hist[off] += w
		}
	}
	// Apply k along each axis: axis j has stride g^(d−1−j).
	stride := cells
	for j := 0; j < d; j++ {
		stride /= g
		hist = applyAxis(hist, g, stride, k)
	}
	return refGrid{normaliseDensity(hist)}
}

// applyAxis applies the G×G operator k along the axis with the given stride of x.
func applyAxis(x []float64, g, stride int, k []float64) []float64 {
	out := make([]float64, len(x))
	col := make([]float64, g)
	block := stride * g
	for b := 0; b < len(x); b += block {
		for s := 0; s < stride; s++ {
			for i := 0; i < g; i++ {
				col[i] = x[b+s+i*stride]
			}
			for i := 0; i < g; i++ {
				row := k[i*g : (i+1)*g]
				var acc float64
				for j, v := range col {
					acc += row[j] * v
				}
				out[b+s+i*stride] = acc
			}
		}
	}
	return out
}

// normaliseDensity scales x to mean 1 (a uniform density when x has no mass).
func normaliseDensity(x []float64) []float64 {
	var s float64
	for _, v := range x {
		s += v
	}
	if !(s > 0) {
		for i := range x {
			x[i] = 1
		}
		return x
	}
	f := float64(len(x)) / s
	for i := range x {
		x[i] *= f
	}
	return x
}

// refPre is a reference density with what the divergences reuse per cell.
type refPre struct {
	p, plogp, sqrtp [][]float64
}

func newRefPre(r refGrid) refPre {
	pre := refPre{p: r}
	for _, p := range r {
		pl, sq := make([]float64, len(p)), make([]float64, len(p))
		for c, v := range p {
			if v > 0 {
				pl[c] = v * math.Log(v)
			}
			sq[c] = math.Sqrt(v)
		}
		pre.plogp, pre.sqrtp = append(pre.plogp, pl), append(pre.sqrtp, sq)
	}
	return pre
}

// refRho2 is ρ²(p, q) between two reference densities (summed over the marginal lines):
// js ½∫[p ln(2p/(p+q)) + q ln(2q/(p+q))], hellinger ½∫(√p − √q)², tv ∫|p − q| — the
// divergences whose kernels the hdd family approximates (‖A − A′‖² ≈ ρ²).
func refRho2(div string, a, b refPre) float64 {
	var total float64
	for l, p := range a.p {
		q := b.p[l]
		var s float64
		switch div {
		case "js":
			pl, ql := a.plogp[l], b.plogp[l]
			for c, x := range p {
				// m·ln(m/2) as m·(ln m − ln 2): 0.5·m underflows to 0 for the smallest
				// subnormal m (far tails of a fine KDE), and ln 0 would make the sum infinite.
				m := x + q[c]
				if m > 0 {
					s += pl[c] + ql[c] - m*(math.Log(m)-math.Ln2)
				}
			}
			s *= 0.5
		case "hellinger":
			ps, qs := a.sqrtp[l], b.sqrtp[l]
			for c := range p {
				t := ps[c] - qs[c]
				s += t * t
			}
			s *= 0.5
		default: // tv
			for c, x := range p {
				s += math.Abs(x - q[c])
			}
		}
		total += s / float64(len(p))
	}
	return math.Max(total, 0)
}

// l2Inner is ∫p·q between two reference densities (the product over marginal lines is not
// used: the l2 family is joint).
func l2Inner(a, b refGrid) float64 {
	var s float64
	for c, v := range a[0] {
		s += v * b[0][c]
	}
	return s / float64(len(a[0]))
}

// l2Dist2 is ∫(p − q)² between two reference densities (joint).
func l2Dist2(a, b refGrid) float64 {
	var s float64
	for c, v := range a[0] {
		t := v - b[0][c]
		s += t * t
	}
	return s / float64(len(a[0]))
}
