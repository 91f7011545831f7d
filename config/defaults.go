package config

import "time"

// The worker defaults that packages below config restate when a field is left zero
// (consumer.Config, processor.Config, the service): each is the envDefault of its variable in
// Config's tags — the one documented in docs/configuration.md's table — and
// TestDefaultsMatchTags keeps them equal.
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
