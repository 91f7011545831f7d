package calibrate

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/distfeat/distfeat/embedding"
	"github.com/distfeat/distfeat/spec"
)

// Labelled calibration (--label FIELD): when the sets carry at least two distinct labels,
// the settings that decide what a downstream model can learn — the mmd bandwidth, its RBF
// second stage, the hdd KDE bandwidth, and every feature count — are chosen by the
// cross-validated accuracy of a linear model on the features (ridge.go), measured on up to
// Options.MaxLabelled labelled sets, instead of by an unlabelled criterion alone.

// DefaultMaxLabelled bounds the labelled sets the accuracy is measured on (sub-sampled,
// seeded).
const DefaultMaxLabelled = 400

// labelFeatureCounts are the feature counts tried with labels.
var labelFeatureCounts = []int{512, 1024, 2048, 4096}

// accTolerance is the accuracy a smaller feature count may give up (about one standard
// error of an accuracy near 0.9 over 400 sets is 0.015; a third of it).
const accTolerance = 0.005

// Trial is one alternative tried for a family and its measured or estimated score.
type Trial struct {
	Family  string
	Setting string  // e.g. "bandwidth 0.1, rbf stage, D 1024"
	Score   float64 // cross-validated accuracy (labels) or estimated R² / criterion
	What    string  // what Score is
	Chosen  bool
}

// labelled is the labelled subset: raw points, labels.
type labelled struct {
	raw    [][]float64
	labels []string
}

// newLabelled picks up to MaxLabelled sets that carry labels (stream "calibrate/labelled");
// nil unless there are at least two distinct labels.
func newLabelled(sets []Set, seed uint64, maxSets int) *labelled {
	var with []Set
	for _, s := range sets {
		if s.Label != "" {
			with = append(with, s)
		}
	}
	distinct := map[string]bool{}
	for _, s := range with {
		distinct[s.Label] = true
	}
	if len(distinct) < 2 || len(with) < 2*cvFolds {
		return nil
	}
	l := &labelled{}
	for _, i := range choose(embedding.NewRNG(seed, "calibrate/labelled"), len(with), maxSets) {
		l.raw = append(l.raw, with[i].Points)
		l.labels = append(l.labels, with[i].Label)
	}
	return l
}

// accuracy embeds the labelled sets with the one-family spec f and returns the
// cross-validated accuracy of ridge on column col, and the vectors.
func (c *calibration) accuracy(f spec.Family, col string) (float64, [][]float32, error) {
	emb, err := c.oneFamilyEmbedder(f)
	if err != nil {
		return 0, nil, fmt.Errorf("calibrate: family %s: %w", f.Name, err)
	}
	idx := columnIndex(emb, col)
	z := make([][]float32, len(c.lab.raw))
	errs := make([]error, len(z))
	parallelFor(len(z), c.opts.Workers, func(k int) {
		u := make([]float64, len(c.lab.raw[k]))
		if _, err := emb.Normalize(u, c.lab.raw[k]); err != nil {
			errs[k] = err
			return
		}
		z[k] = emb.Embed(u)[idx]
	})
	for _, err := range errs {
		if err != nil {
			return 0, nil, fmt.Errorf("calibrate: labelled set: %w", err)
		}
	}
	return cvAccuracy(z, c.lab.labels, c.spec.Seed), z, nil
}

func (c *calibration) trial(f spec.Family, setting string, acc float64) {
	c.res.Trials = append(c.res.Trials, Trial{Family: f.Name, Setting: setting, Score: acc, What: "cross-validated accuracy"})
}

func (c *calibration) chooseTrial(name, setting string) {
	for k := range c.res.Trials {
		t := &c.res.Trials[k]
		if t.Family == name && t.Setting == setting {
			t.Chosen = true
		}
	}
}

// mmdSetting describes an mmd family's tuned fields.
func mmdSetting(f spec.Family) string {
	s := fmt.Sprintf("bandwidth %g, D %d", f.Bandwidth, f.Features)
	if f.RBFSigma > 0 {
		return s + fmt.Sprintf(", rbf_sigma %g, rbf_features %d", f.RBFSigma, f.RBFFeatures)
	}
	return s + ", no second stage"
}

// mmdLabelled chooses family i's bandwidth (from hs), second stage and feature counts by
// cross-validated accuracy.
func (c *calibration) mmdLabelled(i int, hs []float64) error {
	f := &c.spec.Families[i]
	best, bestAcc := *f, -1.0
	try := func(fam spec.Family) (float64, [][]float32, error) {
		acc, z, err := c.accuracy(fam, fam.Name)
		if err == nil {
			c.trial(fam, mmdSetting(fam), acc)
		}
		return acc, z, err
	}
	for _, h := range hs {
		fam := *f
		fam.Bandwidth, fam.Features, fam.RBFSigma, fam.RBFFeatures = h, 1024, 0, 0
		acc, z, err := try(fam)
		if err != nil {
			return err
		}
		if acc > bestAcc {
			best, bestAcc = fam, acc
		}
		// Second stage: its width the median distance between the sets' mean embeddings
		// (≈ MMD), its features 1024.
		sigma := round3(median(sqrtAll(coefRho2(z))))
		if !(sigma > 0) {
			continue
		}
		fam.RBFSigma, fam.RBFFeatures = sigma, 1024
		if acc, _, err = try(fam); err != nil {
			return err
		}
		if acc > bestAcc {
			best, bestAcc = fam, acc
		}
	}
	// Feature counts: the smallest within accTolerance of the best.
	counts := func(set func(*spec.Family, int)) error {
		accs := make([]float64, len(labelFeatureCounts))
		top := -1.0
		for k, d := range labelFeatureCounts {
			fam := best
			set(&fam, d)
			acc, _, err := try(fam)
			if err != nil {
				return err
			}
			accs[k], top = acc, math.Max(top, acc)
		}
		for k, d := range labelFeatureCounts {
			if accs[k] >= top-accTolerance {
				set(&best, d)
				bestAcc = accs[k]
				break
			}
		}
		return nil
	}
	if err := counts(func(f *spec.Family, d int) { f.Features = d }); err != nil {
		return err
	}
	if best.RBFSigma > 0 {
		if err := counts(func(f *spec.Family, d int) { f.RBFFeatures = d }); err != nil {
			return err
		}
	}
	*f = best
	c.chooseTrial(f.Name, mmdSetting(*f))
	why := fmt.Sprintf("largest %d-fold cross-validated accuracy of ridge on the features of %d labelled sets (%.3f); the trials are listed", cvFolds, len(c.lab.raw), bestAcc)
	c.note(i, "bandwidth", strconv.FormatFloat(f.Bandwidth, 'g', -1, 64), why+" (candidates: the unlabelled grid, each with and without the RBF second stage)")
	c.note(i, "features", strconv.Itoa(f.Features), fmt.Sprintf("smallest of %v within %g of the best cross-validated accuracy", labelFeatureCounts, accTolerance))
	if f.RBFSigma > 0 {
		c.note(i, "rbf_sigma", strconv.FormatFloat(f.RBFSigma, 'g', -1, 64), "median distance between the labelled sets' mean embeddings (≈ MMD); the second stage raised the cross-validated accuracy")
		c.note(i, "rbf_features", strconv.Itoa(f.RBFFeatures), fmt.Sprintf("smallest of %v within %g of the best cross-validated accuracy", labelFeatureCounts, accTolerance))
	}
	return nil
}

// hddLabelled re-chooses family i's kde_bandwidth among hs (grid and basis kept valid)
// and its feature count by cross-validated accuracy.
func (c *calibration) hddLabelled(i int, hs []float64, capG int) error {
	f := &c.spec.Families[i]
	bestAcc, bestH := -1.0, f.KDEBandwidth
	// The R² candidates, and two coarser ones: classification can prefer more smoothing
	// than the kernel's accuracy does.
	if len(hs) > 0 {
		top := slices.Max(hs)
		hs = append(slices.Clone(hs), round3(top*math.Pow(2, 0.25)), round3(top*math.Pow(2, 0.5)))
	}
	for _, h := range hs {
		fam := *f
		fam.KDEBandwidth = h
		fam.Grid = max(fam.Grid, min(capG, (int(math.Ceil(cellsPerBandwidth/h))+7)/8*8))
		fam.Features = 1024
		acc, _, err := c.accuracy(fam, fam.Name)
		if err != nil {
			return err
		}
		c.trial(fam, fmt.Sprintf("kde_bandwidth %g, D %d", h, fam.Features), acc)
		if acc > bestAcc {
			bestAcc, bestH = acc, h
		}
	}
	f.Grid = max(f.Grid, min(capG, (int(math.Ceil(cellsPerBandwidth/bestH))+7)/8*8))
	f.KDEBandwidth = bestH
	chosenSetting := fmt.Sprintf("kde_bandwidth %g, D 1024", bestH)
	top, accs := -1.0, map[int]float64{}
	for _, d := range labelFeatureCounts {
		if d == 1024 { // measured with the bandwidths
			accs[d], top = bestAcc, math.Max(top, bestAcc)
			continue
		}
		fam := *f
		fam.Features = d
		acc, _, err := c.accuracy(fam, fam.Name)
		if err != nil {
			return err
		}
		c.trial(fam, fmt.Sprintf("kde_bandwidth %g, D %d", bestH, d), acc)
		accs[d] = acc
		top = math.Max(top, acc)
	}
	for _, d := range labelFeatureCounts {
		if accs[d] >= top-accTolerance {
			// Keep the larger of this and the R² choice: D must also serve the Gram R².
			f.Features = max(f.Features, d)
			chosenSetting = fmt.Sprintf("kde_bandwidth %g, D %d", bestH, d)
			break
		}
	}
	c.chooseTrial(f.Name, chosenSetting)
	c.amendNote(i, "kde_bandwidth", strconv.FormatFloat(f.KDEBandwidth, 'g', -1, 64), fmt.Sprintf("largest %d-fold cross-validated accuracy of ridge on the features of %d labelled sets among the unlabelled candidates and two coarser ones (%.3f)", cvFolds, len(c.lab.raw), bestAcc))
	c.amendNote(i, "features", strconv.Itoa(f.Features), fmt.Sprintf("the larger of the R² rule's D and the smallest of %v within %g of the best cross-validated accuracy", labelFeatureCounts, accTolerance))
	return nil
}

// labelSummary is a one-line description of the labelled data.
func (l *labelled) summary() string {
	count := map[string]int{}
	for _, s := range l.labels {
		count[s]++
	}
	keys := slices.Sorted(func(yield func(string) bool) {
		for k := range count {
			if !yield(k) {
				return
			}
		}
	})
	var parts []string
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%s: %d", k, count[k]))
	}
	return strings.Join(parts, ", ")
}
