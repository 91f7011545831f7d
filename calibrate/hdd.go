package calibrate

import (
	"fmt"
	"math"
	"slices"
	"strconv"

	"github.com/distfeat/distfeat/embedding"
	"github.com/distfeat/distfeat/spec"
)

// hdd rules.
const (
	// cellsPerBandwidth is the grid resolution: at least this many cells per KDE bandwidth,
	// so that linear binning's smoothing (variance 1/(6G²)) stays small next to h².
	cellsPerBandwidth = 2
	minGrid           = 16
	maxJointGrid      = 128  // 8·128² = 128 KiB of sketch per open window in 2-D
	maxMarginalGrid   = 1024 // 8·d·1024 bytes per open window
	// kdeKeep: the Gaussian KDE multiplies the cosine of frequency πk by exp(−(πkh)²/2);
	// the basis keeps the frequencies it attenuates by less than this factor, since finer
	// ones carry (almost) nothing of the estimated density.
	kdeKeep = 0.05
	// Caps on the basis (the RFF stage costs 2·lambdas·basis·D/2 multiply-adds per window).
	maxJointBasis    = 160
	maxMarginalBasis = 32
	minBasis         = 4
	maxJointCells    = 1 << 17 // 1 MiB of sketch per open window
)

// hdd calibrates an hdd family: kde_bandwidth by Silverman's normal-reference rule at the
// typical set size, grid and basis that resolve it, sigma as the median ρ between the
// sample's sets from their coefficient vectors (‖A−A′‖² ≈ ρ²), and D by featureCount.
func (c *calibration) hdd(i int) (FamilyResult, familyTruth, error) {
	f := &c.spec.Families[i]
	d := c.smp.dim
	dEff := d
	if f.Mode == "marginal" {
		dEff = 1
	}
	n := median(c.smp.sizes())
	sd := typicalSpread(c.smp.full, d, dEff == 1)
	h := silverman(sd, n, dEff)
	hRule := fmt.Sprintf("Silverman's normal-reference rule h = σ·(4/((d+2)n))^(1/(d+4)) with d = %d, the median set size n = %.0f and σ = %.4g (median over sets of the robust per-axis spread min(sd, IQR/1.349), geometric mean over axes, normalised units)", dEff, n, sd)
	if !(h > 0) {
		h = f.KDEBandwidth
		hRule = fmt.Sprintf("the sets have no spread: kept %g", h)
	}
	joint := f.Mode == "joint"
	capG := gridCap(d, joint)
	hMin := cellsPerBandwidth / float64(capG)
	var fr FamilyResult
	if sd > 0 {
		hS := h
		var lcv string
		h, fr.Grid, fr.Spread, lcv = lcvBandwidth(c.smp.full, d, joint, hS, hMin, c.spec.Seed)
		if lcv != "" {
			hRule = fmt.Sprintf("%s; Silverman's rule (normal reference: h_S = σ·(4/((d+2)n))^(1/(d+4)) = %.4g with d = %d, the median set size n = %.0f, σ = %.4g the median robust spread min(sd, IQR/1.349) of a set, normalised units) anchors the grid", lcv, hS, dEff, n, sd)
			fr.Marks = []Mark{{"Silverman", hS}, {"kde_bandwidth", h}}
		}
	}
	if h < hMin {
		h = hMin
		hRule += fmt.Sprintf("; raised to %d cells of the largest grid allowed here (%d)", cellsPerBandwidth, capG)
	}
	kmax := max(1, int(math.Sqrt(2*math.Log(1/kdeKeep))/(math.Pi*h)))
	capB := maxJointBasis
	if !joint {
		capB = maxMarginalBasis
	}
	basis := max(minBasis, min(countIndices(dEff, kmax*kmax, capB+1), capB))
	g := min(capG, (max(minGrid, int(math.Ceil(cellsPerBandwidth/h)), kmax+1)+7)/8*8)
	f.KDEBandwidth, f.Grid, f.Basis = round3(h), g, basis
	c.note(i, "kde_bandwidth", strconv.FormatFloat(f.KDEBandwidth, 'g', -1, 64), hRule)
	c.note(i, "grid", strconv.Itoa(g), fmt.Sprintf("smallest multiple of 8 ≥ max(%d, %d cells per bandwidth = %.1f, basis index %d + 1), at most %d (sketch memory 8·grid^dim bytes per open window)", minGrid, cellsPerBandwidth, cellsPerBandwidth/h, kmax, capG))
	c.note(i, "basis", strconv.Itoa(basis), fmt.Sprintf("the cosines of index ≤ k = %d (Σα² ≤ k²), the frequencies the KDE attenuates by less than %g: k = ⌊√(2 ln(1/%g))/(πh)⌋; capped at %d", kmax, kdeKeep, kdeKeep, capB))

	// Coefficient vectors A of every sampled set (the RFF stage is irrelevant here).
	fc := *f
	fc.Coefficients, fc.Features = true, 2
	coefs, err := c.embedColumn(fc, f.Name+"_coef", false)
	if err != nil {
		return FamilyResult{}, familyTruth{}, err
	}
	out, ft, err := c.outerStage(i, coefs, "ρ (from ‖A−A′‖)", fmt.Sprintf("exp(−‖A−A′‖²/2σ²) of the coefficient vectors (‖A−A′‖² ≈ ρ² %s)", f.Divergence))
	out.Grid, out.Spread, out.Marks = fr.Grid, fr.Spread, append(fr.Marks, out.Marks...) // sigma last
	return out, ft, err
}

// outerStage sets sigma and features of family i from the vectors vs (A or a): σ the median
// distance between sets, the exact kernel exp(−‖v−v′‖²/2σ²), D by featureCount.
func (c *calibration) outerStage(i int, vs [][]float32, what, kernel string) (FamilyResult, familyTruth, error) {
	f := &c.spec.Families[i]
	S := len(vs)
	sq := make([]float64, S*S)
	var off []float64
	for a := 0; a < S; a++ {
		for b := a + 1; b < S; b++ {
			v := sqDist32(vs[a], vs[b])
			sq[a*S+b], sq[b*S+a] = v, v
			off = append(off, v)
		}
	}
	sigma, rule := medianSigma(off, f.Sigma, what)
	f.Sigma = sigma
	c.note(i, "sigma", strconv.FormatFloat(sigma, 'g', -1, 64), rule)
	gram := make([]float64, S*S)
	for k, v := range sq {
		gram[k] = math.Exp(-v / (2 * sigma * sigma))
	}
	truth := offDiagonal(gram, S)
	pilot := *f
	pilot.Features, pilot.Coefficients = PilotFeatures, false
	mse, pr2, err := c.pilot(pilot, false, truth)
	if err != nil {
		return FamilyResult{}, familyTruth{}, err
	}
	f.Features, rule = featureCount(mse, pr2, c.opts)
	c.note(i, "features", strconv.Itoa(f.Features), rule)
	fr := FamilyResult{Gram: gram, Between: sqrtAll(off), Marks: []Mark{{"sigma", sigma}}}
	return fr, familyTruth{kernel: kernel, pairs: truth}, nil
}

// typicalSpread is the median over sets of a set's robust spread: per axis min(sd,
// IQR/1.349) (the normal-reference scale that is not inflated by a second mode as much as
// sd), combined over axes by the geometric mean (joint) or taken per axis (marginal: the
// median covers sets and axes).
func typicalSpread(full [][]float64, d int, perAxis bool) float64 {
	var vals []float64
	col := []float64{}
	for _, u := range full {
		n := len(u) / d
		if n < 2 {
			continue
		}
		logSum := 0.0
		for j := 0; j < d; j++ {
			col = col[:0]
			for k := j; k < len(u); k += d {
				col = append(col, u[k])
			}
			s := robustScale(col)
			if perAxis {
				vals = append(vals, s)
			}
			logSum += math.Log(max(s, 1e-12))
		}
		if !perAxis {
			vals = append(vals, math.Exp(logSum/float64(d)))
		}
	}
	if len(vals) == 0 {
		return 0
	}
	return median(vals)
}

// robustScale is min(sd, IQR/1.349) of x (x is reordered).
func robustScale(x []float64) float64 {
	sd := math.Sqrt(variance(x) * float64(len(x)) / float64(len(x)-1))
	s := append([]float64(nil), x...)
	slices.Sort(s)
	iqr := quantileSorted(s, 0.75) - quantileSorted(s, 0.25)
	if iqr > 0 {
		return math.Min(sd, iqr/1.349)
	}
	return sd
}

// silverman is the normal-reference KDE bandwidth for d dimensions and n points.
func silverman(sigma, n float64, d int) float64 {
	fd := float64(d)
	return sigma * math.Pow(4/((fd+2)*n), 1/(fd+4))
}

// gridCap is the largest grid calibrate proposes: a joint grid's sketch holds 8·G^d bytes
// per open window (and its KDE costs O(G^d) per window), so G^d stays ≤ maxJointCells and G
// ≤ maxGrid.
func gridCap(d int, joint bool) int {
	if !joint {
		return maxMarginalGrid
	}
	return max(minGrid, min(maxJointGrid, int(math.Floor(math.Pow(maxJointCells, 1/float64(d))+1e-9))/8*8))
}

// countIndices counts the multi-indices α ∈ ℕ^d with Σα² ≤ bound, stopping at limit (the
// cosine basis is ordered by Σα², so a basis of this size holds exactly those).
func countIndices(d, bound, limit int) int {
	n := 0
	var rec func(j, rem int)
	rec = func(j, rem int) {
		if n >= limit {
			return
		}
		if j == d-1 {
			n += int(math.Floor(math.Sqrt(float64(rem)))) + 1
			return
		}
		for k := 0; k*k <= rem && n < limit; k++ {
			rec(j+1, rem-k*k)
		}
	}
	rec(0, bound)
	return min(n, limit)
}

// l2 calibrates an l2 family: its basis is kept; with a second stage, sigma is the median
// ‖a−a′‖ between sets (≈ the L2 distance of their densities) and D follows featureCount.
func (c *calibration) l2(i int) (FamilyResult, familyTruth, error) {
	f := &c.spec.Families[i]
	if f.Sigma == 0 && f.Features == 0 {
		c.note(i, "basis", strconv.Itoa(f.Basis), "kept: without a second stage the l2 coefficients are exact projections (no random features to size)")
		return FamilyResult{}, familyTruth{exact: true, kernel: "inner product of the cosine coefficients (exact, no random stage)"}, nil
	}
	fc := *f
	fc.Sigma, fc.Features = 0, 0
	as, err := c.embedColumn(fc, f.Name, false)
	if err != nil {
		return FamilyResult{}, familyTruth{}, err
	}
	return c.outerStage(i, as, "‖a−a′‖", "exp(−‖a−a′‖²/2σ²) of the cosine coefficients")
}

// embedColumn embeds every sampled set (its sub-sample when sub) with a one-family spec
// and returns the named column.
func (c *calibration) embedColumn(f spec.Family, col string, sub bool) ([][]float32, error) {
	// The proposal's version: it decides the projection a family without one gets.
	spec := &spec.Spec{Version: c.spec.Version, Seed: c.spec.Seed, Dim: c.spec.Dim, Bounds: c.spec.Bounds, OutOfBounds: "clip", Families: []spec.Family{f}}
	emb, err := embedding.New(spec)
	if err != nil {
		return nil, fmt.Errorf("calibrate: family %s: %w", f.Name, err)
	}
	vecs, err := c.embedAll(emb, sub)
	if err != nil {
		return nil, err
	}
	idx := columnIndex(emb, col)
	out := make([][]float32, len(vecs))
	for k, v := range vecs {
		out[k] = v[idx]
	}
	return out, nil
}

func sqDist32(a, b []float32) float64 {
	var s float64
	for k, v := range a {
		t := float64(v) - float64(b[k])
		s += t * t
	}
	return s
}
