package processor

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/distfeat/distfeat/config"
	"github.com/distfeat/distfeat/embedding"
	"github.com/distfeat/distfeat/schema"
	"github.com/distfeat/distfeat/spec"
	"github.com/distfeat/distfeat/window"
)

const pointSpec = `{"version":1,"seed":7,"dim":2,"bounds":{"lo":[0,0],"hi":[1,1]},
 "families":[{"name":"mmd","kind":"mmd","features":32,"bandwidth":0.2},
   {"name":"mt","kind":"marginal_transfer","set_family":"mmd","sigma_p":0.4,"sigma_x":0.3,"features":64},
   {"name":"pool","kind":"marginal_transfer","pooling":true,"sigma_x":0.3,"features":16}]}`

// pointCounts observes the per-point output too.
type pointCounts struct {
	counts
	emitted, dropped int
}

func (c *pointCounts) OnPointsEmitted(n int)                 { c.emitted += n }
func (c *pointCounts) OnPointsDropped(string, uint64, int64) { c.dropped++ }

// pointProc is a Processor with per-point output over an embedder retaining points within
// budget bytes.
func pointProc(t *testing.T, budget int64, maxOutput int) (*Processor, *pointCounts, *embedding.Embedder) {
	t.Helper()
	return pointProcWindow(t, budget, maxOutput, window.Config{Mode: "set", IdleTimeout: time.Minute, MaxOpen: 100})
}

// pointProcWindow is pointProc with the given windows.
func pointProcWindow(t *testing.T, budget int64, maxOutput int, wc window.Config) (*Processor, *pointCounts, *embedding.Embedder) {
	t.Helper()
	if wc.IdleTimeout == 0 {
		wc.IdleTimeout = time.Minute
	}
	if wc.MaxOpen == 0 {
		wc.MaxOpen = 1000
	}
	sp, err := spec.ParseSpec([]byte(pointSpec))
	if err != nil {
		t.Fatal(err)
	}
	emb, err := embedding.New(sp, embedding.WithPointRetention(embedding.NewPointBudget(budget)))
	if err != nil {
		t.Fatal(err)
	}
	var cols []embedding.Column
	for _, m := range emb.PointMaps() {
		cols = append(cols, embedding.Column{Name: m.Name(), Len: m.Len()})
	}
	c := &pointCounts{}
	p, err := New(Config{Window: wc, Limits: config.Limits{MaxOutputBytes: maxOutput}, Points: schema.NewPointOutput(sp, cols)},
		emb, schema.NewOutput(sp, emb.Columns()), c, nil)
	if err != nil {
		t.Fatal(err)
	}
	return p, c, emb
}

// pointSets is two sets' records: set "a" in two records, "b" in one, interleaved.
func pointSets(n int) (recs []Record, pts map[string][]float64) {
	rng := embedding.NewRNG(5, "processor-points")
	pts = map[string][]float64{}
	val := func(set string, k int, end bool) string {
		var ps []string
		for i := 0; i < k; i++ {
			x, y := rng.Float64(), rng.Float64()
			pts[set] = append(pts[set], x, y)
			ps = append(ps, fmt.Sprintf("[%v,%v]", x, y))
		}
		return fmt.Sprintf(`{"points":[%s],"end":%v}`, strings.Join(ps, ","), end)
	}
	recs = numbered(0, jsonRec("a", val("a", n, false)), jsonRec("b", val("b", n/2, true)), jsonRec("a", val("a", n, true)))
	return recs, pts
}

// TestProcessorPointOutput: each window's feature record is followed by its per-point
// messages (point order, chunked to the output limit, keyed by set, headers naming the
// window and the first point), whose rows are bit-identical to the library's per-point
// features of the window's points against its own features — what embed --points writes.
func TestProcessorPointOutput(t *testing.T) {
	for _, maxOut := range []int{1_000_000, 16 << 10} {
		t.Run(strconv.Itoa(maxOut), func(t *testing.T) {
			p, c, emb := pointProc(t, 1<<20, maxOut)
			recs, pts := pointSets(300)
			msgs := processAll(t, p, recs, 1)
			var window schema.FeatureRecord
			next := map[string]int64{}
			chunks := 0
			for _, m := range msgs {
				if len(m.Value) > maxOut {
					t.Fatalf("a %v message of %d bytes, over the limit %d", m.Kind, len(m.Value), maxOut)
				}
				switch m.Kind {
				case Feature:
					rs, _, err := schema.DecodeFeatures(m.Value)
					if err != nil {
						t.Fatal(err)
					}
					window = rs[0]
					continue
				case PointFeature:
				default:
					t.Fatalf("unexpected %v message", m.Kind)
				}
				chunks++
				rows, cols, err := schema.DecodePoints(m.Value)
				if err != nil {
					t.Fatal(err)
				}
				if string(m.Key) != window.Set || headerOf(m.Headers, schema.HeaderWindowID) != strconv.FormatUint(window.Seq, 10) ||
					headerOf(m.Headers, HeaderPointFirst) != strconv.FormatInt(rows[0].Index, 10) || len(cols) != 2 {
					t.Fatalf("point message key %q headers %v cols %v after window %s/%d", m.Key, m.Headers, cols, window.Set, window.Seq)
				}
				for _, r := range rows {
					if r.Set != window.Set || r.Index != next[r.Set] {
						t.Fatalf("row %s/%d, want %s/%d", r.Set, r.Index, window.Set, next[r.Set])
					}
					next[r.Set]++
					u := pts[r.Set][2*r.Index : 2*r.Index+2]
					for _, pm := range emb.PointMaps() {
						want := make([]float32, pm.Len())
						pm.Points(pm.SetPart(window.Vectors, nil), u, want)
						for j, v := range r.Features[pm.Name()] {
							if math.Float32bits(v) != math.Float32bits(want[j]) {
								t.Fatalf("set %s point %d %s[%d] = %v, library %v", r.Set, r.Index, pm.Name(), j, v, want[j])
							}
						}
					}
				}
			}
			if next["a"] != 600 || next["b"] != 150 || c.emitted != 750 || c.dropped != 0 {
				t.Fatalf("rows a %d, b %d (want 600, 150); observed %d emitted, %d dropped", next["a"], next["b"], c.emitted, c.dropped)
			}
			if maxOut < 100_000 && chunks < 4 {
				t.Errorf("%d point messages under a %d-byte limit: the windows were not split", chunks, maxOut)
			}
		})
	}
}

// TestProcessorPointBudget: a window whose points do not fit the retention budget still gets
// its feature record, and no per-point messages; a window that fits gets them.
func TestProcessorPointBudget(t *testing.T) {
	p, c, _ := pointProc(t, 8*2*500, 1_000_000) // room for 500 points: a (300) and b (150) fit, then a (600) does not
	recs, _ := pointSets(300)
	msgs := processAll(t, p, recs, 1)
	kinds := map[string][]Kind{}
	for _, m := range msgs {
		kinds[string(m.Key)] = append(kinds[string(m.Key)], m.Kind)
	}
	if len(kinds["a"]) != 1 || kinds["a"][0] != Feature {
		t.Errorf("set a (over the budget): messages %v, want its feature record only", kinds["a"])
	}
	if len(kinds["b"]) < 2 || kinds["b"][0] != Feature || kinds["b"][1] != PointFeature {
		t.Errorf("set b (within the budget): messages %v, want its feature record then per-point messages", kinds["b"])
	}
	if c.dropped != 1 || c.emitted != 150 {
		t.Errorf("observed %d dropped windows, %d points emitted; want 1, 150", c.dropped, c.emitted)
	}
}

func TestPointChunkErrors(t *testing.T) {
	sp, _ := spec.ParseSpec([]byte(mmdSpec))
	emb, _ := embedding.New(sp)
	if _, err := PointChunk(emb, schema.NewPointOutput(sp, nil), 1<<20); err == nil || !strings.Contains(err.Error(), "marginal_transfer") {
		t.Errorf("no marginal_transfer family: %v", err)
	}
	sp2, _ := spec.ParseSpec([]byte(strings.Replace(pointSpec, `"features":64}`, `"features":4096}`, 1)))
	emb2, _ := embedding.New(sp2)
	cols := []embedding.Column{{Name: "mt", Len: 4096}, {Name: "pool", Len: 16}}
	if _, err := PointChunk(emb2, schema.NewPointOutput(sp2, cols), 8<<10); err == nil || !strings.Contains(err.Error(), "DISTFEAT_MAX_OUTPUT_BYTES") {
		t.Errorf("one point over the output limit: %v", err)
	}
}

// TestPointReplayFromCommitPoint is TestReplayFromCommitPoint with per-point output, in every
// window mode (sliding count and time windows assemble their points from panes): a
// processor restored from the commit point after any record, fed the records from the
// committed offset on, emits exactly — byte for byte — the feature, per-point and
// dead-letter messages the first one emitted for the records after it.
func TestPointReplayFromCommitPoint(t *testing.T) {
	recs := replayStream(t, 23)
	for _, wc := range []window.Config{
		{Mode: "set", MaxOpen: 3},
		{Mode: "count", Size: 4, Hop: 2},
		{Mode: "time", Size: 5_000, Hop: 2_500, AllowedLateness: 1_000},
		{Mode: "session", Gap: 2_000},
	} {
		t.Run(string(wc.Mode), func(t *testing.T) {
			ref, _, _ := pointProcWindow(t, 1<<20, 1_000_000, wc)
			after, cps := referenceOutputs(t, ref, recs)
			points := 0
			for _, m := range after[0] {
				if m.Kind == PointFeature {
					points++
				}
			}
			if points < 10 {
				t.Fatalf("only %d per-point messages: the stream does not exercise the per-point output", points)
			}
			for k := 1; k < len(recs); k++ {
				p, _, _ := pointProcWindow(t, 1<<20, 1_000_000, wc)
				if err := p.Restore(cps[k].Metadata, cps[k].Offset); err != nil {
					t.Fatalf("k=%d: Restore: %v", k, err)
				}
				got := processAll(t, p, recs[cps[k].Offset:], 5)
				if d := sameMessages(got, after[k]); d != "" {
					t.Fatalf("commit after %d records (offset %d): replay: %s", k, cps[k].Offset, d)
				}
			}
		})
	}
}

// BenchmarkProcessPoints is the processor's rate (decode, window, finalise, encode) on sets
// of 2000 2-D points in records of 500 (an mmd family, D = 1024), without and with the
// per-point output of a marginal_transfer family (D = 256), reported per input point.
func BenchmarkProcessPoints(b *testing.B) {
	const sets, per, chunk = 8, 2000, 500
	rng := embedding.NewRNG(9, "bench-points")
	var recs []Record
	for s := 0; s < sets; s++ {
		for c := 0; c < per/chunk; c++ {
			pts := make([]float64, 2*chunk)
			for i := range pts {
				pts[i] = rng.Float64()
			}
			v, err := schema.EncodeArrow(2, []schema.Batch{{Set: fmt.Sprintf("s%d", s), Points: pts, N: chunk, End: c == per/chunk-1}})
			if err != nil {
				b.Fatal(err)
			}
			recs = append(recs, arrowRec(fmt.Sprintf("s%d", s), v))
		}
	}
	sp, err := spec.ParseSpec([]byte(`{"version":1,"seed":7,"dim":2,"bounds":{"lo":[0,0],"hi":[1,1]},
	  "families":[{"name":"mmd","kind":"mmd","features":1024,"bandwidth":0.1},
	    {"name":"mt","kind":"marginal_transfer","set_family":"mmd","sigma_p":0.4,"sigma_x":0.1,"features":256}]}`))
	if err != nil {
		b.Fatal(err)
	}
	for _, on := range []bool{false, true} {
		b.Run(map[bool]string{false: "windows", true: "windows+points"}[on], func(b *testing.B) {
			var opts []embedding.Option
			if on {
				opts = append(opts, embedding.WithPointRetention(embedding.NewPointBudget(64<<20)))
			}
			emb, err := embedding.New(sp, opts...)
			if err != nil {
				b.Fatal(err)
			}
			cfg := Config{Window: window.Config{Mode: "set", IdleTimeout: time.Minute, MaxOpen: 100}}
			if on {
				var cols []embedding.Column
				for _, m := range emb.PointMaps() {
					cols = append(cols, embedding.Column{Name: m.Name(), Len: m.Len()})
				}
				cfg.Points = schema.NewPointOutput(sp, cols)
			}
			out := schema.NewOutput(sp, emb.Columns())
			bytes := 0
			for b.Loop() {
				p, err := New(cfg, emb, out, nil, nil)
				if err != nil {
					b.Fatal(err)
				}
				res, err := p.Process(numbered(0, recs...)...)
				if err != nil {
					b.Fatal(err)
				}
				bytes = 0
				for _, m := range res.Messages {
					bytes += len(m.Value)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*sets*per), "ns/point")
			b.ReportMetric(float64(bytes)/float64(sets*per), "out-bytes/point")
		})
	}
}
