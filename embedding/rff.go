package embedding

import (
	"math"
	"sync"

	"github.com/distfeat/distfeat/internal/numeric"
	"github.com/distfeat/distfeat/internal/parallel"
	"github.com/distfeat/distfeat/spec"
)

// rff is a random Fourier feature map for the Gaussian kernel exp(−‖a−b‖²/(2σ²)) on ℝ^in:
// z(a) = √(2/D)·[sin(ω_r·a), cos(ω_r·a)]_{r=1..D/2}, ω_r ~ N(0, σ⁻² I) (sin/cos pairs,
// thesis §3.2). It is applied once per window at finalisation (mmd's second stage, l2's and
// hdd's outer kernel), in float64 with the deterministic sincos of sincos.go and the fixed
// summation order of numeric.RFFDot, so the output bits do not depend on the architecture, the
// GOAMD64 level or which kernel path (portable, AVX2, AVX-512) computed the inner products.
type rff struct {
	in, out int
	omega   []float64    // row-major (out/2) × in
	scale   float64      // √(2/D)
	path    numeric.Path // kernel of numeric.RFFDot; every path gives the same bits
	orth    *sorf        // with `projection: orthogonal`: the structured frequencies (omega is nil)
	batch   sync.Pool    // *rffBatch: applyBatch's workspace
}

// newProjectionRFF is the random Fourier stage of a family whose spec field `projection`
// is projection: newOrthogonalRFF for "orthogonal", newRFF otherwise ("gaussian", or empty
// meaning gaussian). Both draw from rng.
func newProjectionRFF(projection string, rng *RNG, in, features int, sigma float64) *rff {
	if projection == spec.ProjectionOrthogonal {
		return newOrthogonalRFF(rng, in, features, sigma)
	}
	return newRFF(rng, in, features, sigma)
}

// newOrthogonalRFF is newRFF with the structured orthogonal frequencies of sorf.go instead
// of the dense Gaussian matrix (`projection: orthogonal`), drawn from rng as newSORF says.
func newOrthogonalRFF(rng *RNG, in, features int, sigma float64) *rff {
	return &rff{in: in, out: features, scale: math.Sqrt(2 / float64(features)),
		path: numeric.BestPath(), orth: newSORF(rng, in, features/2, sigma)}
}

// rffBatch is the workspace of one batched finalisation: the windows' inputs a (row-major,
// one row of length in per window) and one rffLane per goroutine of applyBatch.
type rffBatch struct {
	a     []float64
	lanes []rffLane
}

// rffLane is one goroutine's workspace in applyBatch: θ for its block of rows (or one
// window's frequencies) and sorf's transform workspace.
type rffLane struct {
	theta, y []float64
}

// lanesFor returns b's first n lanes, adding empty ones as needed.
func (b *rffBatch) lanesFor(n int) []rffLane {
	for len(b.lanes) < n {
		b.lanes = append(b.lanes, rffLane{})
	}
	return b.lanes[:n]
}

// getBatch returns a workspace for nw windows with a[:nw·in] ready to be filled; return it
// with putBatch.
func (m *rff) getBatch(nw int) *rffBatch {
	b, _ := m.batch.Get().(*rffBatch)
	if b == nil {
		b = &rffBatch{}
	}
	if need := (nw + numeric.RFFTileWindows) * m.in; cap(b.a) < need { // room for applyBatch's padding
		b.a = make([]float64, need)
	}
	b.a = b.a[:nw*m.in]
	return b
}

func (m *rff) putBatch(b *rffBatch) { m.batch.Put(b) }

// newRFF draws the frequencies: for r = 0..D/2−1, for j = 0..in−1, ω_rj = rng.Normal()/σ.
func newRFF(rng *RNG, in, features int, sigma float64) *rff {
	half := features / 2
	m := &rff{in: in, out: features, omega: make([]float64, half*in),
		scale: math.Sqrt(2 / float64(features)), path: numeric.BestPath()}
	adviseHuge(m.omega)
	// The draws of rng.Normal in order (NormalFill, chunk after chunk, continues the same
	// sequence), each chunk scaled while it is still in cache.
	for c := m.omega; len(c) > 0; {
		chunk := c[:min(len(c), normalChunk)]
		rng.NormalFill(chunk)
		divideBy(chunk, sigma)
		c = c[len(chunk):]
	}
	return m
}

// divideBy sets x[i] = x[i]/d. When d is a power of two whose reciprocal is a normal float64
// (σ = 0.5, the default, or 1, 2, 0.25 …), 1/d is exact and x·(1/d) is the same correctly
// rounded value as x/d for every x (TestDivideByPowerOfTwo), with a multiplication in place
// of a division several times slower.
func divideBy(x []float64, d float64) {
	inv := 1 / d
	if frac, _ := math.Frexp(d); frac == 0.5 && math.Abs(inv) >= 0x1p-1022 && !math.IsInf(inv, 0) {
		for i := range x {
			x[i] *= inv
		}
		return
	}
	for i := range x {
		x[i] /= d
	}
}

// normalChunk is the number of draws newRFF makes and scales at a time (64 KiB).
const normalChunk = 8192

// rffBlock is the number of rows per numeric.RFFDot call in apply: their θ live on the stack. A
// multiple of both kernels' row groups (8 and 6), so that only the last call has rows
// left over for the kernels' slower one-row loop.
const rffBlock = 96

// apply writes z(a) into out (len D). ω is streamed once per call (D/2·in float64: 16 MB
// for the default hdd family, more than L2 and a large share of L3), so with the SIMD
// kernels this stage runs at memory bandwidth, not at FMA throughput.
func (m *rff) apply(a []float64, out []float32) {
	if m.orth != nil {
		b := m.getBatch(0)
		m.applyOrth(&b.lanesFor(1)[0], a, out)
		m.putBatch(b)
		return
	}
	half := m.out / 2
	a = a[:m.in]
	out = out[:2*half]
	var theta [rffBlock]float64
	for r0 := 0; r0 < half; r0 += rffBlock {
		nr := min(rffBlock, half-r0)
		th := theta[:nr]
		numeric.RFFDot(m.path, m.omega[r0*m.in:(r0+nr)*m.in], m.in, a, th)
		m.emit(th, out[2*r0:2*(r0+nr)])
	}
}

// applyOrth is apply for the structured projection, with l's θ and transform workspace.
func (m *rff) applyOrth(l *rffLane, a []float64, out []float32) {
	half := m.out / 2
	if cap(l.theta) < half {
		l.theta = make([]float64, half)
	}
	if len(l.y) < m.orth.p {
		l.y = make([]float64, m.orth.p)
	}
	th := l.theta[:half]
	m.orth.project(a, th, l.y)
	m.emit(th, out[:2*half])
}

// emit writes the features of the frequencies θ: o[2i] = √(2/D)·sin θ_i and
// o[2i+1] = √(2/D)·cos θ_i, rounded to float32. With AVX-512, 8 frequencies at a time by the
// same operations (rffEmitAVX512) when every |θ_i| is within the polynomial kernel's range.
func (m *rff) emit(theta []float64, o []float32) {
	o = o[:2*len(theta)]
	inRange := true
	for _, t := range theta {
		inRange = inRange && math.Abs(t) <= numeric.SincosMaxArg
	}
	k := 0
	if inRange {
		k = numeric.RFFEmitSIMD(m.path, theta, m.scale, o)
	}
	theta, o = theta[k:], o[2*k:]
	for i, t := range theta {
		s, c := numeric.SincosFlat(t)
		o[2*i] = float32(m.scale * s)
		o[2*i+1] = float32(m.scale * c)
	}
}

// rffRowBlockBytes is the size of the block of ω that applyBatch keeps in cache while every
// window of the batch is multiplied by it: small enough for L2 (with the windows' inputs),
// large enough that the per-block overhead (sincos of the block, loop set-up) is amortised.
const rffRowBlockBytes = 192 << 10

// rowBlock is applyBatch's number of rows per ω block: a multiple of 4 (the tile kernel's
// rows) of about rffRowBlockBytes, at least 4.
func (m *rff) rowBlock() int {
	rb := rffRowBlockBytes / (8 * max(m.in, 1))
	rb = max(4, rb&^3)
	return min(rb, m.out/2)
}

// applyBatch is apply for many windows: it writes z(a_w) into outs[w] (len D each) for the
// inputs a_w = b.a[w·in : (w+1)·in], w < len(outs). ω is streamed from memory once per call
// instead of once per window: a block of rows stays in cache while every window is
// multiplied by it (numeric.RFFDotBatch). Each θ is computed by numeric.RFFDot's summation order and goes
// through the same sincos and scaling as in apply, so every outs[w] is bit-identical to
// apply(a_w, outs[w]).
//
// Up to workers goroutines share the work: the windows of the structured projection, or the
// blocks of rows of ω (each goroutine streams its own rows once, for every window). Either
// way each output value is computed exactly as above.
func (m *rff) applyBatch(b *rffBatch, outs [][]float32, workers int) {
	nw := len(outs)
	if nw == 0 {
		return
	}
	if m.orth != nil { // no matrix to stream: window by window
		lanes := b.lanesFor(min(max(workers, 1), nw))
		parallel.Share(len(lanes), nw, 1, func(part, lo, hi int) {
			for w := lo; w < hi; w++ {
				m.applyOrth(&lanes[part], b.a[w*m.in:(w+1)*m.in], outs[w])
			}
		})
		return
	}
	half := m.out / 2
	rb := m.rowBlock()
	// With the tile kernels, windows left over from their groups run at about half their
	// speed: 3 left over are padded to a tile of 4, 5 to one of 6, with zero inputs (whose
	// θ are computed and dropped).
	nc := nw
	if numeric.RFFTileSupported(m.path) {
		nc = numeric.RFFTilePadded(nw)
		b.a = b.a[:nc*m.in] // getBatch reserved the room
		clear(b.a[nw*m.in:])
	}
	a := b.a[:nc*m.in]
	blocks := (half + rb - 1) / rb
	lanes := b.lanesFor(min(max(workers, 1), blocks))
	parallel.Share(len(lanes), blocks, 1, func(part, lo, hi int) {
		l := &lanes[part]
		if cap(l.theta) < nc*rb {
			l.theta = make([]float64, nc*rb)
		}
		theta := l.theta[:nc*rb]
		for blk := lo; blk < hi; blk++ {
			r0 := blk * rb
			nr := min(rb, half-r0)
			numeric.RFFDotBatch(m.path, m.omega[r0*m.in:(r0+nr)*m.in], m.in, nr, a, nc, theta, rb)
			for w, out := range outs {
				m.emit(theta[w*rb:w*rb+nr], out[2*r0:2*(r0+nr)])
			}
		}
	})
}

// finalizeStageBatch finalises many windows of a family whose output is an optional RFF stage
// (nil: none) on top of a float64 input vector that input writes for a window of fn points:
// the non-empty windows' inputs go through one batched RFF pass (spread over up to workers
// goroutines), empty windows are zeros.
func finalizeStageBatch(stage *rff, ns []int64, parts []familySketch, outs [][][]float32, workers int,
	input func(p familySketch, dst []float64, fn float64)) {
	if stage == nil {
		for k, p := range parts {
			p.finalize(ns[k], outs[k])
		}
		return
	}
	b := stage.getBatch(len(parts))
	defer stage.putBatch(b)
	feats := make([][]float32, 0, len(parts))
	for k, p := range parts {
		if ns[k] == 0 {
			clear(outs[k][0])
			continue
		}
		w := len(feats)
		input(p, b.a[w*stage.in:(w+1)*stage.in], float64(ns[k]))
		feats = append(feats, outs[k][0])
	}
	b.a = b.a[:len(feats)*stage.in]
	stage.applyBatch(b, feats, workers)
}
