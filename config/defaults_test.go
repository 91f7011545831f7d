package config

import (
	"fmt"
	"reflect"
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

// TestSetDefaultsAreTheDocumentedOnes: zero groups filled by SetDefaults equal the groups
// Load fills from the variables' documented defaults with nothing set (Brokers aside: the
// packages below config have no default cluster), so a consumer.Config or processor.Config
// built in code behaves as the worker does.
func TestSetDefaultsAreTheDocumentedOnes(t *testing.T) {
	loaded, err := FromEnv(map[string]string{})
	if err != nil {
		t.Fatal(err)
	}
	var topics Topics
	topics.SetDefaults()
	topics.Brokers = loaded.Brokers
	if !reflect.DeepEqual(topics, loaded.Topics) {
		t.Errorf("Topics.SetDefaults: %+v, documented %+v", topics, loaded.Topics)
	}
	var d Delivery
	d.SetDefaults()
	want := loaded.Delivery
	want.MaxPointsPerRecord = DefaultMaxPointsPerRecord // no variable: Load leaves it zero
	if d != want {
		t.Errorf("Delivery.SetDefaults: %+v, documented %+v", d, want)
	}
	// Values already set stay.
	set := Delivery{Limits: Limits{MaxMessageBytes: 7, MaxOutputBytes: 9000, MaxPointsPerRecord: 3}, MaxBufferBytes: 5,
		SessionTimeout: time.Minute, CommitInterval: time.Hour, AllowKeyless: true}
	got := set
	got.SetDefaults()
	if got != set {
		t.Errorf("SetDefaults changed set values: %+v, want %+v", got, set)
	}
}
