// Package nufft evaluates sums of complex exponentials at fixed frequencies,
//
//	S_r = Σ_k exp(i ω_r·u_k),  r = 0..F−1,
//
// for points u_k in the unit cube [0, 1]^d (d ≤ 3), with a type-3 non-uniform FFT built
// for streaming: the points are spread one at a time onto a small fixed grid of int64
// fixed-point cells (the mergeable window state), and the per-frequency work is done once
// per window, at Finalize. Same bits on every architecture: the kernel is a piecewise
// polynomial with literal coefficients evaluated with explicit fused multiply-adds, and every
// other floating-point operation is explicitly rounded (no implicit multiply-add fusion).
//
// Method (after FINUFFT's type 3; Barnett, Magland, af Klinteberg 2019, and Lee & Greengard
// 2005), per dimension j, with S_j = max_r |ω_rj| and an upsampling factor σ = 2:
//
//  1. Spread. Grid spacing Δ_j = π/(σ·S_j), cells y_l = ½ + (l − L_j)·Δ_j, l = 0..2L_j,
//     L_j = ⌈1/(2Δ_j) + w/2⌉ + 1 so that every kernel support stays inside the grid. Each
//     point adds b_l += Π_j φ((y_l − u_j)/(wΔ_j/2)) (w cells per dimension, the kernel φ of
//     kernel.go), each product rounded to a multiple of 2⁻³² and added as an integer, so the
//     grid does not depend on the order of the points (streaming = batch = merged).
//  2. Since ∫ b(y) e^{iωy} dy = S(ω)·ψ̂(ω) (ψ̂ the kernel's transform) and the trapezoid rule
//     is accurate for |ω|Δ ≤ π/σ: S(ω_r) ≈ e^{iω_r·½}·Π_j (Δ_j/ψ̂_j(ω_rj))·f(τ_r) with
//     f(τ) = Σ_l b_l e^{iτ·(l−L)}, τ_rj = ω_rj·Δ_j ∈ [−π/σ, π/σ].
//  3. f at the F fixed targets τ_r is a type-2 transform of the grid, done with a second
//     upsampled grid of n2_j = ⌈σ₂·(2L_j+1)⌉ points: deconvolve the modes by the kernel's
//     transform, take the discrete Fourier transform at only the n2-grid indices some
//     target's kernel reaches (a pruned DFT by precomputed matrices, one dimension at a
//     time), then interpolate each target from its w^d neighbours with precomputed weights.
//     The grid is real, so f(−τ) = conj f(τ): targets are flipped to τ_r0 ≥ 0 first, which
//     halves the indices needed along dimension 0.
//
// Accuracy: the error of both kernel stages is about 1e-7·Σ|terms| for w = 8 (FINUFFT's
// rule ε ≈ 10^(1−w) at σ = 2); the tests measure ≤ 1e-6·n against the direct sum.
package nufft

import (
	"errors"
	"fmt"
	"math"

	"github.com/distfeat/distfeat/internal/quadrature"
)

const (
	// sigma is the upsampling factor of both stages.
	sigma = 2.0
	// quadNodes is the Gauss–Legendre rule per kernel piece for the kernel's transform.
	quadNodes = 16
	// fixedScale, fixedMagic: terms are rounded to multiples of 2⁻³² by one fused
	// multiply-add into the low mantissa bits of 1.5·2⁵² (as distfeat's other sketches).
	fixedScale     = 0x1p32
	fixedMagic     = 0x1.8p52
	fixedMagicBits = 0x4338000000000000
)

// DefaultMaxGridCells is the default bound on a plan's grid: 2²⁰ int64 cells, 8 MiB.
const DefaultMaxGridCells = 1 << 20

// maxGridSide bounds the grid along one dimension: the pruned Fourier matrices hold about
// side²/2 complex entries per dimension.
const maxGridSide = 4096

// DefaultWidth is the kernel width (cells per dimension) for about 1e-7 relative accuracy.
const DefaultWidth = 8

// Widths lists the kernel widths with a committed kernel.
func Widths() []int { return []int{6, 7, 8, 9, 10} }

// Options configure a Plan.
type Options struct {
	// Width is the kernel width w (0 means DefaultWidth); see Widths.
	Width int
	// MaxGridCells bounds the grid (GridLen; 0 means DefaultMaxGridCells): NewPlan fails
	// rather than allocate a larger window state (high frequencies need fine grids).
	MaxGridCells int
	// Sincos returns sin x and cos x. The plan's precomputed factors (phases, Fourier
	// matrices, kernel transforms) go through it, so a deterministic implementation makes
	// the results bit-identical across architectures. Required.
	Sincos func(x float64) (sin, cos float64)
}

// Plan is the compiled transform for one set of frequencies. It is read-only after
// NewPlan and safe for concurrent use; each goroutine needs its own Work for Finalize.
type Plan struct {
	d, f  int
	ker   *kernelTable
	w     int
	nf    [3]int     // grid points per dimension, 2L+1
	lhalf [3]int     // L
	inv   [3]float64 // 1/Δ
	cells int
	// Pruned Fourier matrices, per dimension: m[j] output indices (first mlo[j]) by nf[j]
	// modes, row-major, real and imaginary parts; the deconvolution 1/ψ̂₂ is folded in.
	mlo    [3]int
	mcount [3]int
	er, ei [3][]float64
	// Per target: start index (relative to mlo) and w interpolation weights per dimension,
	// the flip flag, and the output factor e^{iω·½}·Π Δ/ψ̂·2⁻³² (re, im).
	start  []int32
	wts    []float64
	flip   []bool
	fr, fi []float64
	// simd: Spread and Finalize may use the assembly kernels (set by NewPlan when the CPU
	// has them).
	simd bool
	// d = 2 only, the layouts of Finalize's vector loops: e0t = E₀ transposed (nf0 × m0,
	// re then im interleaved per row: [re m0 | im m0]), e1t = E₁ transposed with m1p =
	// m1 rounded up to 4 columns (zeros beyond m1), [re m1p | im m1p] per row.
	e0t, e1t []float64
	m1p      int
}

// NewPlan compiles the transform for the frequencies freqs (F×d, row-major: ω_r at
// freqs[r*d:(r+1)*d]) in dimension d ∈ {1, 2, 3}.
func NewPlan(freqs []float64, d int, opt Options) (*Plan, error) {
	w, tab, err := checkPlanInput(freqs, d, opt)
	if err != nil {
		return nil, err
	}
	p := &Plan{d: d, f: len(freqs) / d, ker: &tab, w: w, cells: 1, simd: haveSIMD()}
	b := newPlanBuild(freqs, opt.Sincos)
	if err := p.sizeGrid(b, opt.MaxGridCells); err != nil {
		return nil, err
	}
	p.placeTargets(b)
	p.fourierMatrices(b)
	if d == 2 {
		p.transposeForD2()
	}
	p.outputFactors(b)
	return p, nil
}

// checkPlanInput validates NewPlan's arguments and returns the kernel width and its table.
func checkPlanInput(freqs []float64, d int, opt Options) (int, kernelTable, error) {
	if d < 1 || d > 3 {
		return 0, kernelTable{}, fmt.Errorf("nufft: dimension %d: supported are 1, 2 and 3", d)
	}
	if len(freqs) == 0 || len(freqs)%d != 0 {
		return 0, kernelTable{}, fmt.Errorf("nufft: %d frequency coordinates is not a positive multiple of d = %d", len(freqs), d)
	}
	if opt.Sincos == nil {
		return 0, kernelTable{}, errors.New("nufft: Options.Sincos is required")
	}
	w := opt.Width
	if w == 0 {
		w = DefaultWidth
	}
	tab, ok := kernelTables[w]
	if !ok {
		return 0, kernelTable{}, fmt.Errorf("nufft: kernel width %d: supported are %v", w, Widths())
	}
	for i, v := range freqs {
		if math.IsNaN(v) || math.IsInf(v, 0) || math.Abs(v) > 1e6 {
			return 0, kernelTable{}, fmt.Errorf("nufft: frequency coordinate %d is %v (finite, |ω| ≤ 1e6 required)", i, v)
		}
	}
	return w, tab, nil
}

// planBuild is NewPlan's working state: the frequencies, the per-dimension grid spacing Δ
// and stage-2 grid size n2, the range of n2-grid indices the targets reach, and the
// quadrature for the kernel's transform.
type planBuild struct {
	freqs  []float64
	sincos func(x float64) (sin, cos float64)
	cos    func(x float64) float64
	qx, qw []float64 // Gauss–Legendre nodes and weights
	delta  [3]float64
	n2     [3]int
	mhi    [3]int // the largest n2-grid index a target's kernel reaches (p.mlo the smallest)
}

// newPlanBuild prepares the quadrature of the kernel transform through sincos.
func newPlanBuild(freqs []float64, sincos func(x float64) (sin, cos float64)) *planBuild {
	b := &planBuild{freqs: freqs, sincos: sincos}
	b.cos = func(x float64) float64 { _, c := sincos(x); return c }
	b.qx, b.qw = quadrature.GaussLegendreCos(quadNodes, b.cos)
	return b
}

// phiHat is the kernel's transform Φ at x.
func (p *Plan) phiHat(b *planBuild, x float64) float64 {
	return p.ker.transform(x, b.qx, b.qw, b.cos)
}

// sizeGrid sets Δ_j = π/(σ·S_j) and the grid (L_j, 2L_j+1 points per dimension, the cell
// count), and the stage-2 sizes n2_j; it fails when a side or the whole grid is too large.
func (p *Plan) sizeGrid(b *planBuild, maxCells int) error {
	d, w := p.d, p.w
	for j := 0; j < d; j++ {
		s := 1.0 // at least 1: a tiny S would give a needlessly coarse, huge-Δ grid
		for r := 0; r < p.f; r++ {
			s = max(s, math.Abs(b.freqs[r*d+j]))
		}
		b.delta[j] = math.Pi / float64(sigma*s)
		p.inv[j] = 1 / b.delta[j]
		p.lhalf[j] = int(math.Ceil(float64(0.5*p.inv[j])+float64(0.5*float64(w)))) + 1
		p.nf[j] = 2*p.lhalf[j] + 1
		if p.nf[j] > maxGridSide {
			return fmt.Errorf("nufft: frequencies up to %.4g need %d grid points along dimension %d, more than %d", s, p.nf[j], j, maxGridSide)
		}
		p.cells *= p.nf[j]
	}
	if maxCells == 0 {
		maxCells = DefaultMaxGridCells
	}
	if p.cells > maxCells {
		return fmt.Errorf("nufft: a grid of %v = %d cells is more than %d", p.nf[:d], p.cells, maxCells)
	}
	for j := 0; j < d; j++ {
		b.n2[j] = int(math.Ceil(sigma * float64(p.nf[j])))
	}
	return nil
}

// placeTargets sets every target's flip flag, its start index on the n2 grids and its w
// interpolation weights per dimension: τ_rj = ω_rj·Δ_j, flipped so that τ_r0 ≥ 0. It also
// finds the range of n2-grid indices the targets reach (p.mlo, b.mhi).
func (p *Plan) placeTargets(b *planBuild) {
	d, w := p.d, p.w
	p.start = make([]int32, p.f*d)
	p.wts = make([]float64, p.f*d*w)
	p.flip = make([]bool, p.f)
	i0s := make([]int, p.f*d)
	for j := 0; j < d; j++ {
		p.mlo[j] = math.MaxInt
	}
	b.mhi = [3]int{math.MinInt, math.MinInt, math.MinInt}
	for r := 0; r < p.f; r++ {
		p.flip[r] = b.freqs[r*d] < 0
		for j := 0; j < d; j++ {
			tau := float64(b.freqs[r*d+j] * b.delta[j])
			if p.flip[r] {
				tau = -tau
			}
			pos := float64(tau*float64(b.n2[j])) / (2 * math.Pi)
			i0, t := p.ker.position(pos)
			i0s[r*d+j] = i0
			p.ker.values(t, p.wts[(r*d+j)*w:(r*d+j+1)*w])
			scale := 2 * math.Pi / float64(b.n2[j])
			for a := 0; a < w; a++ {
				p.wts[(r*d+j)*w+a] = float64(p.wts[(r*d+j)*w+a] * scale)
			}
			p.mlo[j] = min(p.mlo[j], i0)
			b.mhi[j] = max(b.mhi[j], i0+w-1)
		}
	}
	for r := range i0s {
		p.start[r] = int32(i0s[r] - p.mlo[r%d])
	}
}

// fourierMatrices builds the pruned DFT matrices with the stage-2 deconvolution:
// E_j[m][l] = e^{2πi·m·(l−L)/n2}/ψ̂₂(l−L), ψ̂₂(k) = α₂·Φ(α₂k), α₂ = w·π/n2, for the n2-grid
// indices m the targets reach.
func (p *Plan) fourierMatrices(b *planBuild) {
	for j := 0; j < p.d; j++ {
		p.mcount[j] = b.mhi[j] - p.mlo[j] + 1
		nf, l, n := p.nf[j], p.lhalf[j], b.n2[j]
		alpha2 := float64(p.w) * math.Pi / float64(n)
		deconv := make([]float64, nf)
		for i := 0; i < nf; i++ {
			deconv[i] = 1 / float64(alpha2*p.phiHat(b, float64(alpha2*float64(i-l))))
		}
		p.er[j] = make([]float64, p.mcount[j]*nf)
		p.ei[j] = make([]float64, p.mcount[j]*nf)
		for mi := 0; mi < p.mcount[j]; mi++ {
			m := p.mlo[j] + mi
			for i := 0; i < nf; i++ {
				k := ((m*(i-l))%n + n) % n // exact phase index
				s, c := b.sincos(float64(2*math.Pi*float64(k)) / float64(n))
				p.er[j][mi*nf+i] = float64(c * deconv[i])
				p.ei[j][mi*nf+i] = float64(s * deconv[i])
			}
		}
	}
}

// outputFactors sets every target's factor e^{iω·½}·Π_j Δ_j/ψ̂₁(ω_j)·2⁻³², ψ̂₁(ω) = α·Φ(αω),
// α = wΔ/2, so Δ/ψ̂₁ = 2/(w·Φ(αω)).
func (p *Plan) outputFactors(b *planBuild) {
	d, w := p.d, p.w
	p.fr, p.fi = make([]float64, p.f), make([]float64, p.f)
	for r := 0; r < p.f; r++ {
		phase, amp := 0.0, 0x1p-32
		for j := 0; j < d; j++ {
			om := b.freqs[r*d+j]
			phase += float64(0.5 * om)
			alpha := float64(float64(w)*b.delta[j]) / 2
			amp = float64(amp*2) / float64(float64(w)*p.phiHat(b, float64(alpha*om)))
		}
		s, c := b.sincos(phase)
		p.fr[r], p.fi[r] = float64(amp*c), float64(amp*s)
	}
}

// Dim is the points' dimension.
func (p *Plan) Dim() int { return p.d }

// Frequencies is F, the number of frequencies.
func (p *Plan) Frequencies() int { return p.f }

// Width is the kernel width w.
func (p *Plan) Width() int { return p.w }

// GridLen is the number of int64 cells of a window's grid.
func (p *Plan) GridLen() int { return p.cells }

// GridShape is the grid's points per dimension (dimension 0 outermost).
func (p *Plan) GridShape() []int { return append([]int(nil), p.nf[:p.d]...) }

// MaxPoints is the most points one grid may hold: every term is at most 2³² (a kernel
// product ≤ 1), so int64 cells cannot overflow below 2³¹ points.
const MaxPoints = 1 << 31

// Cost-model constants (ns), fitted to BenchmarkSpread and BenchmarkFinalize on the
// reference machine (AVX2 spreading kernel at d = 2). They are part of what `auto` decides
// in embedding, so they are frozen: changing one changes which method an auto spec uses.
const (
	costPointBase = 10.0 // per point: positions and loop overhead
	costPerCell   = 0.5  // per point and kernel cell (w^d cells)
	costPerPair   = 0.33 // per window: per multiply-add pair of Finalize
)

// Cost is the plan's cost model: ns per point spread and ns per window finalised. Both are
// pure functions of the plan's sizes (the same on every machine).
func (p *Plan) Cost() (perPoint, perWindow float64) {
	cells := 1
	for j := 0; j < p.d; j++ {
		cells *= p.w
	}
	perPoint = costPointBase + float64(costPerCell*float64(cells))
	return perPoint, costPerPair * float64(p.finalizePairs())
}

// finalizePairs counts Finalize's multiply-add pairs: the pruned DFT passes and the
// interpolation at every target.
func (p *Plan) finalizePairs() int {
	inner := p.cells / p.nf[0]
	pairs := 2 * p.nf[0] * p.mcount[0] * inner // dimension 0, real input
	switch p.d {
	case 2:
		pairs += 4 * p.mcount[0] * p.mcount[1] * p.nf[1]
	case 3:
		pairs += 4 * p.mcount[0] * p.nf[1] * p.mcount[1] * p.nf[2]
		pairs += 4 * p.mcount[0] * p.mcount[1] * p.mcount[2] * p.nf[2]
	}
	interp := 2
	for j := 0; j < p.d; j++ {
		interp *= p.w
	}
	return pairs + p.f*interp
}

// transposeForD2 builds e0t and e1t from er/ei (d = 2).
func (p *Plan) transposeForD2() {
	nf0, m0 := p.nf[0], p.mcount[0]
	p.e0t = make([]float64, nf0*2*m0)
	for l := 0; l < nf0; l++ {
		for mi := 0; mi < m0; mi++ {
			p.e0t[l*2*m0+mi] = p.er[0][mi*nf0+l]
			p.e0t[l*2*m0+m0+mi] = p.ei[0][mi*nf0+l]
		}
	}
	nf1, m1 := p.nf[1], p.mcount[1]
	p.m1p = (m1 + 3) &^ 3
	p.e1t = make([]float64, nf1*2*p.m1p)
	for l := 0; l < nf1; l++ {
		for mi := 0; mi < m1; mi++ {
			p.e1t[l*2*p.m1p+mi] = p.er[1][mi*nf1+l]
			p.e1t[l*2*p.m1p+p.m1p+mi] = p.ei[1][mi*nf1+l]
		}
	}
}
