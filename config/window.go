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
	}
	var err error
	switch wc.Mode {
	case "set", "session":
	case "count":
		wc.Size, wc.Hop, err = c.sizeHop(parseCount)
	case "time":
		wc.Size, wc.Hop, err = c.sizeHop(parseDuration)
	default:
		return wc, configError("WINDOW", "%q: want set, count, time or session", c.Window)
	}
	if err != nil {
		return wc, err
	}
	if c.IdleTimeout < 0 {
		return wc, configError("IDLE_TIMEOUT", "must be ≥ 0")
	}
	if c.MaxOpenWindows <= 0 {
		return wc, configError("MAX_OPEN_WINDOWS", "must be > 0")
	}
	if err := wc.Validate(); err != nil {
		return wc, fmt.Errorf("configuration: %w", err)
	}
	return wc, nil
}

// sizeHop parses WINDOW_SIZE (required) and WINDOW_HOP (optional) with parse.
func (c *Config) sizeHop(parse func(name, v string, required bool) (int64, error)) (size, hop int64, err error) {
	if size, err = parse("WINDOW_SIZE", c.WindowSize, true); err != nil {
		return 0, 0, err
	}
	if hop, err = parse("WINDOW_HOP", c.WindowHop, false); err != nil {
		return 0, 0, err
	}
	return size, hop, nil
}

func parseCount(name, v string, required bool) (int64, error) {
	if v == "" {
		if required {
			return 0, configError(name, "required for DISTFEAT_WINDOW=count (a number of points)")
		}
		return 0, nil
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n <= 0 {
		return 0, configError(name, "%q: want a positive number of points", v)
	}
	return n, nil
}

func parseDuration(name, v string, required bool) (int64, error) {
	if v == "" {
		if required {
			return 0, configError(name, "required for DISTFEAT_WINDOW=time (a duration such as 10s)")
		}
		return 0, nil
	}
	d, err := time.ParseDuration(v)
	if err != nil || d < time.Millisecond {
		return 0, configError(name, "%q: want a duration of at least 1ms, such as 10s", v)
	}
	return d.Milliseconds(), nil
}
