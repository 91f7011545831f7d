package processor

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// Metadata is the commit metadata stored with each partition's committed offset:
//
//	v2;<spec_id>;<replayUntil>;<window checkpoint>
//
// Every record below ReplayUntil was processed, and all of its output acknowledged, when the
// offset was committed; a replay suppresses their feature records and dead letters. SpecID
// is the spec the output was computed with: a replay under another spec would emit other
// bytes under the same window-ids. Window is the window manager's checkpoint
// (window.Manager.Checkpoint), which names the window mode. Metadata written before the spec
// was recorded ("v1;<replayUntil>;<window checkpoint>") is still read, with SpecID "".
type Metadata struct {
	SpecID      string
	ReplayUntil int64
	Window      string
}

// ErrCheckpointMismatch is wrapped by Restore's error when the committed checkpoint was
// written under another spec or window mode (or is not distfeat's at all): replaying with
// this configuration would re-emit acknowledged windows under the same window-ids with other
// bytes, or lose the watermark. The consumer refuses to start unless told to reset.
var ErrCheckpointMismatch = errors.New("committed checkpoint does not match this configuration")

// ErrDefaultSpecChanged is wrapped by Restore's error, beside ErrCheckpointMismatch, when the
// checkpoint was written under the former built-in default spec (spec.DefaultSpecV1) and this
// worker runs the current one (spec.DefaultSpec): the group ran without DISTFEAT_SPEC and
// the upgrade changed the default. The error says what changed and the two ways forward
// (docs/upgrading.md).
var ErrDefaultSpecChanged = errors.New("the built-in default spec changed")

// String formats m for an offset commit (v2; v1 when SpecID is empty).
func (m Metadata) String() string {
	until := strconv.FormatInt(m.ReplayUntil, 10)
	if m.SpecID == "" {
		return "v1;" + until + ";" + m.Window
	}
	return "v2;" + m.SpecID + ";" + until + ";" + m.Window
}

// ParseMetadata parses commit metadata written by Metadata.String (v2, or v1 of earlier
// versions); "" (nothing committed yet, or offsets reset by an operator's tool) is the zero
// Metadata, a fresh start.
func ParseMetadata(s string) (Metadata, error) {
	if s == "" {
		return Metadata{}, nil
	}
	var m Metadata
	var until string
	switch version, rest, _ := strings.Cut(s, ";"); version {
	case "v1":
		parts := strings.SplitN(rest, ";", 2)
		if len(parts) != 2 {
			return Metadata{}, fmt.Errorf("commit metadata %q: not distfeat metadata", truncate(s, 64))
		}
		until, m.Window = parts[0], parts[1]
	case "v2":
		parts := strings.SplitN(rest, ";", 3)
		if len(parts) != 3 || parts[0] == "" {
			return Metadata{}, fmt.Errorf("commit metadata %q: not distfeat metadata", truncate(s, 64))
		}
		m.SpecID, until, m.Window = parts[0], parts[1], parts[2]
	default:
		return Metadata{}, fmt.Errorf("commit metadata %q: not distfeat metadata", truncate(s, 64))
	}
	n, err := strconv.ParseInt(until, 10, 64)
	if err != nil || n < 0 {
		return Metadata{}, fmt.Errorf("commit metadata %q: bad replay position", truncate(s, 64))
	}
	m.ReplayUntil = n
	return m, nil
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
