package window

import "fmt"

// CheckLate reports, without applying anything, whether Add would reject any of ins — the
// batches of one input record, in order — as late (time and session modes). It simulates
// the watermark advancing through the batches exactly as consecutive Adds would, so a
// caller can keep a multi-set record all-or-nothing: dead-letter it whole, or add every
// batch. It returns an error wrapping ErrLate naming the first late batch, or nil. During a
// replay below the restored replayUntil it returns nil (Add does not report late input
// there). The one case it cannot foresee: adding an earlier batch evicts (MaxOpen) the set of
// a later one and leaves a tombstone; Add still reports that batch late.
func (m *Manager[S]) CheckLate(ins []Input) error {
	if m.mode != ModeTime && m.mode != ModeSession {
		return nil
	}
	maxEvent := m.maxEvent
	for i, in := range ins {
		if len(in.Points) == 0 || in.Offset < m.replayUntil {
			continue
		}
		t := in.EventTime
		if maxEvent != noEvent {
			wm := maxEvent - m.late
			switch m.mode {
			case ModeTime:
				lo := m.kLo(floorDiv(t, m.pane))
				if end := lo*m.hop + m.size; end <= wm {
					return fmt.Errorf("window: %w: batch %d (set %q, event time %d): window [%d,%d) closed at watermark %d",
						ErrLate, i, in.Set, t, lo*m.hop, end, wm)
				}
			case ModeSession:
				if t+m.gap <= wm {
					return fmt.Errorf("window: %w: batch %d (set %q, event time %d): a session ending at %d closed at watermark %d",
						ErrLate, i, in.Set, t, t+m.gap, wm)
				}
			}
		}
		if m.mode == ModeTime {
			if m.closedEarly(in.Set, m.kLo(floorDiv(t, m.pane))) {
				return fmt.Errorf("window: %w: batch %d (set %q, event time %d): its window was closed early (idle or evicted)",
					ErrLate, i, in.Set, t)
			}
		}
		if maxEvent == noEvent || t > maxEvent {
			maxEvent = t
		}
	}
	return nil
}
