package calibrate

import (
	"context"
	"math"
	"testing"

	"github.com/distfeat/distfeat/embedding"
	"github.com/distfeat/distfeat/internal/stats"
	"github.com/distfeat/distfeat/internal/synth"
	"github.com/distfeat/distfeat/spec"
)

// TestHDDAgainstTrueDensities measures the hdd_js family of the calibrated spec against the
// default spec on the demo's synthetic mixtures, where the truth is known: the Jensen–Shannon
// divergence between the true mixture densities (midpoint rule on a 128² grid). It compares
// ‖A−A′‖² with ρ² = JS (R², independent of σ) and the features' kernel with
// exp(−JS/2σ²) under each spec's own σ. Calibrated must not estimate the true divergences
// worse than the default (whose kde_bandwidth was tuned on these mixtures) beyond 0.01 of R²:
// over 276 pairs the R² of two estimators of the same ρ² differs by a few thousandths from
// run to run.
func TestHDDAgainstTrueDensities(t *testing.T) {
	const n, points = 24, 2500
	sets := synth.Sets(21, n, points, 2)
	var calib []Set
	for _, s := range synth.Sets(22, 40, points, 2) {
		calib = append(calib, Set{ID: s.ID, Points: s.Points})
	}
	res, err := Calibrate(context.Background(), calib, 2, nil, Options{Families: []string{"hdd_js"}})
	if err != nil {
		t.Fatal(err)
	}
	def := spec.DefaultSpec()
	def.Families = def.Families[1:2]
	const g = 128
	dens := make([][]float64, n)
	for i, s := range sets {
		dens[i] = make([]float64, g*g)
		u := make([]float64, 2)
		for a := 0; a < g; a++ {
			for b := 0; b < g; b++ {
				u[0], u[1] = (float64(a)+0.5)/g, (float64(b)+0.5)/g
				dens[i][a*g+b] = s.Mixture.Density(u)
			}
		}
	}
	var js []float64
	for i := 0; i < n; i++ {
		for j := i + 1; j < n; j++ {
			var sum float64
			for k := range dens[i] {
				p, q := dens[i][k], dens[j][k]
				if p > 0 {
					sum += 0.5 * p * math.Log(2*p/(p+q))
				}
				if q > 0 {
					sum += 0.5 * q * math.Log(2*q/(p+q))
				}
			}
			js = append(js, sum/(g*g))
		}
	}
	r2 := map[string]float64{}
	for _, sp := range []struct {
		name string
		spec *spec.Spec
	}{{"default", def}, {"calibrated", res.Spec}} {
		cp := *sp.spec
		cp.Families = append([]spec.Family(nil), sp.spec.Families...)
		cp.Families[0].Coefficients = true
		emb, err := embedding.New(&cp)
		if err != nil {
			t.Fatal(err)
		}
		vecs := make([][][]float32, n)
		for i, s := range sets {
			u := make([]float64, len(s.Points))
			if _, err := emb.Normalize(u, s.Points); err != nil {
				t.Fatal(err)
			}
			vecs[i] = emb.Embed(u)
		}
		sigma := cp.Families[0].Sigma
		var rho2, kEst, kTrue []float64
		for i := 0; i < n; i++ {
			for j := i + 1; j < n; j++ {
				rho2 = append(rho2, sqDist32(vecs[i][1], vecs[j][1]))
				kEst = append(kEst, stats.Dot32(vecs[i][0], vecs[j][0]))
			}
		}
		for _, v := range js {
			kTrue = append(kTrue, math.Exp(-v/(2*sigma*sigma)))
		}
		var bias float64
		for k := range rho2 {
			bias += (rho2[k] - js[k]) / js[k]
		}
		r2[sp.name] = stats.RSquared(rho2, js)
		t.Logf("%-10s kde_bandwidth %-6g grid %-3d basis %-3d D %-4d σ %-5g: R²(‖A−A′‖², JS) %.4f (mean relative error %+.1f%%), R²(kernel) %.4f",
			sp.name, cp.Families[0].KDEBandwidth, cp.Families[0].Grid, cp.Families[0].Basis, cp.Families[0].Features, sigma,
			stats.RSquared(rho2, js), 100*bias/float64(len(js)), stats.RSquared(kEst, kTrue))
	}
	if r2["calibrated"] < r2["default"]-0.01 {
		t.Errorf("R²(‖A−A′‖², JS): calibrated %.4f, default %.4f", r2["calibrated"], r2["default"])
	}
}
