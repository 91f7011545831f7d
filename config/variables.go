package config

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Variable describes one DISTFEAT_ variable: its name, default, documentation and the flag
// that mirrors it. The table in variables() is the only place a variable is described.
type Variable struct {
	// Name is the variable without the DISTFEAT_ prefix, e.g. WINDOW_SIZE.
	Name string
	// Default is the value used when the variable is unset or empty; "" means none.
	Default string
	// Doc is a one-line description (README configuration table, flag usage).
	Doc string
	// Values is the value placeholder shown in usage: allowed values (set|count|time|session)
	// or the kind of value with its unit (duration, bytes, host:port).
	Values string
	// Secret variables are never logged.
	Secret bool
	// Security marks the TLS/SASL variables, shared by every command that talks to a cluster.
	Security bool

	kind kind
	set  func(c *Config, raw string) error
}

// Env is the full variable name, e.g. DISTFEAT_WINDOW_SIZE.
func (v Variable) Env() string { return EnvPrefix + v.Name }

// Flag is the name of the flag that mirrors the variable, e.g. window-size.
func (v Variable) Flag() string { return strings.ToLower(strings.ReplaceAll(v.Name, "_", "-")) }

// HasDefault reports whether the variable has a default value.
func (v Variable) HasDefault() bool { return v.Default != "" }

// IsBool reports whether the variable is a boolean (its flag may be given without a value).
func (v Variable) IsBool() bool { return v.kind == kindBool }

// kind is how a variable's text is parsed; its String is the Go type named in parse errors.
type kind int

const (
	kindString kind = iota
	kindList
	kindInt
	kindBool
	kindDuration
)

func (k kind) String() string {
	return [...]string{"string", "[]string", "int", "bool", "time.Duration"}[k]
}

// Variables returns every variable of the worker configuration, in documentation order.
func Variables() []Variable { return variables() }

// SecurityVariables returns the TLS/SASL variables, which the client commands (produce, tail)
// read as well as the worker.
func SecurityVariables() []Variable {
	var out []Variable
	for _, v := range variables() {
		if v.Security {
			out = append(out, v)
		}
	}
	return out
}

// Lookup returns the full variable name's value and whether it is set (os.LookupEnv).
type Lookup func(name string) (string, bool)

func variables() []Variable {
	return []Variable{
		str("BROKERS", "127.0.0.1:9092", "host:port,...", "bootstrap brokers, comma-separated", kindList,
			func(c *Config, s string) { c.Brokers = splitList(s) }),
		str("INPUT_TOPIC", "points", "topic", "topic of input point records", kindString, func(c *Config, s string) { c.InputTopic = s }),
		str("OUTPUT_TOPIC", "features", "topic", "topic of feature records", kindString, func(c *Config, s string) { c.OutputTopic = s }),
		str("DLQ_TOPIC", "points.dlq", "topic", "dead-letter topic for invalid input", kindString, func(c *Config, s string) { c.DLQTopic = s }),
		str("POINT_FEATURES_TOPIC", "", "topic", "per-point features of the spec's marginal_transfer families (empty: off); a quarter of MAX_BUFFER_BYTES then holds windows' points", kindString,
			func(c *Config, s string) { c.PointsTopic = s }),
		str("GROUP", "distfeat", "name", "consumer group", kindString, func(c *Config, s string) { c.Group = s }),
		str("SPEC", "", "file", "feature spec JSON file (empty: the built-in default)", kindString, func(c *Config, s string) { c.Spec = s }),
		str("WINDOW", "set", "set|count|time|session", "window mode", kindString, func(c *Config, s string) { c.Window = s }),
		str("WINDOW_SIZE", "", "points|duration", "window size: points (count) or a duration such as 10s (time)", kindString,
			func(c *Config, s string) { c.WindowSize = s }),
		str("WINDOW_HOP", "", "points|duration", "hop of sliding windows, same unit as WINDOW_SIZE (empty: tumbling)", kindString,
			func(c *Config, s string) { c.WindowHop = s }),
		dur("WINDOW_GAP", "30s", "session gap: event time without points that closes a session window", func(c *Config) *time.Duration { return &c.WindowGap }),
		dur("ALLOWED_LATENESS", "0s", "watermark delay for time and session windows", func(c *Config) *time.Duration { return &c.AllowedLateness }),
		dur("IDLE_TIMEOUT", "60s", "processing time without points before a window closes (0 disables)", func(c *Config) *time.Duration { return &c.IdleTimeout }),
		integer("MAX_OPEN_WINDOWS", "1000", "windows", "open windows per partition before the least recently updated is emitted",
			func(c *Config) *int { return &c.MaxOpenWindows }),
		integer("MAX_MESSAGE_BYTES", "1048576", "bytes", "larger input records are dead-lettered as too_large",
			func(c *Config) *int { return &c.MaxMessageBytes }),
		integer("MAX_OUTPUT_BYTES", "1000000", "bytes", "largest output record and produce request; keep it below the broker's message.max.bytes (dead letters are cut to fit it)",
			func(c *Config) *int { return &c.MaxOutputBytes }),
		integer("MAX_BUFFER_BYTES", "134217728", "bytes", "memory budget for records held outside the sketches (fetched, queued, unacknowledged output), divided over the assigned partitions",
			func(c *Config) *int { return &c.MaxBufferBytes }),
		boolean("ALLOW_KEYLESS", "accept records without a Kafka key whose value names the set (safe only on a one-partition input topic: keyless records are spread over partitions and would split a set); off: such records are dead-lettered as no_key",
			func(c *Config) *bool { return &c.AllowKeyless }),
		boolean("RESET_CHECKPOINTS", "start even if the group's committed checkpoints were written under another spec, window mode or window parameters (resume from the committed offsets without replay suppression); set it for one start",
			func(c *Config) *bool { return &c.ResetCheckpoints }),
		dur("SESSION_TIMEOUT", "10s", "consumer-group session timeout (heartbeats every tenth of it)", func(c *Config) *time.Duration { return &c.SessionTimeout }),
		dur("COMMIT_INTERVAL", "1s", "how often each partition commits its safe offset", func(c *Config) *time.Duration { return &c.CommitInterval }),
		str("METRICS_ADDR", ":9464", "host:port", "serves /metrics, /healthz and /readyz; the default listens on every interface (container convention), set 127.0.0.1:9464 to keep it local",
			kindString, func(c *Config, s string) { c.MetricsAddr = s }),
		dur("SHUTDOWN_TIMEOUT", "20s", "bound on the final flush and commit after SIGTERM", func(c *Config) *time.Duration { return &c.ShutdownTimeout }),
		str("LOG_LEVEL", "info", "debug|info|warn|error", "log level", kindString, func(c *Config, s string) { c.LogLevel = s }),
		str("LOG_FORMAT", "text", "text|json", "log format", kindString, func(c *Config, s string) { c.LogFormat = s }),

		security(boolean("TLS_ENABLED", "TLS to the brokers (implied by TLS_CA_FILE or TLS_CERT_FILE)", func(c *Config) *bool { return &c.TLSEnabled })),
		security(str("TLS_CA_FILE", "", "file", "PEM CA bundle that verifies the brokers", kindString, func(c *Config, s string) { c.TLSCAFile = s })),
		security(str("TLS_CERT_FILE", "", "file", "PEM client certificate (with TLS_KEY_FILE)", kindString, func(c *Config, s string) { c.TLSCertFile = s })),
		security(str("TLS_KEY_FILE", "", "file", "PEM client key (with TLS_CERT_FILE)", kindString, func(c *Config, s string) { c.TLSKeyFile = s })),
		security(str("TLS_SERVER_NAME", "", "host", "server name expected in the brokers' certificates", kindString, func(c *Config, s string) { c.TLSServerName = s })),
		security(boolean("TLS_INSECURE_SKIP_VERIFY", "do not verify the brokers' certificates (testing only)", func(c *Config) *bool { return &c.TLSInsecureSkipVerify })),
		security(str("SASL_MECHANISM", "", "plain|scram-sha-256|scram-sha-512", "SASL mechanism (empty: none)", kindString, func(c *Config, s string) { c.SASLMechanism = s })),
		security(str("SASL_USERNAME", "", "name", "SASL user (required with SASL_MECHANISM)", kindString, func(c *Config, s string) { c.SASLUsername = s })),
		secret(security(str("SASL_PASSWORD", "", "password", "SASL password (never logged; prefer SASL_PASSWORD_FILE)", kindString, func(c *Config, s string) { c.SASLPassword = s }))),
		security(str("SASL_PASSWORD_FILE", "", "file", "file holding the SASL password (wins over SASL_PASSWORD)", kindString, func(c *Config, s string) { c.SASLPasswordFile = s })),
	}
}

func str(name, def, values, doc string, k kind, set func(*Config, string)) Variable {
	return Variable{Name: name, Default: def, Values: values, Doc: doc, kind: k,
		set: func(c *Config, s string) error { set(c, s); return nil }}
}

func dur(name, def, doc string, field func(*Config) *time.Duration) Variable {
	return Variable{Name: name, Default: def, Values: "duration", Doc: doc, kind: kindDuration,
		set: func(c *Config, s string) error {
			d, err := time.ParseDuration(s)
			*field(c) = d
			return err
		}}
}

func integer(name, def, unit, doc string, field func(*Config) *int) Variable {
	return Variable{Name: name, Default: def, Values: unit, Doc: doc, kind: kindInt,
		set: func(c *Config, s string) error {
			n, err := strconv.ParseInt(s, 0, strconv.IntSize)
			*field(c) = int(n)
			return err
		}}
}

func boolean(name, doc string, field func(*Config) *bool) Variable {
	return Variable{Name: name, Values: "true|false", Doc: doc, kind: kindBool,
		set: func(c *Config, s string) error {
			b, err := strconv.ParseBool(s)
			*field(c) = b
			return err
		}}
}

func security(v Variable) Variable { v.Security = true; return v }
func secret(v Variable) Variable   { v.Secret = true; return v }

// splitList splits a comma-separated list, keeping empty items so validation can name them.
func splitList(s string) []string { return strings.Split(s, ",") }

// apply reads every variable in vars from lookup (empty or unset: the default) into c. Parse
// errors name the variable and are joined, so one run reports every bad value.
func apply(c *Config, vars []Variable, lookup Lookup) error {
	var msgs []string
	for _, v := range vars {
		raw, ok := lookup(v.Env())
		if !ok || raw == "" {
			raw = v.Default
		}
		if raw == "" {
			continue
		}
		if err := v.set(c, raw); err != nil {
			msgs = append(msgs, fmt.Sprintf("%s: cannot parse as %s: %v", v.Env(), v.kind, err))
		}
	}
	if len(msgs) > 0 {
		return fmt.Errorf("configuration: %s", strings.Join(msgs, "; "))
	}
	return nil
}
