package window

import (
	"errors"
	"fmt"
	"time"
)

// Mode selects how points are grouped into windows (DISTFEAT_WINDOW).
type Mode string

// The window modes (docs/windows.md). The empty Mode means ModeSet.
const (
	ModeSet     Mode = "set"
	ModeCount   Mode = "count"
	ModeTime    Mode = "time"
	ModeSession Mode = "session"
)

// Reason says why a window closed; it labels distfeat_windows_emitted_total.
type Reason string

// Reasons a window closes.
const (
	ReasonEnd       Reason = "end"       // an input with End for the window's set
	ReasonIdle      Reason = "idle"      // no points for IdleTimeout of processing time (Expire)
	ReasonCount     Reason = "count"     // count mode: the window holds Size points
	ReasonWatermark Reason = "watermark" // time mode: the watermark passed the window's end
	ReasonGap       Reason = "gap"       // session mode: the watermark passed last point + Gap
	ReasonEvicted   Reason = "evicted"   // closed to stay within MaxOpen
)

// Config is a partition's window configuration. Field comments name the environment
// variables the worker reads them from (the Validate messages do too).
type Config struct {
	Mode            Mode          // DISTFEAT_WINDOW; "" means set
	Size            int64         // DISTFEAT_WINDOW_SIZE: count: points per window; time: window length in ms
	Hop             int64         // DISTFEAT_WINDOW_HOP: count/time: slide; 0 → Size (tumbling)
	Gap             int64         // DISTFEAT_WINDOW_GAP: session: ms of event time without points
	AllowedLateness int64         // DISTFEAT_ALLOWED_LATENESS: time/session: ms
	IdleTimeout     time.Duration // DISTFEAT_IDLE_TIMEOUT: processing time without new points → close (all modes); 0 disables
	MaxOpen         int           // DISTFEAT_MAX_OPEN_WINDOWS: open windows per partition
	// MaxLead is DISTFEAT_MAX_EVENT_LEAD in ms: how far a record's event time may run ahead
	// of its Kafka timestamp (all modes); the processor dead-letters a record beyond it as
	// "future" before it reaches a window, so one far-future t cannot move the watermark.
	// 0: no bound.
	MaxLead int64
}

// mode returns c.Mode with the default applied.
func (c Config) mode() Mode {
	if c.Mode == "" {
		return ModeSet
	}
	return c.Mode
}

// shape is the parameters that decide the windows' boundaries in c's mode, as checkpoints
// record them ("" in set mode, which has none): a checkpoint taken under another shape
// describes other windows, so Restore refuses it. The idle timeout and MaxOpen are not part
// of it: the idle closes of the first run are replayed from their close markers.
func (c Config) shape() string {
	switch c.mode() {
	case ModeCount:
		return fmt.Sprintf("size:%d,hop:%d", c.Size, c.hop())
	case ModeTime:
		return fmt.Sprintf("size:%d,hop:%d,late:%d", c.Size, c.hop(), c.AllowedLateness)
	case ModeSession:
		return fmt.Sprintf("gap:%d,late:%d", c.Gap, c.AllowedLateness)
	}
	return ""
}

// hop returns the effective hop (Size when Hop is 0).
func (c Config) hop() int64 {
	if c.Hop == 0 {
		return c.Size
	}
	return c.Hop
}

// Validate checks c and returns every problem found (joined), each naming the setting by
// its environment variable, e.g. "window: DISTFEAT_WINDOW_SIZE must be > 0 for window=count".
// Settings that do not apply to the mode are ignored.
func (c Config) Validate() error {
	var errs []error
	bad := func(format string, a ...any) {
		errs = append(errs, fmt.Errorf("window: "+format, a...))
	}
	m := c.mode()
	switch m {
	case ModeSet:
	case ModeCount, ModeTime:
		if c.Size <= 0 {
			bad("DISTFEAT_WINDOW_SIZE must be > 0 for window=%s (got %d)", m, c.Size)
		}
		switch {
		case c.Hop < 0:
			bad("DISTFEAT_WINDOW_HOP must be > 0 (or unset for tumbling windows) for window=%s (got %d)", m, c.Hop)
		case c.Size > 0 && c.Hop > c.Size:
			bad("DISTFEAT_WINDOW_HOP (%d) must be ≤ DISTFEAT_WINDOW_SIZE (%d) for window=%s", c.Hop, c.Size, m)
		}
	case ModeSession:
		if c.Gap <= 0 {
			bad("DISTFEAT_WINDOW_GAP must be > 0 for window=session (got %d)", c.Gap)
		}
	default:
		bad("DISTFEAT_WINDOW: unknown mode %q (want set, count, time or session)", c.Mode)
	}
	if c.AllowedLateness < 0 {
		bad("DISTFEAT_ALLOWED_LATENESS must be ≥ 0 (got %d)", c.AllowedLateness)
	}
	if c.MaxLead < 0 {
		bad("DISTFEAT_MAX_EVENT_LEAD must be ≥ 0 (0 disables it; got %d ms)", c.MaxLead)
	}
	if c.IdleTimeout < 0 {
		bad("DISTFEAT_IDLE_TIMEOUT must be ≥ 0 (0 disables it; got %s)", c.IdleTimeout)
	}
	if c.MaxOpen <= 0 {
		bad("DISTFEAT_MAX_OPEN_WINDOWS must be > 0 (got %d)", c.MaxOpen)
	} else if (m == ModeCount || m == ModeTime) && c.Size > 0 && c.Hop >= 0 && c.Hop <= c.Size {
		// One set's point opens up to ceil(Size/Hop) windows at once.
		if per := ceilDiv(c.Size, c.hop()); int64(c.MaxOpen) < per {
			bad("DISTFEAT_MAX_OPEN_WINDOWS (%d) must be ≥ DISTFEAT_WINDOW_SIZE/DISTFEAT_WINDOW_HOP rounded up (%d): one set keeps that many sliding windows open", c.MaxOpen, per)
		}
	}
	return errors.Join(errs...)
}

// gcd returns the greatest common divisor of a, b > 0.
func gcd(a, b int64) int64 {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}

// floorDiv returns ⌊a/b⌋ for b > 0.
func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b != 0 && a < 0 {
		q--
	}
	return q
}

// ceilDiv returns ⌈a/b⌉ for b > 0.
func ceilDiv(a, b int64) int64 {
	return -floorDiv(-a, b)
}
