package offline

import (
	"fmt"

	"github.com/distfeat/distfeat/embedding"
	"github.com/distfeat/distfeat/model"
)

// PointWidth is the length of a point's concatenated per-point feature vector: the sum of
// the spec's marginal_transfer families' D, in spec order.
func PointWidth(emb *embedding.Embedder) int {
	d := 0
	for _, m := range emb.PointMaps() {
		d += m.Len()
	}
	return d
}

// Points writes the per-point (marginal-transfer) features of every point of every set into
// out: point j of set i (global row offsets[i]+j) gets PointWidth values, the spec's
// marginal_transfer families concatenated in spec order, each against the set's own window
// features — the rows `distfeat embed --points` and the worker's per-point topic carry.
// windows holds the sets' window features as Embed wrote them (sets.Len() × Width values).
func Points(emb *embedding.Embedder, sets Sets, windows, out []float32, workers int) error {
	maps := emb.PointMaps()
	if len(maps) == 0 {
		return fmt.Errorf("the spec has no marginal_transfer family")
	}
	if err := sets.Check(emb.Dim()); err != nil {
		return err
	}
	w, pw := Width(emb), PointWidth(emb)
	if len(windows) != sets.Len()*w {
		return fmt.Errorf("window features hold %d values, want %d sets × %d", len(windows), sets.Len(), w)
	}
	total := int(sets.Offsets[sets.Len()])
	if len(out) != total*pw {
		return fmt.Errorf("output buffer holds %d values, want %d points × %d", len(out), total, pw)
	}
	cols := emb.Columns()
	vecs := make([][]float32, len(cols))
	a := make([][]float64, len(maps))
	feats := make([][]float32, len(maps))
	for i := 0; i < sets.Len(); i++ {
		x := sets.Set(i)
		if len(x) == 0 {
			return &SetError{Index: i, Err: ErrNoPoints}
		}
		u := make([]float64, len(x))
		if _, err := emb.Normalize(u, x); err != nil {
			return &SetError{Index: i, Err: err}
		}
		row := windows[i*w : (i+1)*w]
		for c, col := range cols {
			vecs[c], row = row[:col.Len], row[col.Len:]
		}
		n := len(x) / sets.Dim
		for k, m := range maps {
			a[k] = m.SetPart(vecs, a[k])
			if cap(feats[k]) < n*m.Len() {
				feats[k] = make([]float32, n*m.Len())
			}
			feats[k] = feats[k][:n*m.Len()]
			m.PointsParallel(a[k], u, feats[k], workers)
		}
		base := out[int(sets.Offsets[i])*pw:]
		for j := 0; j < n; j++ {
			o := base[j*pw : (j+1)*pw]
			for k, m := range maps {
				o = o[copy(o, feats[k][j*m.Len():(j+1)*m.Len()]):]
			}
		}
	}
	return nil
}

// PointColumns are the embedder's per-point columns in the model file's terms: one per
// marginal_transfer family, in spec order (the columns of PointSink's and the worker's
// per-point records).
func PointColumns(emb *embedding.Embedder) []model.Column {
	var cols []model.Column
	for _, m := range emb.PointMaps() {
		cols = append(cols, model.Column{Name: m.Name(), Len: m.Len()})
	}
	return cols
}
