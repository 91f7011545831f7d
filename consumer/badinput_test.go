package consumer

import (
	"bytes"
	"fmt"
	"math"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/array"
	"github.com/apache/arrow/go/v15/arrow/ipc"
	"github.com/apache/arrow/go/v15/arrow/memory"
	"github.com/segmentio/kafka-go"

	"github.com/distfeat/distfeat/embedding"
	"github.com/distfeat/distfeat/schema"
	"github.com/distfeat/distfeat/window"
)

// rejectSpec is smallSpec with out_of_bounds=reject, so that the bad-input matrix covers that
// reason too (valid points are all inside [0,1]², where clip and reject agree).
const rejectSpec = `{"version":1,"seed":7,"dim":2,"bounds":{"lo":[0,0],"hi":[1,1]},"out_of_bounds":"reject",
 "families":[{"name":"mmd","kind":"mmd","features":64,"bandwidth":0.2},
             {"name":"hdd_js","kind":"hdd","divergence":"js","features":64,"sigma":0.5,"grid":16,"basis":10,"lambdas":3},
             {"name":"l2","kind":"l2","basis":10}]}`

// inputScript builds a sequence of input records for one partition together with what the
// worker must make of them: the dead-letter reason of each poison record (by position, i.e.
// by offset on a fresh single-partition topic), the points of every window it must emit, and
// the counters it must move.
type inputScript struct {
	t       *testing.T
	rng     *embedding.RNG
	t0      int64
	msgs    []kafka.Message
	reasons []string // per message: dead-letter reason, "" for a valid record

	open    map[string][]float64 // raw points of each set's open window (set mode)
	windows map[string][]float64 // raw points of each emitted window, by set (one window per set)
	points  int                  // valid points added to windows
	endNoWx int                  // expected distfeat_end_without_window_total
}

func newInputScript(t *testing.T, seed uint64) *inputScript {
	return &inputScript{t: t, rng: embedding.NewRNG(seed, "badinput"), t0: 1_700_000_000_000,
		open: map[string][]float64{}, windows: map[string][]float64{}}
}

func (s *inputScript) randomPoints(n int) []float64 {
	pts := make([]float64, 2*n)
	for i := range pts {
		pts[i] = s.rng.Float64()
	}
	return pts
}

// valid appends a well-formed record of set (JSON or Arrow) and tracks its window.
func (s *inputScript) valid(format, set string, pts []float64, end bool) {
	s.t.Helper()
	b := schema.Batch{Set: set, Points: pts, N: len(pts) / 2, EventTime: s.t0 + int64(len(s.msgs)), End: end}
	var msg kafka.Message
	switch format {
	case "json":
		b.Set = "" // the key names the set
		v, err := schema.EncodeJSON(b)
		if err != nil {
			s.t.Fatal(err)
		}
		msg = kafka.Message{Key: []byte(set), Value: v}
	case "arrow":
		v, err := schema.EncodeArrow(2, []schema.Batch{b})
		if err != nil {
			s.t.Fatal(err)
		}
		msg = arrowMsg(set, v)
	default:
		s.t.Fatalf("format %q", format)
	}
	s.msgs = append(s.msgs, msg)
	s.reasons = append(s.reasons, "")
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

// poison appends a record that must be dead-lettered with reason.
func (s *inputScript) poison(reason string, msg kafka.Message) {
	s.msgs = append(s.msgs, msg)
	s.reasons = append(s.reasons, reason)
}

// raw appends a valid JSON record given verbatim (empty-points and end markers), with its
// effect on the windows: closes (an end for an open set) or endWithoutWindow.
func (s *inputScript) raw(key, value string, effect string) {
	s.t.Helper()
	s.msgs = append(s.msgs, jsonMsg(key, value))
	s.reasons = append(s.reasons, "")
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

func jsonMsg(key, value string) kafka.Message {
	return kafka.Message{Key: []byte(key), Value: []byte(value)}
}

func arrowMsg(key string, v []byte) kafka.Message {
	return kafka.Message{Key: []byte(key), Value: v, Headers: []kafka.Header{{Key: "content-type", Value: []byte(schema.ContentTypeArrow)}}}
}

// produceOrdered writes msgs to the (single-partition) points topic in one produce request,
// so that their offsets are 0, 1, … in slice order on a fresh topic.
func (h *harness) produceOrdered(msgs []kafka.Message) {
	h.t.Helper()
	w := &kafka.Writer{Addr: kafka.TCP(h.env.Brokers...), Topic: h.env.Points, Balancer: &kafka.LeastBytes{},
		RequiredAcks: kafka.RequireAll, BatchTimeout: time.Millisecond, BatchSize: len(msgs) + 1, BatchBytes: 4 << 20,
		Transport: &kafka.Transport{}}
	defer w.Close()
	ctx, cancel := testContext(30 * time.Second)
	defer cancel()
	if err := w.WriteMessages(ctx, msgs...); err != nil {
		h.t.Fatalf("produce %d records: %v", len(msgs), err)
	}
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

// decodedWindow is one delivered feature record.
type decodedWindow struct {
	rec schema.FeatureRecord
	msg kafka.Message
}

// windowsBySet decodes delivered feature records (deduplicated by window, duplicates checked
// byte-identical by byWindow) and groups them by set.
func windowsBySet(t *testing.T, msgs []kafka.Message) map[string][]decodedWindow {
	t.Helper()
	out := map[string][]decodedWindow{}
	for _, wm := range sortedWindowIDs(byWindow(t, msgs)) {
		recs, _, err := schema.DecodeFeatures(wm.msg.Value)
		if err != nil || len(recs) != 1 {
			t.Fatalf("window %s/%s: decode: %v (%d rows)", wm.msg.Key, headerOf(wm.msg, "window-id"), err, len(recs))
		}
		out[recs[0].Set] = append(out[recs[0].Set], decodedWindow{rec: recs[0], msg: wm.msg})
	}
	return out
}

// checkWindowsExact asserts that the delivered windows are exactly want (one per set), each
// with the right n and bit-identical to the offline embedding of its points: a poison record
// that leaked even one point into a window would change its features.
func (h *harness) checkWindowsExact(t *testing.T, got map[string][]decodedWindow, want map[string][]float64) {
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
		pts := want[set]
		r := ws[0].rec
		if r.N != int64(len(pts)/2) {
			t.Errorf("set %.40q: n=%d, want %d", set, r.N, len(pts)/2)
			continue
		}
		if !h.sameAsOffline(t, r, pts) {
			t.Errorf("set %.40q: features differ from the offline embedding of its valid points: the window holds other points", set)
		}
	}
}

// sameAsOffline reports whether r's vectors are bit-identical to the offline embedding of pts.
func (h *harness) sameAsOffline(t *testing.T, r schema.FeatureRecord, pts []float64) bool {
	t.Helper()
	want := h.offline(t, schema.Batch{Points: pts, N: len(pts) / 2})
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

// TestBadInputMatrix runs every kind of bad input of DESIGN §4 (and the valid edge cases next
// to them) through a running worker on one partition, in the middle of an open window ("bg")
// whose key most poison records carry. Each poison record must reach the DLQ once, in order,
// with its reason and the source headers naming its offset, and be counted in
// records_invalid_total{reason}; the documented non-DLQ cases (empty-points records, `end`
// for a set without a window) must emit nothing and be counted where documented; and the
// valid windows around them must be exactly the expected ones, bit-identical to the offline
// embedding of their points.
func TestBadInputMatrix(t *testing.T) {
	h := newHarness(t, 1, rejectSpec)
	features := h.collect(h.env.Features)
	dlq := h.collect(h.env.DLQ)
	cfg := h.config("badinput", window.Config{})
	cfg.MaxMessageBytes = 16 << 10
	cfg.MaxPointsPerRecord = 64
	rw := h.start(cfg, nil)

	s := newInputScript(t, 11)
	bgOK := func(format string) { s.valid(format, "bg", s.randomPoints(3), false) }
	truncArrow, err := schema.EncodeArrow(2, []schema.Batch{{Set: "bg", Points: []float64{0.1, 0.2, 0.3, 0.4}, N: 2}})
	if err != nil {
		t.Fatal(err)
	}
	big := `{"points":[` + strings.Repeat(`[0.5,0.5],`, (16<<10)/10+10) + `[0.5,0.5]]}` // > 16 KiB
	many := `{"points":[` + strings.Repeat(`[0.5,0.5],`, 64) + `[0.5,0.5]]}`            // 65 points, limit 64
	key256, key257 := strings.Repeat("k", 256), strings.Repeat("k", 257)

	bgOK("json")
	cases := []struct {
		name   string
		reason string
		msg    kafka.Message
	}{
		{"malformed JSON", schema.ReasonDecode, jsonMsg("bg", `{"points": [[0.1, 0.2]`)},
		{"JSON NaN literal (not JSON)", schema.ReasonDecode, jsonMsg("bg", `{"points": [[NaN, 0.2]]}`)},
		{"unknown JSON field", schema.ReasonDecode, jsonMsg("bg", `{"points": [[0.1, 0.2]], "ends": true}`)},
		{"truncated Arrow", schema.ReasonDecode, arrowMsg("bg", truncArrow[:len(truncArrow)/2])},
		{"unsupported content-type", schema.ReasonDecode, kafka.Message{Key: []byte("bg"), Value: []byte(`{"points": [[0.1, 0.2]]}`),
			Headers: []kafka.Header{{Key: "content-type", Value: []byte("text/csv")}}}},
		{"no key and no set", schema.ReasonDecode, jsonMsg("", `{"points": [[0.1, 0.2]], "end": true}`)},
		{"JSON wrong dimension", schema.ReasonDim, jsonMsg("bg", `{"points": [[0.1, 0.2], [0.3, 0.4, 0.5]]}`)},
		{"Arrow wrong dimension", schema.ReasonDim, arrowMsg("bg", arrowDim(t, "bg", 3, []float64{0.1, 0.2, 0.3}))},
		{"Arrow NaN", schema.ReasonNonFinite, arrowMsg("bg", arrowDim(t, "bg", 2, []float64{0.1, 0.2, math.NaN(), 0.3}))},
		{"Arrow +Inf", schema.ReasonNonFinite, arrowMsg("bg", arrowDim(t, "bg", 2, []float64{0.1, 0.2, 0.3, math.Inf(1)}))},
		{"Arrow -Inf", schema.ReasonNonFinite, arrowMsg("bg", arrowDim(t, "bg", 2, []float64{math.Inf(-1), 0.2}))},
		{"JSON overflow to +Inf", schema.ReasonNonFinite, jsonMsg("bg", `{"points": [[0.1, 0.2], [1e999, 0.2]]}`)},
		{"JSON overflow to -Inf", schema.ReasonNonFinite, jsonMsg("bg", `{"points": [[-1e999, 0.2]]}`)},
		{"JSON set disagrees with key", schema.ReasonSetMismatch, jsonMsg("bg", `{"set": "other", "points": [[0.1, 0.2]]}`)},
		{"Arrow set disagrees with key", schema.ReasonSetMismatch, arrowMsg("bg", arrowDim(t, "other", 2, []float64{0.1, 0.2}))},
		{"key of 257 bytes", schema.ReasonTooLarge, jsonMsg(key257, `{"points": [[0.1, 0.2]], "end": true}`)},
		{"JSON set of 300 bytes, no key", schema.ReasonTooLarge, jsonMsg("", `{"set": "`+strings.Repeat("s", 300)+`", "points": [[0.1, 0.2]], "end": true}`)},
		{"Arrow set of 300 bytes, no key", schema.ReasonTooLarge, arrowMsg("", arrowDim(t, strings.Repeat("s", 300), 2, []float64{0.1, 0.2}))},
		{"value over MaxMessageBytes", schema.ReasonTooLarge, jsonMsg("bg", big)},
		{"points over MaxPointsPerRecord", schema.ReasonTooLarge, jsonMsg("bg", many)},
		{"out of bounds (reject), above", schema.ReasonOutOfBounds, jsonMsg("bg", `{"points": [[0.5, 0.5], [1.5, 0.5]]}`)},
		{"out of bounds (reject), below", schema.ReasonOutOfBounds, arrowMsg("bg", arrowDim(t, "bg", 2, []float64{0.5, -0.01}))},
	}
	for i, c := range cases {
		s.poison(c.reason, c.msg)
		// A valid record of the open window after each poison record, alternating formats,
		// and a whole valid set: the partition keeps flowing.
		bgOK([]string{"json", "arrow"}[i%2])
		s.valid("json", fmt.Sprintf("ok-%02d", i), s.randomPoints(4), true)
	}

	// Valid edge cases (no dead letter).
	s.valid("json", key256, s.randomPoints(2), true)                         // a set ID of exactly 256 bytes
	s.valid("arrow", "edge", []float64{0, 0, 1, 1, 0, 1}, true)              // points on the bounds (reject keeps them)
	s.raw("never-seen", `{"points": [], "end": true}`, "end-without-window") // empty set: end, no window
	s.raw("unknown-set", `{"end": true}`, "end-without-window")              // end (no points field) for an unknown set
	s.raw("quiet", `{"points": []}`, "none")                                 // no points, no end, no window: nothing at all
	s.raw("bg", `{"points": []}`, "none")                                    // empty points for an open set: valid, no effect
	s.raw("bg", `{"points": [], "t": 5, "end": false}`, "none")
	s.valid("json", "dup", s.randomPoints(5), true)
	s.raw("dup", `{"points": [], "end": true}`, "end-without-window") // duplicate end
	s.raw("dup", `{"end": true}`, "end-without-window")               // and again
	s.valid("arrow", "closer", s.randomPoints(6), false)
	s.raw("closer", `{"points": [], "end": true}`, "closes") // empty-points end closes an open window
	bgOK("arrow")
	s.raw("bg", `{"points": [], "end": true}`, "closes")
	s.valid("json", "zz-last", s.randomPoints(2), true) // sentinel: the last record

	if len(s.open) != 0 {
		t.Fatalf("script bug: windows left open: %v", sortedKeys(s.open))
	}
	h.produceOrdered(s.msgs)

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
	// One partition, ordered output: once the sentinel's window and every dead letter are
	// there, the worker has processed every record (and any extra output would be there too,
	// ahead of the sentinel).
	features.waitFor(t, 60*time.Second, "the sentinel window", func(m []kafka.Message) bool {
		for _, x := range m {
			if string(x.Key) == "zz-last" {
				return true
			}
		}
		return false
	})
	dl := dlq.waitDrained(h, h.env.DLQ, 30*time.Second)
	feat := features.waitDrained(h, h.env.Features, 30*time.Second)

	// Dead letters: exactly the poison records, in offset order, each once.
	if len(dl) != wantDLQ {
		t.Errorf("%d dead letters, want %d", len(dl), wantDLQ)
	}
	next := 0
	for off, r := range s.reasons {
		if r == "" {
			continue
		}
		name := cases[next].name
		if next >= len(dl) {
			break
		}
		m := dl[next]
		next++
		if got := headerOf(m, "error"); got != r {
			t.Errorf("%s: error header %q, want %q (detail %q)", name, got, r, headerOf(m, "error-detail"))
		}
		if headerOf(m, "error-detail") == "" {
			t.Errorf("%s: empty error-detail", name)
		}
		if got := headerOf(m, "source-offset"); got != strconv.Itoa(off) {
			t.Errorf("%s: source-offset %s, want %d", name, got, off)
		}
		if headerOf(m, "source-topic") != h.env.Points || headerOf(m, "source-partition") != "0" {
			t.Errorf("%s: source headers %q/%q", name, headerOf(m, "source-topic"), headerOf(m, "source-partition"))
		}
		if !bytes.Equal(m.Key, s.msgs[off].Key) || !bytes.Equal(m.Value, s.msgs[off].Value) {
			t.Errorf("%s: key/value not preserved", name)
		}
		for _, hd := range s.msgs[off].Headers {
			if headerOf(m, hd.Key) != string(hd.Value) {
				t.Errorf("%s: original header %s not preserved", name, hd.Key)
			}
		}
	}

	h.checkWindowsExact(t, windowsBySet(t, feat), s.windows)

	// Counters (they are updated before the output is queued, so they are final by now).
	mt := rw.metrics
	for _, reason := range []string{schema.ReasonDecode, schema.ReasonDim, schema.ReasonNonFinite, schema.ReasonSetMismatch,
		schema.ReasonTooLarge, schema.ReasonLate, schema.ReasonOutOfBounds} {
		if got := testutilCounter(mt.RecordsInvalid.WithLabelValues(reason)); got != float64(wantByReason[reason]) {
			t.Errorf("records_invalid_total{reason=%q} = %v, want %d", reason, got, wantByReason[reason])
		}
	}
	checks := []struct {
		name string
		got  float64
		want int
	}{
		{"records_total{result=ok}", testutilCounter(mt.Records.WithLabelValues("ok")), wantValid},
		{"records_total{result=invalid}", testutilCounter(mt.Records.WithLabelValues("invalid")), wantDLQ},
		{"dead_letters_total", testutilCounter(mt.DeadLetters), wantDLQ},
		{"end_without_window_total", testutilCounter(mt.EndWithoutWindow), s.endNoWx},
		{"windows_emitted_total{reason=end}", testutilCounter(mt.WindowsEmitted.WithLabelValues(string(window.ReasonEnd))), len(s.windows)},
		{"points_total", testutilCounter(mt.Points), s.points},
		{"points_clipped_total", testutilCounter(mt.PointsClipped), 0},
	}
	for _, c := range checks {
		if c.got != float64(c.want) {
			t.Errorf("%s = %v, want %d", c.name, c.got, c.want)
		}
	}
}

// TestLateRecordsTimeMode: in time mode, records for windows the watermark already closed are
// dead-lettered as `late` (once per record, also when an Arrow record holds several late
// sets), counted in records_invalid_total{reason="late"} and not as ok records, and the
// windows around them hold exactly the on-time points.
func TestLateRecordsTimeMode(t *testing.T) {
	h := newHarness(t, 1, smallSpec)
	features := h.collect(h.env.Features)
	dlq := h.collect(h.env.DLQ)
	const size = 10_000
	rw := h.start(h.config("late", window.Config{Mode: "time", Size: size, IdleTimeout: time.Minute}), nil)

	const t0 = 1_700_000_000_000 // a multiple of size: windows [t0, t0+10s), [t0+10s, t0+20s), …
	rng := embedding.NewRNG(12, "late")
	pts := func(n int) []float64 {
		p := make([]float64, 2*n)
		for i := range p {
			p[i] = rng.Float64()
		}
		return p
	}
	rec := func(set string, ts int64, p []float64) kafka.Message {
		v, err := schema.EncodeJSON(schema.Batch{Points: p, N: len(p) / 2, EventTime: ts})
		if err != nil {
			t.Fatal(err)
		}
		return kafka.Message{Key: []byte(set), Value: v}
	}
	p0, p1, p2, p3 := pts(2), pts(1), pts(1), pts(1)
	twoLate, err := schema.EncodeArrow(2, []schema.Batch{
		{Set: "t", Points: pts(1), N: 1, EventTime: t0 + 2_000},
		{Set: "t2", Points: pts(2), N: 2, EventTime: t0 + 3_000},
	})
	if err != nil {
		t.Fatal(err)
	}
	// One on-time set (window 1 is open) and one late set: all or nothing, so none of it
	// may reach window 1.
	partlyLate, err := schema.EncodeArrow(2, []schema.Batch{
		{Set: "t", Points: pts(4), N: 4, EventTime: t0 + 13_000},
		{Set: "t3", Points: pts(1), N: 1, EventTime: t0 + 2_000},
	})
	if err != nil {
		t.Fatal(err)
	}
	msgs := []kafka.Message{
		rec("t", t0, p0),           // window 0
		rec("t", t0+12_000, p1),    // window 1; watermark t0+12s closes window 0 (n=2)
		rec("t", t0+1_000, pts(3)), // late: window 0 is closed
		arrowMsg("", twoLate),      // two sets, both late: one dead letter
		rec("t", t0+15_000, p2),    // window 1
		arrowMsg("", partlyLate),   // on-time t + late t3: dead-lettered whole, nothing applied
		rec("t", t0+9_999, pts(1)), // late (last ms of window 0)
		rec("t", t0+31_000, p3),    // window 3; closes window 1 (n=2); window 3 stays open
	}
	wantLate := map[int]bool{2: true, 3: true, 5: true, 6: true}
	h.produceOrdered(msgs)

	feat := features.waitFor(t, 30*time.Second, "2 windows", func(m []kafka.Message) bool { return distinctWindows(m) >= 2 })
	// The last record closed window 1 and its output is ordered after every dead letter, so
	// the DLQ topic is complete now: read all of it.
	dl := dlq.waitDrained(h, h.env.DLQ, 30*time.Second)

	if len(dl) != len(wantLate) {
		t.Errorf("%d dead letters, want %d (one per late record)", len(dl), len(wantLate))
	}
	for _, m := range dl {
		off, _ := strconv.Atoi(headerOf(m, "source-offset"))
		if headerOf(m, "error") != schema.ReasonLate || !wantLate[off] {
			t.Errorf("dead letter for offset %d with error %q (detail %q), want late records at %v",
				off, headerOf(m, "error"), headerOf(m, "error-detail"), sortedIntKeys(wantLate))
		}
	}
	got := windowsBySet(t, feat)
	if len(got) != 1 || len(got["t"]) != 2 {
		t.Fatalf("windows %v, want two of set t", windowSummary(got))
	}
	for i, want := range [][]float64{p0, append(append([]float64(nil), p1...), p2...)} {
		r := got["t"][i].rec
		if r.N != int64(len(want)/2) || r.WindowStart != t0+int64(i)*size || r.WindowEnd != t0+int64(i+1)*size {
			t.Errorf("window %d: n=%d [%d,%d), want n=%d [%d,%d)", i, r.N, r.WindowStart, r.WindowEnd, len(want)/2, t0+int64(i)*size, t0+int64(i+1)*size)
		}
		if !h.sameAsOffline(t, r, want) {
			t.Errorf("window %d: features differ from the offline embedding of its on-time points", i)
		}
	}
	mt := rw.metrics
	if got := testutilCounter(mt.RecordsInvalid.WithLabelValues(schema.ReasonLate)); got != float64(len(wantLate)) {
		t.Errorf("records_invalid_total{reason=late} = %v, want %d", got, len(wantLate))
	}
	if got := testutilCounter(mt.Records.WithLabelValues("ok")); got != float64(len(msgs)-len(wantLate)) {
		t.Errorf("records_total{result=ok} = %v, want %d (late records are not ok)", got, len(msgs)-len(wantLate))
	}
	if got := testutilCounter(mt.DeadLetters); got != float64(len(wantLate)) {
		t.Errorf("dead_letters_total = %v, want %d", got, len(wantLate))
	}
}

func sortedIntKeys(m map[int]bool) []int {
	var out []int
	for k := range m {
		out = append(out, k)
	}
	for i := 1; i < len(out); i++ {
		for j := i; j > 0 && out[j] < out[j-1]; j-- {
			out[j], out[j-1] = out[j-1], out[j]
		}
	}
	return out
}

func windowSummary(m map[string][]decodedWindow) string {
	var sb strings.Builder
	for _, set := range sortedKeys(m) {
		for _, w := range m[set] {
			fmt.Fprintf(&sb, "%s#%d(n=%d) ", set, w.rec.Seq, w.rec.N)
		}
	}
	return sb.String()
}
