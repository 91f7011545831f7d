package processor

import (
	"fmt"
	"strconv"
	"strings"
)

// Metadata is the commit metadata stored with each partition's committed offset:
//
//	v1;<replayUntil>;<window checkpoint>
//
// Every record below ReplayUntil was processed, and all of its output acknowledged, when the
// offset was committed; a replay suppresses their feature records and dead letters. Window
// is the window manager's checkpoint (window.Manager.Checkpoint).
type Metadata struct {
	ReplayUntil int64
	Window      string
}

// String formats m for an offset commit.
func (m Metadata) String() string {
	return "v1;" + strconv.FormatInt(m.ReplayUntil, 10) + ";" + m.Window
}

// ParseMetadata parses commit metadata written by Metadata.String; "" (nothing committed
// yet, or committed by another tool) is the zero Metadata, a fresh start.
func ParseMetadata(s string) (Metadata, error) {
	if s == "" {
		return Metadata{}, nil
	}
	parts := strings.SplitN(s, ";", 3)
	if len(parts) != 3 || parts[0] != "v1" {
		return Metadata{}, fmt.Errorf("commit metadata %q: not distfeat v1 metadata", truncate(s, 64))
	}
	until, err := strconv.ParseInt(parts[1], 10, 64)
	if err != nil || until < 0 {
		return Metadata{}, fmt.Errorf("commit metadata %q: bad replay position", truncate(s, 64))
	}
	return Metadata{ReplayUntil: until, Window: parts[2]}, nil
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
