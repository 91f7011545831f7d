package processor

import (
	"bytes"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/distfeat/distfeat/config"
	"github.com/distfeat/distfeat/embedding"
	"github.com/distfeat/distfeat/schema"
	"github.com/distfeat/distfeat/window"
)

// inputScript builds a sequence of input records for one partition together with what the
// processor must make of them: the dead-letter reason of each poison record (by position,
// i.e. by offset), the points of every window it must emit, and the counters it must move.
type inputScript struct {
	t       *testing.T
	rng     *embedding.RNG
	t0      int64
	recs    []Record
	reasons []string // per record: dead-letter reason, "" for a valid record
	names   []string // per record: the case name of a poison record

	open    map[string][]float64 // raw points of each set's open window (set mode)
	windows map[string][]float64 // raw points of each emitted window, by set (one window per set)
	points  int                  // valid points added to windows
	endNoWx int                  // expected OnEndWithoutWindow calls
}

func newInputScript(t *testing.T, seed uint64) *inputScript {
	return &inputScript{t: t, rng: embedding.NewRNG(seed, "badinput"), t0: 1_700_000_000_000,
		open: map[string][]float64{}, windows: map[string][]float64{}}
}

func (s *inputScript) add(r Record, reason, name string) {
	r.Offset = int64(len(s.recs))
	s.recs = append(s.recs, r)
	s.reasons = append(s.reasons, reason)
	s.names = append(s.names, name)
}

// valid appends a well-formed record of set (JSON or Arrow) and tracks its window.
func (s *inputScript) valid(format, set string, pts []float64, end bool) {
	s.t.Helper()
	b := schema.Batch{Set: set, Points: pts, N: len(pts) / 2, EventTime: s.t0 + int64(len(s.recs)), End: end}
	switch format {
	case "json":
		b.Set = "" // the key names the set
		s.add(jsonRec(set, string(encodeJSON(s.t, b))), "", "")
	case "arrow":
		s.add(arrowRec(set, encodeArrow(s.t, b)), "", "")
	default:
		s.t.Fatalf("format %q", format)
	}
	s.points += len(pts) / 2
	s.open[set] = append(s.open[set], pts...)
	if end {
		s.close(set)
	}
}

// close records that set's open window is emitted.
func (s *inputScript) close(set string) {
	if _, dup := s.windows[set]; dup {
		s.t.Fatalf("script bug: set %q would get a second window", set)
	}
	s.windows[set] = s.open[set]
	delete(s.open, set)
}

// raw appends a valid JSON record given verbatim (empty-points and end markers), with its
// effect on the windows: none, closes (an end for an open set) or end-without-window.
func (s *inputScript) raw(key, value string, effect string) {
	s.t.Helper()
	s.add(jsonRec(key, value), "", "")
	switch effect {
	case "none":
		if _, ok := s.open[key]; !ok && strings.Contains(value, `"end": true`) {
			s.t.Fatalf("script bug: %s for %q is an end without window", value, key)
		}
	case "closes":
		if _, ok := s.open[key]; !ok {
			s.t.Fatalf("script bug: %q has no open window to close", key)
		}
		s.close(key)
	case "end-without-window":
		if _, ok := s.open[key]; ok {
			s.t.Fatalf("script bug: %q has an open window", key)
		}
		s.endNoWx++
	default:
		s.t.Fatalf("effect %q", effect)
	}
}

// poisonCase is one record that must be dead-lettered with reason.
type poisonCase struct {
	name   string
	reason string
	rec    Record
}

// poisonCases is every kind of bad input of docs/input-output.md, for MaxMessageBytes 16 KiB and
// MaxPointsPerRecord 64 with rejectSpec. Most carry key "bg", the set of an open window.
func poisonCases(t *testing.T) []poisonCase {
	truncArrow := encodeArrow(t, schema.Batch{Set: "bg", Points: []float64{0.1, 0.2, 0.3, 0.4}, N: 2})
	big := `{"points":[` + strings.Repeat(`[0.5,0.5],`, (16<<10)/10+10) + `[0.5,0.5]]}` // > 16 KiB
	many := `{"points":[` + strings.Repeat(`[0.5,0.5],`, 64) + `[0.5,0.5]]}`            // 65 points, limit 64
	csv := jsonRec("bg", `{"points": [[0.1, 0.2]]}`)
	csv.Headers = []Header{{Key: schema.HeaderContentType, Value: []byte("text/csv")}}
	return []poisonCase{
		{"malformed JSON", schema.ReasonDecode, jsonRec("bg", `{"points": [[0.1, 0.2]`)},
		{"JSON NaN literal", schema.ReasonNonFinite, jsonRec("bg", `{"points": [[NaN, 0.2]]}`)},
		{"JSON -Infinity literal", schema.ReasonNonFinite, jsonRec("bg", `{"points": [[0.1, 0.2], [-Infinity, 0.2]]}`)},
		{"key with NUL", schema.ReasonDecode, jsonRec("bg\x00", `{"points": [[0.1, 0.2]]}`)},
		{"set with newline", schema.ReasonDecode, jsonRec("", `{"set": "bg\n", "points": [[0.1, 0.2]]}`)},
		{"t at int64 max", schema.ReasonDecode, jsonRec("bg", `{"points": [[0.1, 0.2]], "t": 9223372036854775807}`)},
		{"unknown JSON field", schema.ReasonDecode, jsonRec("bg", `{"points": [[0.1, 0.2]], "ends": true}`)},
		{"truncated Arrow", schema.ReasonDecode, arrowRec("bg", truncArrow[:len(truncArrow)/2])},
		{"unsupported content-type", schema.ReasonDecode, csv},
		{"no key and no set", schema.ReasonDecode, jsonRec("", `{"points": [[0.1, 0.2]], "end": true}`)},
		{"JSON wrong dimension", schema.ReasonDim, jsonRec("bg", `{"points": [[0.1, 0.2], [0.3, 0.4, 0.5]]}`)},
		{"Arrow wrong dimension", schema.ReasonDim, arrowRec("bg", arrowDim(t, "bg", 3, []float64{0.1, 0.2, 0.3}))},
		{"Arrow NaN", schema.ReasonNonFinite, arrowRec("bg", arrowDim(t, "bg", 2, []float64{0.1, 0.2, math.NaN(), 0.3}))},
		{"Arrow +Inf", schema.ReasonNonFinite, arrowRec("bg", arrowDim(t, "bg", 2, []float64{0.1, 0.2, 0.3, math.Inf(1)}))},
		{"Arrow -Inf", schema.ReasonNonFinite, arrowRec("bg", arrowDim(t, "bg", 2, []float64{math.Inf(-1), 0.2}))},
		{"JSON overflow to +Inf", schema.ReasonNonFinite, jsonRec("bg", `{"points": [[0.1, 0.2], [1e999, 0.2]]}`)},
		{"JSON overflow to -Inf", schema.ReasonNonFinite, jsonRec("bg", `{"points": [[-1e999, 0.2]]}`)},
		{"JSON set disagrees with key", schema.ReasonSetMismatch, jsonRec("bg", `{"set": "other", "points": [[0.1, 0.2]]}`)},
		{"Arrow set disagrees with key", schema.ReasonSetMismatch, arrowRec("bg", arrowDim(t, "other", 2, []float64{0.1, 0.2}))},
		{"key of 257 bytes", schema.ReasonTooLarge, jsonRec(strings.Repeat("k", 257), `{"points": [[0.1, 0.2]], "end": true}`)},
		{"JSON set of 300 bytes, no key", schema.ReasonTooLarge, jsonRec("", `{"set": "`+strings.Repeat("s", 300)+`", "points": [[0.1, 0.2]], "end": true}`)},
		{"Arrow set of 300 bytes, no key", schema.ReasonTooLarge, arrowRec("", arrowDim(t, strings.Repeat("s", 300), 2, []float64{0.1, 0.2}))},
		{"value over MaxMessageBytes", schema.ReasonTooLarge, jsonRec("bg", big)},
		{"points over MaxPointsPerRecord", schema.ReasonTooLarge, jsonRec("bg", many)},
		{"JSON set without a key", schema.ReasonNoKey, jsonRec("", `{"set": "bg", "points": [[0.1, 0.2]]}`)},
		{"Arrow set without a key", schema.ReasonNoKey, arrowRec("", arrowDim(t, "bg", 2, []float64{0.1, 0.2}))},
		{"end marker without a key", schema.ReasonNoKey, jsonRec("", `{"set": "bg", "end": true}`)},
		{"out of bounds (reject), above", schema.ReasonOutOfBounds, jsonRec("bg", `{"points": [[0.5, 0.5], [1.5, 0.5]]}`)},
		{"out of bounds (reject), below", schema.ReasonOutOfBounds, arrowRec("bg", arrowDim(t, "bg", 2, []float64{0.5, -0.01}))},
	}
}

// badInputScript interleaves every poison case with valid records of an open window ("bg")
// and whole valid sets, followed by the valid edge cases next to them.
func badInputScript(t *testing.T) *inputScript {
	s := newInputScript(t, 11)
	bgOK := func(format string) { s.valid(format, "bg", randomPoints(s.rng, 3), false) }
	bgOK("json")
	for i, c := range poisonCases(t) {
		s.add(c.rec, c.reason, c.name)
		// A valid record of the open window after each poison record, alternating formats,
		// and a whole valid set: the partition keeps flowing.
		bgOK([]string{"json", "arrow"}[i%2])
		s.valid("json", fmt.Sprintf("ok-%02d", i), randomPoints(s.rng, 4), true)
	}
	// Valid edge cases (no dead letter).
	s.valid("json", strings.Repeat("k", 256), randomPoints(s.rng, 2), true)  // a set ID of exactly 256 bytes
	s.valid("arrow", "edge", []float64{0, 0, 1, 1, 0, 1}, true)              // points on the bounds (reject keeps them)
	s.raw("never-seen", `{"points": [], "end": true}`, "end-without-window") // empty set: end, no window
	s.raw("unknown-set", `{"end": true}`, "end-without-window")              // end (no points field) for an unknown set
	s.raw("quiet", `{"points": []}`, "none")                                 // no points, no end, no window: nothing at all
	s.raw("bg", `{"points": []}`, "none")                                    // empty points for an open set: valid, no effect
	s.raw("bg", `{"points": [], "t": 5, "end": false}`, "none")
	s.valid("json", "dup", randomPoints(s.rng, 5), true)
	s.raw("dup", `{"points": [], "end": true}`, "end-without-window") // duplicate end
	s.raw("dup", `{"end": true}`, "end-without-window")               // and again
	s.valid("arrow", "closer", randomPoints(s.rng, 6), false)
	s.raw("closer", `{"points": [], "end": true}`, "closes") // empty-points end closes an open window
	bgOK("arrow")
	s.raw("bg", `{"points": [], "end": true}`, "closes")
	if len(s.open) != 0 {
		t.Fatalf("script bug: windows left open: %v", sortedKeys(s.open))
	}
	return s
}

// TestBadInputMatrix runs every kind of bad input of docs/input-output.md (and the valid edge
// cases next to them) through a processor, in the middle of an open window ("bg") whose key most
// poison records carry. Each poison record must become one dead letter, in order, with its
// reason, its original key, value and headers, and the source headers naming its offset, and be
// counted by reason; the documented non-DLQ cases (empty-points records, `end` for a set without
// a window) must emit nothing and be counted where documented; and the valid windows around them
// must be exactly the expected ones, bit-identical to the offline embedding of their points. The
// same records in one call, one by one and in uneven batches give the same output.
func TestBadInputMatrix(t *testing.T) {
	e := newEnv(t, rejectSpec)
	s := badInputScript(t)
	cfg := Config{Limits: config.Limits{MaxMessageBytes: 16 << 10, MaxPointsPerRecord: 64}}
	var first []Message
	for _, batch := range []int{1, 0, 7} {
		t.Run(fmt.Sprintf("batch=%d", batch), func(t *testing.T) {
			p, c := e.newProc(cfg, nil)
			msgs := processAll(t, p, s.recs, batch)
			if first == nil {
				first = msgs
			} else if d := sameMessages(msgs, first); d != "" {
				t.Fatalf("output differs from one-by-one processing: %s", d)
			}
			features, dead := split(msgs)
			checkDeadLetters(t, s, dead)
			checkWindowsExact(t, e, e.windowsBySet(features), s.windows)
			checkMatrixCounts(t, s, c)
		})
	}
}

// checkDeadLetters asserts that dead are exactly the script's poison records, in order.
func checkDeadLetters(t *testing.T, s *inputScript, dead []Message) {
	t.Helper()
	next := 0
	for off, reason := range s.reasons {
		if reason == "" {
			continue
		}
		if next >= len(dead) {
			t.Fatalf("%d dead letters, the script has more poison records (next: %s)", len(dead), s.names[off])
		}
		m, name, orig := dead[next], s.names[off], s.recs[off]
		next++
		if got := headerOf(m.Headers, schema.HeaderError); got != reason {
			t.Errorf("%s: error header %q, want %q (detail %q)", name, got, reason, headerOf(m.Headers, schema.HeaderErrorDetail))
		}
		if d := headerOf(m.Headers, schema.HeaderErrorDetail); d == "" || len(d) > MaxErrorDetail {
			t.Errorf("%s: error-detail of %d bytes, want 1..%d", name, len(d), MaxErrorDetail)
		}
		if got := headerOf(m.Headers, schema.HeaderSourceOffset); got != strconv.Itoa(off) || m.FirstOffset != int64(off) {
			t.Errorf("%s: source-offset %s (first offset %d), want %d", name, got, m.FirstOffset, off)
		}
		if headerOf(m.Headers, schema.HeaderSourceTopic) != topic || headerOf(m.Headers, schema.HeaderSourcePartition) != "0" {
			t.Errorf("%s: source headers %v", name, m.Headers)
		}
		if !bytes.Equal(m.Key, orig.Key) || !bytes.Equal(m.Value, orig.Value) || m.EventEnd != -1 {
			t.Errorf("%s: key/value not preserved", name)
		}
		for i, hd := range orig.Headers {
			if m.Headers[i].Key != hd.Key || !bytes.Equal(m.Headers[i].Value, hd.Value) {
				t.Errorf("%s: original header %s not preserved first", name, hd.Key)
			}
		}
	}
	if next != len(dead) {
		t.Errorf("%d dead letters, want %d", len(dead), next)
	}
}

// checkWindowsExact asserts that the windows are exactly want (one per set), each with the
// right n and bit-identical to the offline embedding of its points: a poison record that
// leaked even one point into a window would change its features.
func checkWindowsExact(t *testing.T, e *env, got map[string][]decoded, want map[string][]float64) {
	t.Helper()
	for _, set := range sortedKeys(got) {
		if _, ok := want[set]; !ok {
			t.Errorf("unexpected window(s) for set %.40q: %d", set, len(got[set]))
		}
	}
	for _, set := range sortedKeys(want) {
		ws := got[set]
		if len(ws) != 1 {
			t.Errorf("set %.40q: %d windows, want 1", set, len(ws))
			continue
		}
		pts, r := want[set], ws[0].rec
		if r.N != int64(len(pts)/2) {
			t.Errorf("set %.40q: n=%d, want %d", set, r.N, len(pts)/2)
			continue
		}
		if !e.sameAsOffline(r, pts) {
			t.Errorf("set %.40q: features differ from the offline embedding of its valid points: the window holds other points", set)
		}
	}
}

// checkMatrixCounts asserts the observer's counts for the bad-input script.
func checkMatrixCounts(t *testing.T, s *inputScript, c *counts) {
	t.Helper()
	wantDLQ, wantValid := 0, 0
	wantByReason := map[string]int{}
	for _, r := range s.reasons {
		if r == "" {
			wantValid++
		} else {
			wantDLQ++
			wantByReason[r]++
		}
	}
	for _, reason := range []string{schema.ReasonDecode, schema.ReasonDim, schema.ReasonNonFinite, schema.ReasonSetMismatch,
		schema.ReasonTooLarge, schema.ReasonLate, schema.ReasonOutOfBounds, schema.ReasonNoKey} {
		if got := c.invalid[reason]; got != wantByReason[reason] {
			t.Errorf("invalid{reason=%q} = %d, want %d", reason, got, wantByReason[reason])
		}
	}
	checks := []struct {
		name      string
		got, want int
	}{
		{"records{ok}", c.records[ResultOK], wantValid},
		{"records{invalid}", c.records[ResultInvalid], wantDLQ},
		{"records{replayed}", c.records[ResultReplayed], 0},
		{"dead letters", c.dead, wantDLQ},
		{"end without window", c.endNoWin, s.endNoWx},
		{"windows emitted{end}", c.emitted[window.ReasonEnd], len(s.windows)},
		{"points", c.points, s.points},
		{"clipped", c.clipped, 0},
		{"encode errors", c.encodeErr, 0},
	}
	for _, x := range checks {
		if x.got != x.want {
			t.Errorf("%s = %d, want %d", x.name, x.got, x.want)
		}
	}
}

// TestLateRecordsTimeMode: in time mode, records for windows the watermark already closed are
// dead-lettered as `late` (once per record, also when an Arrow record holds several late
// sets), counted as invalid{late} and not as ok records, and the windows around them hold
// exactly the on-time points.
func TestLateRecordsTimeMode(t *testing.T) {
	e := newEnv(t, smallSpec)
	const size = 10_000
	// Records holding several sets have no key (a key must name every set of its record):
	// this test is about their lateness, so keyless records are allowed here.
	p, c := e.newProc(Config{Window: window.Config{Mode: "time", Size: size, IdleTimeout: time.Minute}, AllowKeyless: true}, nil)

	const t0 = 1_700_000_000_000 // a multiple of size: windows [t0, t0+10s), [t0+10s, t0+20s), …
	rng := embedding.NewRNG(12, "late")
	pts := func(n int) []float64 { return randomPoints(rng, n) }
	rec := func(set string, ts int64, p []float64) Record {
		return jsonRec(set, string(encodeJSON(t, schema.Batch{Points: p, N: len(p) / 2, EventTime: ts})))
	}
	p0, p1, p2, p3 := pts(2), pts(1), pts(1), pts(1)
	twoLate := encodeArrow(t,
		schema.Batch{Set: "t", Points: pts(1), N: 1, EventTime: t0 + 2_000},
		schema.Batch{Set: "t2", Points: pts(2), N: 2, EventTime: t0 + 3_000})
	// One on-time set (window 1 is open) and one late set: all or nothing, so none of it
	// may reach window 1.
	partlyLate := encodeArrow(t,
		schema.Batch{Set: "t", Points: pts(4), N: 4, EventTime: t0 + 13_000},
		schema.Batch{Set: "t3", Points: pts(1), N: 1, EventTime: t0 + 2_000})
	recs := numbered(0,
		rec("t", t0, p0),           // window 0
		rec("t", t0+12_000, p1),    // window 1; watermark t0+12s closes window 0 (n=2)
		rec("t", t0+1_000, pts(3)), // late: window 0 is closed
		arrowRec("", twoLate),      // two sets, both late: one dead letter
		rec("t", t0+15_000, p2),    // window 1
		arrowRec("", partlyLate),   // on-time t + late t3: dead-lettered whole, nothing applied
		rec("t", t0+9_999, pts(1)), // late (last ms of window 0)
		rec("t", t0+31_000, p3),    // window 3; closes window 1 (n=2); window 3 stays open
	)
	wantLate := map[int64]bool{2: true, 3: true, 5: true, 6: true}
	features, dead := split(processAll(t, p, recs, 1))

	if len(dead) != len(wantLate) {
		t.Errorf("%d dead letters, want %d (one per late record)", len(dead), len(wantLate))
	}
	for _, m := range dead {
		if headerOf(m.Headers, schema.HeaderError) != schema.ReasonLate || !wantLate[m.FirstOffset] {
			t.Errorf("dead letter for offset %d with error %q (detail %q), want late records at 2, 3, 5, 6",
				m.FirstOffset, headerOf(m.Headers, schema.HeaderError), headerOf(m.Headers, schema.HeaderErrorDetail))
		}
	}
	got := e.windowsBySet(features)
	if len(got) != 1 || len(got["t"]) != 2 {
		t.Fatalf("windows %v, want two of set t", got)
	}
	for i, want := range [][]float64{p0, append(append([]float64(nil), p1...), p2...)} {
		r := got["t"][i].rec
		if r.N != int64(len(want)/2) || r.WindowStart != t0+int64(i)*size || r.WindowEnd != t0+int64(i+1)*size {
			t.Errorf("window %d: n=%d [%d,%d), want n=%d [%d,%d)", i, r.N, r.WindowStart, r.WindowEnd, len(want)/2, t0+int64(i)*size, t0+int64(i+1)*size)
		}
		if !e.sameAsOffline(r, want) {
			t.Errorf("window %d: features differ from the offline embedding of its on-time points", i)
		}
	}
	if c.invalid[schema.ReasonLate] != len(wantLate) || c.dead != len(wantLate) {
		t.Errorf("invalid{late} = %d, dead letters %d, want %d", c.invalid[schema.ReasonLate], c.dead, len(wantLate))
	}
	if got := c.records[ResultOK]; got != len(recs)-len(wantLate) {
		t.Errorf("records{ok} = %d, want %d (late records are not ok)", got, len(recs)-len(wantLate))
	}
}

// TestKeyless: a record without a key whose value names a set is dead-lettered as no_key by
// default, whatever the window mode, and none of its points reach a window; with
// AllowKeyless it is windowed like a keyed record.
func TestKeyless(t *testing.T) {
	e := newEnv(t, smallSpec)
	recs := func() []Record {
		return numbered(0,
			jsonRec("k", `{"points": [[0.1, 0.2]], "t": 1700000000000}`),
			jsonRec("", `{"set": "k", "points": [[0.3, 0.4]], "t": 1700000000001}`),
			arrowRec("", encodeArrow(t, schema.Batch{Set: "k", Points: []float64{0.5, 0.6}, N: 1, EventTime: 1_700_000_000_002})),
			jsonRec("k", `{"points": [[0.7, 0.8]], "t": 1700000000003, "end": true}`),
			jsonRec("k", `{"points": [[0.9, 0.9]], "t": 1700000099999, "end": true}`),
		)
	}
	for _, wc := range []window.Config{{Mode: "set"}, {Mode: "time", Size: 60_000}, {Mode: "session", Gap: 60_000}} {
		t.Run(string(wc.Mode), func(t *testing.T) {
			p, c := e.newProc(Config{Window: wc}, nil)
			features, dead := split(processAll(t, p, recs(), 1))
			if len(dead) != 2 || c.invalid[schema.ReasonNoKey] != 2 || dead[0].FirstOffset != 1 || dead[1].FirstOffset != 2 {
				t.Fatalf("%d dead letters (%v), want offsets 1 and 2 as no_key", len(dead), c.invalid)
			}
			if d := headerOf(dead[0].Headers, schema.HeaderErrorDetail); !strings.Contains(d, `"k"`) || !strings.Contains(d, "key") {
				t.Errorf("no_key detail %q does not name the set and the remedy", d)
			}
			w := e.windowsBySet(features)["k"]
			if len(w) == 0 || !e.sameAsOffline(w[0].rec, []float64{0.1, 0.2, 0.7, 0.8}) {
				t.Errorf("first window of k: %d windows; want exactly the keyed points", len(w))
			}
			p, _ = e.newProc(Config{Window: wc, AllowKeyless: true}, nil)
			features, dead = split(processAll(t, p, recs(), 1))
			w = e.windowsBySet(features)["k"]
			if len(dead) != 0 || len(w) == 0 || !e.sameAsOffline(w[0].rec, []float64{0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8}) {
				t.Errorf("AllowKeyless: %d dead letters, %d windows; want the keyless points windowed", len(dead), len(w))
			}
		})
	}
}

// TestRecordTimeFallback: a record without t takes its Kafka timestamp as the event time of
// its window; one without any timestamp (Kafka's −1, a zero time) counts as 0, not as year 1.
func TestRecordTimeFallback(t *testing.T) {
	e := newEnv(t, smallSpec)
	for _, tc := range []struct {
		name string
		at   time.Time
		want int64
	}{
		{"timestamp", time.UnixMilli(1_732_000_000_123), 1_732_000_000_123},
		{"no timestamp", time.Time{}, 0},
		{"before the epoch", time.UnixMilli(-1), 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, _ := e.newProc(Config{}, nil)
			rec := jsonRec("a", `{"points":[[0.1,0.2],[0.3,0.4]],"end":true}`)
			rec.Time = tc.at
			features, dead := split(processAll(t, p, numbered(0, rec), 1))
			if len(dead) != 0 || len(features) != 1 {
				t.Fatalf("%d features, %d dead letters; want 1 window", len(features), len(dead))
			}
			w := e.windowsBySet(features)["a"][0]
			if w.rec.WindowStart != tc.want || w.rec.WindowEnd != tc.want {
				t.Errorf("window [%d, %d], want event time %d", w.rec.WindowStart, w.rec.WindowEnd, tc.want)
			}
		})
	}
}

// TestFutureEventTime (issue 32): in time windows one record with t = 253402300799999 moved
// the partition's watermark to the year 9999, and every later valid record on the partition
// was dead-lettered as late. An event time more than Window.MaxLead ahead of its record's
// timestamp is now dead-lettered as future, in every mode, and the watermark never moves on
// it; within the lead, or without a timestamp to bound it by, a record is windowed as before.
func TestFutureEventTime(t *testing.T) {
	e := newEnv(t, smallSpec)
	const now, lead = 1_732_000_000_000, 60_000
	at := func(rec Record, ms int64) Record { rec.Time = time.UnixMilli(ms); return rec }
	for _, tc := range []struct {
		name       string
		wc         window.Config
		recs       []Record
		wantFuture []int64 // offsets dead-lettered as future
		wantPoints int     // points in the emitted windows
	}{
		{"time: year 9999", window.Config{Mode: "time", Size: 10_000, MaxLead: lead}, []Record{
			at(jsonRec("a", `{"points": [[0.1, 0.2]], "t": 1732000000000}`), now),
			at(jsonRec("b", `{"points": [[0.3, 0.4]], "t": 253402300799999}`), now+1),
			at(jsonRec("a", `{"points": [[0.5, 0.6]], "t": 1732000001000}`), now+1000),
			at(jsonRec("c", `{"points": [[0.5, 0.6], [0.7, 0.8]], "t": 1732000030000}`), now+30_000),
		}, []int64{1}, 2}, // a's first window closes when c moves the watermark; c's stays open
		{"time: within the lead", window.Config{Mode: "time", Size: 10_000, MaxLead: lead}, []Record{
			at(jsonRec("a", `{"points": [[0.1, 0.2]], "t": 1732000060000}`), now),
			at(jsonRec("a", `{"points": [[0.3, 0.4]], "t": 1732000090000}`), now+30_000),
		}, nil, 1},
		{"session: one batch of an Arrow record", window.Config{Mode: "session", Gap: 5_000, MaxLead: lead}, []Record{
			at(arrowRec("", encodeArrow(t,
				schema.Batch{Set: "a", Points: []float64{0.1, 0.2}, N: 1, EventTime: now},
				schema.Batch{Set: "b", Points: []float64{0.3, 0.4}, N: 1, EventTime: now + lead + 1})), now),
			at(jsonRec("a", `{"points": [[0.5, 0.6]], "t": 1732000001000}`), now+1000),
			at(jsonRec("z", `{"points": [[0.5, 0.6]], "t": 1732000020000}`), now+20_000),
		}, []int64{0}, 1}, // the whole record is refused, a's batch too (as for late)
		{"set: future too", window.Config{Mode: "set", MaxLead: lead}, []Record{
			at(jsonRec("a", `{"points": [[0.1, 0.2]], "t": 253402300799999, "end": true}`), now),
			at(jsonRec("a", `{"points": [[0.3, 0.4]], "end": true}`), now),
		}, []int64{0}, 1},
		{"no timestamp: nothing to bound by", window.Config{Mode: "set", MaxLead: lead}, []Record{
			jsonRec("a", `{"points": [[0.1, 0.2]], "t": 253402300799999, "end": true}`),
		}, nil, 1},
		{"bound off", window.Config{Mode: "set"}, []Record{
			at(jsonRec("a", `{"points": [[0.1, 0.2]], "t": 253402300799999, "end": true}`), now),
		}, nil, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := Config{Window: tc.wc, AllowKeyless: true}
			p, c := e.newProc(cfg, nil)
			features, dead := split(processAll(t, p, numbered(0, tc.recs...), 1))
			var future []int64
			for _, d := range dead {
				reason := headerOf(d.Headers, schema.HeaderError)
				if reason != schema.ReasonFuture {
					t.Errorf("offset %d dead-lettered as %s (%s)", d.FirstOffset, reason, headerOf(d.Headers, schema.HeaderErrorDetail))
					continue
				}
				if detail := headerOf(d.Headers, schema.HeaderErrorDetail); !strings.Contains(detail, "DISTFEAT_MAX_EVENT_LEAD") {
					t.Errorf("future detail %q does not name DISTFEAT_MAX_EVENT_LEAD", detail)
				}
				future = append(future, d.FirstOffset)
			}
			if !slices.Equal(future, tc.wantFuture) || c.invalid[schema.ReasonLate] != 0 {
				t.Errorf("future at offsets %v, want %v; %d late", future, tc.wantFuture, c.invalid[schema.ReasonLate])
			}
			n := 0
			for _, ws := range e.windowsBySet(features) {
				for _, w := range ws {
					n += int(w.rec.N)
				}
			}
			if n != tc.wantPoints {
				t.Errorf("%d points in the emitted windows, want %d", n, tc.wantPoints)
			}
		})
	}
}

// TestPartialWindowHeaders (issue 32): a window some of whose set's records were
// dead-lettered came out looking complete (n = 3 of 5 points, nothing else). Its feature
// record now carries rejected-records (records of the set dead-lettered while the window was
// open, late ones excepted) and rejected-points (their points, where the record decoded far
// enough to count them); a complete window carries neither, and the Arrow value is unchanged.
func TestPartialWindowHeaders(t *testing.T) {
	e := newEnv(t, smallSpec)
	const now = 1_732_000_000_000
	at := func(rec Record, ms int64) Record { rec.Time = time.UnixMilli(ms); return rec }
	type want struct{ records, points string } // "" : header absent
	for _, tc := range []struct {
		name string
		wc   window.Config
		recs []Record
		want map[string]want // by set, of its first emitted window
	}{
		{"set: a NaN point, an undecodable record, an out-of-lead t", window.Config{Mode: "set", MaxLead: 60_000}, []Record{
			at(jsonRec("c", `{"points": [[0.1, NaN]]}`), now), // before c has a window: not counted
			at(jsonRec("a", `{"points": [[0.1, 0.2], [0.3, 0.4], [0.5, 0.6]]}`), now),
			at(jsonRec("c", `{"points": [[0.1, 0.2]]}`), now),
			at(jsonRec("a", `{"points": [[0.1, NaN], [0.2, 0.2]]}`), now),
			at(jsonRec("a", `{"points": [[0.1, 0.2`), now),
			at(jsonRec("a", `{"points": [[0.5, 0.5]], "t": 1732000999999}`), now),
			at(jsonRec("a", `{"points": [[0.7, 0.8]], "end": true}`), now),
			at(jsonRec("c", `{"points": [], "end": true}`), now),
			at(jsonRec("a", `{"points": [[0.7, 0.8]], "end": true}`), now), // the next window: complete
		}, map[string]want{"a": {"3", ""}, "c": {}}}, // the NaN and broken records' points are unknown
		{"set: every rejected record's points counted", window.Config{Mode: "set", MaxLead: 60_000}, []Record{
			at(jsonRec("a", `{"points": [[0.1, 0.2], [0.3, 0.4], [0.5, 0.6]]}`), now),
			at(jsonRec("a", `{"points": [[0.5, 0.5], [0.6, 0.6]], "t": 1732000999999}`), now),
			at(jsonRec("a", `{"points": [[0.5, 0.5]], "t": 1732000999999}`), now),
			at(jsonRec("a", `{"points": [[0.7, 0.8]], "end": true}`), now),
		}, map[string]want{"a": {"2", "3"}}},
		{"count: the count resets with each window", window.Config{Mode: "count", Size: 2, MaxLead: 60_000}, []Record{
			at(jsonRec("a", `{"points": [[0.1, 0.2]]}`), now),
			at(jsonRec("a", `{"points": [[0.1, 0.3], [0.1, 0.1], [0.1, 0.1]], "t": 1732000999999}`), now),
			at(jsonRec("a", `{"points": [[0.3, 0.4], [0.5, 0.6]]}`), now),
		}, map[string]want{"a": {"1", "3"}}},
		{"time: late records are not counted", window.Config{Mode: "time", Size: 10_000}, []Record{
			jsonRec("a", `{"points": [[0.1, 0.2]], "t": 1732000000000}`),
			jsonRec("b", `{"points": [[0.1, 0.2]], "t": 1732000020000}`),
			jsonRec("a", `{"points": [[0.1, 0.2]], "t": 1732000001000}`), // late: a's window closed
			jsonRec("a", `{"points": [[0.1, 0.2]], "t": 1732000021000}`),
			jsonRec("a", `{"points": [[0.1, 0.2], [9, 9, 9]], "t": 1732000021000}`), // dim: counted, points unknown
			jsonRec("z", `{"points": [[0.1, 0.2]], "t": 1732000040000}`),
		}, map[string]want{"a": {}, "b": {}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, _ := e.newProc(Config{Window: tc.wc}, nil)
			features, _ := split(processAll(t, p, numbered(0, tc.recs...), 2))
			first := map[string]Message{}
			for _, m := range features {
				if _, ok := first[string(m.Key)]; !ok {
					first[string(m.Key)] = m
				}
			}
			for set, w := range tc.want {
				m, ok := first[set]
				if !ok {
					t.Fatalf("no window of %s", set)
				}
				r, pts := headerOf(m.Headers, schema.HeaderRejectedRecords), headerOf(m.Headers, schema.HeaderRejectedPoints)
				if r != w.records || pts != w.points {
					t.Errorf("%s: rejected-records %q, rejected-points %q; want %q, %q", set, r, pts, w.records, w.points)
				}
			}
			if strings.HasPrefix(tc.name, "set: a NaN") {
				// a's second window is complete: no headers.
				var second []Message
				for _, m := range features {
					if string(m.Key) == "a" {
						second = append(second, m)
					}
				}
				if len(second) != 2 || headerOf(second[1].Headers, schema.HeaderRejectedRecords) != "" {
					t.Errorf("a's second window: %d windows of a, headers %v", len(second), second[len(second)-1].Headers)
				}
			}
		})
	}
}
