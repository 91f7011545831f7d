package calibrate

import (
	"context"
	"math"
	"runtime"

	"github.com/distfeat/distfeat/embedding"
	"github.com/distfeat/distfeat/internal/synth"
)

// exactQuad is the midpoint grid of the exact divergences between synthetic mixtures: the
// components have standard deviations ≥ 0.05 (12.8 cells each), so the midpoint rule's
// relative error is ≲ 1e-4 (embedding/gram_test.go), negligible next to the 0.01 tolerances.
const exactQuad = 256

// exactRho2 is ρ²(p_i, p_j) for every pair i < j of the sets' true mixture densities, for
// each divergence (the definitions of refRho2), by the midpoint rule on exactQuad² cells.
func exactRho2(sets []synth.Set) map[string][]float64 {
	g := exactQuad
	pres := make([]refPre, len(sets))
	parallelFor(len(sets), runtime.GOMAXPROCS(0), func(i int) {
		p := make([]float64, g*g)
		u := make([]float64, 2)
		for a := 0; a < g; a++ {
			for b := 0; b < g; b++ {
				u[0], u[1] = (float64(a)+0.5)/float64(g), (float64(b)+0.5)/float64(g)
				p[a*g+b] = sets[i].Mixture.Density(u)
			}
		}
		pres[i] = newRefPre(refGrid{p})
	})
	n := len(sets) * (len(sets) - 1) / 2
	out := map[string][]float64{}
	for _, div := range []string{"js", "hellinger", "tv"} {
		out[div] = make([]float64, n)
		parallelPairs(len(sets), runtime.GOMAXPROCS(0), func(k, i, j int) {
			out[div][k] = refRho2(div, pres[i], pres[j])
		})
	}
	return out
}

// newTestCalibration is a calibration of the sets with the given spec as its proposal
// (bounds taken from the spec), sampled, normalised and split in halves as Calibrate does.
func newTestCalibration(sets []synth.Set, spec *embedding.Spec, o Options) (*calibration, error) {
	o = o.withDefaults()
	var in []Set
	for _, s := range sets {
		in = append(in, Set{ID: s.ID, Points: s.Points})
	}
	smp, err := newSample(in, spec.Dim, spec.Seed, o)
	if err != nil {
		return nil, err
	}
	smp.normalise(BoundsProposal{Lo: spec.Bounds.Lo, Hi: spec.Bounds.Hi})
	smp.splitHalves(spec.Seed)
	return &calibration{ctx: context.Background(), opts: o, smp: smp, spec: spec, res: &Result{}}, nil
}

// handSpec is the careful hand spec of issue 20: version 2, D = 7000, basis 100, 5 λ, the
// default grid and KDE bandwidth, σ 0.5 (js, hellinger) or 1 (tv), unit-square bounds.
func handSpec(div string, features int) *embedding.Spec {
	sigma := 0.5
	if div == "tv" {
		sigma = 1
	}
	return &embedding.Spec{Version: 2, Seed: 42, Dim: 2, Bounds: embedding.Bounds{Lo: []float64{0, 0}, Hi: []float64{1, 1}}, OutOfBounds: "clip",
		Families: []embedding.Family{{Name: "hdd_" + div, Kind: "hdd", Divergence: div, Features: features, Sigma: sigma,
			Lambdas: 5, LambdaSampling: "stratified", Basis: 100, Grid: 64, KDEBandwidth: 0.02,
			Boundary: "reflect", DensityFloor: 1e-6, Mode: "joint"}}}
}

func sqrtF(v float64) float64 { return math.Sqrt(v) }
