package config

import (
	"fmt"
	"testing"
	"time"
)

// TestDefaultsMatchTags: every Default constant is its variable's documented default (the
// envDefault tag, which TestConfigurationTable holds against docs/configuration.md).
func TestDefaultsMatchTags(t *testing.T) {
	byName := map[string]string{}
	for _, v := range Variables() {
		byName[v.Name] = v.Default
	}
	for _, tc := range []struct {
		name string
		want any
	}{
		{"INPUT_TOPIC", DefaultInputTopic},
		{"OUTPUT_TOPIC", DefaultOutputTopic},
		{"DLQ_TOPIC", DefaultDLQTopic},
		{"GROUP", DefaultGroup},
		{"MAX_MESSAGE_BYTES", DefaultMaxMessageBytes},
		{"MAX_OUTPUT_BYTES", DefaultMaxOutputBytes},
		{"MAX_BUFFER_BYTES", DefaultMaxBufferBytes},
		{"COMMIT_INTERVAL", DefaultCommitInterval},
		{"SESSION_TIMEOUT", DefaultSessionTimeout},
		{"SHUTDOWN_TIMEOUT", DefaultShutdownTimeout},
	} {
		doc, ok := byName[tc.name]
		if !ok {
			t.Errorf("no variable %s", tc.name)
			continue
		}
		var got any = doc
		switch tc.want.(type) {
		case int:
			var n int
			if _, err := fmt.Sscan(doc, &n); err != nil {
				t.Errorf("%s: default %q: %v", tc.name, doc, err)
			}
			got = n
		case time.Duration:
			d, err := time.ParseDuration(doc)
			if err != nil {
				t.Errorf("%s: default %q: %v", tc.name, doc, err)
			}
			got = d
		}
		if got != tc.want {
			t.Errorf("DISTFEAT_%s: documented default %q, the constant is %v", tc.name, doc, tc.want)
		}
	}
}
