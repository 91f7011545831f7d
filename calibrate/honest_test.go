package calibrate

import (
	"context"
	"fmt"
	"math"
	"os"
	"runtime"
	"strconv"

	"github.com/distfeat/distfeat/embedding"
	"github.com/distfeat/distfeat/internal/quadrature"
	"github.com/distfeat/distfeat/internal/stats"
	"github.com/distfeat/distfeat/internal/synth"
	"github.com/distfeat/distfeat/spec"
)

// Distributions for the truth-estimate checks of issue #38, none of them the demo's
// mixtures: each has an exact (possibly unnormalised) density on the data box [0,1]^d and
// a sampler, and the exact divergences between two of them come from Gauss–Legendre
// quadrature. The calibration sees them through bounds widened by 5% on each side (as
// calibrate proposes), so hard edges of the data lie inside the unit cube, where the KDE's
// reflection does not help.

// shapeDist is one true distribution of a set.
type shapeDist interface {
	density(x []float64) float64 // on [0,1]^d, unnormalised
	sample(rng *embedding.RNG, n int) []float64
}

// truncMix is a mixture of k diagonal Gaussians each truncated to [0,1]^d (synth), means
// uniform on [0,1], standard deviations uniform on [lo, hi]: its density is large at the
// box's faces, a hard edge.
type truncMix struct{ m *synth.Mixture }

func newTruncMix(rng *embedding.RNG, d, k int, lo, hi float64) truncMix {
	comps := make([]synth.Component, k)
	for i := range comps {
		c := synth.Component{Weight: 1, Mean: make([]float64, d), Var: make([]float64, d)}
		for j := range c.Mean {
			c.Mean[j] = rng.Float64()
		}
		for j := range c.Var {
			sd := lo + (hi-lo)*rng.Float64()
			c.Var[j] = sd * sd
		}
		comps[i] = c
	}
	m, err := synth.NewMixture(d, comps)
	if err != nil {
		panic(err)
	}
	return truncMix{m}
}

func (t truncMix) density(x []float64) float64                { return t.m.Density(x) }
func (t truncMix) sample(rng *embedding.RNG, n int) []float64 { return t.m.Sample(rng, n) }

// heavyMix is an equal mixture of isotropic Student t distributions with 2 degrees of
// freedom (heavy tails: the variance is infinite), centres uniform on [0.2, 0.8]^d, scales
// uniform on [0.02, 0.06], the mixture truncated to [0,1]^d as a whole.
type heavyMix struct {
	d       int
	centres [][]float64
	scales  []float64
}

func newHeavyMix(rng *embedding.RNG, d, k int) heavyMix {
	h := heavyMix{d: d}
	for i := 0; i < k; i++ {
		c := make([]float64, d)
		for j := range c {
			c[j] = 0.2 + 0.6*rng.Float64()
		}
		h.centres = append(h.centres, c)
		h.scales = append(h.scales, 0.02+0.04*rng.Float64())
	}
	return h
}

func (h heavyMix) density(x []float64) float64 {
	var p float64
	for k, c := range h.centres {
		s := h.scales[k]
		r2 := sqDist(x, c) / (s * s)
		p += math.Pow(1+r2/2, -float64(2+h.d)/2) / math.Pow(s, float64(h.d))
	}
	return p
}

func (h heavyMix) sample(rng *embedding.RNG, n int) []float64 {
	out := make([]float64, 0, n*h.d)
	x := make([]float64, h.d)
	for len(out) < n*h.d {
		k := int(rng.Float64() * float64(len(h.centres)))
		w := math.Sqrt(-2 * math.Log(1-rng.Float64()) / 2) // √(χ²₂/2)
		in := true
		for j := range x {
			x[j] = h.centres[k][j] + h.scales[k]*rng.Normal()/w
			in = in && x[j] >= 0 && x[j] <= 1
		}
		if in {
			out = append(out, x...)
		}
	}
	return out
}

// squares is an equal mixture of k uniform axis-parallel rectangles (d = 2) with corners on
// multiples of 1/64 (so the quadrature's panels align with every edge: exact), each side
// 0.16–0.5.
type squares struct {
	lo, hi [][2]float64
}

func newSquares(rng *embedding.RNG, k int) squares {
	var s squares
	for i := 0; i < k; i++ {
		var lo, hi [2]float64
		for j := range lo {
			side := math.Round((0.16+0.34*rng.Float64())*64) / 64
			lo[j] = math.Round(rng.Float64()*(1-side)*64) / 64
			hi[j] = lo[j] + side
		}
		s.lo, s.hi = append(s.lo, lo), append(s.hi, hi)
	}
	return s
}

func (s squares) density(x []float64) float64 {
	var p float64
	for k := range s.lo {
		if x[0] >= s.lo[k][0] && x[0] < s.hi[k][0] && x[1] >= s.lo[k][1] && x[1] < s.hi[k][1] {
			p += 1 / ((s.hi[k][0] - s.lo[k][0]) * (s.hi[k][1] - s.lo[k][1]))
		}
	}
	return p
}

func (s squares) sample(rng *embedding.RNG, n int) []float64 {
	out := make([]float64, 2*n)
	for i := 0; i < n; i++ {
		k := int(rng.Float64() * float64(len(s.lo)))
		for j := 0; j < 2; j++ {
			out[2*i+j] = s.lo[k][j] + (s.hi[k][j]-s.lo[k][j])*rng.Float64()
		}
	}
	return out
}

// shapeCase is one generator of sets: its name, dimension and how to draw a distribution.
type shapeCase struct {
	name string
	dim  int
	draw func(rng *embedding.RNG) shapeDist
}

// shapeCases are the generators of issue #38's checks.
func shapeCases() []shapeCase {
	return []shapeCase{
		{"truncated mixture, 3 wide components (hard edges), 2-D", 2, func(r *embedding.RNG) shapeDist { return newTruncMix(r, 2, 3, 0.1, 0.3) }},
		{"truncated mixture, 12 narrow components, 2-D", 2, func(r *embedding.RNG) shapeDist { return newTruncMix(r, 2, 12, 0.04, 0.1) }},
		{"truncated mixture, 1 component, 2-D", 2, func(r *embedding.RNG) shapeDist { return newTruncMix(r, 2, 1, 0.1, 0.4) }},
		{"Student t₂ mixture, 2 components (heavy tails), 2-D", 2, func(r *embedding.RNG) shapeDist { return newHeavyMix(r, 2, 2) }},
		{"uniform rectangles, 2-3, 2-D", 2, func(r *embedding.RNG) shapeDist { return newSquares(r, 2+int(2*r.Float64())) }},
		{"truncated mixture, 3 components, 1-D", 1, func(r *embedding.RNG) shapeDist { return newTruncMix(r, 1, 3, 0.04, 0.2) }},
		{"truncated mixture, 3 components, 3-D", 3, func(r *embedding.RNG) shapeDist { return newTruncMix(r, 3, 3, 0.1, 0.3) }},
	}
}

// shapeSets draws S sets of n points of case sc with seed.
func shapeSets(sc shapeCase, seed uint64, S, n int) ([]shapeDist, []Set) {
	dists := make([]shapeDist, S)
	sets := make([]Set, S)
	for i := range sets {
		rng := embedding.NewRNG(seed, "issue38/"+sc.name+"/"+strconv.Itoa(i))
		dists[i] = sc.draw(rng)
		sets[i] = Set{ID: fmt.Sprintf("s%04d", i), Points: dists[i].sample(rng, n)}
	}
	return dists, sets
}

// quadGrid is a product Gauss–Legendre rule on [0,1]^d: panels per axis, 2 nodes each.
func quadGrid(d, panels int) (nodes [][]float64, weights []float64) {
	gx, gw := quadrature.GaussLegendre(2)
	var ax, aw []float64
	for p := 0; p < panels; p++ {
		for k := range gx {
			ax = append(ax, (float64(p)+0.5+gx[k]/2)/float64(panels))
			aw = append(aw, gw[k]/2/float64(panels))
		}
	}
	m := len(ax)
	total := 1
	for j := 0; j < d; j++ {
		total *= m
	}
	for c := 0; c < total; c++ {
		x, w := make([]float64, d), 1.0
		r := c
		for j := d - 1; j >= 0; j-- {
			x[j], w = ax[r%m], w*aw[r%m]
			r /= m
		}
		nodes, weights = append(nodes, x), append(weights, w)
	}
	return nodes, weights
}

// shapeExactRho2 is, per divergence, ρ² between every pair i < j of the true densities
// (refRho2's definitions), by the product Gauss–Legendre rule (1024, 128 or 32 panels per
// axis in 1, 2, 3-D) with each density normalised by the same rule.
func shapeExactRho2(dists []shapeDist, d int) map[string][]float64 {
	panels := map[int]int{1: 1024, 2: 128, 3: 32}[d]
	nodes, w := quadGrid(d, panels)
	dens := make([][]float64, len(dists))
	parallelFor(len(dists), runtime.GOMAXPROCS(0), func(i int) {
		p := make([]float64, len(nodes))
		var z float64
		for c, x := range nodes {
			p[c] = dists[i].density(x)
			z += w[c] * p[c]
		}
		for c := range p {
			p[c] /= z
		}
		dens[i] = p
	})
	n := len(dists) * (len(dists) - 1) / 2
	out := map[string][]float64{"js": make([]float64, n), "hellinger": make([]float64, n), "tv": make([]float64, n)}
	parallelPairs(len(dists), runtime.GOMAXPROCS(0), func(k, i, j int) {
		var js, he, tv float64
		for c, wc := range w {
			p, q := dens[i][c], dens[j][c]
			m := (p + q) / 2
			if p > 0 {
				js += wc * p * math.Log(p/m) / 2
			}
			if q > 0 {
				js += wc * q * math.Log(q/m) / 2
			}
			t := math.Sqrt(p) - math.Sqrt(q)
			he += wc * t * t / 2
			tv += wc * math.Abs(p-q)
		}
		out["js"][k], out["hellinger"][k], out["tv"][k] = js, he, tv
	})
	return out
}

// shapeCalibration is a calibration of sets with bounds [−0.05, 1.05]^d and the one hdd
// family of divergence div (the defaults for dim d, to be tuned).
func shapeCalibration(sets []Set, d int, div string) (*calibration, error) {
	lo, hi := make([]float64, d), make([]float64, d)
	for j := range lo {
		lo[j], hi[j] = -0.05, 1.05
	}
	f, err := familyByName("hdd_"+div, d)
	if err != nil {
		return nil, err
	}
	sp := &spec.Spec{Version: NewestVersion, Seed: 42, Dim: d, OutOfBounds: "clip", Bounds: spec.Bounds{Lo: lo, Hi: hi}, Families: []spec.Family{f}}
	o := Options{}.withDefaults()
	smp, err := newSample(sets, d, sp.Seed, o)
	if err != nil {
		return nil, err
	}
	smp.normalise(BoundsProposal{Lo: lo, Hi: hi})
	smp.splitHalves(sp.Seed)
	return &calibration{ctx: context.Background(), opts: o, smp: smp, spec: sp, res: &Result{}}, nil
}

// truthOutcome is one case's printed figures against the truth.
type truthOutcome struct {
	printed, lo, hi, truth float64 // features' R²: printed estimate, its interval, true
	ceiling, ceilingTrue   float64 // coefficient kernel's R²: estimated, true
	features               int
	kde                    float64
}

// runShapeTruth calibrates the hdd family of div on the sets (the whole search) and
// compares the self-check's figures with the exact kernels.
func runShapeTruth(sets []Set, d int, div string, exact []float64) (truthOutcome, error) {
	c, err := shapeCalibration(sets, d, div)
	if err != nil {
		return truthOutcome{}, err
	}
	_, ft, err := c.hdd(0)
	if err != nil {
		return truthOutcome{}, err
	}
	f := c.spec.Families[0]
	ev, err := c.evalHDD(f, *ft.hddRef, true)
	if err != nil {
		return truthOutcome{}, err
	}
	truth := kernels(exact, f.Sigma)
	if os.Getenv("STUDY_REFS") != "" {
		for _, fac := range []float64{2, math.Sqrt2, 1, 1 / math.Sqrt2} {
			r := newHDDReference(c.smp, div, true, ft.hddRef.h*fac, c.opts.Workers)
			e, err := c.evalHDD(f, r, true)
			if err != nil {
				return truthOutcome{}, err
			}
			fmt.Printf("   ref h %.4f (×%.2f, grid %d): R² %.4f ceiling %.4f\n", r.h, fac, r.g, e.R2, e.R2Coef)
		}
		fmt.Printf("   true %.4f ceiling %.4f\n", stats.RSquared(ev.X, truth), stats.RSquared(ev.C, truth))
	}
	return truthOutcome{printed: ev.R2, lo: ev.Feat.lo, hi: ev.Feat.hi, truth: stats.RSquared(ev.X, truth),
		ceiling: ev.Coef.lo, ceilingTrue: stats.RSquared(ev.C, truth), features: f.Features, kde: f.KDEBandwidth}, nil
}

// fixedShapeTruth is runShapeTruth without the search (cheap enough for the default
// suite): the family at the likelihood-cross-validated bandwidth h_L with the largest
// basis and λ count and D features, σ the median reference ρ, scored against the
// references calibrate uses (h_L/2 and √2 times it).
func fixedShapeTruth(sets []Set, d int, div string, exact []float64, D int) (truthOutcome, error) {
	c, err := shapeCalibration(sets, d, div)
	if err != nil {
		return truthOutcome{}, err
	}
	n := median(c.smp.sizes())
	hS := silverman(typicalSpread(c.smp.full, d, false), n, d)
	capG := gridCap(d, true)
	hL, _, _, _ := lcvBandwidth(c.smp.full, d, true, hS, cellsPerBandwidth/float64(capG), c.spec.Seed)
	hL = max(hL, cellsPerBandwidth/float64(capG))
	s := newHDDTuner(c, 0, hL, capG, maxJointBasis)
	s.f.Sigma, _ = s.referenceSigma()
	cd, err := s.try(hL, s.capB, s.maxLam)
	if err != nil {
		return truthOutcome{}, err
	}
	f := cd.fam
	f.Features = D
	s.ref = s.ref.withCoarse(c.smp, div, true, c.opts.Workers)
	ev, err := c.evalHDD(f, s.ref, true)
	if err != nil {
		return truthOutcome{}, err
	}
	truth := kernels(exact, f.Sigma)
	return truthOutcome{printed: ev.R2, lo: ev.Feat.lo, hi: ev.Feat.hi, truth: stats.RSquared(ev.X, truth),
		ceiling: ev.Coef.lo, ceilingTrue: stats.RSquared(ev.C, truth), features: D, kde: f.KDEBandwidth}, nil
}
