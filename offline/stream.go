package offline

import (
	"fmt"

	"github.com/distfeat/distfeat/embedding"
	"github.com/distfeat/distfeat/processor"
	"github.com/distfeat/distfeat/window"
)

// Stream is one set fed in several parts, as a worker's window receives a set's records:
// each Add normalises and sketches its points; Features finalises what was added with the
// worker's path. The features equal Embed's of all the parts' points concatenated, bit for
// bit (fixed-point sketches). Not safe for concurrent use.
type Stream struct {
	emb *embedding.Embedder
	sk  *embedding.Sketch
	buf []float64
}

// NewStream returns an empty stream for emb's spec.
func NewStream(emb *embedding.Embedder) *Stream {
	return &Stream{emb: emb, sk: emb.NewSketch()}
}

// Add sketches raw points (row-major, whole points). A non-finite or (with out_of_bounds
// reject) out-of-bounds point fails the whole part: none of its points is added.
func (s *Stream) Add(x []float64) error {
	d := s.emb.Dim()
	if len(x)%d != 0 {
		return fmt.Errorf("%d values are not whole points of dimension %d", len(x), d)
	}
	if cap(s.buf) < len(x) {
		s.buf = make([]float64, len(x))
	}
	u := s.buf[:len(x)]
	if _, err := s.emb.Normalize(u, x); err != nil {
		return err
	}
	s.sk.Add(u)
	return nil
}

// Count is the number of points added.
func (s *Stream) Count() int64 { return s.sk.Count() }

// Features writes the features of the points added so far into out (Width values); the
// stream is unchanged and may take more points.
func (s *Stream) Features(out []float32, workers int) error {
	if s.sk.Count() == 0 {
		return ErrNoPoints
	}
	if w := Width(s.emb); len(out) != w {
		return fmt.Errorf("output buffer holds %d values, want %d", len(out), w)
	}
	recs := processor.Finalize(s.emb.Spec().ID(), []window.Closed[*embedding.Sketch]{{N: s.sk.Count(), Sketch: s.sk}}, max(workers, 1), nil)
	for _, v := range recs[0].Vectors {
		out = out[copy(out, v):]
	}
	return nil
}
