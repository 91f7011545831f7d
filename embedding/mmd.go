package embedding

import (
	"math"

	"github.com/distfeat/distfeat/internal/numeric"
	"github.com/distfeat/distfeat/internal/parallel"
	"github.com/distfeat/distfeat/spec"
)

// mmdFamily is a compiled `mmd` family (docs/math.md): the mean embedding of the window in
// the random Fourier feature space of the Gaussian kernel exp(−‖u−v‖²/(2·bandwidth²)).
//
// Draws: ω_r ~ N(0, bandwidth⁻² I_d), made with NewRNG(seed, name) in the order r = 0..D/2−1,
// j = 0..d−1 (ω_rj = Normal()/bandwidth). Features: z(u) = √(2/D)·[sin ω_r·u, cos ω_r·u]_r,
// interleaved (sin of frequency r at index 2r, its cosine at 2r+1).
//
// Sketch: per frequency, the fixed-point sums Σ_i numeric.ToFixed(sin ω_r·u_i) and
// Σ_i numeric.ToFixed(cos ω_r·u_i) (terms are not pre-scaled by √(2/D)), plus the window's count.
// Finalize: z̄ = √(2/D)·(sum·2⁻³²/n). Optional second stage (rbf_sigma, rbf_features): the
// random Fourier features of z̄ for exp(−‖z̄−z̄′‖²/(2·rbf_sigma²)), drawn with
// NewRNG(seed, name+"/rbf"); the output is then that vector (length rbf_features).
//
// An empty window (n = 0) finalises to all zeros, with or without the second stage.
//
// Method (spec field method, mmd_nufft.go): direct is the above; nufft keeps a spread grid
// instead of the sums and evaluates them at window close with a non-uniform FFT (within
// 1e-6 of the direct features' scale); auto is nufft when dim ≤ 3 and its cost model wins
// for windows of 500 points, else direct.
type mmdFamily struct {
	name     string
	d        int
	features int       // D
	half     int       // D/2 frequencies
	hp       int       // half rounded up to numeric.MMDLanes
	omega    []float64 // ω_jr at omega[j*hp+r]; padded frequencies are 0
	scale    float64   // √(2/D)
	path     numeric.MMDPath
	rbf      *rff // nil without the second stage
	cols     []Column
	// nufft is the nufft method's plan (mmd_nufft.go); nil with the direct method.
	nufft *nufftState
}

// compileMMD draws an mmd family's frequencies.
func compileMMD(sp *spec.Spec, idx int) (*mmdFamily, error) {
	f := &sp.Families[idx]
	d := sp.Dim
	half := f.Features / 2
	hp := (half + numeric.MMDLanes - 1) / numeric.MMDLanes * numeric.MMDLanes
	m := &mmdFamily{
		name:     f.Name,
		d:        d,
		features: f.Features,
		half:     half,
		hp:       hp,
		omega:    make([]float64, d*hp),
		scale:    math.Sqrt(2 / float64(f.Features)),
		path:     numeric.MMDBestPath(),
	}
	draws := make([]float64, half*d)
	NewRNG(sp.Seed, f.Name).NormalFill(draws) // rng.Normal's draws in order r, j
	maxTheta := 0.0
	for r := 0; r < half; r++ {
		sum := 0.0
		for j := 0; j < d; j++ {
			w := draws[r*d+j] / f.Bandwidth
			m.omega[j*hp+r] = w
			sum += math.Abs(w)
		}
		maxTheta = max(maxTheta, sum)
	}
	// |ω·u| ≤ Σ_j |ω_j| on [0,1]^d. Frequencies beyond the polynomial kernel's range (a
	// bandwidth below ~1e-11) are served by the slow exact path rather than wrong values.
	if !(maxTheta <= numeric.SincosMaxArg) {
		m.path = numeric.MMDPathExact
	}
	plan, err := mmdMethod(sp, idx, m)
	if err != nil {
		return nil, err
	}
	if plan != nil {
		m.nufft = &nufftState{plan: plan}
	}
	outLen := f.Features
	if f.RBFFeatures > 0 {
		m.rbf = newProjectionRFF(sp.ProjectionOf(f), NewRNG(sp.Seed, f.Name+"/rbf"), f.Features, f.RBFFeatures, f.RBFSigma)
		outLen = f.RBFFeatures
	}
	m.cols = []Column{{Name: f.Name, Family: f.Name, Len: outLen}}
	return m, nil
}

func (m *mmdFamily) columns() []Column { return m.cols }

func (m *mmdFamily) newSketch() familySketch {
	if m.nufft != nil {
		return m.newGridSketch()
	}
	return &mmdSketch{fam: m, acc: make([]int64, 2*m.hp)}
}

// mmdSketch holds the fixed-point sums: sines in acc[:hp], cosines in acc[hp:].
type mmdSketch struct {
	fam *mmdFamily
	acc []int64
}

func (s *mmdSketch) add(u []float64, d int) {
	numeric.MMDAccumulate(s.fam.path, s.fam.omega, u, d, s.fam.hp, s.acc)
}

func (s *mmdSketch) merge(other familySketch) {
	o := other.(*mmdSketch)
	for i, v := range o.acc {
		s.acc[i] += v
	}
}

func (s *mmdSketch) reset() { clear(s.acc) }

func (s *mmdSketch) sizeBytes() int { return 8*len(s.acc) + 64 }

// addNanos: one sine and cosine per frequency, ≈ 0.6 ns each with AVX-512 (more with d).
func (s *mmdSketch) addNanos() float64 { return 0.6 * float64(s.fam.hp) * float64(max(1, s.fam.d/2)) }

func (s *mmdSketch) finalize(n int64, out [][]float32) {
	m := s.fam
	dst := out[0]
	if n == 0 {
		clear(dst)
		return
	}
	fn := float64(n)
	if m.rbf == nil {
		for r := 0; r < m.half; r++ {
			dst[2*r] = float32(m.scale * (numeric.FromFixed(s.acc[r]) / fn))
			dst[2*r+1] = float32(m.scale * (numeric.FromFixed(s.acc[m.hp+r]) / fn))
		}
		return
	}
	zbar := make([]float64, m.features)
	s.meanEmbedding(zbar, fn)
	m.rbf.apply(zbar, dst)
}

// meanEmbedding writes z̄ (the first stage's output, in float64) for a window of fn points.
func (s *mmdSketch) meanEmbedding(zbar []float64, fn float64) {
	m := s.fam
	for r := 0; r < m.half; r++ {
		zbar[2*r] = m.scale * (numeric.FromFixed(s.acc[r]) / fn)
		zbar[2*r+1] = m.scale * (numeric.FromFixed(s.acc[m.hp+r]) / fn)
	}
}

// finalizeBatch is finalize for many windows; with the rbf stage, the non-empty windows'
// z̄ go through one batched RFF pass.
func (m *mmdFamily) finalizeBatch(ns []int64, parts []familySketch, outs [][][]float32, workers int) {
	if m.nufft != nil && m.rbf == nil {
		// Each window's transform is independent (≈ 0.1 ms at D = 1024, d = 2): windows in
		// parallel, the same bits for any workers.
		parallel.Share(workers, len(parts), 1, func(_, lo, hi int) {
			for k := lo; k < hi; k++ {
				parts[k].finalize(ns[k], outs[k])
			}
		})
		return
	}
	finalizeStageBatch(m.rbf, ns, parts, outs, workers, func(p familySketch, zbar []float64, fn float64) {
		p.(interface{ meanEmbedding([]float64, float64) }).meanEmbedding(zbar, fn)
	})
}
