package window

import (
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// span blocks the cut positions c with a < c ≤ b: a closed window (set/count mode) whose
// first point is in record a and last in record b, or a dead tombstone (time mode) whose
// windows' first record is a and that was last used at record b. m.spans holds the union of
// such spans as disjoint, non-touching components sorted by a; me is the max event time at
// the start of record a (time mode; noEvent elsewhere).
type span struct{ a, b, me int64 }

// cutState is what SafeOffset computed, for Checkpoint.
type cutState struct {
	valid bool
	c     int64 // the cut
	next  int64 // the next offset when it was computed
	me    int64 // time/session: max event time at the start of record c
	cme   int64 // time/session: max event time at next
}

// checkpointPrefix versions the checkpoint format.
const checkpointPrefix = "window/v1;"

// addSpan records a closed window (or dead tombstone) spanning records a … b; me is the max
// event time at the start of record a.
func (m *Manager[S]) addSpan(a, b, me int64) {
	if a >= b {
		return // within one record: crosses no cut
	}
	i := sort.Search(len(m.spans), func(i int) bool { return m.spans[i].b >= a })
	j := i
	for j < len(m.spans) && m.spans[j].a <= b {
		if m.spans[j].a < a {
			a, me = m.spans[j].a, m.spans[j].me
		}
		b = max(b, m.spans[j].b)
		j++
	}
	if i == j {
		m.spans = append(m.spans, span{})
		copy(m.spans[i+1:], m.spans[i:])
	} else {
		m.spans = append(m.spans[:i+1], m.spans[j:]...)
	}
	m.spans[i] = span{a, b, me}
}

// SafeOffset returns the offset the partition may commit, given that next is the offset after
// the last record passed to Add; replaying from it rebuilds the open windows exactly
// (docs/CONTRACTS.md). It never exceeds next or the first offset of any open window.
//
// set/count: the highest C ≤ next that no window crosses — every window with a record at ≥ C
// has its first point at ≥ C (closed windows are remembered until the cut passes them).
// time/session: the first offset of the oldest pane of a still-open window, or next; in time
// mode also never past the first record of the windows of a tombstone (a set's windows
// closed early) that was alive at a record at or after the cut, so that a replay reads those
// records and the close marker again and judges the records after them with the same
// tombstone.
//
// Checkpoint describes the cut computed by the latest call, so call the two together.
func (m *Manager[S]) SafeOffset(next int64) int64 { return m.SafeOffsetHeld(next, -1) }

// OldestOpen returns the first offset of the oldest open pane, or next when none is open:
// every window that closes from now on has its first point at or after it.
func (m *Manager[S]) OldestOpen(next int64) int64 {
	if p := m.fifo.front(); p != nil && p.firstOff < next {
		return p.firstOff
	}
	return next
}

// SafeOffsetHeld is SafeOffset with the cut also at or below hold (set and count modes;
// hold < 0: none): the highest C ≤ min(next, hold) that no window crosses, so that a replay
// from it reads whole windows from the record hold on. The processor holds the commit this
// way for state kept across a set's windows (a sequential detector's run, docs/drift.md).
// Checkpoint then describes that cut. In time and session modes hold is ignored (the
// maximum event time at an arbitrary record is not known).
func (m *Manager[S]) SafeOffsetHeld(next, hold int64) int64 {
	c, me := next, m.maxEvent
	m.hold = -1
	if hold >= 0 && hold < next && (m.mode == ModeSet || m.mode == ModeCount) {
		c, m.hold = hold, hold
	}
	if p := m.fifo.front(); p != nil && p.firstOff < c {
		c, me = p.firstOff, p.startME
	}
	if first, startME, ok := m.tombCut(); ok && first < c {
		c, me = first, startME
	}
	if m.mode != ModeSession {
		i := sort.Search(len(m.spans), func(i int) bool { return m.spans[i].b >= c })
		if i < len(m.spans) && m.spans[i].a < c {
			c, me = m.spans[i].a, m.spans[i].me
		}
		m.pruneSpans(c)
	}
	m.cut = cutState{valid: true, c: c, next: next, me: me, cme: m.maxEvent}
	return c
}

// pruneSpans drops the spans that can no longer block a cut: those wholly below the cut c,
// and — when they pile up behind a long-lived window — those that contain neither the first
// offset of a live pane nor the latest offset (every future cut starts from one of these).
func (m *Manager[S]) pruneSpans(c int64) {
	i := sort.Search(len(m.spans), func(i int) bool { return m.spans[i].b >= c })
	if i > 0 {
		m.spans = append(m.spans[:0], m.spans[i:]...)
	}
	live := len(m.fifo.q) - m.fifo.head - m.fifo.dead
	if len(m.spans) <= 2*live+32 {
		return
	}
	var firsts []int64
	m.fifo.live(func(p *pane[S]) { firsts = append(firsts, p.firstOff) })
	if m.hold >= 0 {
		firsts = append(firsts, m.hold) // a held cut is a cut candidate too
		slices.Sort(firsts)
	}
	if len(m.tombs) > 0 {
		for _, tb := range m.tombs {
			firsts = append(firsts, tb.first) // live tombstones are cut candidates too
		}
		slices.Sort(firsts)
	}
	keep, f := m.spans[:0], 0
	for _, s := range m.spans {
		for f < len(firsts) && firsts[f] <= s.a {
			f++
		}
		if (f < len(firsts) && firsts[f] <= s.b) || s.b >= m.lastOff {
			keep = append(keep, s)
		}
	}
	clear(m.spans[len(keep):])
	m.spans = keep
}

// Checkpoint returns the resume state for the cut of the latest SafeOffset call (≤ 512
// bytes, stored as the commit's metadata): "window/v1;m=<mode>;c=<cut>;n=<replay until>"
// plus, in count, time and session modes, ";w=<the window parameters>" (Config.shape), and
// in time and session modes ";me=<max event time at the cut>;cme=<max event time at n>"
// ("-" when none). Before any SafeOffset it returns the restored checkpoint, or "" on a
// fresh start. When the Manager is itself still replaying, n (and cme) stay those of the
// restored checkpoint, so chained restarts never re-emit.
func (m *Manager[S]) Checkpoint() string {
	if !m.cut.valid {
		return ""
	}
	n, cme := m.cut.next, m.cut.cme
	if m.replayUntil > n {
		n, cme = m.replayUntil, m.replayME
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%sm=%s;c=%d;n=%d", checkpointPrefix, m.mode, m.cut.c, n)
	if shape := m.cfg.shape(); shape != "" {
		fmt.Fprintf(&b, ";w=%s", shape)
	}
	if m.mode == ModeTime || m.mode == ModeSession {
		fmt.Fprintf(&b, ";me=%s;cme=%s", fmtEvent(m.cut.me), fmtEvent(cme))
	}
	return b.String()
}

// Restore prepares a fresh Manager to resume from a committed checkpoint, before the first
// Add: the caller then replays the partition from the committed offset (the checkpoint's cut)
// on. replayUntil is the next offset given to SafeOffset when the checkpoint was taken
// (recorded in the checkpoint as well: pass a negative value to use the recorded one); all
// output of the records below it must have been acknowledged. Inputs below it are
// replayed: in time and session modes the first run's watermark is reconstructed record by
// record, windows and late inputs the first run already emitted or reported are not emitted
// or reported again, and records whose windows all closed are skipped.
//
// Exactness needs the replay to start at the checkpoint's cut and replayUntil to be the
// checkpoint's next offset. A smaller replayUntil (output acknowledged only up to there) is
// handled without loss — windows closing from replayUntil on are emitted again — and a
// replay starting below the cut starts from an unknown watermark; both are approximations
// (time/session: late decisions near the start may differ from the first run). In set and count modes replay simply rebuilds identical windows (those that had
// closed are emitted again, byte-identical downstream). Restore("") is a fresh start.
// A malformed or foreign checkpoint, or one taken in another mode or with other window
// parameters (size, hop, gap, allowed lateness: the windows it describes are not this
// Manager's), returns an error wrapping ErrBadCheckpoint and leaves the Manager fresh (the caller may log it and continue, or Restore("")).
func (m *Manager[S]) Restore(checkpoint string, replayUntil int64) error {
	if m.used {
		return fmt.Errorf("window: %w: Restore must be called once, before the first Add", ErrBadCheckpoint)
	}
	if checkpoint == "" {
		m.used = true
		return nil
	}
	bad := func(why string) error {
		return fmt.Errorf("window: %w: %q: %s", ErrBadCheckpoint, checkpoint, why)
	}
	rest, ok := strings.CutPrefix(checkpoint, checkpointPrefix)
	if !ok {
		return bad("unknown format")
	}
	f := map[string]string{}
	for _, kv := range strings.Split(rest, ";") {
		k, v, ok := strings.Cut(kv, "=")
		if !ok {
			return bad("malformed field " + strconv.Quote(kv))
		}
		f[k] = v
	}
	if Mode(f["m"]) != m.mode {
		return bad(fmt.Sprintf("taken in mode %q, this manager is in mode %q", f["m"], m.mode))
	}
	// Checkpoints written before the parameters were recorded have no w: trusted.
	if w, ok := f["w"]; ok && w != m.cfg.shape() {
		return bad(fmt.Sprintf("taken with window parameters %s, this manager has %s", w, m.cfg.shape()))
	}
	c, err1 := strconv.ParseInt(f["c"], 10, 64)
	n, err2 := strconv.ParseInt(f["n"], 10, 64)
	if err1 != nil || err2 != nil {
		return bad("bad offsets")
	}
	me, cme := int64(noEvent), int64(noEvent)
	if m.mode == ModeTime || m.mode == ModeSession {
		var err3, err4 error
		me, err3 = parseEvent(f["me"])
		cme, err4 = parseEvent(f["cme"])
		if err3 != nil || err4 != nil {
			return bad("bad event times")
		}
	}
	if replayUntil < 0 {
		replayUntil = n
	}
	if replayUntil < n {
		// The caller acknowledged less output than the checkpoint covers: the watermark at
		// replayUntil is unknown, so only closings by inputs below it are suppressed.
		cme = noEvent
	}
	m.used = true
	m.replayUntil, m.replayME = replayUntil, cme
	m.maxEvent, m.recME = me, me
	m.cut = cutState{valid: true, c: c, next: n, me: me, cme: cme}
	return nil
}

func fmtEvent(t int64) string {
	if t == noEvent {
		return "-"
	}
	return strconv.FormatInt(t, 10)
}

func parseEvent(s string) (int64, error) {
	if s == "-" {
		return noEvent, nil
	}
	return strconv.ParseInt(s, 10, 64)
}
