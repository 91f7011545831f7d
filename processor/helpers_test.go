package processor

import (
	"bytes"
	"fmt"
	"math"
	"sort"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/array"
	"github.com/apache/arrow/go/v15/arrow/ipc"
	"github.com/apache/arrow/go/v15/arrow/memory"

	"github.com/distfeat/distfeat/embedding"
	"github.com/distfeat/distfeat/schema"
	"github.com/distfeat/distfeat/spec"
	"github.com/distfeat/distfeat/window"
)

// smallSpec keeps the tests fast: every family, small sizes.
const smallSpec = `{"version":1,"seed":7,"dim":2,"bounds":{"lo":[0,0],"hi":[1,1]},
 "families":[{"name":"mmd","kind":"mmd","features":64,"bandwidth":0.2},
             {"name":"hdd_js","kind":"hdd","divergence":"js","features":64,"sigma":0.5,"grid":16,"basis":10,"lambdas":3},
             {"name":"l2","kind":"l2","basis":10}]}`

// mmdSpec is the cheapest spec, for tests that finalise many windows.
const mmdSpec = `{"version":1,"seed":7,"dim":2,"bounds":{"lo":[0,0],"hi":[1,1]},
 "families":[{"name":"mmd","kind":"mmd","features":16,"bandwidth":0.2}]}`

// rejectSpec is smallSpec with out_of_bounds=reject, so that the bad-input matrix covers that
// reason too (valid points are all inside [0,1]², where clip and reject agree).
const rejectSpec = `{"version":1,"seed":7,"dim":2,"bounds":{"lo":[0,0],"hi":[1,1]},"out_of_bounds":"reject",
 "families":[{"name":"mmd","kind":"mmd","features":64,"bandwidth":0.2},
             {"name":"hdd_js","kind":"hdd","divergence":"js","features":64,"sigma":0.5,"grid":16,"basis":10,"lambdas":3},
             {"name":"l2","kind":"l2","basis":10}]}`

// topic is the input topic name the tests' records carry.
const topic = "points"

// env is one test's spec, embedder and output encoder.
type env struct {
	t   *testing.T
	emb *embedding.Embedder
	out *schema.Output
}

func newEnv(t *testing.T, specJSON string) *env {
	t.Helper()
	sp, err := spec.ParseSpec([]byte(specJSON))
	if err != nil {
		t.Fatalf("spec: %v", err)
	}
	emb, err := embedding.New(sp)
	if err != nil {
		t.Fatalf("embedder: %v", err)
	}
	return &env{t: t, emb: emb, out: schema.NewOutput(sp, emb.Columns())}
}

// newProc returns a Processor with a counting observer.
func (e *env) newProc(cfg Config, clock window.Clock) (*Processor, *counts) {
	e.t.Helper()
	if cfg.Window.Mode == "" {
		cfg.Window = window.Config{Mode: "set", IdleTimeout: time.Minute, MaxOpen: 1000}
	}
	if cfg.Window.MaxOpen == 0 {
		cfg.Window.MaxOpen = 1000
	}
	c := &counts{}
	p, err := New(cfg, e.emb, e.out, c, clock)
	if err != nil {
		e.t.Fatalf("New: %v", err)
	}
	return p, c
}

// offline is the one-shot embedding of raw points (the reference every window must match
// bit for bit).
func (e *env) offline(pts []float64) [][]float32 {
	e.t.Helper()
	u := make([]float64, len(pts))
	if _, err := e.emb.Normalize(u, pts); err != nil {
		e.t.Fatal(err)
	}
	return e.emb.Embed(u)
}

// sameAsOffline reports whether r's vectors are bit-identical to the offline embedding of pts.
func (e *env) sameAsOffline(r schema.FeatureRecord, pts []float64) bool {
	want := e.offline(pts)
	if len(want) != len(r.Vectors) {
		return false
	}
	for c := range want {
		if len(want[c]) != len(r.Vectors[c]) {
			return false
		}
		for j := range want[c] {
			if math.Float32bits(want[c][j]) != math.Float32bits(r.Vectors[c][j]) {
				return false
			}
		}
	}
	return true
}

// counts is an Observer that counts every event.
type counts struct {
	mu        sync.Mutex
	records   map[string]int
	invalid   map[string]int
	emitted   map[window.Reason]int
	points    int
	clipped   int
	dead      int
	endNoWin  int
	finalized int
	encodeErr int
}

func (c *counts) OnRecord(result string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.records == nil {
		c.records = map[string]int{}
	}
	c.records[result]++
}
func (c *counts) OnPoints(n int)  { c.mu.Lock(); c.points += n; c.mu.Unlock() }
func (c *counts) OnClipped(n int) { c.mu.Lock(); c.clipped += n; c.mu.Unlock() }
func (c *counts) OnDeadLetter(_ int64, reason, _ string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.invalid == nil {
		c.invalid = map[string]int{}
	}
	c.invalid[reason]++
	c.dead++
}
func (c *counts) OnEndWithoutWindow() { c.mu.Lock(); c.endNoWin++; c.mu.Unlock() }
func (c *counts) OnWindowEmitted(reason window.Reason, _ int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.emitted == nil {
		c.emitted = map[window.Reason]int{}
	}
	c.emitted[reason]++
}
func (c *counts) OnFinalize(string, time.Duration)    { c.mu.Lock(); c.finalized++; c.mu.Unlock() }
func (c *counts) OnEncodeError(string, uint64, error) { c.mu.Lock(); c.encodeErr++; c.mu.Unlock() }

// jsonRec is a JSON input record at offset off.
func jsonRec(key, value string) Record {
	return Record{Topic: topic, Key: []byte(key), Value: []byte(value)}
}

// arrowRec is an Arrow input record.
func arrowRec(key string, v []byte) Record {
	return Record{Topic: topic, Key: []byte(key), Value: v,
		Headers: []Header{{Key: schema.HeaderContentType, Value: []byte(schema.ContentTypeArrow)}}}
}

// numbered gives recs the offsets first, first+1, … and returns them.
func numbered(first int64, recs ...Record) []Record {
	for i := range recs {
		recs[i].Offset = first + int64(i)
	}
	return recs
}

// processAll runs recs through p in batches of the given size (0: all at once) and returns
// every message, failing the test on an error.
func processAll(t *testing.T, p *Processor, recs []Record, batch int) []Message {
	t.Helper()
	if batch <= 0 {
		batch = len(recs)
	}
	var out []Message
	for i := 0; i < len(recs); i += batch {
		res, err := p.Process(recs[i:min(i+batch, len(recs))]...)
		if err != nil {
			t.Fatalf("Process: %v", err)
		}
		out = append(out, res.Messages...)
	}
	return out
}

// headerOf returns the value of header key of m, or "".
func headerOf(hs []Header, key string) string {
	for _, h := range hs {
		if h.Key == key {
			return string(h.Value)
		}
	}
	return ""
}

// split separates feature records from dead letters, keeping their order.
func split(msgs []Message) (features, dead []Message) {
	for _, m := range msgs {
		if m.Kind == DeadLetter {
			dead = append(dead, m)
		} else {
			features = append(features, m)
		}
	}
	return features, dead
}

// decoded is one feature record with its decoded row.
type decoded struct {
	rec schema.FeatureRecord
	msg Message
}

// windowsBySet decodes feature records and groups them by set in emission order, checking
// that each record's headers agree with its row.
func (e *env) windowsBySet(msgs []Message) map[string][]decoded {
	e.t.Helper()
	out := map[string][]decoded{}
	for _, m := range msgs {
		if m.Kind != Feature {
			e.t.Fatalf("windowsBySet: a %v message", m.Kind)
		}
		recs, _, err := schema.DecodeFeatures(m.Value)
		if err != nil || len(recs) != 1 {
			e.t.Fatalf("feature record %s: decode: %v (%d rows)", m.Key, err, len(recs))
		}
		r := recs[0]
		if string(m.Key) != r.Set || headerOf(m.Headers, schema.HeaderWindowID) != strconv.FormatUint(r.Seq, 10) ||
			headerOf(m.Headers, schema.HeaderSpecID) != e.emb.Spec().ID() ||
			headerOf(m.Headers, schema.HeaderContentType) != schema.ContentTypeArrow {
			e.t.Errorf("feature record %s/%d: key or headers %v disagree with the row", r.Set, r.Seq, m.Headers)
		}
		out[r.Set] = append(out[r.Set], decoded{rec: r, msg: m})
	}
	return out
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// sameMessages reports the first difference between two message lists, or "".
func sameMessages(a, b []Message) string {
	if len(a) != len(b) {
		return fmt.Sprintf("%d messages, want %d", len(a), len(b))
	}
	for i := range a {
		x, y := a[i], b[i]
		if x.Kind != y.Kind || !bytes.Equal(x.Key, y.Key) || !bytes.Equal(x.Value, y.Value) || !x.Time.Equal(y.Time) ||
			x.FirstOffset != y.FirstOffset || x.EventEnd != y.EventEnd || fmt.Sprint(x.Headers) != fmt.Sprint(y.Headers) {
			return fmt.Sprintf("message %d: %v %s/%s differs from %v %s/%s", i, x.Kind, x.Key, headerOf(x.Headers, schema.HeaderWindowID),
				y.Kind, y.Key, headerOf(y.Headers, schema.HeaderWindowID))
		}
	}
	return ""
}

// arrowDim encodes one Arrow input record (set, x: fixed_size_list<float64>[dim]) with the
// arrow library directly, so that it may carry what EncodeArrow refuses (NaN, ±Inf, another
// dimension).
func arrowDim(t *testing.T, set string, dim int, pts []float64) []byte {
	t.Helper()
	mem := memory.NewGoAllocator()
	sc := arrow.NewSchema([]arrow.Field{
		{Name: "set", Type: arrow.BinaryTypes.String},
		{Name: "x", Type: arrow.FixedSizeListOf(int32(dim), arrow.PrimitiveTypes.Float64)},
	}, nil)
	b := array.NewRecordBuilder(mem, sc)
	defer b.Release()
	for i := 0; i < len(pts)/dim; i++ {
		b.Field(0).(*array.StringBuilder).Append(set)
		lb := b.Field(1).(*array.FixedSizeListBuilder)
		lb.Append(true)
		lb.ValueBuilder().(*array.Float64Builder).AppendValues(pts[dim*i:dim*i+dim], nil)
	}
	rec := b.NewRecord()
	defer rec.Release()
	var buf bytes.Buffer
	w := ipc.NewWriter(&buf, ipc.WithSchema(sc))
	if err := w.Write(rec); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// randomPoints returns n random points in [0,1)² from rng.
func randomPoints(rng *embedding.RNG, n int) []float64 {
	pts := make([]float64, 2*n)
	for i := range pts {
		pts[i] = rng.Float64()
	}
	return pts
}

// encodeJSON is schema.EncodeJSON failing the test on error.
func encodeJSON(t *testing.T, b schema.Batch) []byte {
	t.Helper()
	v, err := schema.EncodeJSON(b)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// encodeArrow is schema.EncodeArrow (dim 2) failing the test on error.
func encodeArrow(t *testing.T, bs ...schema.Batch) []byte {
	t.Helper()
	v, err := schema.EncodeArrow(2, bs)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// referenceOutputs processes recs on ref one record at a time: after[k] is the output of the
// records from k on, cps[k] the commit point before record k (cps[len(recs)]: after all) —
// what a replay from each commit point must reproduce.
func referenceOutputs(t *testing.T, ref *Processor, recs []Record) (after [][]Message, cps []CommitPoint) {
	t.Helper()
	after, cps = make([][]Message, len(recs)+1), make([]CommitPoint, len(recs)+1)
	perRec := make([][]Message, len(recs))
	cps[0] = ref.CommitPoint()
	for k := range recs {
		res, err := ref.Process(recs[k])
		if err != nil {
			t.Fatal(err)
		}
		perRec[k] = res.Messages
		cps[k+1] = ref.CommitPoint()
	}
	for k := len(recs) - 1; k >= 0; k-- {
		after[k] = append(append([]Message(nil), perRec[k]...), after[k+1]...)
	}
	return after, cps
}
