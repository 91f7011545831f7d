package offline

import (
	"context"
	"fmt"
	"runtime"
	"slices"
	"strings"

	"github.com/distfeat/distfeat/embedding"
	"github.com/distfeat/distfeat/model"
	"github.com/distfeat/distfeat/processor"
	"github.com/distfeat/distfeat/spec"
	"github.com/distfeat/distfeat/window"
)

// ModelColumns are the embedder's columns in the model file's terms.
func ModelColumns(all []spec.Column) []model.Column {
	cols := make([]model.Column, len(all))
	for i, c := range all {
		cols[i] = model.Column{Name: c.Name, Len: c.Len}
	}
	return cols
}

// Fit embeds labelled sets (ReadSets with a Label) with embed's finalisation
// (processor.Finalize, LinesBatch sets at a time) and fits the model on the columns cols of
// emb's (`distfeat fit`). Every set needs points and a label (field label); onProgress, if
// not nil, hears the number of sets embedded.
func Fit(ctx context.Context, emb *embedding.Embedder, cols []model.Column, sets []FileSet, label string, o model.Options, onProgress func(sets int)) (*model.Model, error) {
	labels := make([]string, len(sets))
	all := ModelColumns(emb.Columns())
	stub := &model.Model{Columns: cols}
	rows := make([][]float32, 0, len(sets))
	for at := 0; at < len(sets); at += LinesBatch {
		// one batch of sketches at a time, finalised together as embed does
		batch := sets[at:min(at+LinesBatch, len(sets))]
		closed := make([]window.Closed[*embedding.Sketch], len(batch))
		for k, s := range batch {
			if s.Label == "" {
				return nil, fmt.Errorf("set %q has no field %q", s.Set, label)
			}
			if len(s.Points) == 0 {
				return nil, fmt.Errorf("set %q: %w", s.Set, ErrNoPoints)
			}
			labels[at+k] = s.Label
			c, err := sketchSet(emb, s.Set, s.Points)
			if err != nil {
				return nil, fmt.Errorf("set %q: %w", s.Set, err)
			}
			closed[k] = c
		}
		for _, rec := range processor.Finalize(emb.Spec().ID(), closed, runtime.GOMAXPROCS(0), nil) {
			row, err := stub.Row(nil, all, rec.Vectors)
			if err != nil {
				return nil, err
			}
			rows = append(rows, row)
		}
		if onProgress != nil {
			onProgress(len(rows))
		}
		if err := ctx.Err(); err != nil {
			return nil, err
		}
	}
	m, err := model.Fit(rows, labels, o)
	if err != nil {
		return nil, err
	}
	m.SpecID, m.Columns, m.Label = emb.Spec().ID(), cols, label
	for _, c := range emb.Columns() {
		if slices.ContainsFunc(cols, func(mc model.Column) bool { return mc.Name == c.Name }) && !slices.Contains(m.Families, c.Family) {
			m.Families = append(m.Families, c.Family)
		}
	}
	return m, nil
}

// sketchSet normalises a set's raw points and sketches them as one closed window, as the
// worker's window of the whole set.
func sketchSet(emb *embedding.Embedder, set string, x []float64) (window.Closed[*embedding.Sketch], error) {
	u := make([]float64, len(x))
	if _, err := emb.Normalize(u, x); err != nil {
		return window.Closed[*embedding.Sketch]{}, err
	}
	sk := emb.NewSketch()
	sk.Add(u)
	return window.Closed[*embedding.Sketch]{Set: set, N: sk.Count(), Sketch: sk}, nil
}

// FitPoints embeds sets with per-point labels (ReadSets with a PointLabel) as embed
// --points does — each set's window record by embed's finalisation, then every point's
// marginal-transfer features against it — and fits a per-point model (model.FitPoints) on
// the per-point columns cols (PointColumns' names; `distfeat fit --point-label`). Every set
// needs points and a label per point (field label); onProgress, if not nil, hears the number
// of sets embedded.
func FitPoints(ctx context.Context, emb *embedding.Embedder, cols []model.Column, sets []FileSet, label string, o model.Options, onProgress func(sets int)) (*model.Model, error) {
	var maps []*embedding.PointMap
	for _, c := range cols {
		i := slices.IndexFunc(emb.PointMaps(), func(m *embedding.PointMap) bool { return m.Name() == c.Name })
		if i < 0 {
			return nil, fmt.Errorf("the spec has no marginal_transfer family %q", c.Name)
		}
		maps = append(maps, emb.PointMaps()[i])
	}
	if len(maps) == 0 {
		return nil, fmt.Errorf("no marginal_transfer family to fit on (docs/marginal-transfer.md)")
	}
	var rows [][]float32
	var setOf []int
	var labels []string
	d, workers := emb.Dim(), runtime.GOMAXPROCS(0)
	for at := 0; at < len(sets); at += LinesBatch {
		batch := sets[at:min(at+LinesBatch, len(sets))]
		closed := make([]window.Closed[*embedding.Sketch], len(batch))
		us := make([][]float64, len(batch))
		for k, s := range batch {
			if len(s.Points) == 0 {
				return nil, fmt.Errorf("set %q: %w", s.Set, ErrNoPoints)
			}
			if s.PointLabels == nil {
				return nil, fmt.Errorf("set %q has no field %q (an array of per-point labels)", s.Set, label)
			}
			c, err := sketchSet(emb, s.Set, s.Points)
			if err != nil {
				return nil, fmt.Errorf("set %q: %w", s.Set, err)
			}
			closed[k] = c
			us[k] = make([]float64, len(s.Points))
			if _, err := emb.Normalize(us[k], s.Points); err != nil {
				return nil, fmt.Errorf("set %q: %w", s.Set, err)
			}
		}
		for k, rec := range processor.Finalize(emb.Spec().ID(), closed, workers, nil) {
			n := len(us[k]) / d
			width := 0
			feats := make([][]float32, len(maps))
			for i, m := range maps {
				feats[i] = make([]float32, n*m.Len())
				m.PointsParallel(m.SetPart(rec.Vectors, nil), us[k], feats[i], workers)
				width += m.Len()
			}
			block := make([]float32, n*width)
			for j := 0; j < n; j++ {
				row := block[j*width : (j+1)*width : (j+1)*width]
				o := row
				for i, m := range maps {
					o = o[copy(o, feats[i][j*m.Len():(j+1)*m.Len()]):]
				}
				rows, setOf, labels = append(rows, row), append(setOf, at+k), append(labels, batch[k].PointLabels[j])
			}
		}
		if onProgress != nil {
			onProgress(at + len(batch))
		}
		if err := ctx.Err(); err != nil {
			return nil, err
		}
	}
	m, err := model.FitPoints(rows, setOf, labels, o)
	if err != nil {
		return nil, err
	}
	m.SpecID, m.Columns, m.Label = emb.Spec().ID(), cols, label
	for _, mp := range maps {
		m.Families = append(m.Families, mp.Name())
	}
	return m, nil
}

// FitColumns are the columns a model is fitted on: the embedder's columns of the
// comma-separated families (all for ""), in the spec's order, or with perPoint its per-point
// (marginal_transfer) columns, in the order named. The errors name the family or the missing
// kind.
func FitColumns(emb *embedding.Embedder, families string, perPoint bool) ([]model.Column, error) {
	var want []string
	if families != "" {
		want = strings.Split(families, ",")
	}
	if perPoint {
		all := PointColumns(emb)
		if len(all) == 0 {
			return nil, fmt.Errorf("--point-label: the spec has no marginal_transfer family (docs/marginal-transfer.md; distfeat calibrate --point-label proposes one)")
		}
		if want == nil {
			return all, nil
		}
		var cols []model.Column
		for _, f := range want {
			i := slices.IndexFunc(all, func(c model.Column) bool { return c.Name == f })
			if i < 0 {
				return nil, fmt.Errorf("--families: the spec has no marginal_transfer family %q (--point-label fits on per-point features)", f)
			}
			cols = append(cols, all[i])
		}
		return cols, nil
	}
	all := emb.Columns()
	for _, f := range want {
		if !slices.ContainsFunc(all, func(c spec.Column) bool { return c.Family == f }) {
			return nil, fmt.Errorf("--families: the spec has no family %q", f)
		}
	}
	var cols []model.Column
	for _, c := range all {
		if want == nil || slices.Contains(want, c.Family) {
			cols = append(cols, model.Column{Name: c.Name, Len: c.Len})
		}
	}
	return cols, nil
}

// FitSummary is fit's one-line report of a model: kind, model_version, sets, width, λ, the
// cross-validated metric and, for a per-set regression, the held-out RMSE against the
// constant predictor.
func FitSummary(m *model.Model) string {
	per := ""
	if m.PredictsPoints() {
		per = " per-point"
	}
	s := fmt.Sprintf("%s %s model %s on %d sets, width %d, λ=%.4g, cross-validated %s %.4g", per, m.Kind, m.ModelVersion, m.NSets, m.Width, m.Lambda, m.CV.Metric, m.CV.Scores[slices.Index(m.CV.Lambdas, m.Lambda)])
	switch {
	case m.PredictsPoints() && m.Kind == model.Classification:
		s += " (mean over held-out sets of each set's accuracy on its points)"
	case m.PredictsPoints():
		s += " (every held-out set weighing the same; no intervals per point)"
	case m.Kind == model.Regression:
		s += fmt.Sprintf("; held-out RMSE %.4g (constant predictor %.4g) on %d sets", m.Holdout.RMSE, m.Holdout.RMSEMean, m.Holdout.N)
	}
	return s
}
