package window

import "fmt"

// --- set mode ---

func (m *Manager[S]) addSet(in Input, n int) error {
	k := m.keys[in.Set]
	if n == 0 {
		if !in.End {
			return nil
		}
		if k == nil {
			return endWithoutWindow(in)
		}
		m.closeSet(k, ReasonEnd, in.Offset)
		return nil
	}
	if k == nil {
		m.makeRoom(nil, 1)
		k = m.newKey(in)
		k.panes = []*pane[S]{m.newPane(k, in, 0)}
		k.open = 1
		m.open++
	}
	m.addPoints(k.panes[0], in, 0, n)
	m.touch(k, in.Offset)
	if in.End {
		m.closeSet(k, ReasonEnd, in.Offset)
	}
	return nil
}

// closeSet emits k's window; off is the closing End's offset, or -1.
func (m *Manager[S]) closeSet(k *key[S], reason Reason, off int64) {
	p := k.panes[0]
	last := p.lastOff
	if off >= 0 {
		last = off
	}
	c := Closed[S]{
		Set: k.set, Seq: seqOf(p), Start: p.firstT, End: p.lastT, N: p.n, Sketch: p.sk,
		Reason: reason, FirstOffset: p.firstOff, LastOffset: last,
	}
	m.addSpan(p.firstOff, last, noEvent)
	m.killPane(p, true)
	m.removeKey(k)
	m.emit(c, false)
}

func endWithoutWindow(in Input) error {
	return fmt.Errorf("window: %w: set %q at offset %d", ErrEndWithoutWindow, in.Set, in.Offset)
}

// --- count mode ---
//
// A set's points are numbered 0, 1, … from the start of its current sequence (pos counts
// them). Pane j holds points [jP, (j+1)P), P = gcd(Size, Hop); window w holds points
// [wH, wH+S), i.e. panes wH/P … (wH+S)/P−1. k.panes holds consecutive panes from the first
// pane of the earliest open window on. A pane's last window is ⌊jP/H⌋, so closing window w
// retires panes < (w+1)H/P, the first of which becomes the window's sketch.

func (m *Manager[S]) addCount(in Input, n int) error {
	k := m.keys[in.Set]
	if n == 0 {
		if !in.End {
			return nil
		}
		if k == nil {
			return endWithoutWindow(in)
		}
		m.resetCount(k, ReasonEnd, in.Offset)
		return nil
	}
	if k == nil {
		k = m.newKey(in)
	}
	for i := 0; i < n; {
		off := k.pos % m.pane
		if off == 0 {
			if k.pos%m.hop == 0 {
				m.makeRoom(k, 1)
				k.open++
				m.open++
			}
			k.panes = append(k.panes, m.newPane(k, in, i))
		}
		c := min(int64(n-i), m.pane-off)
		m.addPoints(k.panes[len(k.panes)-1], in, i, i+int(c))
		k.pos += c
		i += int(c)
		if k.pos >= m.size && (k.pos-m.size)%m.hop == 0 {
			m.closeCount(k, (k.pos-m.size)/m.hop, in.Offset)
		}
	}
	m.touch(k, in.Offset)
	switch {
	case in.End:
		m.resetCount(k, ReasonEnd, in.Offset)
	case k.open == 0:
		// Tumbling windows, the last one just closed: the sequence restarts at a window
		// boundary either way, so the state can go.
		m.removeKey(k)
	}
	return nil
}

// closeCount emits count window w of k, complete at the input with offset off.
func (m *Manager[S]) closeCount(k *key[S], w int64, off int64) {
	nPanes := int(m.size / m.pane)
	panes := k.panes[:nPanes]
	first := panes[0]
	var total int64
	for _, p := range panes {
		total += p.n
	}
	for _, p := range panes[1:] {
		m.merge(first.sk, p.sk)
	}
	c := Closed[S]{
		Set: k.set, Seq: seqOf(first), Start: first.firstT, End: panes[nPanes-1].lastT, N: total,
		Sketch: first.sk, Reason: ReasonCount, FirstOffset: first.firstOff, LastOffset: off,
	}
	m.addSpan(first.firstOff, off, noEvent)
	retire := int(m.hop / m.pane) // panes whose last window is w
	m.killPane(first, true)
	for _, p := range k.panes[1:retire] {
		m.killPane(p, false)
	}
	k.panes = append(k.panes[:0], k.panes[retire:]...)
	k.closedEnd = k.pos
	k.open--
	m.open--
	m.emit(c, false)
}

// resetCount ends k's point sequence: the earliest open window is emitted if it holds a
// point no emitted window holds, the other (overlapping) partial windows are dropped.
// off is the closing End's offset, or -1.
func (m *Manager[S]) resetCount(k *key[S], reason Reason, off int64) {
	last := k.lastOff
	if off >= 0 {
		last = off
	}
	if len(k.panes) > 0 {
		first := k.panes[0]
		m.addSpan(first.firstOff, last, noEvent)
		if k.pos > k.closedEnd {
			var total int64
			for _, p := range k.panes {
				total += p.n
			}
			for _, p := range k.panes[1:] {
				m.merge(first.sk, p.sk)
			}
			m.emit(Closed[S]{
				Set: k.set, Seq: seqOf(first), Start: first.firstT, End: k.panes[len(k.panes)-1].lastT,
				N: total, Sketch: first.sk, Reason: reason, FirstOffset: first.firstOff, LastOffset: last,
			}, false)
			m.killPane(first, true)
		} else {
			m.killPane(first, false)
		}
		for _, p := range k.panes[1:] {
			m.killPane(p, false)
		}
	}
	m.removeKey(k)
}
