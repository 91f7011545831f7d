package config

import "time"

// The worker defaults filled in for the zero fields of the groups consumer.Config and
// processor.Config embed (SetDefaults below, the one place they are applied): each is the
// envDefault of its variable in Config's tags — the one documented in docs/configuration.md's
// table — and TestDefaultsMatchTags keeps them equal.
const (
	DefaultInputTopic      = "points"
	DefaultOutputTopic     = "features"
	DefaultDLQTopic        = "points.dlq"
	DefaultGroup           = "distfeat"
	DefaultMaxMessageBytes = 1 << 20   // DISTFEAT_MAX_MESSAGE_BYTES: 1 MiB
	DefaultMaxOutputBytes  = 1_000_000 // DISTFEAT_MAX_OUTPUT_BYTES: below Kafka's default message.max.bytes
	DefaultMaxBufferBytes  = 128 << 20 // DISTFEAT_MAX_BUFFER_BYTES: 128 MiB
	DefaultCommitInterval  = time.Second
	DefaultSessionTimeout  = 10 * time.Second
	DefaultShutdownTimeout = 20 * time.Second
)

// DefaultMaxPointsPerRecord is Limits.MaxPointsPerRecord's default (no variable sets it).
const DefaultMaxPointsPerRecord = 1 << 20

// MinOutputBytes is the smallest MaxOutputBytes (DISTFEAT_MAX_OUTPUT_BYTES): room for a dead
// letter's own headers (an error detail of at most processor.MaxErrorDetail bytes, a topic
// name of at most 249) with a wide margin.
const MinOutputBytes = 8 << 10

// SetDefaults fills the zero fields with their defaults (a negative MaxOutputBytes is left
// for the MinOutputBytes check to refuse).
func (l *Limits) SetDefaults() {
	if l.MaxMessageBytes <= 0 {
		l.MaxMessageBytes = DefaultMaxMessageBytes
	}
	if l.MaxOutputBytes == 0 {
		l.MaxOutputBytes = DefaultMaxOutputBytes
	}
	if l.MaxPointsPerRecord <= 0 {
		l.MaxPointsPerRecord = DefaultMaxPointsPerRecord
	}
}

// SetDefaults fills the zero fields, the Limits' included, with their defaults.
func (d *Delivery) SetDefaults() {
	d.Limits.SetDefaults()
	if d.MaxBufferBytes <= 0 {
		d.MaxBufferBytes = DefaultMaxBufferBytes
	}
	if d.SessionTimeout <= 0 {
		d.SessionTimeout = DefaultSessionTimeout
	}
	if d.CommitInterval <= 0 {
		d.CommitInterval = DefaultCommitInterval
	}
}

// SetDefaults fills the empty topics and group with their defaults (Brokers has none here:
// a worker without brokers is an error, not 127.0.0.1).
func (t *Topics) SetDefaults() {
	for _, f := range []struct {
		v   *string
		def string
	}{{&t.InputTopic, DefaultInputTopic}, {&t.OutputTopic, DefaultOutputTopic}, {&t.DLQTopic, DefaultDLQTopic}, {&t.Group, DefaultGroup}} {
		if *f.v == "" {
			*f.v = f.def
		}
	}
}
