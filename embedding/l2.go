package embedding

import (
	"math"
)

// l2Family is a compiled `l2` family (DESIGN §3.2): the window's empirical coefficients in
// the orthonormal cosine basis of L²([0,1]^d), a_α = (1/n) Σ_i φ_α(u_i) for the first
// `basis` multi-indices α (cosineIndices order), so that ‖a − a′‖² ≈ ‖p − q‖²₂.
//
// Fixed point: |φ_α| can reach √2^{nnz(α)} (nnz = number of non-zero α_j), so the sketch
// accumulates ψ_α(u) = Π_{j: α_j>0} cos(π α_j u_j) ∈ [−1, 1] and finalisation multiplies by
// c_α = √2^{nnz(α)}: a_α = c_α·(Σ toFixed(ψ_α(u_i))·2⁻³²/n). Per point, each axis gets a
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
	rff    *rff
	cols   []Column
}

// compileL2 builds an l2 family's basis tables and optional RFF stage.
func compileL2(spec *Spec, idx int) (*l2Family, error) {
	f := &spec.Families[idx]
	d := spec.Dim
	alphas := cosineIndices(d, f.Basis)
	kmax := maxIndex(alphas)
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
	outLen := f.Basis
	if f.Features > 0 {
		l.rff = newRFF(NewRNG(spec.Seed, f.Name+"/rff"), f.Basis, f.Features, f.Sigma)
		outLen = f.Features
	}
	l.cols = []Column{{Name: f.Name, Family: f.Name, Len: outLen}}
	return l, nil
}

func (l *l2Family) columns() []Column { return l.cols }

func (l *l2Family) newSketch() familySketch {
	return &l2Sketch{
		fam:   l,
		acc:   make([]int64, l.basis),
		table: make([]float64, l.d*(l.kmax+1)),
	}
}

// l2Sketch holds the fixed-point sums of ψ_α and a per-point scratch table.
type l2Sketch struct {
	fam   *l2Family
	acc   []int64
	table []float64 // cos(π k u_j) at j·(kmax+1)+k for the current point
}

func (s *l2Sketch) add(u []float64, d int) {
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
			c1 := cosPi(u[i+j])
			row[1] = c1
			two := 2 * c1
			for k := 2; k < stride; k++ {
				row[k] = math.FMA(two, row[k-1], -row[k-2])
			}
		}
		for m := range acc {
			a, b := start[m], start[m+1]
			if a == b {
				acc[m] += 1 << 32 // ψ_0 = 1 exactly: toFixed(1)
				continue
			}
			p := tab[fidx[a]]
			for _, f := range fidx[a+1 : b] {
				p = float64(p * tab[f])
			}
			acc[m] += toFixed(p)
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

func (s *l2Sketch) sizeBytes() int { return 8*len(s.acc) + 8*len(s.table) + 64 }

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
			dst[m] = float32(l.weight[m] * (fromFixed(v) / fn))
		}
		return
	}
	a := make([]float64, l.basis)
	for m, v := range s.acc {
		a[m] = l.weight[m] * (fromFixed(v) / fn)
	}
	l.rff.apply(a, dst)
}
