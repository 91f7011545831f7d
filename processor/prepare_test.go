package processor

import (
	"errors"
	"fmt"
	"reflect"
	"testing"

	"github.com/distfeat/distfeat/config"
	"github.com/distfeat/distfeat/embedding"
	"github.com/distfeat/distfeat/schema"
	"github.com/distfeat/distfeat/spec"
	"github.com/distfeat/distfeat/window"
)

// TestPreparedMatchesProcess: records decoded ahead on another goroutine (Prepare, running
// concurrently with the processing, as the consumer's reader goroutine does) and processed
// with ProcessPrepared (their points added to the windows' sketches at the end of each call,
// shared among goroutines) give what Process gives for the same records in the same calls: the
// same messages byte for byte (feature records and dead letters of every reason, in order),
// the same commit point and next offset after every call, and the same counters — from a
// fresh start and restored from a commit in the middle of the stream (replay suppression),
// with close markers among the records.
func TestPreparedMatchesProcess(t *testing.T) {
	bad := badInputScript(t)
	modes := []window.Config{
		{Mode: "set", MaxOpen: 3},
		{Mode: "count", Size: 4, Hop: 2},
		{Mode: "time", Size: 5_000, Hop: 2_500, AllowedLateness: 1_000},
		{Mode: "session", Gap: 2_000},
	}
	type tc struct {
		name    string
		spec    string
		cfg     Config
		recs    []Record
		restore int // restore both from the serial commit point after this many records (0: fresh)
	}
	cases := []tc{
		{name: "bad input", spec: rejectSpec, cfg: Config{Limits: config.Limits{MaxMessageBytes: 16 << 10, MaxPointsPerRecord: 64}}, recs: bad.recs},
	}
	for _, wc := range modes {
		recs := withMarkers(replayStream(t, 21))
		for _, restore := range []int{0, 37} {
			cases = append(cases, tc{name: fmt.Sprintf("%s/restore=%d", wc.Mode, restore), spec: smallSpec,
				cfg: Config{Window: wc}, recs: recs, restore: restore})
		}
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := newEnv(t, c.spec)
			recs := c.recs
			var restore *CommitPoint
			if c.restore > 0 {
				ref, _ := e.newProc(c.cfg, nil)
				processAll(t, ref, recs[:c.restore], 0)
				cp := ref.CommitPoint()
				restore = &cp
				recs = recs[cp.Offset:]
			}
			for _, batch := range []int{1, 7, 64} {
				serial, pipelined, ser, pip := e.serialAndPrepared(c.cfg, restore, recs, batch)
				if d := sameMessages(pipelined, serial); d != "" {
					t.Fatalf("batch %d: ProcessPrepared: %s", batch, d)
				}
				if !reflect.DeepEqual(pip, ser) {
					t.Fatalf("batch %d: after each call ProcessPrepared gave\n%+v\nProcess gave\n%+v", batch, pip, ser)
				}
				features, dead := split(serial)
				if len(features) == 0 || len(dead) == 0 || (restore != nil && ser.replayed == 0) {
					t.Fatalf("batch %d: the stream does not exercise the processor: %d windows, %d dead letters, %d replayed records",
						batch, len(features), len(dead), ser.replayed)
				}
			}
		})
	}
}

// withMarkers puts a close marker for one of replayStream's sets after every eighth record
// and renumbers the records: some close a window, some are stale.
func withMarkers(recs []Record) []Record {
	var out []Record
	for i, r := range recs {
		out = append(out, r)
		if i%8 == 7 {
			out = append(out, controlRec(CloseRequest{Set: string(r.Key), After: int64(len(out) - 1)}, ""))
		}
	}
	return numbered(0, out...)
}

// trace is what a caller sees of a processor besides its messages: the commit point, next
// offset and open windows after every call, and the final counters.
type trace struct {
	commits  []CommitPoint
	next     []int64
	open     []int
	records  map[string]int
	invalid  map[string]int
	emitted  map[window.Reason]int
	points   int
	clipped  int
	endNoWin int
	replayed int
}

// serialAndPrepared runs recs through two processors of cfg (restored from restore when not
// nil) in calls of batch records: one with Process, the other with ProcessPrepared of
// records that a second goroutine prepares ahead, concurrently with the processing.
func (e *env) serialAndPrepared(cfg Config, restore *CommitPoint, recs []Record, batch int) (serial, pipelined []Message, ser, pip trace) {
	e.t.Helper()
	a, ca := e.newProc(cfg, nil)
	b, cb := e.newProc(cfg, nil)
	// Share every call's sketch additions among more goroutines than there are cores, however
	// few points it has, so that the shared path runs (and -race watches it).
	b.adds.workers, b.adds.minWork = 4, 0
	if restore != nil {
		for _, p := range []*Processor{a, b} {
			if err := p.Restore(restore.Metadata, restore.Offset); err != nil {
				e.t.Fatalf("Restore: %v", err)
			}
		}
	}
	ahead := make(chan Prepared, 2*batch)
	go func() {
		defer close(ahead)
		for _, r := range recs {
			ahead <- b.Prepare(r)
		}
	}()
	step := func(p *Processor, tr *trace, res Result, err error, out *[]Message) {
		if err != nil {
			e.t.Fatalf("batch %d: %v", batch, err)
		}
		*out = append(*out, res.Messages...)
		tr.commits = append(tr.commits, p.CommitPoint())
		tr.next = append(tr.next, p.Next())
		tr.open = append(tr.open, p.Open())
	}
	prepared := make([]Prepared, 0, batch)
	for i := 0; i < len(recs); i += batch {
		chunk := recs[i:min(i+batch, len(recs))]
		res, err := a.Process(chunk...)
		step(a, &ser, res, err, &serial)
		prepared = prepared[:0]
		for range chunk {
			prepared = append(prepared, <-ahead)
		}
		res, err = b.ProcessPrepared(prepared...)
		step(b, &pip, res, err, &pipelined)
	}
	for _, x := range []struct {
		c  *counts
		tr *trace
	}{{ca, &ser}, {cb, &pip}} {
		x.tr.records, x.tr.invalid, x.tr.emitted = x.c.records, x.c.invalid, x.c.emitted
		x.tr.points, x.tr.clipped, x.tr.endNoWin = x.c.points, x.c.clipped, x.c.endNoWin
		x.tr.replayed = x.c.records[ResultReplayed]
	}
	return serial, pipelined, ser, pip
}

// TestPrepareDecodedBytes: a prepared record counts its raw and normalised points (what the
// consumer's memory budget adds to the record's own bytes); a control record and a dead
// letter count nothing.
func TestPrepareDecodedBytes(t *testing.T) {
	e := newEnv(t, smallSpec)
	p, _ := e.newProc(Config{Limits: config.Limits{MaxMessageBytes: 1 << 10}}, nil)
	pts := randomPoints(embedding.NewRNG(3, "prepare"), 10)
	cases := []struct {
		name string
		rec  Record
		want int64
	}{
		{"json, 10 points", jsonRec("a", string(encodeJSON(t, schema.Batch{Points: pts, N: 10}))), 2*8*20 + 1}, // the key names the set
		{"arrow, two sets", arrowRec("", encodeArrow(t, schema.Batch{Set: "ab", Points: pts[:4], N: 2}, schema.Batch{Set: "c", Points: pts[4:], N: 8})),
			2*8*20 + 3}, // set names "ab" and "c"
		{"undecodable", jsonRec("a", `{"points": [[0.1`), 0},
		{"too large", jsonRec("a", `{"points": [`+string(make([]byte, 2<<10))+`]}`), 0},
		{"close marker", controlRec(CloseRequest{Set: "a"}, "g"), 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			pr := p.Prepare(c.rec)
			if got := pr.DecodedBytes(); got != c.want {
				t.Errorf("DecodedBytes = %d, want %d", got, c.want)
			}
		})
	}
}

// TestProcessPreparedOutOfOrder: ProcessPrepared refuses offsets that do not increase, like
// Process, and processes nothing of the call.
func TestProcessPreparedOutOfOrder(t *testing.T) {
	e := newEnv(t, smallSpec)
	p, c := e.newProc(Config{}, nil)
	rec := func(off int64) Prepared {
		r := jsonRec("a", `{"points": [[0.1, 0.2]]}`)
		r.Offset = off
		return p.Prepare(r)
	}
	if _, err := p.ProcessPrepared(rec(5)); err != nil {
		t.Fatal(err)
	}
	if _, err := p.ProcessPrepared(rec(6), rec(6)); !errors.Is(err, ErrOutOfOrder) {
		t.Errorf("offsets 6, 6: %v, want ErrOutOfOrder", err)
	}
	if c.points != 1 || p.Next() != 6 {
		t.Errorf("points %d, next %d after a refused call; want 1 and 6", c.points, p.Next())
	}
}

// issueSpec is the measurement spec of issue 22: mmd D = 1024 and hdd_js D = 4096 at
// version 2 (orthogonal projection).
const issueSpec = `{"version":2,"seed":42,"dim":2,"bounds":{"lo":[0,0],"hi":[1,1]},"out_of_bounds":"clip",
 "families":[{"name":"mmd","kind":"mmd","features":1024,"bandwidth":0.1},
             {"name":"hdd_js","kind":"hdd","divergence":"js","features":4096,"sigma":0.5,"lambdas":5,
              "lambda_sampling":"stratified","basis":100,"grid":64,"kde_bandwidth":0.02,"boundary":"reflect",
              "density_floor":1e-6,"mode":"joint","coefficients":false}]}`

// BenchmarkProcessPrepared: one partition's processing of 500-point JSON records (each a
// whole set, so every record closes a window) in calls of 64 records (the consumer's
// fetchBatch), with issueSpec: "serial" decodes and sketches in Process on one goroutine;
// "ahead" decodes on a second goroutine (Prepare) while ProcessPrepared handles the previous
// records, adding each call's points to the windows' sketches on GOMAXPROCS goroutines, as
// the consumer does. Wall time per point: on 2 idle cores "ahead" should approach twice the
// points/s of "serial" (the decoding, about a fifth of the work, and the sketching, about
// half, leave the partition's goroutine).
func BenchmarkProcessPrepared(b *testing.B) {
	const points, batch, distinct = 500, 64, 256
	s, err := spec.ParseSpec([]byte(issueSpec))
	if err != nil {
		b.Fatal(err)
	}
	emb, err := embedding.New(s, embedding.WithAddWorkers(2))
	if err != nil {
		b.Fatal(err)
	}
	out := schema.NewOutput(s, emb.Columns())
	rng := embedding.NewRNG(5, "bench")
	values := make([][]byte, distinct)
	for i := range values {
		v, err := schema.EncodeJSON(schema.Batch{Points: randomPoints(rng, points), N: points, End: true})
		if err != nil {
			b.Fatal(err)
		}
		values[i] = v
	}
	record := func(off int) Record {
		return Record{Topic: topic, Offset: int64(off), Key: []byte(fmt.Sprintf("s%d", off%distinct)), Value: values[off%distinct]}
	}
	newProc := func(b *testing.B) *Processor {
		p, err := New(Config{Window: window.Config{Mode: "set", MaxOpen: 1000}}, emb, out, nil, nil)
		if err != nil {
			b.Fatal(err)
		}
		return p
	}
	b.Run("serial", func(b *testing.B) {
		p := newProc(b)
		recs := make([]Record, batch)
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			for j := range recs {
				recs[j] = record(i*batch + j)
			}
			if _, err := p.Process(recs...); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(b.N*batch*points)/b.Elapsed().Seconds(), "points/s")
	})
	b.Run("ahead", func(b *testing.B) {
		p := newProc(b)
		ahead := make(chan Prepared, batch)
		b.ResetTimer()
		go func() {
			for off := 0; off < b.N*batch; off++ {
				ahead <- p.Prepare(record(off))
			}
		}()
		prepared := make([]Prepared, batch)
		for i := 0; i < b.N; i++ {
			for j := range prepared {
				prepared[j] = <-ahead
			}
			if _, err := p.ProcessPrepared(prepared...); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(b.N*batch*points)/b.Elapsed().Seconds(), "points/s")
	})
}
