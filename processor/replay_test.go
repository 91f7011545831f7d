package processor

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/distfeat/distfeat/embedding"
	"github.com/distfeat/distfeat/schema"
	"github.com/distfeat/distfeat/window"
)

const t0 = 1_700_000_000_000

// TestWindowModes checks the windows of count, time and session modes: their sizes in order
// and their features against the offline embedding of their points.
func TestWindowModes(t *testing.T) {
	e := newEnv(t, smallSpec)
	rng := embedding.NewRNG(5, "modes")
	count := randomPoints(rng, 250)
	pt := func(x float64) []float64 { return []float64{x, x} }
	cases := []struct {
		name    string
		cfg     window.Config
		batches []schema.Batch
		want    [][]float64 // points of each emitted window, in order
	}{
		{
			name:    "count",
			cfg:     window.Config{Mode: "count", Size: 100, IdleTimeout: time.Minute},
			batches: []schema.Batch{{Set: "c", Points: count[:240], N: 120}, {Set: "c", Points: count[240:], N: 130, End: true}},
			want:    [][]float64{count[:200], count[200:400], count[400:]},
		},
		{
			name: "time",
			cfg:  window.Config{Mode: "time", Size: 10_000, IdleTimeout: time.Minute},
			batches: []schema.Batch{
				{Set: "t", Points: append(pt(0.1), pt(0.2)...), N: 2, EventTime: t0},
				{Set: "t", Points: pt(0.3), N: 1, EventTime: t0 + 5_000},
				{Set: "t", Points: pt(0.4), N: 1, EventTime: t0 + 12_000},
				{Set: "t", Points: pt(0.5), N: 1, EventTime: t0 + 31_000}, // closes both; its window stays open
			},
			want: [][]float64{append(append(pt(0.1), pt(0.2)...), pt(0.3)...), pt(0.4)},
		},
		{
			name: "session",
			cfg:  window.Config{Mode: "session", Gap: 1_000, IdleTimeout: time.Minute},
			batches: []schema.Batch{
				{Set: "s", Points: pt(0.1), N: 1, EventTime: t0},
				{Set: "s", Points: pt(0.2), N: 1, EventTime: t0 + 500},
				{Set: "s", Points: pt(0.3), N: 1, EventTime: t0 + 5_000},
				{Set: "s", Points: pt(0.4), N: 1, EventTime: t0 + 9_000},
			},
			want: [][]float64{append(pt(0.1), pt(0.2)...), pt(0.3)},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p, _ := e.newProc(Config{Window: tc.cfg}, nil)
			var recs []Record
			for _, b := range tc.batches {
				recs = append(recs, arrowRec(b.Set, encodeArrow(t, b)))
			}
			features, dead := split(processAll(t, p, numbered(0, recs...), 1))
			if len(dead) != 0 {
				t.Fatalf("%d dead letters", len(dead))
			}
			got := e.windowsBySet(features)[tc.batches[0].Set]
			if len(got) != len(tc.want) {
				t.Fatalf("%d windows, want %d", len(got), len(tc.want))
			}
			for i, w := range tc.want {
				if got[i].rec.N != int64(len(w)/2) || !e.sameAsOffline(got[i].rec, w) {
					t.Errorf("window %d: n=%d, want %d points bit-identical to the offline embedding", i, got[i].rec.N, len(w)/2)
				}
			}
		})
	}
}

// TestIdleExpiry: a set that never sends end is emitted by ExpireIdle once the clock has
// passed the idle timeout, with reason idle; not before.
func TestIdleExpiry(t *testing.T) {
	e := newEnv(t, smallSpec)
	clock := window.NewFakeClock(time.UnixMilli(t0))
	p, c := e.newProc(Config{Window: window.Config{Mode: "set", IdleTimeout: 300 * time.Millisecond}}, clock)
	pts := randomPoints(embedding.NewRNG(6, "idle"), 40)
	processAll(t, p, numbered(0, arrowRec("idle", encodeArrow(t, schema.Batch{Set: "idle", Points: pts, N: 40}))), 0)
	clock.Advance(299 * time.Millisecond)
	if res := p.ExpireIdle(); len(res.Messages) != 0 || p.Open() != 1 {
		t.Fatalf("expired before the idle timeout: %d messages, %d open", len(res.Messages), p.Open())
	}
	clock.Advance(time.Millisecond)
	res := p.ExpireIdle()
	got := e.windowsBySet(res.Messages)["idle"]
	if len(got) != 1 || !e.sameAsOffline(got[0].rec, pts) || c.emitted[window.ReasonIdle] != 1 || p.Open() != 0 {
		t.Fatalf("after the idle timeout: %d windows, emitted %v, %d open", len(got), c.emitted, p.Open())
	}
}

// replayStream is a partition's worth of records exercising windows that straddle commits,
// dead letters and (in time and session modes) late records.
func replayStream(t *testing.T, seed uint64) []Record {
	rng := embedding.NewRNG(seed, "replay")
	var recs []Record
	for i := 0; i < 60; i++ {
		set := fmt.Sprintf("s%d", rng.Uint64()%5)
		n := 1 + int(rng.Uint64()%4)
		ts := t0 + int64(i)*700 - int64(rng.Uint64()%3)*2_500 // mostly increasing; some late
		b := schema.Batch{Points: randomPoints(rng, n), N: n, EventTime: ts, End: rng.Uint64()%6 == 0}
		switch rng.Uint64() % 10 {
		case 0:
			recs = append(recs, jsonRec(set, `{"points": [[0.1, 0.2]`)) // decode
		case 1, 2:
			b.Set = set
			recs = append(recs, arrowRec(set, encodeArrow(t, b)))
		default:
			recs = append(recs, jsonRec(set, string(encodeJSON(t, b))))
		}
	}
	return numbered(0, recs...)
}

// TestReplayFromCommitPoint is the delivery rule without a broker: for every window mode and
// every position k, a processor that processed records [0, k), whose output was all
// acknowledged, commits CommitPoint(); a new processor restored from that commit and fed
// the records from the committed offset on must emit exactly the output the first one emits
// for records k onwards — nothing that was delivered again, nothing lost, byte for byte.
func TestReplayFromCommitPoint(t *testing.T) {
	e := newEnv(t, mmdSpec)
	recs := replayStream(t, 21)
	modes := []window.Config{
		{Mode: "set", MaxOpen: 3},
		{Mode: "count", Size: 4, Hop: 2},
		{Mode: "time", Size: 5_000, Hop: 2_500, AllowedLateness: 1_000},
		{Mode: "session", Gap: 2_000},
	}
	for _, wc := range modes {
		t.Run(string(wc.Mode), func(t *testing.T) {
			ref, _ := e.newProc(Config{Window: wc}, nil)
			after, cps := referenceOutputs(t, ref, recs)
			features, dead := split(after[0])
			late := 0
			for _, m := range dead {
				if headerOf(m.Headers, schema.HeaderError) == schema.ReasonLate {
					late++
				}
			}
			t.Logf("%d feature records, %d dead letters (%d late)", len(features), len(dead), late)
			if len(features) < 10 || len(dead) < 3 || (late == 0) != (wc.Mode == "set" || wc.Mode == "count") {
				t.Fatalf("the stream does not exercise the mode: %d windows, %d dead letters, %d late", len(features), len(dead), late)
			}
			for k := 1; k < len(recs); k++ {
				p, c := e.newProc(Config{Window: wc}, nil)
				if err := p.Restore(cps[k].Metadata, cps[k].Offset); err != nil {
					t.Fatalf("k=%d: Restore: %v", k, err)
				}
				got := processAll(t, p, recs[cps[k].Offset:], 5)
				if d := sameMessages(got, after[k]); d != "" {
					t.Fatalf("commit after %d records (offset %d): replay: %s", k, cps[k].Offset, d)
				}
				if c.records[ResultReplayed] != k-int(cps[k].Offset) {
					t.Errorf("k=%d: %d records counted as replayed, want %d", k, c.records[ResultReplayed], k-int(cps[k].Offset))
				}
			}
		})
	}
}

// TestCommitPointRule: with a window open, the commit offset stays at its first record, and
// the metadata's replay position is the next offset.
func TestCommitPointRule(t *testing.T) {
	e := newEnv(t, smallSpec)
	p, _ := e.newProc(Config{}, nil)
	processAll(t, p, numbered(10,
		jsonRec("a", `{"points": [[0.1, 0.2]], "end": true}`),
		jsonRec("b", `{"points": [[0.1, 0.2]]}`),
		jsonRec("c", `{"points": [[0.1, 0.2]], "end": true}`),
	), 0)
	cp := p.CommitPoint()
	meta, err := ParseMetadata(cp.Metadata)
	if err != nil || cp.Offset != 11 || meta.ReplayUntil != 13 || p.Next() != 13 {
		t.Fatalf("commit point %+v (%v), next %d; want offset 11 (b's window is open) and replayUntil 13", cp, err, p.Next())
	}
}

// TestProcessOutOfOrder: offsets that do not increase are a caller bug: an error, and nothing
// of the call is processed.
func TestProcessOutOfOrder(t *testing.T) {
	e := newEnv(t, smallSpec)
	p, c := e.newProc(Config{}, nil)
	processAll(t, p, numbered(5, jsonRec("a", `{"points": [[0.1, 0.2]]}`)), 0)
	for _, recs := range [][]Record{
		numbered(5, jsonRec("a", `{"points": [[0.1, 0.2]]}`)),
		numbered(6, jsonRec("a", `{"points": [[0.1, 0.2]]}`), jsonRec("a", `{"points": [[0.1, 0.2]]}`)),
	} {
		if len(recs) == 2 {
			recs[1].Offset = 6
		}
		if _, err := p.Process(recs...); !errors.Is(err, ErrOutOfOrder) {
			t.Errorf("offsets %d..%d after 5: %v, want ErrOutOfOrder", recs[0].Offset, recs[len(recs)-1].Offset, err)
		}
	}
	if c.points != 1 || p.Next() != 6 {
		t.Errorf("points %d, next %d after refused calls; want 1 and 6", c.points, p.Next())
	}
}

// TestRestoreUnusable: metadata that is not distfeat's, a checkpoint of another window mode
// and one written under another spec are reported as ErrCheckpointMismatch (the consumer
// refuses to start on it unless told to reset), and the processor is then fresh (no replay
// suppression) from the given offset. v1 metadata (before the spec was recorded) of the
// same mode is still restored.
func TestRestoreUnusable(t *testing.T) {
	e := newEnv(t, smallSpec)
	timeMode := window.Config{Mode: "time", Size: 1000}
	tp, _ := e.newProc(Config{Window: timeMode}, nil)
	processAll(t, tp, numbered(0, jsonRec("a", `{"points": [[0.1, 0.2]], "t": 1700000000000}`)), 0)
	other := newEnv(t, mmdSpec)
	op, _ := other.newProc(Config{}, nil)
	processAll(t, op, numbered(0, jsonRec("a", `{"points": [[0.1, 0.2]]}`)), 0)
	for _, meta := range []string{"v3;3;x", "v1;x;", "v2;;1;", "garbage", tp.CommitPoint().Metadata, op.CommitPoint().Metadata} {
		p, c := e.newProc(Config{}, nil)
		if err := p.Restore(meta, 7); !errors.Is(err, ErrCheckpointMismatch) {
			t.Errorf("Restore(%q) in set mode with spec %s: %v, want ErrCheckpointMismatch", meta, e.emb.Spec().ID(), err)
		}
		res := processAll(t, p, numbered(7, jsonRec("a", `{"points": [[0.1, 0.2]], "end": true}`)), 0)
		if len(res) != 1 || c.records[ResultReplayed] != 0 || p.Replaying() {
			t.Errorf("after Restore(%q): %d messages, %d replayed; want a fresh start", meta, len(res), c.records[ResultReplayed])
		}
	}
	sp, _ := e.newProc(Config{}, nil)
	processAll(t, sp, numbered(0, jsonRec("a", `{"points": [[0.1, 0.2]]}`)), 0)
	cur, err := ParseMetadata(sp.CommitPoint().Metadata)
	if err != nil || cur.SpecID != e.emb.Spec().ID() {
		t.Fatalf("commit metadata %q: spec %q, %v; want spec %s", sp.CommitPoint().Metadata, cur.SpecID, err, e.emb.Spec().ID())
	}
	for _, meta := range []string{sp.CommitPoint().Metadata, Metadata{ReplayUntil: cur.ReplayUntil, Window: cur.Window}.String()} {
		p, _ := e.newProc(Config{}, nil)
		if err := p.Restore(meta, 0); err != nil || p.ReplayUntil() != 1 {
			t.Errorf("Restore(%q) = %v, replay until %d; want nil, 1", meta, err, p.ReplayUntil())
		}
	}
}

// TestMetadataRoundTrip: Metadata.String and ParseMetadata agree, and "" is a fresh start.
func TestMetadataRoundTrip(t *testing.T) {
	for _, m := range []Metadata{{}, {ReplayUntil: 42, Window: "window/v1;m=set;c=40;n=42"}, {ReplayUntil: 1 << 40, Window: "a;b;c"},
		{SpecID: "03ebf6d83027361a", ReplayUntil: 42, Window: "window/v1;m=set;c=40;n=42"}, {SpecID: "x", Window: "a;b"}} {
		got, err := ParseMetadata(m.String())
		if err != nil || got != m {
			t.Errorf("ParseMetadata(%q) = %+v, %v; want %+v", m.String(), got, err, m)
		}
	}
	if m, err := ParseMetadata(""); err != nil || m != (Metadata{}) {
		t.Errorf(`ParseMetadata("") = %+v, %v`, m, err)
	}
	for _, bad := range []string{"v1", "v1;-1;", "v0;1;x", "garbage", "v2;abc;1", "v2;;1;x", "v2;abc;-1;x"} {
		if _, err := ParseMetadata(bad); err == nil {
			t.Errorf("ParseMetadata(%q): no error", bad)
		}
	}
}
