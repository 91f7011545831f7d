package embedding

import (
	"math"

	"github.com/distfeat/distfeat/internal/numeric"
	"github.com/distfeat/distfeat/spec"
)

// l2Family is a compiled `l2` family (docs/math.md): the window's empirical coefficients in
// the orthonormal cosine basis of L²([0,1]^d), a_α = (1/n) Σ_i φ_α(u_i) for the first
// `basis` multi-indices α (numeric.CosineIndices order), so that ‖a − a′‖² ≈ ‖p − q‖²₂.
//
// Fixed point: |φ_α| can reach √2^{nnz(α)} (nnz = number of non-zero α_j), so the sketch
// accumulates ψ_α(u) = Π_{j: α_j>0} cos(π α_j u_j) ∈ [−1, 1] and finalisation multiplies by
// c_α = √2^{nnz(α)}: a_α = c_α·(Σ numeric.ToFixed(ψ_α(u_i))·2⁻³²/n). Per point, each axis gets a
// table cos(π k u_j), k = 0..maxIndex, from one deterministic cosine and the Chebyshev
// recurrence cos(kx) = 2cos x·cos((k−1)x) − cos((k−2)x) (evaluated as one FMA); each ψ_α is
// then a product of table entries over α's non-zero axes, in increasing axis order.
//
// Optional second stage (sigma, features): the random Fourier features of a for
// exp(−‖a−a′‖²/(2σ²)), drawn with NewRNG(seed, name+"/rff"); the output is then that vector
// (length features) instead of a (length basis).
//
// An empty window (n = 0) finalises to all zeros, with or without the second stage.
type l2Family struct {
	name   string
	d      int
	basis  int
	kmax   int     // largest single-axis index
	start  []int32 // factors of basis function m: fidx[start[m]:start[m+1]]
	fidx   []int32 // index j·(kmax+1)+k into a point's factor table
	weight []float64
	// Specialised layout of the same basis for d = 2, 3 (addBlock; nil otherwise): axis j
	// of basis function m uses row k_j = α_mj of that axis's block table, held as its offset
	// j·(kmax+1)·numeric.L2Block + k_j·numeric.L2Block into the sketch's block tables (row 0 is the
	// constant 1, so an axis with α_mj = 0 contributes an exact factor 1).
	flat [3][]int32
	spec int          // 1 (add1), 2 or 3 (addBlock) when a specialised add applies, 0 for addGeneric
	path numeric.Path // kernel of numeric.L2Products (addBlock); every path gives the same sums
	rff  *rff
	cols []Column
}

// compileL2 builds an l2 family's basis tables and optional RFF stage.
func compileL2(sp *spec.Spec, idx int) (*l2Family, error) {
	f := &sp.Families[idx]
	d := sp.Dim
	alphas := numeric.CosineIndices(d, f.Basis)
	kmax := numeric.MaxIndex(alphas)
	l := &l2Family{
		name:   f.Name,
		d:      d,
		basis:  f.Basis,
		kmax:   kmax,
		start:  make([]int32, len(alphas)+1),
		weight: make([]float64, len(alphas)),
	}
	for m, a := range alphas {
		nnz := 0
		for j, k := range a {
			if k > 0 {
				l.fidx = append(l.fidx, int32(j*(kmax+1)+k))
				nnz++
			}
		}
		l.start[m+1] = int32(len(l.fidx))
		l.weight[m] = math.Ldexp(1, nnz/2) // √2^nnz, exact up to the final √2
		if nnz%2 == 1 {
			l.weight[m] *= math.Sqrt2
		}
	}
	l.specialise(alphas)
	outLen := f.Basis
	if f.Features > 0 {
		l.rff = newProjectionRFF(sp.ProjectionOf(f), NewRNG(sp.Seed, f.Name+"/rff"), f.Basis, f.Features, f.Sigma)
		outLen = f.Features
	}
	l.cols = []Column{{Name: f.Name, Family: f.Name, Len: outLen}}
	return l, nil
}

func (l *l2Family) columns() []Column { return l.cols }

// l2MaxFlatTable bounds the block tables of addBlock (d·(kmax+1)·numeric.L2Block float64 per
// sketch); bases needing larger tables use the generic add.
const l2MaxFlatTable = 4096

// specialise builds the flat layouts for d ≤ 3. add1 needs the basis in the order
// α = 0, 1, 2, … (which is numeric.CosineIndices(1, ·)); addBlock takes any order.
func (l *l2Family) specialise(alphas [][]int) {
	if l.kmax < 1 || l.d > 3 {
		return
	}
	if l.d == 1 {
		for m, a := range alphas {
			if a[0] != m {
				return
			}
		}
		l.spec = 1
		return
	}
	if l.d*(l.kmax+1)*numeric.L2Block > l2MaxFlatTable {
		return
	}
	bl := (l.kmax + 1) * numeric.L2Block
	for j := 0; j < l.d; j++ {
		l.flat[j] = make([]int32, len(alphas))
		for m, a := range alphas {
			l.flat[j][m] = int32(j*bl + a[j]*numeric.L2Block)
		}
	}
	l.spec = l.d
	l.path = numeric.BestPath()
}

func (l *l2Family) newSketch() familySketch {
	s := &l2Sketch{fam: l, acc: make([]int64, l.basis), table: make([]float64, l.d*(l.kmax+1))}
	if l.spec >= 2 {
		s.block = make([]float64, l.d*(l.kmax+1)*numeric.L2Block)
		for j := 0; j < l.d; j++ { // row 0 of every axis: cos 0 = 1, never overwritten
			row0 := s.block[j*(l.kmax+1)*numeric.L2Block:][:numeric.L2Block]
			for p := range row0 {
				row0[p] = 1
			}
		}
	}
	return s
}

// l2Sketch holds the fixed-point sums of ψ_α and scratch tables.
type l2Sketch struct {
	fam   *l2Family
	acc   []int64
	table []float64 // cos(π k u_j) at j·(kmax+1)+k for the current point (addGeneric)
	block []float64 // addBlock: axis j's rows at j·(kmax+1)·numeric.L2Block, row k at k·numeric.L2Block
}

// add accumulates the points of u. Every path computes each ψ_α(u_i) with the same
// floating-point operations as addGeneric (the specialised ones only add exact factors of
// 1 for the axes where α_j = 0) and adds numeric.ToFixed of it, so all give identical sums; the
// tests compare them bit for bit.
func (s *l2Sketch) add(u []float64, d int) {
	switch s.fam.spec {
	case 1:
		s.add1(u)
	case 2, 3:
		s.addBlock(u, s.fam.spec)
	default:
		s.addGeneric(u, d)
	}
}

// add1 is add for d = 1, where ψ_k(u) = cos(πku) is the Chebyshev table itself and basis
// function m is α = m. Four points advance through the recurrence together (independent
// dependency chains); the table is never stored.
func (s *l2Sketch) add1(u []float64) {
	acc := s.acc
	nb := len(acc)
	i := 0
	for ; i+4 <= len(u); i += 4 {
		p := u[i : i+4 : i+4]
		c0, c1, c2, c3 := numeric.CosPiFlat(p[0]), numeric.CosPiFlat(p[1]), numeric.CosPiFlat(p[2]), numeric.CosPiFlat(p[3])
		acc[0] += 4 << 32 // ψ_0 = 1: numeric.ToFixed(1) per point
		acc[1] += int64(numeric.FixedBits(c0) + numeric.FixedBits(c1) + numeric.FixedBits(c2) + numeric.FixedBits(c3) - numeric.FixedBias4)
		t0, t1, t2, t3 := 2*c0, 2*c1, 2*c2, 2*c3
		var q0, q1, q2, q3 float64 = 1, 1, 1, 1 // row k−2
		r0, r1, r2, r3 := c0, c1, c2, c3        // row k−1
		for k := 2; k < nb; k++ {
			q0, r0 = r0, math.FMA(t0, r0, -q0)
			q1, r1 = r1, math.FMA(t1, r1, -q1)
			q2, r2 = r2, math.FMA(t2, r2, -q2)
			q3, r3 = r3, math.FMA(t3, r3, -q3)
			acc[k] += int64(numeric.FixedBits(r0) + numeric.FixedBits(r1) + numeric.FixedBits(r2) + numeric.FixedBits(r3) - numeric.FixedBias4)
		}
	}
	if i < len(u) {
		s.addGeneric(u[i:], 1)
	}
}

// fillBlock writes the block table of one axis: tab[k·numeric.L2Block+p] = cos(πk·x_p) for the
// numeric.L2Block points x_p = pts[p·d+j], k = 1..kmax (row 0 stays 1), by the recurrence of
// addGeneric, rows outermost so that the numeric.L2Block chains run side by side.
func fillBlock(tab []float64, pts []float64, j, d, stride int) {
	var two [numeric.L2Block]float64
	r1 := (*[numeric.L2Block]float64)(tab[numeric.L2Block:])
	for p := range r1 {
		c := numeric.CosPiFlat(pts[p*d+j])
		r1[p] = c
		two[p] = 2 * c
	}
	for k := 2; k < stride; k++ {
		prev2 := (*[numeric.L2Block]float64)(tab[(k-2)*numeric.L2Block:])
		prev := (*[numeric.L2Block]float64)(tab[(k-1)*numeric.L2Block:])
		cur := (*[numeric.L2Block]float64)(tab[k*numeric.L2Block:])
		for p := range cur {
			cur[p] = math.FMA(two[p], prev[p], -prev2[p])
		}
	}
}

// addBlock is add for d = 2 and 3, numeric.L2Block points at a time: fill each axis's block
// table, then numeric.L2Products adds the block's ψ_m for every basis function.
func (s *l2Sketch) addBlock(u []float64, d int) {
	l := s.fam
	stride := l.kmax + 1
	bl := stride * numeric.L2Block
	tab := s.block[:d*bl]
	i := 0
	for ; i+d*numeric.L2Block <= len(u); i += d * numeric.L2Block {
		pts := u[i : i+d*numeric.L2Block]
		for j := 0; j < d; j++ {
			fillBlock(tab[j*bl:(j+1)*bl], pts, j, d, stride)
		}
		numeric.L2Products(l.path, d, tab, &l.flat, s.acc)
	}
	if i < len(u) {
		s.addGeneric(u[i:], d)
	}
}

// addGeneric is the reference path, for any d: per point, each axis's table
// cos(π k u_j), k = 0..kmax, then each ψ_α as the product of its non-zero axes' entries
// in increasing axis order.
func (s *l2Sketch) addGeneric(u []float64, d int) {
	l := s.fam
	stride := l.kmax + 1
	tab := s.table
	start, fidx, acc := l.start, l.fidx, s.acc[:len(l.start)-1]
	for i := 0; i+d <= len(u); i += d {
		for j := 0; j < d; j++ {
			row := tab[j*stride : (j+1)*stride]
			row[0] = 1
			if stride == 1 {
				continue
			}
			c1 := numeric.CosPiFlat(u[i+j])
			row[1] = c1
			two := 2 * c1
			for k := 2; k < stride; k++ {
				row[k] = math.FMA(two, row[k-1], -row[k-2])
			}
		}
		for m := range acc {
			a, b := start[m], start[m+1]
			if a == b {
				acc[m] += 1 << 32 // ψ_0 = 1 exactly: numeric.ToFixed(1)
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

func (s *l2Sketch) merge(other familySketch) {
	o := other.(*l2Sketch)
	for i, v := range o.acc {
		s.acc[i] += v
	}
}

func (s *l2Sketch) reset() { clear(s.acc) }

func (s *l2Sketch) sizeBytes() int { return 8*len(s.acc) + 8*len(s.table) + 8*len(s.block) + 88 }

// addNanos: one product per basis function, ≈ 0.4 ns each.
func (s *l2Sketch) addNanos() float64 { return 0.4 * float64(len(s.acc)) }

func (s *l2Sketch) finalize(n int64, out [][]float32) {
	l := s.fam
	dst := out[0]
	if n == 0 {
		clear(dst)
		return
	}
	fn := float64(n)
	if l.rff == nil {
		for m, v := range s.acc {
			dst[m] = float32(l.weight[m] * (numeric.FromFixed(v) / fn))
		}
		return
	}
	a := make([]float64, l.basis)
	s.coefficients(a, fn)
	l.rff.apply(a, dst)
}

// coefficients writes the window's basis coefficients a (float64) for fn points.
func (s *l2Sketch) coefficients(a []float64, fn float64) {
	l := s.fam
	for m, v := range s.acc {
		a[m] = l.weight[m] * (numeric.FromFixed(v) / fn)
	}
}

// finalizeBatch is finalize for many windows; with the RFF stage, the non-empty windows'
// coefficients go through one batched RFF pass.
func (l *l2Family) finalizeBatch(ns []int64, parts []familySketch, outs [][][]float32, workers int) {
	finalizeStageBatch(l.rff, ns, parts, outs, workers, func(p familySketch, a []float64, fn float64) {
		p.(*l2Sketch).coefficients(a, fn)
	})
}
