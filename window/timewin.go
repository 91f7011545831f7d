package window

import (
	"fmt"
	"math"
	"sort"
)

// --- time mode ---
//
// Pane j holds event times [jP, (j+1)P), P = gcd(Size, Hop); window w is [wH, wH+S) and holds
// panes wH/P … (wH+S)/P−1, so pane j belongs to windows kLo(j) … kHi(j). A set's panes are
// kept sorted by number; k.emitted is the last window closed, and the set is filed (schedTime)
// under the end of its next window: max(emitted+1, kLo(first pane)). Windows without panes are never
// materialised. Pane j's last window is kHi(j), so closing window w retires panes < (w+1)H/P,
// the first of which (if it is one of them) becomes the window's sketch.

// kLo returns the first window containing pane j.
func (m *Manager[S]) kLo(j int64) int64 { return ceilDiv((j+1)*m.pane-m.size, m.hop) }

// kHi returns the last window containing pane j.
func (m *Manager[S]) kHi(j int64) int64 { return floorDiv(j*m.pane, m.hop) }

func (m *Manager[S]) addTime(in Input, n int) error {
	if n == 0 {
		return nil // End has no effect on time windows
	}
	t := in.EventTime
	j := floorDiv(t, m.pane)
	lo, hi := m.kLo(j), m.kHi(j)
	if err := m.lateTime(in, lo); err != nil {
		return err
	}
	k := m.keys[in.Set]
	if k == nil {
		k = m.newKey(in)
		if tb, ok := m.tombs[in.Set]; ok {
			k.emitted = tb.k
		} else if m.forgot != noWindow {
			// The set may be one whose tombstone was forgotten: its windows up to the
			// forgotten range get reopen ids, never a window number already used.
			k.reopenTo = m.forgot
		}
	}
	i := sort.Search(len(k.panes), func(i int) bool { return k.panes[i].idx >= j })
	var p *pane[S]
	if i < len(k.panes) && k.panes[i].idx == j {
		p = k.panes[i]
	} else {
		// Windows of pane j that no other pane of the set opened yet: neighbours' window
		// ranges are monotone in the pane number, so only the adjacent panes matter.
		a, b := max(lo, k.emitted+1), hi
		if i > 0 {
			a = max(a, m.kHi(k.panes[i-1].idx)+1)
		}
		if i < len(k.panes) {
			b = min(b, max(m.kLo(k.panes[i].idx), k.emitted+1)-1)
		}
		delta := 0
		if b >= a {
			delta = int(b - a + 1)
			m.makeRoom(k, delta)
		}
		p = m.newPane(k, in, 0)
		p.idx = j
		k.panes = append(k.panes, nil)
		copy(k.panes[i+1:], k.panes[i:])
		k.panes[i] = p
		k.open += delta
		m.open += delta
		if i == 0 {
			m.schedTime(k)
		}
	}
	m.addPoints(p, in, 0, n)
	m.touch(k, in.Offset)
	m.advance(t)
	m.closeDueTime()
	return nil
}

// lateTime returns an ErrLate error if window lo (the first containing the input's event
// time) is closed.
func (m *Manager[S]) lateTime(in Input, lo int64) error {
	start := lo * m.hop
	end := start + m.size
	if wm, ok := m.watermark(); ok && end <= wm {
		return fmt.Errorf("window: %w: set %q event time %d: window [%d,%d) closed at watermark %d",
			ErrLate, in.Set, in.EventTime, start, end, wm)
	}
	if m.closedEarly(in.Set, lo) {
		return fmt.Errorf("window: %w: set %q event time %d: window [%d,%d) was closed early (idle or evicted)",
			ErrLate, in.Set, in.EventTime, start, end)
	}
	return nil
}

// closedEarly reports whether set's window lo was already emitted by an early close: by its
// tombstone, or, while the set is open, by its own record of the last window closed (which
// outlives a forgotten tombstone; windows it closed by watermark are late by the watermark).
func (m *Manager[S]) closedEarly(set string, lo int64) bool {
	if k := m.keys[set]; k != nil && lo <= k.emitted {
		return true
	}
	tb, ok := m.tombs[set]
	return ok && lo <= tb.k
}

// schedTime files k under the end of its next window. Sets are bucketed by that end (many
// sets share it) and the distinct ends kept in a min-heap, so closing is O(log #ends) per end
// plus a sort of the bucket by set name, which fixes the emission order.
func (m *Manager[S]) schedTime(k *key[S]) {
	end := max(k.emitted+1, m.kLo(k.panes[0].idx))*m.hop + m.size
	if k.bucketIx >= 0 {
		if k.nextEnd == end {
			return
		}
		m.unbucket(k)
	}
	k.nextEnd = end
	b, ok := m.timeBuckets[end]
	if !ok {
		m.timeEnds.push(end)
	}
	k.bucketIx = len(b)
	m.timeBuckets[end] = append(b, k)
}

// unbucket takes k out of its bucket (an emptied bucket stays until its end is popped).
func (m *Manager[S]) unbucket(k *key[S]) {
	b := m.timeBuckets[k.nextEnd]
	last := b[len(b)-1]
	b[k.bucketIx], last.bucketIx = last, k.bucketIx
	b[len(b)-1] = nil
	m.timeBuckets[k.nextEnd] = b[:len(b)-1]
	k.bucketIx = -1
}

// closeDueTime closes every window whose end the watermark has reached, by end then set.
func (m *Manager[S]) closeDueTime() {
	wm, ok := m.watermark()
	if !ok {
		return
	}
	for m.timeEnds.len() > 0 && m.timeEnds.top() <= wm {
		end := m.timeEnds.pop()
		b := m.timeBuckets[end]
		delete(m.timeBuckets, end)
		for _, k := range b {
			k.bucketIx = -1
		}
		sort.Slice(b, func(i, j int) bool { return b[i].set < b[j].set })
		for _, k := range b {
			m.closeTimeWindow(k, ReasonWatermark) // re-files k under a later end
		}
	}
	for m.tombHeap.len() > 0 && m.tombHeap.top().end <= wm {
		if tb := m.tombHeap.pop(); m.liveTomb(tb) {
			m.endTomb(tb)
		}
	}
	if m.forgot != noWindow && m.forgot*m.hop+m.size <= wm {
		m.forgot = noWindow // every window it covered is late by the watermark now
	}
}

// closeTimeWindow emits k's next window and reports whether k is now gone (no panes left).
func (m *Manager[S]) closeTimeWindow(k *key[S], reason Reason) bool {
	w := max(k.emitted+1, m.kLo(k.panes[0].idx))
	start := w * m.hop
	end := start + m.size
	jEnd := end / m.pane                // exact: start and Size are multiples of P
	jRetire := (start + m.hop) / m.pane // panes below it have w as their last window
	np := sort.Search(len(k.panes), func(i int) bool { return k.panes[i].idx >= jEnd })
	panes := k.panes[:np]
	own := panes[0].idx < jRetire
	var acc S
	if own {
		acc = panes[0].sk
	} else {
		acc = m.getSketch()
		m.merge(acc, panes[0].sk)
	}
	first, lastOff, total := panes[0], panes[0].lastOff, panes[0].n
	for _, p := range panes[1:] {
		m.merge(acc, p.sk)
		total += p.n
		lastOff = max(lastOff, p.lastOff)
		if earlier(p, first) {
			first = p
		}
	}
	seq := uint64(w)
	if w <= k.reopenTo {
		seq = reopenSeq(w, k.bornOff, k.bornIdx)
	}
	c := Closed[S]{
		Set: k.set, Seq: seq, Start: start, End: end, N: total, Sketch: acc, Reason: reason,
		FirstOffset: first.firstOff, LastOffset: lastOff,
	}
	k.emitted = w
	k.open--
	m.open--
	nr := sort.Search(len(k.panes), func(i int) bool { return k.panes[i].idx >= jRetire })
	for i, p := range k.panes[:nr] {
		m.killPane(p, i == 0 && own)
	}
	k.panes = append(k.panes[:0], k.panes[nr:]...)
	// A window ending at or before the checkpoint's watermark, or closed by the watermark or a
	// close marker while replaying, was emitted by the first run.
	m.emit(c, m.replayME != noEvent && end <= m.replayME-m.late || m.replaying && (reason == ReasonWatermark || reason == ReasonIdle))
	if len(k.panes) == 0 {
		m.removeKey(k)
		return true
	}
	m.schedTime(k)
	return false
}

// closeTimeKey closes all of k's windows early (idle or evicted) and leaves a tombstone so
// that later inputs for them are late rather than re-opening a window with a used Seq.
func (m *Manager[S]) closeTimeKey(k *key[S], reason Reason) {
	set := k.set
	first := k.panes[0]
	for _, p := range k.panes[1:] {
		if earlier(p, first) {
			first = p
		}
	}
	tb := tomb{set: set, first: first.firstOff, startME: first.startME}
	for !m.closeTimeWindow(k, reason) {
	}
	tb.k = k.emitted
	m.addTomb(tb)
}

// tombsPerOpen bounds time-mode tombstones per partition to tombsPerOpen × MaxOpen.
const tombsPerOpen = 16

// noWindow marks "no window number".
const noWindow = math.MinInt64

// addTomb records that set's windows ≤ w were closed early. Beyond maxTombs tombstones the
// ones with the earliest window end are forgotten: their highest window number is kept in
// m.forgot, and a set opening state while m.forgot is set (and has no tombstone) gives its
// windows ≤ m.forgot reopen ids instead of their window numbers. A set that returns after
// its tombstone was forgotten therefore gets a new window with a new id rather than being
// dead-lettered; no id is ever emitted twice for a set, and memory stays bounded.
func (m *Manager[S]) addTomb(tb tomb) {
	if old, ok := m.tombs[tb.set]; ok {
		m.endTomb(old)
	}
	m.tombN++
	tb.end, tb.n = tb.k*m.hop+m.size, m.tombN
	m.tombs[tb.set] = tb
	m.tombHeap.push(tb)
	m.tombFirst.push(tb)
	for len(m.tombs) > m.maxTombs {
		old := m.tombHeap.pop()
		if m.liveTomb(old) {
			delete(m.tombs, old.set)
			m.forgot = max(m.forgot, old.k)
		}
	}
	m.compactTombs(&m.tombHeap)
	m.compactTombs(&m.tombFirst)
}

// liveTomb reports whether heap entry tb is still the set's tombstone (entries are dropped
// lazily: a set closed early again gets a new tombstone).
func (m *Manager[S]) liveTomb(tb tomb) bool {
	t, ok := m.tombs[tb.set]
	return ok && t.n == tb.n
}

// endTomb drops live tombstone tb (the watermark passed it, or the set got a new one). The
// records from its windows' first one to the current one were judged with it, so a replay
// must not start among them: the span blocks such cuts, as closed windows' spans do in set
// and count modes.
func (m *Manager[S]) endTomb(tb tomb) {
	delete(m.tombs, tb.set)
	m.addSpan(tb.first, m.lastOff, tb.startME)
}

// compactTombs rebuilds h from its live entries once stale ones dominate.
func (m *Manager[S]) compactTombs(h *iheap[tomb]) {
	if h.len() <= 2*len(m.tombs)+64 {
		return
	}
	live := h.items[:0]
	for _, tb := range h.items {
		if m.liveTomb(tb) {
			live = append(live, tb)
		}
	}
	clear(h.items[len(live):])
	h.items = live
	for i := len(live)/2 - 1; i >= 0; i-- {
		h.down(i)
	}
}

// tombCut returns the first offset and max event time there of the oldest live tombstone's
// windows, or ok = false.
func (m *Manager[S]) tombCut() (first, startME int64, ok bool) {
	for m.tombFirst.len() > 0 && !m.liveTomb(m.tombFirst.top()) {
		m.tombFirst.pop()
	}
	if m.tombFirst.len() == 0 {
		return 0, 0, false
	}
	tb := m.tombFirst.top()
	return tb.first, tb.startME, true
}

// reopenSeq is the id of window w of a set whose state was created by the input at (off,
// idx) while a tombstone the set may have had was forgotten: the top bit set (window numbers
// of windows starting after 1970 never have it) and 63 bits of a hash of (w, off, idx), so it
// differs from the window number and from the ids of the set's earlier incarnations (which
// started at other inputs), up to a 2⁻⁶³ chance of collision per pair.
func reopenSeq(w, off int64, idx int) uint64 {
	return 1<<63 | mix64(uint64(w)^mix64(uint64(off)<<20|uint64(idx)))>>1
}

// mix64 is the SplitMix64 finaliser, a fixed bijective mixer.
func mix64(x uint64) uint64 {
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	return x ^ x>>31
}
