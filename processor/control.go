package processor

import (
	"errors"
	"strconv"

	"github.com/distfeat/distfeat/schema"
	"github.com/distfeat/distfeat/window"
)

// Results of a close marker (distfeat_close_markers_total{result}).
const (
	// MarkerClosed: the marker closed the set's windows.
	MarkerClosed = "closed"
	// MarkerStale: the set had no open window, or got points after the request: nothing changed.
	MarkerStale = "stale"
	// MarkerForeign: written by a worker of another consumer group; ignored.
	MarkerForeign = "foreign"
	// MarkerInvalid: a control record this version cannot apply (unknown kind, bad headers); ignored.
	MarkerInvalid = "invalid"
)

// MarkerObserver is implemented by Observers that count close markers; the Processor calls
// OnCloseMarker once per control record it reads (replayed ones included).
type MarkerObserver interface {
	OnCloseMarker(result string)
}

// CloseRequest is a set whose windows are idle and should be closed by a marker (see
// ExpireDue).
type CloseRequest = window.CloseRequest

// ExpireDue returns the sets idle for the configured IdleTimeout (processing time), closing
// nothing. For each, the caller appends a close marker (ControlRecord) to this partition of
// the input topic; the windows close when Process reads the marker back, at the marker's
// position, so a replay closes them at the same point and emits the same windows. A set is
// requested once per idle period; a surplus marker is stale and ignored.
func (p *Processor) ExpireDue() []CloseRequest { return p.mgr.ExpireDue() }

// ControlRecord returns the key, value and headers of the close marker for req, written by
// the worker of group (which may be "").
func ControlRecord(req CloseRequest, group string) (key, value []byte, headers []Header) {
	headers = []Header{
		{Key: schema.HeaderControl, Value: []byte(schema.ControlClose)},
		{Key: schema.HeaderCloseAfter, Value: []byte(strconv.FormatInt(req.After, 10))},
		{Key: schema.HeaderCloseSeq, Value: []byte(strconv.FormatUint(req.Seq, 10))},
		{Key: schema.HeaderCloseGroup, Value: []byte(group)},
	}
	return []byte(req.Set), []byte{}, headers
}

// isControl reports whether rec is a control record.
func (rec *Record) isControl() bool {
	for _, h := range rec.Headers {
		if h.Key == schema.HeaderControl {
			return true
		}
	}
	return false
}

// control applies a control record: never a point, never a dead letter, idempotent.
func (p *Processor) control(rec *Record, replaying bool) {
	result := p.applyMarker(rec, replaying)
	if mo, ok := p.obs.(MarkerObserver); ok {
		mo.OnCloseMarker(result)
	}
}

func (p *Processor) applyMarker(rec *Record, replaying bool) string {
	if rec.header(schema.HeaderControl) != schema.ControlClose {
		return MarkerInvalid
	}
	if g := rec.header(schema.HeaderCloseGroup); p.cfg.Group != "" && g != p.cfg.Group {
		return MarkerForeign
	}
	after, err := strconv.ParseInt(rec.header(schema.HeaderCloseAfter), 10, 64)
	if err != nil || len(rec.Key) == 0 {
		return MarkerInvalid
	}
	closed, err := p.mgr.CloseMarker(window.CloseRequest{Set: string(rec.Key), After: after}, rec.Offset)
	switch {
	case errors.Is(err, window.ErrStaleMarker):
		return MarkerStale
	case err != nil:
		return MarkerInvalid
	}
	p.addClosed(closed, replaying)
	return MarkerClosed
}
