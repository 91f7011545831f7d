package window

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// countSketch only counts, so the benchmarks measure the Manager, not a sketch.
type countSketch struct{ n int64 }

func (s *countSketch) Add(u []float64)            { s.n += int64(len(u)) }
func (s *countSketch) Merge(o *countSketch) error { s.n += o.n; return nil }
func (s *countSketch) Count() int64               { return s.n }
func (s *countSketch) Reset()                     { s.n = 0 }
func (s *countSketch) SizeBytes() int             { return 8 }
func newCountSketch() *countSketch                { return &countSketch{} }

var _ Sketch[*countSketch] = (*countSketch)(nil)

// BenchmarkAdd measures Add (one input of 4 two-dimensional points) with many keys: sets
// drawn at random from `keys`, event time advancing 1 ms per input with up to 2 s of
// disorder, an End on 1 input in 8. Released sketches are reused, as in the worker.
func BenchmarkAdd(b *testing.B) {
	for _, bc := range []struct {
		cfg  Config
		keys int
	}{
		{Config{Mode: ModeSet}, 100_000},
		{Config{Mode: ModeCount, Size: 100}, 100_000},
		{Config{Mode: ModeTime, Size: 60_000, AllowedLateness: 5_000}, 100_000},
		{Config{Mode: ModeTime, Size: 60_000, Hop: 15_000, AllowedLateness: 5_000}, 100_000},
		{Config{Mode: ModeSession, Gap: 30_000, AllowedLateness: 5_000}, 100_000},
		{Config{Mode: ModeSet}, 1_000},
		{Config{Mode: ModeTime, Size: 60_000, AllowedLateness: 5_000}, 1_000},
	} {
		name := fmt.Sprintf("%s/keys=%d", bc.cfg.Mode, bc.keys)
		if bc.cfg.Hop != 0 {
			name = fmt.Sprintf("%s-hop/keys=%d", bc.cfg.Mode, bc.keys)
		}
		b.Run(name, func(b *testing.B) {
			cfg := bc.cfg
			cfg.MaxOpen = 1 << 20
			m, err := NewManager(cfg, newCountSketch, nil)
			if err != nil {
				b.Fatal(err)
			}
			rng := rand.New(rand.NewPCG(1, 1))
			names := make([]string, bc.keys)
			for i := range names {
				names[i] = fmt.Sprintf("set-%07d", i)
			}
			const ring = 1 << 16
			sets := make([]string, ring)
			jit := make([]int64, ring)
			ends := make([]bool, ring)
			for i := range ring {
				sets[i], jit[i], ends[i] = names[rng.IntN(bc.keys)], rng.Int64N(2000), rng.IntN(8) == 0
			}
			points := []float64{0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8}
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				j := i & (ring - 1)
				cs, _ := m.Add(Input{Offset: int64(i), Set: sets[j], Points: points, Dim: 2,
					EventTime: 1_700_000_000_000 + int64(i) - jit[j], End: ends[j]})
				for _, c := range cs {
					m.Release(c.Sketch)
				}
				if i&4095 == 0 {
					m.SafeOffset(int64(i) + 1)
				}
			}
			b.ReportMetric(float64(m.Open()), "open")
		})
	}
}
