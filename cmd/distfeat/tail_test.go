package main

import (
	"strings"
	"testing"

	"github.com/distfeat/distfeat/internal/testbroker"
)

// TestTailStops: tail --max N ends with an error naming the problem when --topic holds
// records that are not feature records (the input topic, say; it used to wait forever),
// when the topic does not exist, and when --timeout passes before N records arrived.
func TestTailStops(t *testing.T) {
	env := testbroker.ForTest(t, 2)
	brokers := strings.Join(env.Brokers, ",")
	if code, _, stderr := runArgs(t, "produce", "--synthetic", "gmm", "--sets", "3", "--points", "5", "--brokers", brokers, "--topic", env.Points); code != 0 {
		t.Fatalf("produce: exit %d: %s", code, stderr)
	}
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"input topic", []string{"--topic", env.Points, "--from-beginning", "--max", "1"},
			"is not a worker output record and has no spec-id header"},
		{"missing topic", []string{"--topic", env.Points + ".nope", "--max", "1"}, "Unknown Topic Or Partition"},
		{"timeout", []string{"--topic", env.Features, "--from-beginning", "--max", "1", "--timeout", "300ms"},
			"0 of --max 1 records within --timeout 300ms"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, stdout, stderr := runArgs(t, append([]string{"tail", "--brokers", brokers}, tc.args...)...)
			if code != 1 || !strings.Contains(stderr, tc.want) || stdout != "" {
				t.Errorf("exit %d, stdout %q, stderr %q; want 1 and %q", code, stdout, stderr, tc.want)
			}
		})
	}
	// Without --max, --timeout is a run length: exit 0.
	if code, _, stderr := runArgs(t, "tail", "--brokers", brokers, "--topic", env.Features, "--timeout", "200ms"); code != 0 {
		t.Errorf("--timeout without --max: exit %d, stderr %q; want 0", code, stderr)
	}
}
