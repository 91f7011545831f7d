package processor

import (
	"time"

	"github.com/distfeat/distfeat/window"
)

// Observer receives the Processor's measurements, modelled on franz-go's hooks: the
// Processor calls it synchronously on its own goroutine, so an implementation must be quick
// and must not call back into the Processor. Embed NopObserver to implement a subset.
// Records below the replay position count only as OnRecord(ResultReplayed): their points,
// windows and dead letters were counted by the run that first processed them.
type Observer interface {
	// OnRecord is called once per input record with ResultOK or ResultInvalid, and once
	// more with ResultReplayed for a replayed record.
	OnRecord(result string)
	// OnPoints is called with the points of one batch added to windows.
	OnPoints(n int)
	// OnClipped is called with the points of a record clamped into the spec's bounds.
	OnClipped(n int)
	// OnDeadLetter is called for each dead letter with its reason and bounded detail.
	OnDeadLetter(offset int64, reason, detail string)
	// OnEndWithoutWindow is called for an `end` naming a set with no open window.
	OnEndWithoutWindow()
	// OnWindowEmitted is called for each feature record with its close reason and points.
	OnWindowEmitted(reason window.Reason, points int64)
	// OnFinalize is called per family and window with the time finalisation took.
	OnFinalize(family string, elapsed time.Duration)
	// OnEncodeError is called when a closed window cannot be encoded (a bug: the window is
	// dropped rather than wedging the partition).
	OnEncodeError(set string, seq uint64, err error)
}

// ClipObserver is optional on an Observer: after OnClipped, OnClippedSet is called for each
// batch of the record with clipped points, with its set, its points and the points among
// them clamped into the spec's bounds (the worker's clipping warning names the sets).
type ClipObserver interface {
	OnClippedSet(set string, points, clipped int)
}

// NopObserver implements Observer by doing nothing. Embed it in a type that observes only
// some events.
type NopObserver struct{}

// OnRecord does nothing.
func (NopObserver) OnRecord(string) {}

// OnPoints does nothing.
func (NopObserver) OnPoints(int) {}

// OnClipped does nothing.
func (NopObserver) OnClipped(int) {}

// OnDeadLetter does nothing.
func (NopObserver) OnDeadLetter(int64, string, string) {}

// OnEndWithoutWindow does nothing.
func (NopObserver) OnEndWithoutWindow() {}

// OnWindowEmitted does nothing.
func (NopObserver) OnWindowEmitted(window.Reason, int64) {}

// OnFinalize does nothing.
func (NopObserver) OnFinalize(string, time.Duration) {}

// OnEncodeError does nothing.
func (NopObserver) OnEncodeError(string, uint64, error) {}

// SequentialObserver is implemented by observers that measure two_sample families'
// sequential detectors (ert): called for every emitted window (not for replayed ones).
type SequentialObserver interface {
	OnSequential(family string, ert float64, alarm bool)
}

// DriftObserver is implemented by observers that measure two_sample families' results: it
// is called for each emitted feature record and two_sample family with the window's
// p-value and whether it is at most the family's alpha.
type DriftObserver interface {
	OnTwoSample(family string, pValue float64, flagged bool)
}
