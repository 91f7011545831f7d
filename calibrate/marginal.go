package calibrate

import (
	"context"
	"errors"
	"fmt"
	"math"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"

	"gonum.org/v1/gonum/mat"

	"github.com/distfeat/distfeat/embedding"
	"github.com/distfeat/distfeat/internal/stats"
	"github.com/distfeat/distfeat/spec"
)

// Choosing σ_P and σ_X of marginal-transfer per-point features (embedding.PointMap) by
// cross-validation over domains, as Blanchard et al. do: whole labelled sets are held out,
// never points of a set, a linear classifier (one-vs-rest ridge, each set weighted equally)
// is fitted on the per-point features of the other sets, and the candidate with the best
// accuracy on the held-out sets wins. Pooling (the constant set kernel, σ_P = ∞) is one of
// the candidates, and a marginal-transfer candidate is chosen over the best pooled one only
// when it beats it by more than the standard error of their per-set accuracy difference: on
// data whose set distributions carry no label information the proposal is then pooling or
// as good as it.

// LabelledSet is one training set (a domain) with a class label per point.
type LabelledSet struct {
	ID     string
	Points []float64 // raw points, row-major
	Labels []string  // one per point
}

// MarginalOptions tune MarginalTransfer. The zero value of a field means its default.
type MarginalOptions struct {
	// SetFamily names the spec's mmd family whose window features are Ψ(P) (default: the
	// first mmd family without the rbf stage).
	SetFamily string
	// Name is the per-point column name (default "mt").
	Name string
	// SigmaP are the σ_P candidates besides pooling (default m·2^{k/2}, k = −4…6 step 2,
	// m the median distance ‖Ψ(P)−Ψ(P′)‖ between the sets; extended by doublings, at most
	// twice, while the best candidate is at its largest value).
	SigmaP []float64
	// SigmaX are the σ_X candidates (default h·2^{k/2}, k = −4…4 step 2, h the median
	// distance between two points of a set, normalised units; extended like SigmaP).
	SigmaX []float64
	// PsiScales are the multiples of the set family's bandwidth tried as Ψ's bandwidth
	// (default 2^{k/2}, k = −2, 0, 2, 4): Ψ's bandwidth decides which differences between
	// sets the set kernel sees, and the set family's own was chosen without the labels.
	// A bandwidth other than the set family's is proposed as an extra mmd family
	// (MarginalResult.SetFamilySpec).
	PsiScales []float64
	// Features are the D candidates (default 256, 512, 1024): the grid search runs at the
	// first; the smallest D within 0.005 of the best accuracy at the chosen σ's is proposed.
	Features []int
	// Lambdas are the ridge penalties, relative to the mean diagonal of the Gram matrix
	// (default 1e-4, 1e-3, 1e-2, 1e-1, 1).
	Lambdas []float64
	// Folds is the number of domain folds (default min(5, sets)).
	Folds int
	// MaxPoints bounds the points per set used to fit and score (default 256; Ψ(P) always
	// uses all of a set's points, as the worker does).
	MaxPoints int
	// Workers runs candidates in parallel (default GOMAXPROCS).
	Workers int
}

// MarginalCandidate is one point of the grid with its cross-validated accuracy.
type MarginalCandidate struct {
	Pooling  bool
	SigmaP   float64 // 0 with Pooling
	SigmaX   float64
	Features int
	// PsiBandwidth is the bandwidth of the mmd family supplying Ψ (0 with Pooling).
	PsiBandwidth float64
	Lambda       float64 // the best relative ridge penalty for these σ's
	// Accuracy is the mean over sets of the held-out accuracy on the set's points (each set
	// is held out once); SE its standard error over sets.
	Accuracy, SE float64
	perSet       []float64
	perLambda    [][]float64 // [λ][set] held-out accuracies (best-of-grid correction)
	psi          int         // index of the Ψ variant (mtEval.psis)
}

// MarginalResult is MarginalTransfer's proposal with the whole grid.
type MarginalResult struct {
	// Family is the proposed marginal_transfer family (name, set_family, sigma_p, sigma_x,
	// features, or pooling), ready to append to the spec's families.
	Family spec.Family
	// SetFamilySpec, when not nil, is the mmd family supplying Ψ that the proposal needs in
	// addition to the spec's (its set family at another bandwidth, named <name>_psi):
	// append it to the spec's families before Family.
	SetFamilySpec *spec.Family
	// BestMarginalPsi is the mmd family supplying Ψ to BestMarginal (the spec's set family
	// or one at another bandwidth).
	BestMarginalPsi spec.Family
	// Lambda is the ridge penalty (relative to the mean diagonal of the training Gram
	// matrix ZᵀZ/n summed over sets) that went with it, chosen by folds of whole sets: fit
	// the downstream classifier with it (a leave-one-point-out choice overfits the training
	// domains).
	Lambda float64
	// Promised is the accuracy to expect on unseen sets: the chosen candidate's
	// cross-validated accuracy less the optimism of choosing the best of the grid
	// (Optimism, Tibshirani & Tibshirani 2009: the mean over folds of the best candidate's
	// accuracy on the fold less the chosen one's); PromisedSE its standard error over sets.
	Promised, PromisedSE, Optimism float64
	// PsiGrid holds the marginal-transfer candidates at the Ψ bandwidths not chosen (Grid
	// holds the chosen one's and pooling).
	PsiGrid []MarginalCandidate
	// Chosen is the proposed candidate; BestPooling and BestMarginal the best of each kind.
	Chosen, BestPooling, BestMarginal MarginalCandidate
	// Grid holds every (σ_P or pooling, σ_X) candidate at the grid's D, then, from
	// Grid[SweepStart], the D sweep at the chosen σ's (the other D candidates).
	Grid       []MarginalCandidate
	SweepStart int
	// Rule explains the choice.
	Rule string
	// MedianPsi and MedianX are the scales the default grids are built on (MedianPsi with
	// the Ψ of the best marginal-transfer candidate).
	MedianPsi, MedianX float64
	Sets, Folds        int
}

// Defaults of MarginalOptions (arrays: no package-level mutable state).
var (
	defaultMTFeatures = [...]int{256, 512, 1024}
	defaultMTLambdas  = [...]float64{1e-4, 1e-3, 1e-2, 1e-1, 1}
	// defaultMTPsiScales are 2^{k/2}, k = −2, 0, 2, 4.
	defaultMTPsiScales = [...]float64{0.5, 1, 2, 4}
)

const defaultMTMaxPoints = 256

// mtMaxExtensions is how many times MarginalTransfer may extend its default grids upward.
const mtMaxExtensions = 2

func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// mtSet is one set prepared for the search.
type mtSet struct {
	windows [][][]float32 // per Ψ variant (mtEval.psis), the window's features
	u       []float64     // sub-sampled normalised points
	y       []int         // their class indices
	fold    int
}

// mtPsi is one candidate Ψ: an embedder whose spec holds the mmd family supplying it.
type mtPsi struct {
	emb       *embedding.Embedder
	family    spec.Family
	col       int     // Ψ's column in emb's output
	median    float64 // median ‖Ψ(P)−Ψ(P′)‖ between the sets
	sigmaP    []float64
	extraName string // "" for the spec's own set family
}

// MarginalTransfer proposes σ_P, σ_X, Ψ's bandwidth, D and the ridge penalty of a
// marginal-transfer per-point map for emb's spec by cross-validation over the labelled sets
// (see the comment at the top of the file).
func MarginalTransfer(ctx context.Context, emb *embedding.Embedder, sets []LabelledSet, o MarginalOptions) (*MarginalResult, error) {
	o, err := o.withDefaults(emb)
	if err != nil {
		return nil, err
	}
	classes, nClasses, err := classIndex(sets, emb.Dim())
	if err != nil {
		return nil, err
	}
	seed := emb.Spec().Seed
	perm, folds, err := foldOrder(sets, o.Folds, seed)
	if err != nil {
		return nil, err
	}
	psis, err := psiVariants(emb, o)
	if err != nil {
		return nil, err
	}
	prep, within, err := prepareSets(ctx, psis, sets, perm, classes, folds, o.MaxPoints)
	if err != nil {
		return nil, err
	}
	for v := range psis {
		psis[v].median = mtMedian(psiDistances(prep, v, psis[v].col))
		if !(psis[v].median > 0) {
			psis[v].median = 0.1
		}
		psis[v].sigmaP = o.SigmaP
		if len(o.SigmaP) == 0 {
			psis[v].sigmaP = mtScaleGrid(psis[v].median, -4, 6)
		}
	}
	res := &MarginalResult{MedianPsi: psis[0].median, MedianX: mtMedian(within), Sets: len(prep), Folds: folds}
	if !(res.MedianX > 0) {
		res.MedianX = 0.1
	}
	sigmaX := o.SigmaX
	if len(sigmaX) == 0 {
		sigmaX = mtScaleGrid(res.MedianX, -4, 4)
	}
	ev := &mtEval{psis: psis, sets: prep, classes: nClasses, folds: folds, lambdas: o.Lambdas, name: o.Name}
	cands, err := ev.searchSigmas(ctx, sigmaX, o)
	if err != nil {
		return nil, err
	}
	bestP, bestM := bestOfEachKind(cands)
	res.BestPooling, res.BestMarginal = cands[bestP], cands[bestM]
	res.MedianPsi = psis[res.BestMarginal.psi].median // the scale of the report's σ_P grid
	chosen := res.choosePoolingOrMarginal()
	// The grid of the report: pooling and the chosen Ψ's candidates (the best marginal
	// one's when pooling is chosen); the other Ψ bandwidths' candidates in PsiGrid.
	for _, c := range cands {
		if c.Pooling || c.psi == res.BestMarginal.psi {
			res.Grid = append(res.Grid, c)
		} else {
			res.PsiGrid = append(res.PsiGrid, c)
		}
	}
	sweep, chosen, err := ev.sweepFeatures(ctx, chosen, o)
	if err != nil {
		return nil, err
	}
	res.SweepStart = len(res.Grid)
	res.Grid = append(res.Grid, sweep...)
	res.Chosen, res.Lambda = chosen, chosen.Lambda
	// The optimism of the choice within the chosen kind (pooling is chosen over better
	// marginal candidates on purpose: their accuracy does not count against it).
	var kind []MarginalCandidate
	for _, c := range append(cands, sweep...) {
		if c.Pooling == chosen.Pooling {
			kind = append(kind, c)
		}
	}
	res.Optimism = bestOfGridOptimism(kind, chosen, prep, folds)
	res.Promised, res.PromisedSE = chosen.Accuracy-res.Optimism, chosen.SE
	res.BestMarginalPsi = psis[res.BestMarginal.psi].family
	psi := psis[max(chosen.psi, 0)]
	setFamily := psi.family.Name
	if !chosen.Pooling && psi.extraName != "" {
		f := psi.family
		res.SetFamilySpec = &f
	}
	res.Family = marginalFamily(o.Name, setFamily, chosen)
	return res, nil
}

// psiVariants are the candidate Ψs: the spec's set family (first) and, for every other
// scale of o.PsiScales, a copy of it at that multiple of its bandwidth, named <name>_psi
// (or <name>_psi2, … if taken), in a spec of its own.
func psiVariants(emb *embedding.Embedder, o MarginalOptions) ([]mtPsi, error) {
	sp := emb.Spec()
	k := slices.IndexFunc(sp.Families, func(f spec.Family) bool { return f.Name == o.SetFamily })
	if k < 0 {
		return nil, fmt.Errorf("calibrate: set family %q is not in the spec", o.SetFamily)
	}
	base := sp.Families[k]
	psis := []mtPsi{{emb: emb, family: base, col: columnIndex(emb, o.SetFamily)}}
	name := o.Name + "_psi"
	for i := 2; slices.ContainsFunc(sp.Families, func(f spec.Family) bool { return f.Name == name }); i++ {
		name = o.Name + "_psi" + strconv.Itoa(i)
	}
	for _, sc := range o.PsiScales {
		if sc == 1 {
			continue
		}
		f := base
		f.Name, f.Bandwidth = name, round3(base.Bandwidth*sc)
		ve, err := embedding.New(&spec.Spec{Version: sp.Version, Seed: sp.Seed, Dim: sp.Dim, Bounds: sp.Bounds, OutOfBounds: "clip", Families: []spec.Family{f}})
		if err != nil {
			return nil, fmt.Errorf("calibrate: Ψ at bandwidth %g: %w", f.Bandwidth, err)
		}
		psis = append(psis, mtPsi{emb: ve, family: f, col: columnIndex(ve, name), extraName: name})
	}
	return psis, nil
}

// bestOfGridOptimism is the optimism of reporting the best candidate's cross-validated
// accuracy (Tibshirani & Tibshirani, Ann. Appl. Stat. 2009): per fold, the accuracy on the
// fold's sets of the candidate (and ridge penalty) best on that fold less the chosen one's,
// averaged over folds. Every candidate tried (each σ, Ψ, D and λ) counts: the choice was
// made among all of them.
func bestOfGridOptimism(cands []MarginalCandidate, chosen MarginalCandidate, sets []mtSet, folds int) float64 {
	foldMean := func(acc []float64, f int) float64 {
		var s, n float64
		for i, st := range sets {
			if st.fold == f {
				s += acc[i]
				n++
			}
		}
		return s / n
	}
	total := 0.0
	for f := 0; f < folds; f++ {
		best := math.Inf(-1)
		for _, c := range cands {
			for _, acc := range c.perLambda {
				if v := foldMean(acc, f); v > best { // NaN never wins
					best = v
				}
			}
		}
		total += best - foldMean(chosen.perSet, f)
	}
	return total / float64(folds)
}

// withDefaults fills in the zero fields of o; the set family must be in emb's spec.
func (o MarginalOptions) withDefaults(emb *embedding.Embedder) (MarginalOptions, error) {
	if o.Name == "" {
		o.Name = "mt"
	}
	if o.SetFamily == "" {
		for _, f := range emb.Spec().Families {
			if f.Kind == spec.KindMMD && f.RBFFeatures == 0 {
				o.SetFamily = f.Name
				break
			}
		}
		if o.SetFamily == "" {
			return o, errors.New("calibrate: marginal transfer needs an mmd family without the rbf stage in the spec to supply Ψ(P)")
		}
	}
	if len(o.Features) == 0 {
		o.Features = slices.Clone(defaultMTFeatures[:])
	}
	if len(o.PsiScales) == 0 {
		o.PsiScales = slices.Clone(defaultMTPsiScales[:])
	}
	if len(o.Lambdas) == 0 {
		o.Lambdas = slices.Clone(defaultMTLambdas[:])
	}
	if o.MaxPoints <= 0 {
		o.MaxPoints = defaultMTMaxPoints
	}
	if o.Workers <= 0 {
		o.Workers = runtime.GOMAXPROCS(0)
	}
	return o, nil
}

// classIndex numbers the labels of all sets in sorted order and checks that every set has
// one label per point (d coordinates each) and that there are at least 2 classes.
func classIndex(sets []LabelledSet, d int) (map[string]int, int, error) {
	classes := map[string]int{}
	var names []string
	for _, s := range sets {
		if len(s.Labels)*d != len(s.Points) {
			return nil, 0, fmt.Errorf("calibrate: set %q has %d labels for %d points", s.ID, len(s.Labels), len(s.Points)/d)
		}
		for _, l := range s.Labels {
			if _, ok := classes[l]; !ok {
				classes[l] = -1
				names = append(names, l)
			}
		}
	}
	sort.Strings(names)
	for i, n := range names {
		classes[n] = i
	}
	if len(names) < 2 {
		return nil, 0, fmt.Errorf("calibrate: marginal transfer needs at least 2 classes, the labels have %d", len(names))
	}
	return classes, len(names), nil
}

// foldOrder returns the indices of the labelled sets as a seeded shuffle of the sets in ID
// order (set k of it goes to fold k mod folds: round-robin), and the number of folds
// (min(want, sets), want 5 when not given).
func foldOrder(sets []LabelledSet, want int, seed uint64) (perm []int, folds int, err error) {
	order := make([]int, 0, len(sets))
	for i, s := range sets {
		if len(s.Labels) > 0 {
			order = append(order, i)
		}
	}
	if len(order) < 2 {
		return nil, 0, fmt.Errorf("calibrate: marginal transfer needs at least 2 labelled sets, got %d", len(order))
	}
	sort.Slice(order, func(a, b int) bool { return sets[order[a]].ID < sets[order[b]].ID })
	folds = want
	if folds <= 0 {
		folds = 5
	}
	folds = min(folds, len(order))
	rng := embedding.NewRNG(seed, "calibrate/marginal")
	perm = slices.Clone(order)
	for i := len(perm) - 1; i > 0; i-- {
		j := int(rng.Float64() * float64(i+1))
		perm[i], perm[j] = perm[j], perm[i]
	}
	return perm, folds, nil
}

// prepareSets normalises the sets in perm order, embeds them with every Ψ variant's
// embedder, sub-samples up to maxPoints labelled points of each, and returns them with
// distances between pairs of points of a set (up to 32 pairs per set) for the σ_X scale.
func prepareSets(ctx context.Context, psis []mtPsi, sets []LabelledSet, perm []int, classes map[string]int, folds, maxPoints int) ([]mtSet, []float64, error) {
	emb := psis[0].emb
	d, seed := emb.Dim(), emb.Spec().Seed
	prep := make([]mtSet, len(perm))
	var within []float64
	for k, si := range perm {
		if err := ctx.Err(); err != nil {
			return nil, nil, err
		}
		s := sets[si]
		u := make([]float64, len(s.Points))
		if _, err := emb.Normalize(u, s.Points); err != nil {
			return nil, nil, fmt.Errorf("calibrate: set %q: %w", s.ID, err)
		}
		p := mtSet{fold: k % folds}
		for _, ps := range psis {
			p.windows = append(p.windows, ps.emb.Embed(u))
		}
		pick := choose(embedding.NewRNG(seed, "calibrate/marginal/"+s.ID), len(s.Labels), maxPoints)
		for _, i := range pick {
			p.u = append(p.u, u[i*d:(i+1)*d]...)
			p.y = append(p.y, classes[s.Labels[i]])
		}
		for a := 0; a+1 < len(pick) && a < 64; a += 2 {
			within = append(within, math.Sqrt(sqDist(p.u[a*d:(a+1)*d], p.u[(a+1)*d:(a+2)*d])))
		}
		prep[k] = p
	}
	return prep, within, nil
}

// psiDistances are the distances ‖Ψ(P)−Ψ(P′)‖ between every pair of prepared sets, Ψ the
// column col of Ψ variant v's windows.
func psiDistances(prep []mtSet, v, col int) []float64 {
	var between []float64
	for a := range prep {
		for b := a + 1; b < len(prep); b++ {
			between = append(between, math.Sqrt(sqDist32(prep[a].windows[v][col], prep[b].windows[v][col])))
		}
	}
	return between
}

// mtScaleGrid is m·2^{k/2} for k = lo…hi step 2, rounded to 3 significant digits.
func mtScaleGrid(m float64, lo, hi int) []float64 {
	var g []float64
	for k := lo; k <= hi; k += 2 {
		g = append(g, mtRound(m*math.Pow(2, float64(k)/2)))
	}
	return g
}

// searchSigmas scores every (pooling, or Ψ variant and σ_P, σ_X) candidate at the first D,
// extending the default grids (up to mtMaxExtensions times) by one doubling of σ_X or of
// the best Ψ variant's σ_P when a best candidate sits at its largest value: the grids come
// from medians, and data whose boundary is smooth (or whose marginal matters little) want
// larger σ's. User-given grids are not extended. The candidates are returned sorted by σ_X,
// then Ψ variant and σ_P (pooling first).
func (ev *mtEval) searchSigmas(ctx context.Context, sigmaX []float64, o MarginalOptions) ([]MarginalCandidate, error) {
	var cands []MarginalCandidate
	type key struct {
		psi    int
		sp, sx float64
	}
	done := map[key]bool{}
	for round := 0; ; round++ {
		var fresh []MarginalCandidate
		for _, sx := range sigmaX {
			if !done[key{-1, 0, sx}] {
				done[key{-1, 0, sx}] = true
				fresh = append(fresh, MarginalCandidate{Pooling: true, SigmaX: sx, Features: o.Features[0], psi: -1})
			}
			for v, ps := range ev.psis {
				for _, sp := range ps.sigmaP {
					if done[key{v, sp, sx}] {
						continue
					}
					done[key{v, sp, sx}] = true
					fresh = append(fresh, MarginalCandidate{SigmaP: sp, SigmaX: sx, Features: o.Features[0], PsiBandwidth: ps.family.Bandwidth, psi: v})
				}
			}
		}
		if err := ev.run(ctx, fresh, o.Workers); err != nil {
			return nil, err
		}
		cands = append(cands, fresh...)
		if round == mtMaxExtensions || len(o.SigmaP)+len(o.SigmaX) > 0 {
			break
		}
		bestP, bestM := bestOfEachKind(cands)
		lastX := sigmaX[len(sigmaX)-1]
		extended := false
		if cands[bestP].SigmaX == lastX || cands[bestM].SigmaX == lastX {
			sigmaX, extended = append(sigmaX, mtRound(2*lastX)), true
		}
		if ps := &ev.psis[cands[bestM].psi]; cands[bestM].SigmaP == ps.sigmaP[len(ps.sigmaP)-1] {
			ps.sigmaP, extended = append(slices.Clone(ps.sigmaP), mtRound(2*cands[bestM].SigmaP)), true
		}
		if !extended {
			break
		}
	}
	slices.SortStableFunc(cands, func(a, b MarginalCandidate) int {
		if a.SigmaX != b.SigmaX {
			return cmpFloat(a.SigmaX, b.SigmaX)
		}
		if a.psi != b.psi {
			return a.psi - b.psi // pooling (−1) first
		}
		return cmpFloat(a.SigmaP, b.SigmaP)
	})
	return cands, nil
}

// bestOfEachKind returns the indices of the most accurate pooling candidate and the most
// accurate marginal-transfer one (the first of equals).
func bestOfEachKind(cands []MarginalCandidate) (bestP, bestM int) {
	bestP, bestM = -1, -1
	for i, c := range cands {
		if c.Pooling && (bestP < 0 || c.Accuracy > cands[bestP].Accuracy) {
			bestP = i
		}
		if !c.Pooling && (bestM < 0 || c.Accuracy > cands[bestM].Accuracy) {
			bestM = i
		}
	}
	return bestP, bestM
}

// choosePoolingOrMarginal returns the best marginal-transfer candidate when it beats the
// best pooled one by more than the standard error of their per-set accuracy difference,
// else the best pooled one, and sets r.Rule to say why.
func (r *MarginalResult) choosePoolingOrMarginal() MarginalCandidate {
	// Marginal transfer has many more candidates than pooling (every Ψ bandwidth and σ_P),
	// so its best is the maximum of more noise: it must win by mtGainSEs standard errors.
	gain, se := mtPairedGain(r.BestMarginal.perSet, r.BestPooling.perSet)
	if gain > mtGainSEs*se {
		r.Rule = fmt.Sprintf("marginal transfer: held-out accuracy %.3f vs pooling %.3f, a gain of %.3f > %g × its standard error %.3f over %d sets",
			r.BestMarginal.Accuracy, r.BestPooling.Accuracy, gain, mtGainSEs, se, r.Sets)
		return r.BestMarginal
	}
	r.Rule = fmt.Sprintf("pooling: the best marginal-transfer candidate (%.3f) does not beat pooling (%.3f) by more than %g × the standard error of the difference (gain %.3f, SE %.3f over %d sets)",
		r.BestMarginal.Accuracy, r.BestPooling.Accuracy, mtGainSEs, gain, se, r.Sets)
	return r.BestPooling
}

// mtGainSEs is how many standard errors of the per-set accuracy difference the best
// marginal-transfer candidate must beat the best pooled one by. With the Ψ bandwidth
// searched (four times the candidates), one standard error let the best of the marginal
// candidates' noise win on data whose marginals say nothing of the labels (issue #38).
const mtGainSEs = 2.0

// sweepFeatures scores chosen at the other D candidates and returns those new candidates
// and the smallest-D candidate within 0.005 of the best accuracy.
func (ev *mtEval) sweepFeatures(ctx context.Context, chosen MarginalCandidate, o MarginalOptions) ([]MarginalCandidate, MarginalCandidate, error) {
	sweep := []MarginalCandidate{chosen}
	for _, D := range o.Features[1:] {
		c := chosen
		c.Features = D
		sweep = append(sweep, c)
	}
	if err := ev.run(ctx, sweep[1:], o.Workers); err != nil {
		return nil, chosen, err
	}
	best := 0.0
	for _, c := range sweep {
		best = max(best, c.Accuracy)
	}
	for _, c := range sweep {
		if c.Accuracy >= best-0.005 {
			chosen = c
			break
		}
	}
	return sweep[1:], chosen, nil
}

// marginalFamily is the spec family of candidate c (setFamily supplies Ψ(P) unless pooling).
func marginalFamily(name, setFamily string, c MarginalCandidate) spec.Family {
	f := spec.Family{Name: name, Kind: spec.KindMarginal, SigmaX: c.SigmaX, Features: c.Features, Pooling: c.Pooling}
	if !c.Pooling {
		f.SetFamily, f.SigmaP = setFamily, c.SigmaP
	}
	return f
}

// Summary is a plain-text report of the grid and the choice.
func (r *MarginalResult) Summary() string {
	var b strings.Builder
	fmt.Fprintf(&b, "marginal transfer: held-out accuracy by domain cross-validation (%d sets in %d folds; whole sets held out)\n", r.Sets, r.Folds)
	fmt.Fprintf(&b, "  scales: median ‖Ψ(P)−Ψ(P′)‖ = %.4g (the set family's bandwidth), median within-set point distance = %.4g (normalised units)\n", r.MedianPsi, r.MedianX)
	fmt.Fprintf(&b, "  %-10s %-8s %-8s %6s %8s %9s %6s\n", "sigma_p", "sigma_x", "psi_bw", "D", "lambda", "accuracy", "SE")
	line := func(c MarginalCandidate) {
		sp, pb := "pooling", "-"
		if !c.Pooling {
			sp, pb = fmt.Sprintf("%.4g", c.SigmaP), fmt.Sprintf("%.4g", c.PsiBandwidth)
		}
		mark := ""
		if sameCandidate(c, r.Chosen) {
			mark = "  ← proposed"
		}
		fmt.Fprintf(&b, "  %-10s %-8.4g %-8s %6d %8.0e %9.3f %6.3f%s\n", sp, c.SigmaX, pb, c.Features, c.Lambda, c.Accuracy, c.SE, mark)
	}
	for _, c := range r.Grid {
		line(c)
	}
	if len(r.PsiGrid) > 0 {
		fmt.Fprintf(&b, "  other Ψ bandwidths (the best %d of %d candidates):\n", min(8, len(r.PsiGrid)), len(r.PsiGrid))
		top := slices.Clone(r.PsiGrid)
		slices.SortStableFunc(top, func(a, b MarginalCandidate) int { return cmpFloat(b.Accuracy, a.Accuracy) })
		for _, c := range top[:min(8, len(top))] {
			line(c)
		}
	}
	fmt.Fprintf(&b, "  choice: %s\n", r.Rule)
	if r.SetFamilySpec != nil {
		fmt.Fprintf(&b, "  Ψ: an mmd family %q at bandwidth %g, appended to the spec as the set_family (the spec's own mmd bandwidth was chosen without the labels)\n", r.SetFamilySpec.Name, r.SetFamilySpec.Bandwidth)
	}
	fmt.Fprintf(&b, "  ridge penalty: λ = %g × the mean diagonal of the training Gram matrix (per-set ZᵀZ/n summed over sets), chosen by folds of whole sets; fit the classifier with it (leave-one-point-out choices overfit the training domains)\n", r.Lambda)
	fmt.Fprintf(&b, "  expected accuracy on unseen sets: %.3f ± %.3f (cross-validated %.3f less %.3f, the optimism of taking the best of %d candidates; Tibshirani & Tibshirani 2009)\n",
		r.Promised, r.PromisedSE, r.Chosen.Accuracy, r.Optimism, len(r.Grid)+len(r.PsiGrid))
	return b.String()
}

func sameCandidate(a, b MarginalCandidate) bool {
	return a.Pooling == b.Pooling && a.SigmaP == b.SigmaP && a.SigmaX == b.SigmaX && a.Features == b.Features && a.PsiBandwidth == b.PsiBandwidth
}

// mtEval scores candidates by domain cross-validation.
type mtEval struct {
	psis    []mtPsi
	sets    []mtSet
	classes int
	folds   int
	lambdas []float64
	name    string
}

// run fills in Accuracy, SE, Lambda and perSet of every candidate, up to workers at a time.
func (ev *mtEval) run(ctx context.Context, cands []MarginalCandidate, workers int) error {
	var wg sync.WaitGroup
	errs := make([]error, len(cands))
	sem := make(chan struct{}, max(1, workers))
	for i := range cands {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			if ctx.Err() != nil {
				errs[i] = ctx.Err()
				return
			}
			errs[i] = ev.score(&cands[i])
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

// score cross-validates one candidate: per set, the weighted Gram Z_iᵀZ_i/n_i and Z_iᵀY_i/n_i
// (each set counts equally, as in the paper's loss); per fold, the ridge solution on the
// other folds' sums for each λ, scored on the fold's sets.
func (ev *mtEval) score(c *MarginalCandidate) error {
	psi := ev.psis[max(c.psi, 0)]
	ps := marginalFamily(ev.name, psi.family.Name, *c)
	m, err := embedding.NewPointMap(psi.emb, ps)
	if err != nil {
		return err
	}
	sums := ev.normalSums(m, max(c.psi, 0), c.Features)
	accs, err := ev.heldOutAccuracies(sums)
	if err != nil {
		return err
	}
	best := -1.0
	c.perLambda = accs
	for l, a := range accs {
		mean, se := stats.MeanSE(a)
		if mean > best { // NaN (a failed factorisation) never wins
			best = mean
			c.Accuracy, c.SE, c.Lambda, c.perSet = mean, se, ev.lambdas[l], a
		}
	}
	if best < 0 {
		return fmt.Errorf("calibrate: no ridge penalty gave a solvable system for %+v", ps)
	}
	return nil
}

// mtNormalSums are the terms of the ridge normal equations: per set its features Z_i, per
// fold the sums of Z_iᵀZ_i/n_i (g) and Z_iᵀY_i/n_i (b) over its sets, and those sums over
// all sets.
type mtNormalSums struct {
	z            []*mat.Dense    // [set] n_i×D features
	gFold        []*mat.SymDense // [fold] D×D
	bFold        []*mat.Dense    // [fold] D×classes
	gAll         *mat.SymDense
	bAll         *mat.Dense
	features, nc int
}

// normalSums computes the per-point features of every set with m (D of them) and sums
// their normal-equation terms by fold.
func (ev *mtEval) normalSums(m *embedding.PointMap, psi, D int) mtNormalSums {
	C, d := ev.classes, ev.psis[0].emb.Dim()
	ns := mtNormalSums{
		z:     make([]*mat.Dense, len(ev.sets)),
		gFold: make([]*mat.SymDense, ev.folds),
		bFold: make([]*mat.Dense, ev.folds),
		gAll:  mat.NewSymDense(D, nil), bAll: mat.NewDense(D, C, nil),
		features: D, nc: C,
	}
	for f := range ns.gFold {
		ns.gFold[f], ns.bFold[f] = mat.NewSymDense(D, nil), mat.NewDense(D, C, nil)
	}
	for i, s := range ev.sets {
		n := len(s.y)
		feats := make([]float32, n*D)
		m.Points(m.SetPart(s.windows[psi], nil), s.u[:n*d], feats)
		z := mat.NewDense(n, D, nil)
		raw := z.RawMatrix().Data
		for j, v := range feats {
			raw[j] = float64(v)
		}
		y := mat.NewDense(n, C, nil)
		for j, cl := range s.y {
			y.Set(j, cl, 1)
		}
		w := 1 / float64(n)
		g := mat.NewSymDense(D, nil)
		g.SymOuterK(w, z.T())
		b := mat.NewDense(D, C, nil)
		b.Mul(z.T(), y)
		b.Scale(w, b)
		ns.z[i] = z
		ns.gFold[s.fold].AddSym(ns.gFold[s.fold], g)
		ns.bFold[s.fold].Add(ns.bFold[s.fold], b)
		ns.gAll.AddSym(ns.gAll, g)
		ns.bAll.Add(ns.bAll, b)
	}
	return ns
}

// trainGram sets gTrain to the Gram sum over the sets outside fold f plus the ridge
// penalty lam times its mean diagonal.
func (ns mtNormalSums) trainGram(gTrain *mat.SymDense, f int, lam float64) {
	D := ns.features
	trace := 0.0
	for j := 0; j < D; j++ {
		trace += ns.gAll.At(j, j) - ns.gFold[f].At(j, j)
	}
	for a := 0; a < D; a++ {
		for b := a; b < D; b++ {
			v := ns.gAll.At(a, b) - ns.gFold[f].At(a, b)
			if a == b {
				v += lam * trace / float64(D)
			}
			gTrain.SetSym(a, b, v)
		}
	}
}

// heldOutAccuracies is, per ridge penalty and set, the accuracy on the set's points of the
// ridge classifier fitted on the other folds (NaN where the system was not solvable).
func (ev *mtEval) heldOutAccuracies(ns mtNormalSums) ([][]float64, error) {
	D, C := ns.features, ns.nc
	accs := make([][]float64, len(ev.lambdas)) // [λ][set]
	for l := range accs {
		accs[l] = make([]float64, len(ev.sets))
	}
	gTrain, bTrain := mat.NewSymDense(D, nil), mat.NewDense(D, C, nil)
	var chol mat.Cholesky
	wts := mat.NewDense(D, C, nil)
	for f := 0; f < ev.folds; f++ {
		bTrain.Sub(ns.bAll, ns.bFold[f])
		for l, lam := range ev.lambdas {
			ns.trainGram(gTrain, f, lam)
			if ok := chol.Factorize(gTrain); !ok {
				for i := range ev.sets {
					if ev.sets[i].fold == f {
						accs[l][i] = math.NaN()
					}
				}
				continue
			}
			if err := chol.SolveTo(wts, bTrain); err != nil {
				return nil, err
			}
			for i, s := range ev.sets {
				if s.fold == f {
					accs[l][i] = classifierAccuracy(ns.z[i], wts, s.y)
				}
			}
		}
	}
	return accs, nil
}

// classifierAccuracy is the fraction of the rows of z whose largest score z·wts is at
// their class y.
func classifierAccuracy(z, wts *mat.Dense, y []int) float64 {
	var pred mat.Dense
	pred.Mul(z, wts)
	right := 0
	for j, cl := range y {
		if mtArgmax(pred.RawRowView(j)) == cl {
			right++
		}
	}
	return float64(right) / float64(len(y))
}

func mtArgmax(v []float64) int {
	k := 0
	for i, x := range v {
		if x > v[k] {
			k = i
		}
	}
	return k
}

// mtPairedGain is the mean of a−b over sets and its standard error.
func mtPairedGain(a, b []float64) (gain, se float64) {
	diff := make([]float64, len(a))
	for i := range a {
		diff[i] = a[i] - b[i]
	}
	return stats.MeanSE(diff)
}

func mtMedian(x []float64) float64 {
	if len(x) == 0 {
		return 0
	}
	s := slices.Clone(x)
	sort.Float64s(s)
	return s[len(s)/2]
}

// mtRound rounds to 3 significant digits (spec values a user reads), to the float64
// nearest the printed decimal (0.952, not 0.9520000000000001).
func mtRound(v float64) float64 { return round3(v) }
