package calibrate

import (
	"math"
	"runtime"

	"github.com/distfeat/distfeat/internal/synth"
	"github.com/distfeat/distfeat/spec"
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
	out := map[string][]float64{"l2": make([]float64, n), "l2dist": make([]float64, n)}
	parallelPairs(len(sets), runtime.GOMAXPROCS(0), func(k, i, j int) {
		out["l2"][k] = l2Inner(pres[i].p, pres[j].p)
		out["l2dist"][k] = l2Dist2(pres[i].p, pres[j].p)
	})
	for _, div := range []string{"js", "hellinger", "tv"} {
		out[div] = make([]float64, n)
		parallelPairs(len(sets), runtime.GOMAXPROCS(0), func(k, i, j int) {
			out[div][k] = refRho2(div, pres[i], pres[j])
		})
	}
	return out
}

// handSpec is the careful hand spec of issue 20: version 2, D = 7000, basis 100, 5 λ, the
// default grid and KDE bandwidth, σ 0.5 (js, hellinger) or 1 (tv), unit-square bounds.
func handSpec(div string, features int) *spec.Spec {
	sigma := 0.5
	if div == "tv" {
		sigma = 1
	}
	return &spec.Spec{Version: 2, Seed: 42, Dim: 2, Bounds: spec.Bounds{Lo: []float64{0, 0}, Hi: []float64{1, 1}}, OutOfBounds: "clip",
		Families: []spec.Family{{Name: "hdd_" + div, Kind: "hdd", Divergence: div, Features: features, Sigma: sigma,
			Lambdas: 5, LambdaSampling: "stratified", Basis: 100, Grid: 64, KDEBandwidth: 0.02,
			Boundary: "reflect", DensityFloor: 1e-6, Mode: "joint"}}}
}

// exactMMK is the mean-map kernel E exp(−‖u−v‖²/2h²), u ~ p_i, v ~ p_j, between the
// sets' true mixtures (diagonal components, so everything factorises per axis) in the
// normalised units of bounds, for every pair i < j: per axis and component, the truncated
// normal density on a 512-cell midpoint grid of [0,1] (normalised numerically), smoothed by
// the 1-D Gaussian of width h·(hi−lo) in data units; relative quadrature error ≲ 1e-5 for
// standard deviations ≥ 0.05 (25 cells each).
func exactMMK(sets []synth.Set, b spec.Bounds, h float64) []float64 {
	const g = 512
	type comp struct {
		w    float64
		f, s [][]float64 // per axis: density, smoothed density
	}
	kern := make([][]float64, 2)
	for j := range kern {
		hj := h * (b.Hi[j] - b.Lo[j])
		kern[j] = make([]float64, g*g)
		for a := 0; a < g; a++ {
			for c := 0; c < g; c++ {
				d := float64(a-c) / g
				kern[j][a*g+c] = math.Exp(-d * d / (2 * hj * hj))
			}
		}
	}
	comps := make([][]comp, len(sets))
	for i, st := range sets {
		for _, c := range st.Mixture.Components() {
			cp := comp{w: c.Weight}
			for j := 0; j < 2; j++ {
				f := make([]float64, g)
				var sum float64
				for a := range f {
					x := (float64(a) + 0.5) / g
					z := (x - c.Mean[j]) / math.Sqrt(c.Var[j])
					f[a] = math.Exp(-z * z / 2)
					sum += f[a]
				}
				sm := make([]float64, g)
				for a := range f {
					f[a] /= sum // a probability per cell
				}
				for a := range sm {
					for c2, v := range f {
						sm[a] += kern[j][a*g+c2] * v
					}
				}
				cp.f, cp.s = append(cp.f, f), append(cp.s, sm)
			}
			comps[i] = append(comps[i], cp)
		}
	}
	out := make([]float64, len(sets)*(len(sets)-1)/2)
	parallelPairs(len(sets), runtime.GOMAXPROCS(0), func(k, i, j int) {
		var tot float64
		for _, a := range comps[i] {
			for _, c := range comps[j] {
				prod := a.w * c.w
				for ax := 0; ax < 2; ax++ {
					var s float64
					for x, v := range a.f[ax] {
						s += v * c.s[ax][x]
					}
					prod *= s
				}
				tot += prod
			}
		}
		out[k] = tot
	})
	return out
}
