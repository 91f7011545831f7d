package embedding

import (
	"math/bits"

	"github.com/distfeat/distfeat/internal/numeric"
)

// sorf is the structured orthogonal random projection of Yu et al., "Orthogonal Random
// Features" (NeurIPS 2016): the frequencies of a Gaussian-kernel random Fourier feature map
// are the rows of stacked p×p blocks
//
//	W_b = (√p/σ)·H D_{b,3} H D_{b,2} H D_{b,1},   b = 0, 1, …, B−1,
//
// where p is the input length rounded up to a power of two (the input is zero-padded), H is
// the normalised Walsh–Hadamard matrix (H/√p orthogonal, entries ±1/√p) and the D_{b,i} are
// diagonal matrices of random signs. The rows of one block are exactly orthogonal with norm
// √p/σ; the first D/2 rows of the B = ⌈(D/2)/p⌉ stacked blocks are the frequencies ω_r. A
// projection θ = W a costs 3B fast Walsh–Hadamard transforms, O(D log p) time, and the
// map stores only 3Bp signs, O(D) memory, instead of the D/2 × in Gaussian matrix.
//
// Draws, from the family's RNG stream (NewRNG(seed, stream)): for b = 0..B−1, for i = 1, 2, 3,
// the p signs of D_{b,i} in order k = 0..p−1, 64 per rng.Uint64() call, sign k taken from
// bit k mod 64 of call ⌊k/64⌋ (bit set: −1, clear: +1; for p < 64 one call whose low p bits
// are used).
//
// Arithmetic, fixed for bit-identical results on every machine: y = zero-padded a; for
// i = 1, 2, 3: y_k ← s_{b,i,k}·y_k (exact) then y ← Ĥy, the unnormalised transform by the
// in-place butterflies (y_j, y_{j+h}) ← (y_j + y_{j+h}, y_j − y_{j+h}) for h = 1, 2, 4, …,
// p/2, and within a stage j increasing; finally θ_{bp+k} = y_k·c with c = 1/(σp) rounded
// once (Ĥ = √p·H, so (√p/σ)·p^{−3/2} = 1/(σp)). Each butterfly is one rounded addition
// or subtraction, so any implementation doing the same butterflies gives the same bits.
type sorf struct {
	in, rows int          // input length, number of frequencies D/2
	p, logp  int          // padded length (a power of two ≥ in) and log₂ p
	blocks   int          // B
	signs    []float64    // ±1, blocks × 3 × p
	scale    float64      // 1/(σp)
	path     numeric.Path // kernel of fwht's wide stages; every path gives the same bits
}

// newSORF draws the signs of a projection of inputs of length in onto rows = features/2
// frequencies for the Gaussian kernel of bandwidth sigma.
func newSORF(rng *RNG, in, rows int, sigma float64) *sorf {
	p := 1
	for p < in {
		p <<= 1
	}
	s := &sorf{in: in, rows: rows, p: p, logp: bits.TrailingZeros(uint(p)), blocks: (rows + p - 1) / p,
		path: numeric.BestPath()}
	s.scale = 1 / (sigma * float64(p))
	s.signs = make([]float64, s.blocks*3*p)
	for d := 0; d < 3*s.blocks; d++ {
		sg := s.signs[d*p : (d+1)*p]
		var word uint64
		for k := range sg {
			if k%64 == 0 {
				word = rng.Uint64()
			}
			sg[k] = 1
			if word>>(k%64)&1 == 1 {
				sg[k] = -1
			}
		}
	}
	return s
}

// project writes θ = W a (len rows) using y (len ≥ p) as workspace.
func (s *sorf) project(a, theta, y []float64) {
	p := s.p
	a = a[:s.in]
	y = y[:p]
	theta = theta[:s.rows]
	for b := 0; b < s.blocks; b++ {
		sg := s.signs[3*b*p : 3*(b+1)*p]
		d1 := sg[:p:p]
		for k, v := range a {
			y[k] = d1[k] * v
		}
		clear(y[len(a):])
		numeric.FWHT(s.path, y)
		signMul(y, sg[p:2*p])
		numeric.FWHT(s.path, y)
		signMul(y, sg[2*p:3*p])
		numeric.FWHT(s.path, y)
		out := theta[b*p : min((b+1)*p, s.rows)]
		for k := range out {
			out[k] = y[k] * s.scale
		}
	}
}

// signMul multiplies y by the ±1 diagonal d (exact).
func signMul(y, d []float64) {
	d = d[:len(y)]
	for k := range y {
		y[k] *= d[k]
	}
}
