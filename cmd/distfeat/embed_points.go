package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"

	"github.com/distfeat/distfeat/embedding"
	"github.com/distfeat/distfeat/schema"
)

// embedPointChunk is the number of points whose per-point features embed computes and
// writes at a time (one Arrow record batch each): 4 MiB of features at D = 1024, whatever
// the size of the set.
const embedPointChunk = 1024

// loadPointSpec reads a marginal-transfer configuration (embedding.PointSpec as JSON:
// name, set_family, sigma_p, sigma_x, features, pooling), strictly: unknown fields and
// trailing data are errors naming the file.
func loadPointSpec(path string) (embedding.PointSpec, error) {
	var ps embedding.PointSpec
	data, err := os.ReadFile(path)
	if err != nil {
		return ps, fmt.Errorf("--point-spec: %w", err)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&ps); err != nil {
		return ps, fmt.Errorf("--point-spec %s: %w", path, err)
	}
	if dec.More() {
		return ps, fmt.Errorf("--point-spec %s: unexpected data after the JSON object", path)
	}
	return ps, nil
}

// pointSink writes the per-point features of each embedded set (`embed --points`): for
// every point of the set, in input order, the marginal-transfer features against the
// set's own window features — the rows the worker publishes on its per-point topic.
type pointSink struct {
	m       *embedding.PointMap
	out     *schema.PointOutput
	arrow   *schema.PointStreamWriter // with --format arrow
	jw      *bufio.Writer             // with --format jsonl
	workers int
	a       []float64
	buf     []float32
}

func newPointSink(w io.Writer, format string, spec *embedding.Spec, m *embedding.PointMap, workers int) (*pointSink, error) {
	ps := m.Spec()
	meta, err := json.Marshal(ps)
	if err != nil {
		return nil, err
	}
	out := schema.NewPointOutput(spec, []embedding.Column{{Name: ps.Name, Family: ps.Name, Len: m.Len()}},
		[2]string{"distfeat.points", string(meta)})
	s := &pointSink{m: m, out: out, workers: workers}
	if format == "arrow" {
		s.arrow = out.NewStreamWriter(w)
	} else {
		s.jw = bufio.NewWriter(w)
	}
	return s, nil
}

// write computes and writes the per-point features of the set whose window record is rec
// and whose normalised points are u.
func (s *pointSink) write(rec schema.FeatureRecord, u []float64, dim int) error {
	s.a = s.m.SetPart(rec.Vectors, s.a)
	n := len(u) / dim
	D := s.m.Len()
	for first := 0; first < n; first += embedPointChunk {
		k := min(embedPointChunk, n-first)
		if cap(s.buf) < k*D {
			s.buf = make([]float32, k*D)
		}
		feats := s.buf[:k*D]
		s.m.PointsParallel(s.a, u[first*dim:(first+k)*dim], feats, s.workers)
		b := schema.PointBatch{Set: rec.Set, Seq: rec.Seq, First: int64(first), N: k, SpecID: rec.SpecID, Vectors: [][]float32{feats}}
		if s.arrow != nil {
			if err := s.arrow.Write(b); err != nil {
				return err
			}
			continue
		}
		for _, line := range s.out.Lines(b) {
			j, err := json.Marshal(line)
			if err != nil {
				return err
			}
			if _, err := s.jw.Write(append(j, '\n')); err != nil {
				return err
			}
		}
	}
	return nil
}

func (s *pointSink) Close() error {
	if s.arrow != nil {
		return s.arrow.Close()
	}
	return s.jw.Flush()
}
