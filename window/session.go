package window

import (
	"fmt"
	"sort"
)

// --- session mode ---
//
// A set's open sessions are panes kept sorted by event time; their spans [minT, maxT+Gap)
// are disjoint. A point at t joins every session with minT−Gap < t < maxT+Gap (at most two,
// which it then merges; the session whose first point came first survives, keeping its
// Seq). Sessions sit in sessHeap by close time maxT+Gap.

func (m *Manager[S]) addSession(in Input, n int) error {
	k := m.keys[in.Set]
	if n == 0 {
		if !in.End {
			return nil
		}
		if k == nil {
			return endWithoutWindow(in)
		}
		m.closeSessions(k, ReasonEnd, in.Offset)
		return nil
	}
	t := in.EventTime
	if wm, ok := m.watermark(); ok && t+m.gap <= wm {
		return fmt.Errorf("window: %w: set %q event time %d: a session ending at %d closed at watermark %d",
			ErrLate, in.Set, t, t+m.gap, wm)
	}
	if k == nil {
		k = m.newKey(in)
	}
	i := sort.Search(len(k.panes), func(i int) bool { return k.panes[i].maxT+m.gap > t })
	hits := 0
	for j := i; j < len(k.panes) && j < i+2 && k.panes[j].minT-m.gap < t; j++ {
		hits++
	}
	var p *pane[S]
	switch hits {
	case 0:
		m.makeRoom(k, 1)
		p = m.newPane(k, in, 0)
		k.panes = append(k.panes, nil)
		copy(k.panes[i+1:], k.panes[i:])
		k.panes[i] = p
		k.open++
		m.open++
		m.addPoints(p, in, 0, n)
		m.sessHeap.push(p)
	case 1:
		p = k.panes[i]
		m.addPoints(p, in, 0, n)
		m.sessHeap.fix(p.heapIx)
	case 2:
		a, b := k.panes[i], k.panes[i+1]
		if earlier(b, a) {
			a, b = b, a
		}
		m.merge(a.sk, b.sk)
		a.n += b.n
		a.minT = min(a.minT, b.minT)
		a.maxT = max(a.maxT, b.maxT)
		if b.lastOff > a.lastOff {
			a.lastOff, a.lastT = b.lastOff, b.lastT
		}
		m.sessHeap.remove(b.heapIx)
		m.killPane(b, false)
		k.panes[i] = a
		k.panes = append(k.panes[:i+1], k.panes[i+2:]...)
		k.open--
		m.open--
		p = a
		m.addPoints(p, in, 0, n)
		m.sessHeap.fix(p.heapIx)
	}
	m.touch(k, in.Offset)
	m.advance(t)
	if in.End {
		m.closeSessions(k, ReasonEnd, in.Offset)
	}
	m.closeDueSessions()
	return nil
}

// closeDueSessions closes every session whose close time the watermark has reached.
func (m *Manager[S]) closeDueSessions() {
	wm, ok := m.watermark()
	if !ok {
		return
	}
	for m.sessHeap.len() > 0 {
		p := m.sessHeap.top()
		if p.maxT+m.gap > wm {
			return
		}
		k := p.key
		i := sort.Search(len(k.panes), func(i int) bool { return k.panes[i].minT >= p.minT })
		k.panes = append(k.panes[:i], k.panes[i+1:]...)
		k.open--
		m.open--
		m.closeSession(p, ReasonGap, -1)
		if len(k.panes) == 0 {
			m.removeKey(k)
		}
	}
}

// closeSessions closes all of k's sessions; off is the closing End's offset, or -1.
func (m *Manager[S]) closeSessions(k *key[S], reason Reason, off int64) {
	for _, p := range k.panes {
		m.closeSession(p, reason, off)
	}
	m.removeKey(k)
}

// closeSession emits session p (already detached from its set's list by the caller, or about
// to be dropped with it). Sessions closed by gap, End or a close marker (idle while replaying:
// Expire never runs as part of a replay) below the replay limit were emitted by the first run
// (possibly with more points) and are suppressed.
func (m *Manager[S]) closeSession(p *pane[S], reason Reason, off int64) {
	if p.heapIx >= 0 {
		m.sessHeap.remove(p.heapIx)
	}
	last := p.lastOff
	if off >= 0 {
		last = off
	}
	c := Closed[S]{
		Set: p.key.set, Seq: seqOf(p), Start: p.minT, End: p.maxT, N: p.n, Sketch: p.sk, Reason: reason,
		FirstOffset: p.firstOff, LastOffset: last,
	}
	m.killPane(p, true)
	m.emit(c, m.replaying && (reason == ReasonGap || reason == ReasonEnd || reason == ReasonIdle))
}
