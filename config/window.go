package config

import (
	"fmt"
	"strconv"
	"time"

	"github.com/distfeat/distfeat/window"
)

// WindowConfig converts the window variables into window.Config; errors name the variable.
func (c *Config) WindowConfig() (window.Config, error) {
	wc := window.Config{
		Mode:            window.Mode(c.Window),
		Gap:             c.WindowGap.Milliseconds(),
		AllowedLateness: c.AllowedLateness.Milliseconds(),
		IdleTimeout:     c.IdleTimeout,
		MaxOpen:         c.MaxOpenWindows,
		MaxLead:         c.MaxEventLead.Milliseconds(),
	}
	var err error
	switch wc.Mode {
	case "set", "session":
		err = c.noSizeHop()
	case "count":
		wc.Size, wc.Hop, err = c.sizeHop(true)
	case "time":
		wc.Size, wc.Hop, err = c.sizeHop(false)
	default:
		return wc, configError("WINDOW", "%q: want set, count, time or session", c.Window)
	}
	if err != nil {
		return wc, err
	}
	if c.IdleTimeout < 0 {
		return wc, configError("IDLE_TIMEOUT", "must be ≥ 0")
	}
	if c.MaxEventLead < 0 {
		return wc, configError("MAX_EVENT_LEAD", "must be ≥ 0 (0 disables the bound)")
	}
	if c.MaxOpenWindows <= 0 {
		return wc, configError("MAX_OPEN_WINDOWS", "must be > 0")
	}
	if err := wc.Validate(); err != nil {
		return wc, fmt.Errorf("configuration: %w", err)
	}
	return wc, nil
}

// noSizeHop refuses WINDOW_SIZE and WINDOW_HOP in the modes that have no size: set windows
// end with the set (end: true or the idle timeout) and session windows with WINDOW_GAP, so a
// size given there would be ignored — a user who set it expects windows it would not get.
func (c *Config) noSizeHop() error {
	for _, v := range []struct{ name, value string }{{"WINDOW_SIZE", c.WindowSize}, {"WINDOW_HOP", c.WindowHop}} {
		if v.value != "" {
			return configError(v.name, "%q is not used by DISTFEAT_WINDOW=%s (only count and time windows have a size and hop); unset it, or set DISTFEAT_WINDOW=count or time", v.value, c.Window)
		}
	}
	return nil
}

// sizeHop parses WINDOW_SIZE (required) and WINDOW_HOP (optional): a number of points when
// count is true, else a duration of at least 1 ms (in milliseconds).
func (c *Config) sizeHop(count bool) (size, hop int64, err error) {
	parse := func(name, v string) (int64, error) {
		n, err := strconv.ParseInt(v, 10, 64)
		want := "a positive number of points"
		if !count {
			var d time.Duration
			d, err = time.ParseDuration(v)
			n, want = d.Milliseconds(), "a duration of at least 1ms, such as 10s"
		}
		if v == "" && name == "WINDOW_SIZE" {
			return 0, configError(name, "required for DISTFEAT_WINDOW=%s (%s)", c.Window, want)
		}
		if v != "" && (err != nil || n <= 0) {
			return 0, configError(name, "%q: want %s", v, want)
		}
		return n, nil
	}
	if size, err = parse("WINDOW_SIZE", c.WindowSize); err != nil {
		return 0, 0, err
	}
	hop, err = parse("WINDOW_HOP", c.WindowHop)
	return size, hop, err
}
