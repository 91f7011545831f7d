package calibrate

import (
	"context"
	"errors"
	"fmt"
	"math"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"

	"gonum.org/v1/gonum/mat"

	"github.com/distfeat/distfeat/embedding"
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
	Lambda   float64 // the best relative ridge penalty for these σ's
	// Accuracy is the mean over sets of the held-out accuracy on the set's points (each set
	// is held out once); SE its standard error over sets.
	Accuracy, SE float64
	perSet       []float64
}

// MarginalResult is MarginalTransfer's proposal with the whole grid.
type MarginalResult struct {
	// Family is the proposed marginal_transfer family (name, set_family, sigma_p, sigma_x,
	// features, or pooling), ready to append to the spec's families.
	Family spec.Family
	// Lambda is the ridge penalty (relative) that went with it.
	Lambda float64
	// Chosen is the proposed candidate; BestPooling and BestMarginal the best of each kind.
	Chosen, BestPooling, BestMarginal MarginalCandidate
	// Grid holds every (σ_P or pooling, σ_X) candidate at the grid's D, then, from
	// Grid[SweepStart], the D sweep at the chosen σ's (the other D candidates).
	Grid       []MarginalCandidate
	SweepStart int
	// Rule explains the choice.
	Rule string
	// MedianPsi and MedianX are the scales the default grids are built on.
	MedianPsi, MedianX float64
	Sets, Folds        int
}

// Defaults of MarginalOptions (arrays: no package-level mutable state).
var (
	defaultMTFeatures = [...]int{256, 512, 1024}
	defaultMTLambdas  = [...]float64{1e-4, 1e-3, 1e-2, 1e-1, 1}
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
	window [][]float32 // the window's features (Ψ is one column)
	u      []float64   // sub-sampled normalised points
	y      []int       // their class indices
	fold   int
}

// MarginalTransfer proposes σ_P, σ_X and D of a marginal-transfer per-point map for emb's
// spec by cross-validation over the labelled sets (see the comment at the top of the file).
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
	psiCol := columnIndex(emb, o.SetFamily) // family names are unique in a spec
	if psiCol < 0 {
		return nil, fmt.Errorf("calibrate: set family %q is not in the spec", o.SetFamily)
	}
	prep, within, err := prepareSets(ctx, emb, sets, perm, classes, folds, o.MaxPoints)
	if err != nil {
		return nil, err
	}
	res := &MarginalResult{MedianPsi: mtMedian(psiDistances(prep, psiCol)), MedianX: mtMedian(within), Sets: len(prep), Folds: folds}
	if !(res.MedianX > 0) {
		res.MedianX = 0.1
	}
	if !(res.MedianPsi > 0) {
		res.MedianPsi = 0.1
	}
	sigmaP, sigmaX := o.SigmaP, o.SigmaX
	if len(sigmaP) == 0 {
		sigmaP = mtScaleGrid(res.MedianPsi, -4, 6)
	}
	if len(sigmaX) == 0 {
		sigmaX = mtScaleGrid(res.MedianX, -4, 4)
	}
	ev := &mtEval{emb: emb, sets: prep, classes: nClasses, folds: folds, lambdas: o.Lambdas, name: o.Name, family: o.SetFamily}
	cands, err := ev.searchSigmas(ctx, sigmaP, sigmaX, o)
	if err != nil {
		return nil, err
	}
	res.Grid = append(res.Grid, cands...)
	bestP, bestM := bestOfEachKind(cands)
	res.BestPooling, res.BestMarginal = cands[bestP], cands[bestM]
	chosen := res.choosePoolingOrMarginal()
	sweep, chosen, err := ev.sweepFeatures(ctx, chosen, o)
	if err != nil {
		return nil, err
	}
	res.SweepStart = len(res.Grid)
	res.Grid = append(res.Grid, sweep...)
	res.Chosen, res.Lambda = chosen, chosen.Lambda
	res.Family = marginalFamily(o.Name, o.SetFamily, chosen)
	return res, nil
}

// withDefaults fills in the zero fields of o; the set family must be in emb's spec.
func (o MarginalOptions) withDefaults(emb *embedding.Embedder) (MarginalOptions, error) {
	if o.Name == "" {
		o.Name = "mt"
	}
	if o.SetFamily == "" {
		for _, f := range emb.Spec().Families {
			if f.Kind == "mmd" && f.RBFFeatures == 0 {
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

// prepareSets normalises and embeds the sets in perm order, sub-samples up to maxPoints
// labelled points of each, and returns them with distances between pairs of points of a
// set (up to 32 pairs per set) for the σ_X scale.
func prepareSets(ctx context.Context, emb *embedding.Embedder, sets []LabelledSet, perm []int, classes map[string]int, folds, maxPoints int) ([]mtSet, []float64, error) {
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
		p := mtSet{window: emb.Embed(u), fold: k % folds}
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
// window column psiCol.
func psiDistances(prep []mtSet, psiCol int) []float64 {
	var between []float64
	for a := range prep {
		for b := a + 1; b < len(prep); b++ {
			between = append(between, math.Sqrt(sqDist32(prep[a].window[psiCol], prep[b].window[psiCol])))
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

// searchSigmas scores every (pooling or σ_P, σ_X) candidate at the first D, extending the
// default grids (up to mtMaxExtensions times) by one doubling of σ_X or σ_P when a best
// candidate sits at its largest value: the grids come from medians, and data whose boundary
// is smooth (or whose marginal matters little) want larger σ's. User-given grids are not
// extended. The candidates are returned sorted by σ_X, then σ_P (pooling first).
func (ev *mtEval) searchSigmas(ctx context.Context, sigmaP, sigmaX []float64, o MarginalOptions) ([]MarginalCandidate, error) {
	var cands []MarginalCandidate
	done := map[[2]float64]bool{}
	for round := 0; ; round++ {
		var fresh []MarginalCandidate
		for _, sx := range sigmaX {
			for _, sp := range append([]float64{0}, sigmaP...) {
				if done[[2]float64{sp, sx}] {
					continue
				}
				done[[2]float64{sp, sx}] = true
				fresh = append(fresh, MarginalCandidate{Pooling: sp == 0, SigmaP: sp, SigmaX: sx, Features: o.Features[0]})
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
		lastX, lastP := sigmaX[len(sigmaX)-1], sigmaP[len(sigmaP)-1]
		extended := false
		if cands[bestP].SigmaX == lastX || cands[bestM].SigmaX == lastX {
			sigmaX, extended = append(sigmaX, mtRound(2*lastX)), true
		}
		if cands[bestM].SigmaP == lastP {
			sigmaP, extended = append(sigmaP, mtRound(2*lastP)), true
		}
		if !extended {
			break
		}
	}
	slices.SortStableFunc(cands, func(a, b MarginalCandidate) int {
		if a.SigmaX != b.SigmaX {
			return cmpFloat(a.SigmaX, b.SigmaX)
		}
		return cmpFloat(a.SigmaP, b.SigmaP) // pooling (0) first
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
	gain, se := mtPairedGain(r.BestMarginal.perSet, r.BestPooling.perSet)
	if gain > se {
		r.Rule = fmt.Sprintf("marginal transfer: held-out accuracy %.3f vs pooling %.3f, a gain of %.3f > its standard error %.3f over %d sets",
			r.BestMarginal.Accuracy, r.BestPooling.Accuracy, gain, se, r.Sets)
		return r.BestMarginal
	}
	r.Rule = fmt.Sprintf("pooling: the best marginal-transfer candidate (%.3f) does not beat pooling (%.3f) by more than the standard error of the difference (gain %.3f, SE %.3f over %d sets)",
		r.BestMarginal.Accuracy, r.BestPooling.Accuracy, gain, se, r.Sets)
	return r.BestPooling
}

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
	fmt.Fprintf(&b, "  scales: median ‖Ψ(P)−Ψ(P′)‖ = %.4g, median within-set point distance = %.4g (normalised units)\n", r.MedianPsi, r.MedianX)
	fmt.Fprintf(&b, "  %-10s %-8s %6s %8s %9s %6s\n", "sigma_p", "sigma_x", "D", "lambda", "accuracy", "SE")
	for _, c := range r.Grid {
		sp := "pooling"
		if !c.Pooling {
			sp = fmt.Sprintf("%.4g", c.SigmaP)
		}
		mark := ""
		if sameCandidate(c, r.Chosen) {
			mark = "  ← proposed"
		}
		fmt.Fprintf(&b, "  %-10s %-8.4g %6d %8.0e %9.3f %6.3f%s\n", sp, c.SigmaX, c.Features, c.Lambda, c.Accuracy, c.SE, mark)
	}
	fmt.Fprintf(&b, "  choice: %s\n", r.Rule)
	return b.String()
}

func sameCandidate(a, b MarginalCandidate) bool {
	return a.Pooling == b.Pooling && a.SigmaP == b.SigmaP && a.SigmaX == b.SigmaX && a.Features == b.Features
}

// mtEval scores candidates by domain cross-validation.
type mtEval struct {
	emb     *embedding.Embedder
	sets    []mtSet
	classes int
	folds   int
	lambdas []float64
	name    string
	family  string
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
	ps := marginalFamily(ev.name, ev.family, *c)
	m, err := embedding.NewPointMap(ev.emb, ps)
	if err != nil {
		return err
	}
	sums := ev.normalSums(m, c.Features)
	accs, err := ev.heldOutAccuracies(sums)
	if err != nil {
		return err
	}
	best := -1.0
	for l, a := range accs {
		mean, se := mtMeanSE(a)
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
func (ev *mtEval) normalSums(m *embedding.PointMap, D int) mtNormalSums {
	C, d := ev.classes, ev.emb.Dim()
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
		m.Points(m.SetPart(s.window, nil), s.u[:n*d], feats)
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

func mtMeanSE(x []float64) (mean, se float64) {
	for _, v := range x {
		mean += v
	}
	mean /= float64(len(x))
	if len(x) < 2 {
		return mean, 0
	}
	ss := 0.0
	for _, v := range x {
		ss += (v - mean) * (v - mean)
	}
	return mean, math.Sqrt(ss / float64(len(x)-1) / float64(len(x)))
}

// mtPairedGain is the mean of a−b over sets and its standard error.
func mtPairedGain(a, b []float64) (gain, se float64) {
	diff := make([]float64, len(a))
	for i := range a {
		diff[i] = a[i] - b[i]
	}
	return mtMeanSE(diff)
}

func mtMedian(x []float64) float64 {
	if len(x) == 0 {
		return 0
	}
	s := slices.Clone(x)
	sort.Float64s(s)
	return s[len(s)/2]
}

// mtRound rounds to 3 significant digits (spec values a user reads).
func mtRound(v float64) float64 {
	if v == 0 {
		return 0
	}
	p := math.Pow(10, math.Floor(math.Log10(math.Abs(v)))-2)
	return math.Round(v/p) * p
}
