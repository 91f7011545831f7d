package consumer

import (
	"fmt"
	"strconv"
	"strings"
)

// metadata is the commit metadata distfeat stores with each partition's offset:
//
//	v1;<replayUntil>;<window checkpoint>
//
// replayUntil: every record below it was processed and all of its output acknowledged when
// the offset was committed; a replay suppresses their emissions and dead letters.
type metadata struct {
	replayUntil int64
	window      string
}

func formatMetadata(m metadata) string {
	return "v1;" + strconv.FormatInt(m.replayUntil, 10) + ";" + m.window
}

func parseMetadata(s string) (metadata, error) {
	if s == "" {
		return metadata{}, nil
	}
	parts := strings.SplitN(s, ";", 3)
	if len(parts) != 3 || parts[0] != "v1" {
		return metadata{}, fmt.Errorf("commit metadata %q: not distfeat v1 metadata", truncate(s, 64))
	}
	until, err := strconv.ParseInt(parts[1], 10, 64)
	if err != nil || until < 0 {
		return metadata{}, fmt.Errorf("commit metadata %q: bad replay position", truncate(s, 64))
	}
	return metadata{replayUntil: until, window: parts[2]}, nil
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
