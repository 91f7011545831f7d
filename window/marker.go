package window

import (
	"errors"
	"fmt"
	"math"
)

// ErrStaleMarker: CloseMarker got a marker that closes nothing — the set has no open window,
// or it received points after the marker was requested (it is not idle). Nothing changes;
// the caller counts it and neither emits nor dead-letters the marker.
var ErrStaleMarker = errors.New("stale close marker")

// CloseRequest asks the caller to make an idle close durable. Instead of closing a set that
// has been idle for IdleTimeout (a processing-time decision a replay could not repeat),
// ExpireDue returns a request; the caller appends a close marker carrying it to the input
// partition (same key, same partition) and passes the marker to CloseMarker when it reads it
// back. The log then holds the decision, and a replay decides the same at the same position.
type CloseRequest struct {
	Set string
	// After is the offset of the last record the Manager had read when it made the request:
	// the marker closes the set's windows only if the set got no points from a record after
	// it (and before the marker).
	After int64
	// Seq is informational, for logs and marker headers: FirstOffset<<20 | index of the
	// earliest first point of the set's open windows (set mode: the window's window-id).
	// CloseMarker does not check it.
	Seq uint64
}

// ExpireDue returns a CloseRequest for every set whose last points arrived at least
// IdleTimeout ago by the Manager's clock, oldest first, without closing anything. A set is
// requested once per idle period: it is asked again only after it receives points and goes
// idle again (a fresh Manager, after a restart, asks again; a surplus marker is stale). It
// returns nothing when IdleTimeout is 0.
func (m *Manager[S]) ExpireDue() []CloseRequest {
	if m.cfg.IdleTimeout <= 0 || !m.started {
		return nil
	}
	now := m.clock.Now()
	var out []CloseRequest
	for k := m.lruTail; k != nil && now.Sub(k.last) >= m.cfg.IdleTimeout; k = k.prev {
		if k.requested >= k.lastOff {
			continue
		}
		k.requested = m.lastOff
		out = append(out, CloseRequest{Set: k.set, After: m.lastOff, Seq: firstSeq(k)})
	}
	return out
}

// CloseMarker applies a close marker read back from the input partition at offset (an
// input record of its own: offsets keep their order with Add's). If req's set has open
// windows and got no points from a record after req.After, all of its windows close with
// reason "idle", as Expire would close them, but at this position of the log. The decision
// reads only the log (which records carried the set's points, and where the marker is), so
// a replay reading the same records decides the same. Otherwise it returns an error
// wrapping ErrStaleMarker and changes nothing. While replaying below the restored
// replayUntil, time and session windows it closes are not emitted again (the first run
// emitted them); set and count windows are, identically, as with every replayed close.
// Markers never advance the watermark.
func (m *Manager[S]) CloseMarker(req CloseRequest, offset int64) ([]Closed[S], error) {
	if m.started && offset < m.lastOff {
		return nil, fmt.Errorf("window: %w: marker offset %d after offset %d", ErrInvalidInput, offset, m.lastOff)
	}
	if req.After >= offset {
		return nil, fmt.Errorf("window: %w: marker at offset %d requested after offset %d", ErrInvalidInput, offset, req.After)
	}
	m.begin(offset)
	k := m.keys[req.Set]
	if k == nil {
		return nil, fmt.Errorf("window: %w: set %q has no open window at offset %d", ErrStaleMarker, req.Set, offset)
	}
	if k.lastOff > req.After {
		return nil, fmt.Errorf("window: %w: set %q got points at offset %d, after the request (offset %d)", ErrStaleMarker, req.Set, k.lastOff, req.After)
	}
	m.closeKey(k, ReasonIdle, offset)
	out := m.out
	m.out = nil
	return out, nil
}

// firstSeq returns FirstOffset<<20 | index of the earliest first point of k's open panes.
func firstSeq[S Sketch[S]](k *key[S]) uint64 {
	s := uint64(math.MaxUint64)
	for _, p := range k.panes {
		s = min(s, seqOf(p))
	}
	return s
}
