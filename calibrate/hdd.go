package calibrate

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/distfeat/distfeat/embedding"
	"github.com/distfeat/distfeat/internal/numeric"
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
	capB := maxJointBasis
	if !joint {
		capB = maxMarginalBasis
	}
	fr.Marks = append(fr.Marks[:0:0], Mark{"LCV", h})
	return c.hddSearch(i, h, hRule, capG, capB, fr)
}

// hddSearch chooses kde_bandwidth, grid, basis, lambdas, sigma and features of hdd family i
// by the estimated R² against the true kernel (truth.go): a reference KDE at half the LCV
// bandwidth hL gives the reference divergences; the bandwidth is the best of hL·2^(k/4)
// with the largest basis and the most λs; basis and λs are then the cheapest whose R²
// stays within hddTolerance of that; D reaches the target R² (or, when the coefficients
// cannot, comes within rffShare of their ceiling).
func (c *calibration) hddSearch(i int, hL float64, hRule string, capG, capB int, fr FamilyResult) (FamilyResult, familyTruth, error) {
	s := newHDDTuner(c, i, hL, capG, capB)
	sigma, sRule := s.referenceSigma()
	s.f.Sigma = sigma
	hs, best, err := s.searchBandwidth(hL, &fr)
	if err != nil {
		return FamilyResult{}, familyTruth{}, err
	}
	top := hs[best]
	chosen, tried, err := s.cheapestBasis(top)
	if err != nil {
		return FamilyResult{}, familyTruth{}, err
	}
	*s.f = chosen.fam
	s.f.Sigma = sigma
	s.noteChoices(hs, top, tried, hRule)
	c.note(i, "sigma", strconv.FormatFloat(sigma, 'g', -1, 64), sRule)
	// The search compares candidates against one reference; the features and the
	// self-check need the interval, which a second, coarser reference gives (truth.go).
	s.ref = s.ref.withCoarse(c.smp, s.f.Divergence, s.f.Mode == "joint", c.opts.Workers)
	ceiling, err := s.chooseFeatures()
	if err != nil {
		return FamilyResult{}, familyTruth{}, err
	}
	if c.lab != nil {
		if err := c.hddLabelled(i, fr.Grid, capG); err != nil {
			return FamilyResult{}, familyTruth{}, err
		}
	}
	fr.Marks = append(fr.Marks, Mark{"kde_bandwidth", s.f.KDEBandwidth})
	fr.Between = sqrtAll(s.ref.corr)
	fr.Gram = pairsToGram(kernels(s.ref.corr, sigma), len(c.smp.raw))
	fr.Marks = append(fr.Marks, Mark{"sigma", sigma})
	ft := familyTruth{kernel: fmt.Sprintf("exp(−ρ²/2σ²), ρ² the %s divergence between the true distributions, estimated from a fine reference KDE (h = %.3g) with its noise measured by splitting each set in halves", s.f.Divergence, s.hRef), hddRef: &s.ref, ceiling: ceiling}
	return fr, ft, nil
}

// hddTuner is the state of one hdd family's search: the family being tuned, the reference
// divergences it is scored against, and the caps on grid, basis and λs.
type hddTuner struct {
	c          *calibration
	i          int
	f          *spec.Family
	dEff       int // the KDE's dimension: 1 for marginal mode
	capG, capB int
	maxLam     int
	hRef       float64
	ref        hddReference
}

// hddCand is one tried family with its estimated R² of the coefficient kernel.
type hddCand struct {
	fam spec.Family
	r2  float64
}

// newHDDTuner lowers capB until the largest grid resolves the basis and builds the
// reference KDE at half the LCV bandwidth hL.
func newHDDTuner(c *calibration, i int, hL float64, capG, capB int) *hddTuner {
	f := &c.spec.Families[i]
	joint := f.Mode == "joint"
	dEff := c.smp.dim
	if !joint {
		dEff = 1
	}
	for capB > minBasis && basisMaxIndex(dEff, capB)+2 > capG {
		capB-- // the largest grid must resolve the basis (1-D: one index per cosine)
	}
	s := &hddTuner{c: c, i: i, f: f, dEff: dEff, capG: capG, capB: capB, maxLam: 10, hRef: hL / 2}
	s.ref = newHDDReference(c.smp, f.Divergence, joint, s.hRef, c.opts.Workers)
	if f.Divergence == "hellinger" {
		s.maxLam = 1 // its Fuglede measure is an atom: every λ is 0 and one is exact
	}
	return s
}

// referenceSigma is sigma as the median reference ρ between the sampled sets, with its rule
// (the family's sigma is kept when that is 0).
func (s *hddTuner) referenceSigma() (float64, string) {
	sigma := round3(median(sqrtAll(s.ref.corr)))
	sRule := fmt.Sprintf("median reference ρ between %d pairs of sampled sets (ρ² from a reflected Gaussian KDE at h = %.3g on a %d-cell grid per axis, corrected for its 1/n bias by the halves) = %.4g", len(s.ref.corr), s.hRef, s.ref.g, sigma)
	if !(sigma > 0) {
		sigma, sRule = s.f.Sigma, fmt.Sprintf("the reference ρ between sets is 0: kept %g", s.f.Sigma)
	}
	return sigma, sRule
}

// try evaluates the family at bandwidth h with the given basis and λs (the grid the
// smallest multiple of 8 that resolves both, at most capG).
func (s *hddTuner) try(h float64, basis, lambdas int) (hddCand, error) {
	fc := *s.f
	kmax := basisMaxIndex(s.dEff, basis)
	fc.KDEBandwidth, fc.Basis, fc.Lambdas = round3(h), basis, lambdas
	fc.Grid = min(s.capG, (max(minGrid, int(math.Ceil(cellsPerBandwidth/h)), kmax+2)+7)/8*8)
	ev, err := s.c.evalHDD(fc, s.ref, false)
	return hddCand{fc, ev.R2Coef}, err
}

// searchBandwidth tries hL·2^(k/4), k = −4…1 (those resolved by the largest grid), at the
// largest basis and λs; it returns them with the index of the best and records the curve
// in fr.Grid, fr.Spread.
func (s *hddTuner) searchBandwidth(hL float64, fr *FamilyResult) ([]hddCand, int, error) {
	hMin := cellsPerBandwidth / float64(s.capG)
	var hs []hddCand
	best := -1
	fr.Grid, fr.Spread = nil, nil
	for k := -4; k <= 1; k++ {
		h := hL * math.Pow(2, float64(k)/4)
		if h < hMin {
			continue
		}
		cd, err := s.try(h, s.capB, s.maxLam)
		if err != nil {
			return nil, 0, err
		}
		hs = append(hs, cd)
		fr.Grid, fr.Spread = append(fr.Grid, cd.fam.KDEBandwidth), append(fr.Spread, cd.r2)
		if best < 0 || cd.r2 > hs[best].r2 {
			best = len(hs) - 1
		}
	}
	if best < 0 {
		return nil, 0, fmt.Errorf("calibrate: family %s: no KDE bandwidth above %.3g to try", s.f.Name, hMin)
	}
	return hs, best, nil
}

// cheapestBasis tries smaller basis·λ at top's bandwidth and returns the cheapest whose R²
// is within hddTolerance of top's, with a description of each tried.
func (s *hddTuner) cheapestBasis(top hddCand) (hddCand, []string, error) {
	chosen := top
	var tried []string
	capB, maxLam := s.capB, s.maxLam
	for _, bl := range [][2]int{{capB * 5 / 8, maxLam}, {capB * 3 / 8, maxLam}, {capB, 5}, {capB * 5 / 8, 5}, {capB * 3 / 8, 5}} {
		basis, lam := max(minBasis, bl[0]), min(bl[1], maxLam)
		if basis*lam >= chosen.fam.Basis*chosen.fam.Lambdas {
			continue
		}
		cd, err := s.try(top.fam.KDEBandwidth, basis, lam)
		if err != nil {
			return hddCand{}, nil, err
		}
		tried = append(tried, fmt.Sprintf("basis %d, %d λ: %.4f", basis, lam, cd.r2))
		if cd.r2 >= top.r2-hddTolerance {
			chosen = cd
		}
	}
	return chosen, tried, nil
}

// noteChoices records the rules of kde_bandwidth, grid, basis and lambdas.
func (s *hddTuner) noteChoices(hs []hddCand, top hddCand, tried []string, hRule string) {
	c, i, f := s.c, s.i, s.f
	var hList []string
	for _, h := range hs {
		hList = append(hList, fmt.Sprintf("%.3g: %.4f", h.fam.KDEBandwidth, h.r2))
	}
	c.note(i, "kde_bandwidth", strconv.FormatFloat(f.KDEBandwidth, 'g', -1, 64), fmt.Sprintf(
		"largest estimated R² of the coefficient kernel against the true kernel over h_L·2^(k/4), k = −4…1 (basis %d, %d λ), h_L the likelihood choice below — h: R² %s. h_L: %s",
		s.capB, s.maxLam, strings.Join(hList, ", "), hRule))
	c.note(i, "grid", strconv.Itoa(f.Grid), fmt.Sprintf("smallest multiple of 8 ≥ max(%d, %d cells per bandwidth, the basis's largest index + 2), at most %d (sketch memory 8·grid^dim bytes per open window)", minGrid, cellsPerBandwidth, s.capG))
	c.note(i, "basis", strconv.Itoa(f.Basis), fmt.Sprintf("the cheapest basis·λ whose estimated R² is within %g of the best (%.4f at basis %d, %d λ) — tried %s", hddTolerance, top.r2, s.capB, s.maxLam, strings.Join(tried, "; ")))
	c.note(i, "lambdas", strconv.Itoa(f.Lambdas), "with basis, above")
}

// chooseFeatures sets and notes D from the random-feature error at D₀ against the
// coefficient kernel: it adds to the variance of the approximate kernel, so
// R²(D) ≈ R²_C·var C/(var C + v₀D₀/D), R²_C the coefficient kernel's R² — the lower end
// of its interval (truthInterval), so that D is not chosen to chase an R² the data may not
// give. It returns that R²_C.
func (s *hddTuner) chooseFeatures() (float64, error) {
	pilot := *s.f
	pilot.Features = PilotFeatures
	ev, err := s.c.evalHDD(pilot, s.ref, true)
	if err != nil {
		return 0, err
	}
	r2C := ev.Coef.lo
	varC := covariance(ev.C, ev.C)
	var rule string
	s.f.Features, rule, err = s.c.truthFeatures(r2C, varC, ev.RFFVar, func(d int) (float64, error) {
		pilot.Features = d
		ev, err := s.c.evalHDD(pilot, s.ref, true)
		return ev.RFFVar, err
	})
	if err != nil {
		return 0, err
	}
	if ev.Coef.lo < ev.Coef.est {
		rule = fmt.Sprintf("R²_C is the lower end of the coefficient kernel's interval %.4f–%.4f (estimate %.4f; the reference's smoothing and the sample's noise, see the self-check). %s", ev.Coef.lo, ev.Coef.hi, ev.Coef.est, rule)
	}
	s.c.note(s.i, "features", strconv.Itoa(s.f.Features), rule)
	return r2C, nil
}

// Search tolerances.
const (
	// hddTolerance is the R² the cheaper basis and λ count may give up.
	hddTolerance = 0.002
	// rffShare is the R² the random features may cost when the coefficients cannot reach
	// the target.
	rffShare = 0.003
)

// truthFeatureCount chooses D so that R²_C·var C/(var C + v₀D₀/D) reaches the target R²,
// or, when the coefficient kernel's ceiling r2C is below it (plus rffShare), comes within
// rffShare of the ceiling.
func (c *calibration) truthFeatureCount(r2C, varC, v0 float64) (int, string) {
	o := c.opts
	if !(r2C > 0) {
		return MinFeatures, "too few set pairs with spread to measure the R² against the true kernel: the floor"
	}
	target := c.featureTarget(r2C)
	why := ""
	if target < o.TargetR2 {
		why = fmt.Sprintf("the data cannot support R² %g: the best estimated R² of the coefficient kernel against the true kernel is %.3f with these points per set; aiming for %.3f. ", o.TargetR2, r2C, target)
	}
	if !(varC > 0) || !(v0 > 0) || !(target > 0) {
		return MinFeatures, why + "the kernel does not vary over the sample: the floor"
	}
	need := PilotFeatures * v0 / (varC * (r2C/target - 1))
	d := min(o.MaxFeatures, max(MinFeatures, int(math.Ceil(need/2))*2))
	rule := fmt.Sprintf("%sD = D₀·v₀/(var C·(R²_C/R² − 1)) = %.0f with D₀ = %d, v₀ = %.3g the variance of the random-feature error at D₀, var C = %.3g, R²_C = %.4f, R² = %.3f; within [%d, %d]",
		why, need, PilotFeatures, v0, varC, r2C, target, MinFeatures, o.MaxFeatures)
	return d, rule
}

// truthFeatures is truthFeatureCount followed by a check: the 1/D law is only approximate
// (orthogonal blocks do better than independent frequencies at D₀ when D₀ exceeds the input
// width), so the random-feature variance is measured at the proposed D (rffVarAt) and D
// raised, up to three times, until the predicted R² reaches the target.
func (c *calibration) truthFeatures(r2C, varC, v0 float64, rffVarAt func(d int) (float64, error)) (int, string, error) {
	d, rule := c.truthFeatureCount(r2C, varC, v0)
	target := c.featureTarget(r2C)
	for step := 0; step < 3 && d < c.opts.MaxFeatures && r2C > 0 && varC > 0; step++ {
		v, err := rffVarAt(d)
		if err != nil {
			return 0, "", err
		}
		got := r2C * varC / (varC + v)
		if got >= target-0.001 {
			break
		}
		need := varC * (r2C/target - 1)
		next := min(c.opts.MaxFeatures, (int(math.Ceil(float64(d)*max(1.25, v/need)))+1)/2*2)
		rule += fmt.Sprintf("; at D = %d the measured random-feature variance %.3g predicts R² %.4f: raised to %d", d, v, got, next)
		d = next
	}
	return d, rule, nil
}

// featureTarget is the R² the features aim for: the target, or below the coefficient
// kernel's ceiling r2C when that is lower, by rffShare or a tenth of 1 − r2C (a low ceiling
// is noise the features need not reproduce to the last digit).
func (c *calibration) featureTarget(r2C float64) float64 {
	return math.Min(c.opts.TargetR2, r2C-math.Max(rffShare, 0.1*(1-r2C)))
}

// basisMaxIndex is the largest single-axis index of the first basis cosine multi-indices in
// d dimensions.
func basisMaxIndex(d, basis int) int {
	return numeric.MaxIndex(numeric.CosineIndices(d, basis))
}

// pairsToGram is the symmetric S×S matrix with unit diagonal of pair values (i < j).
func pairsToGram(p []float64, S int) []float64 {
	g := make([]float64, S*S)
	k := 0
	for i := 0; i < S; i++ {
		g[i*S+i] = 1
		for j := i + 1; j < S; j++ {
			g[i*S+j], g[j*S+i] = p[k], p[k]
			k++
		}
	}
	return g
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

// l2 calibrates an l2 family. Basis (d ≤ 3): the ⟨a, a′⟩ of the cosine coefficients
// estimate ∫p·q truncated to the basis; more cosines cut the truncation bias and add
// estimation noise (∝ basis/n). Each candidate's inner products are compared with a
// reference ∫p̂·q̂ of fine reflected KDEs (a quarter of the LCV bandwidth; cross products of two
// sets' KDEs carry no plug-in bias), the noise measured by halves (truth.go), and the
// basis is the smallest within hddTolerance of the best estimated R². With a second stage,
// sigma is the median ‖a−a′‖ between sets and D follows featureCount.
func (c *calibration) l2(i int) (FamilyResult, familyTruth, error) {
	f := &c.spec.Families[i]
	var (
		est   func(x []float64) float64
		grids *l2Grids
	)
	if c.smp.dim <= 3 && len(c.smp.raw) >= 3 {
		var err error
		if est, grids, err = c.l2Basis(i); err != nil {
			return FamilyResult{}, familyTruth{}, err
		}
	} else {
		c.note(i, "basis", strconv.Itoa(f.Basis), "kept: the reference densities need dim ≤ 3 and at least three sets")
	}
	if f.Sigma == 0 && f.Features == 0 {
		return FamilyResult{}, familyTruth{exact: est == nil, estimate: est, kernel: "∫p·q between the true densities, estimated from fine reference KDEs with their noise measured by splitting each set in halves (the features are exact inner products of the cosine coefficients: no random stage)"}, nil
	}
	fc := *f
	fc.Sigma, fc.Features = 0, 0
	full, ha, hb, err := c.embedFamily(fc, grids != nil, f.Name)
	if err != nil {
		return FamilyResult{}, familyTruth{}, err
	}
	fr, ft, err := c.outerStage(i, column(full, 0), "‖a−a′‖", "exp(−‖a−a′‖²/2σ²) of the cosine coefficients")
	if err != nil || grids == nil {
		return fr, ft, err
	}
	// The second stage's true kernel exp(−‖p−q‖²/2σ²): the reference ∫(p̂−q̂)² of the fine
	// KDEs, bias-corrected by the halves like an hdd divergence; the noise of the spec's own
	// ‖a−a′‖² from the halves of its coefficients.
	S := len(c.smp.raw)
	np := S * (S - 1) / 2
	ref := hddReference{rho2: pairEstimate{make([]float64, np), make([]float64, np), make([]float64, np)}, corr: make([]float64, np)}
	parallelPairs(S, c.opts.Workers, func(p, x, y int) {
		ref.rho2.full[p] = l2Dist2(grids.full[x], grids.full[y])
		ref.rho2.a[p] = l2Dist2(grids.a[x], grids.a[y])
		ref.rho2.b[p] = l2Dist2(grids.b[x], grids.b[y])
		ref.corr[p] = 2*ref.rho2.full[p] - 0.5*(ref.rho2.a[p]+ref.rho2.b[p])
	})
	cRho2 := pairEstimate{coefRho2(column(full, 0)), coefRho2(column(ha, 0)), coefRho2(column(hb, 0))}
	// D against the true kernel, as for hdd: the ceiling is the coefficient kernel's R².
	f = &c.spec.Families[i]
	cK := cRho2.kernels(f.Sigma)
	refK := kernels(ref.corr, f.Sigma)
	r2C := truthR2(cK.full, refK, cK.diff(), ref.rho2.kernels(f.Sigma).diff(), 0.25, 0.25)
	rffVar := func(d int) (float64, error) {
		fc := *f
		fc.Features = d
		vecs, _, _, err := c.embedFamily(fc, false, f.Name)
		if err != nil {
			return 0, err
		}
		x := innerPairs(column(vecs, 0))
		for p := range x {
			x[p] -= cK.full[p]
		}
		return covariance(x, x), nil
	}
	v0, err := rffVar(PilotFeatures)
	if err != nil {
		return FamilyResult{}, familyTruth{}, err
	}
	var rule string
	if f.Features, rule, err = c.truthFeatures(r2C, covariance(cK.full, cK.full), v0, rffVar); err != nil {
		return FamilyResult{}, familyTruth{}, err
	}
	c.replaceNote(i, "features", strconv.Itoa(f.Features), "against the true kernel exp(−‖p−q‖²/2σ²): "+rule)
	ft.exact = false
	ft.kernel = "exp(−‖p−q‖²/2σ²) between the true densities, estimated from fine reference KDEs (bias-corrected, noise from halves)"
	ft.estimate = func(x []float64) float64 {
		sigma := c.spec.Families[i].Sigma
		cEst, rEst := cRho2.kernels(sigma), ref.rho2.kernels(sigma)
		return truthR2(x, ref.refKernels(sigma), cEst.diff(), rEst.diff(), 0.25, 0.25)
	}
	return fr, ft, nil
}

// l2Grids are the reference densities of the sampled sets (full sets and halves).
type l2Grids struct {
	full, a, b []refGrid
}

// l2Candidates are the l2 bases tried.
var l2Candidates = []int{10, 20, 40, 70, 100, 160, 250, 400}

// l2Basis chooses family i's basis and returns the estimator of the R² of an l2 kernel
// (inner products at the chosen basis) against the true ∫p·q, and the reference densities.
func (c *calibration) l2Basis(i int) (func([]float64) float64, *l2Grids, error) {
	f := &c.spec.Families[i]
	d := c.smp.dim
	sd := typicalSpread(c.smp.full, d, false)
	n := median(c.smp.sizes())
	hS := silverman(sd, n, d)
	if !(hS > 0) {
		c.note(i, "basis", strconv.Itoa(f.Basis), "kept: the sets have no spread")
		return nil, nil, nil
	}
	hL, _, _, _ := lcvBandwidth(c.smp.full, d, true, hS, 1.0/float64(refGridSize(1e-9, d)), c.spec.Seed)
	hRef := hL / 4 // ∫(p−q)² weighs the density peaks: the reference must smooth them less than a divergence's
	g := refGridSize(hRef, d)
	k := refAxis(g, hRef)
	S := len(c.smp.full)
	full, a, b := make([]refGrid, S), make([]refGrid, S), make([]refGrid, S)
	parallelFor(S, c.opts.Workers, func(j int) {
		u := c.smp.full[j]
		full[j] = refDensity(u, d, true, g, k)
		a[j] = refDensity(c.smp.halfOf(u, j, true), d, true, g, k)
		b[j] = refDensity(c.smp.halfOf(u, j, false), d, true, g, k)
	})
	np := S * (S - 1) / 2
	ref := pairEstimate{make([]float64, np), make([]float64, np), make([]float64, np)}
	parallelPairs(S, c.opts.Workers, func(p, x, y int) {
		ref.full[p], ref.a[p], ref.b[p] = l2Inner(full[x], full[y]), l2Inner(a[x], a[y]), l2Inner(b[x], b[y])
	})
	dRef := ref.diff()
	type cand struct {
		basis int
		r2    float64
		dC    []float64
	}
	var cands []cand
	top := -1.0
	for _, basis := range l2Candidates {
		fc := *f
		fc.Basis, fc.Sigma, fc.Features = basis, 0, 0
		vf, va, vb, err := c.embedFamily(fc, true, f.Name)
		if err != nil {
			return nil, nil, err
		}
		cEst := pairEstimate{innerPairs(column(vf, 0)), innerPairs(column(va, 0)), innerPairs(column(vb, 0))}
		dC := cEst.diff()
		r2 := truthR2(cEst.full, ref.full, dC, dRef, 0.25, 0.25)
		cands = append(cands, cand{basis, r2, dC})
		c.res.Trials = append(c.res.Trials, Trial{Family: f.Name, Setting: fmt.Sprintf("basis %d", basis), Score: r2, What: "estimated R² against ∫p·q"})
		if r2 > top {
			top = r2
		}
	}
	if !(top > 0) {
		c.note(i, "basis", strconv.Itoa(f.Basis), "kept: the R² against the reference could not be estimated")
		return nil, nil, nil
	}
	var chosen cand
	for _, cd := range cands {
		if cd.r2 >= top-hddTolerance {
			chosen = cd
			break
		}
	}
	f.Basis = chosen.basis
	for k := range c.res.Trials {
		if t := &c.res.Trials[k]; t.Family == f.Name && t.Setting == fmt.Sprintf("basis %d", chosen.basis) {
			t.Chosen = true
		}
	}
	var tried []string
	for _, cd := range cands {
		tried = append(tried, fmt.Sprintf("%d: %.4f", cd.basis, cd.r2))
	}
	c.note(i, "basis", strconv.Itoa(f.Basis), fmt.Sprintf("smallest basis whose estimated R² of ⟨a, a′⟩ against ∫p·q (reference KDEs at h = %.3g, %d cells per axis, noise from halves) is within %g of the best — basis: R² %s", hRef, g, hddTolerance, strings.Join(tried, ", ")))
	dC := chosen.dC
	return func(x []float64) float64 { return truthR2(x, ref.full, dC, dRef, 0.25, 0.25) }, &l2Grids{full, a, b}, nil
}

// oneFamilyEmbedder compiles a spec of the proposal's seed, dim and bounds with the one family
// f. It takes the proposal's version: that decides the projection (and mmd method) a family
// without one gets.
func (c *calibration) oneFamilyEmbedder(f spec.Family) (*embedding.Embedder, error) {
	return embedding.New(&spec.Spec{Version: c.spec.Version, Seed: c.spec.Seed, Dim: c.spec.Dim, Bounds: c.spec.Bounds, OutOfBounds: "clip", Families: []spec.Family{f}})
}

// embedColumn embeds every sampled set (its sub-sample when sub) with a one-family spec
// and returns the named column.
func (c *calibration) embedColumn(f spec.Family, col string, sub bool) ([][]float32, error) {
	emb, err := c.oneFamilyEmbedder(f)
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
