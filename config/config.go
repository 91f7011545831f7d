// Package config is the worker's configuration: the Config struct's tags describe every
// DISTFEAT_ variable once (name, default, documentation), parsed by github.com/caarlos0/env
// from the environment with the mirrored flags laid over it, and validated with errors that
// name the variable. Flags, usage, docs/configuration.md, the deployment tests and the
// unknown-variable check read the variables through Variables, so none can drift from the code.
package config

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"os"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/caarlos0/env/v10"
)

// EnvPrefix is the prefix of every distfeat environment variable.
const EnvPrefix = "DISTFEAT_"

// Config is the worker's configuration (docs/configuration.md). Each field's tags describe its
// variable: env (the name after DISTFEAT_), envDefault, doc (one line for usage and the docs)
// and values (the usage placeholder: allowed values or a unit; bool and duration fields take
// theirs from the type). The groups the consumer and the processor read (Topics, Models,
// Delivery and its Limits) are embedded: consumer.Config and processor.Config embed the same
// structs, so a value has one name from the variable down and is never copied field by field.
// The groups sit where their variables sit in the documented table.
type Config struct {
	Topics
	Spec string `env:"SPEC" values:"file" doc:"feature spec JSON file (empty: the built-in default)"`

	Models

	Window          string        `env:"WINDOW" envDefault:"set" values:"set|count|time|session" doc:"window mode"`
	WindowSize      string        `env:"WINDOW_SIZE" values:"points|duration" doc:"window size: points (count) or a duration such as 10s (time); a start-up error with set or session windows, which have no size"`
	WindowHop       string        `env:"WINDOW_HOP" values:"points|duration" doc:"hop of sliding windows, same unit as WINDOW_SIZE (empty: tumbling); a start-up error with set or session windows"`
	WindowGap       time.Duration `env:"WINDOW_GAP" envDefault:"30s" doc:"session gap: event time without points that closes a session window"`
	AllowedLateness time.Duration `env:"ALLOWED_LATENESS" envDefault:"0s" doc:"watermark delay for time and session windows"`
	MaxEventLead    time.Duration `env:"MAX_EVENT_LEAD" envDefault:"1m" doc:"how far a record's event time t may run ahead of its Kafka timestamp; a record beyond it is dead-lettered as future and never moves the watermark (0 disables the bound)"`
	IdleTimeout     time.Duration `env:"IDLE_TIMEOUT" envDefault:"60s" doc:"processing time without points before a window closes (0 disables)"`
	MaxOpenWindows  int           `env:"MAX_OPEN_WINDOWS" envDefault:"1000" values:"windows" doc:"open windows per partition before the least recently updated is emitted"`

	Delivery

	MetricsAddr     string        `env:"METRICS_ADDR" envDefault:":9464" values:"host:port" doc:"serves /metrics, /healthz and /readyz; the default listens on every interface (container convention), set 127.0.0.1:9464 to keep it local"`
	ShutdownTimeout time.Duration `env:"SHUTDOWN_TIMEOUT" envDefault:"20s" doc:"bound on the final flush and commit after SIGTERM"`
	LogLevel        string        `env:"LOG_LEVEL" envDefault:"info" values:"debug|info|warn|error" doc:"log level"`
	LogFormat       string        `env:"LOG_FORMAT" envDefault:"text" values:"text|json" doc:"log format"`

	Security
}

// Topics are the cluster, the topics and the consumer group a worker reads and writes.
type Topics struct {
	Brokers     []string `env:"BROKERS" envDefault:"127.0.0.1:9092" envSeparator:"," values:"host:port,..." doc:"bootstrap brokers, comma-separated"`
	InputTopic  string   `env:"INPUT_TOPIC" envDefault:"points" values:"topic" doc:"topic of input point records"`
	OutputTopic string   `env:"OUTPUT_TOPIC" envDefault:"features" values:"topic" doc:"topic of feature records"`
	DLQTopic    string   `env:"DLQ_TOPIC" envDefault:"points.dlq" values:"topic" doc:"dead-letter topic for invalid input"`
	PointsTopic string   `env:"POINT_FEATURES_TOPIC" values:"topic" doc:"per-point features of the spec's marginal_transfer families (empty: off); a quarter of MAX_BUFFER_BYTES then holds windows' points"`
	Group       string   `env:"GROUP" envDefault:"distfeat" values:"name" doc:"consumer group"`
}

// Models are the model a worker applies to its closed windows and where it writes the
// predictions (docs/fitting.md).
type Models struct {
	Model            string  `env:"MODEL" values:"file" doc:"model file (distfeat fit) applied to every closed window, its prediction written to PREDICTIONS_TOPIC (a per-point model: to every point, in the POINT_FEATURES_TOPIC records); fitted under another spec_id or for other columns: a start-up error naming both"`
	ModelsTopic      string  `env:"MODELS_TOPIC" values:"topic" doc:"compacted topic of model files keyed by model name, read from the beginning and followed: the newest valid one named MODEL_NAME replaces the model for windows closing after it is read; a mismatched one is dead-lettered (empty: off)"`
	ModelName        string  `env:"MODEL_NAME" values:"name" doc:"the key of this worker's model on MODELS_TOPIC (required with it)"`
	ModelCoverage    float64 `env:"MODEL_COVERAGE" envDefault:"0.9" values:"coverage" doc:"a regression model's prediction interval coverage, one of the levels the model stores (0: no interval); a model without it is refused"`
	PredictionsTopic string  `env:"PREDICTIONS_TOPIC" values:"topic" doc:"topic of the per-window predictions (empty: OUTPUT_TOPIC + .predictions when MODEL or MODELS_TOPIC is set)"`
}

// Delivery is how a worker's consumer-group member takes records in and out: the record
// bounds, the memory budget, keyless records, checkpoint resets, the group session and the
// commit cadence.
type Delivery struct {
	Limits
	MaxBufferBytes int `env:"MAX_BUFFER_BYTES" envDefault:"134217728" values:"bytes" doc:"memory budget for records held outside the sketches (fetched, queued, unacknowledged output), divided over the assigned partitions"`

	AllowKeyless     bool `env:"ALLOW_KEYLESS" doc:"accept records without a Kafka key whose value names the set (safe only on a one-partition input topic: keyless records are spread over partitions and would split a set); off: such records are dead-lettered as no_key"`
	ResetCheckpoints bool `env:"RESET_CHECKPOINTS" doc:"start even if the group's committed checkpoints were written under another spec, window mode or window parameters (resume from the committed offsets without replay suppression); set it for one start"`

	SessionTimeout time.Duration `env:"SESSION_TIMEOUT" envDefault:"10s" doc:"consumer-group session timeout (heartbeats every tenth of it)"`
	CommitInterval time.Duration `env:"COMMIT_INTERVAL" envDefault:"1s" doc:"how often each partition commits its safe offset"`
}

// Limits bound one record in and one record out; the processor enforces them (too_large dead
// letters, dead letters cut to fit) and the consumer sizes its fetches, produce requests and
// budget by them.
type Limits struct {
	MaxMessageBytes int `env:"MAX_MESSAGE_BYTES" envDefault:"1048576" values:"bytes" doc:"larger input records are dead-lettered as too_large"`
	MaxOutputBytes  int `env:"MAX_OUTPUT_BYTES" envDefault:"1000000" values:"bytes" doc:"largest output record and produce request; keep it below the broker's message.max.bytes (dead letters are cut to fit it)"`
	// MaxPointsPerRecord bounds the points of one input record (too_large). No variable sets
	// it: it is DefaultMaxPointsPerRecord unless a caller of the packages sets it.
	MaxPointsPerRecord int
}

// Security holds the TLS and SASL settings shared by every command that talks to a cluster
// (worker, produce, tail).
type Security struct {
	TLSEnabled            bool   `env:"TLS_ENABLED" doc:"TLS to the brokers (implied by TLS_CA_FILE or TLS_CERT_FILE)"`
	TLSCAFile             string `env:"TLS_CA_FILE" values:"file" doc:"PEM CA bundle that verifies the brokers"`
	TLSCertFile           string `env:"TLS_CERT_FILE" values:"file" doc:"PEM client certificate (with TLS_KEY_FILE)"`
	TLSKeyFile            string `env:"TLS_KEY_FILE" values:"file" doc:"PEM client key (with TLS_CERT_FILE)"`
	TLSServerName         string `env:"TLS_SERVER_NAME" values:"host" doc:"server name expected in the brokers' certificates"`
	TLSInsecureSkipVerify bool   `env:"TLS_INSECURE_SKIP_VERIFY" doc:"do not verify the brokers' certificates (testing only)"`

	SASLMechanism string `env:"SASL_MECHANISM" values:"plain|scram-sha-256|scram-sha-512" doc:"SASL mechanism (empty: none)"`
	SASLUsername  string `env:"SASL_USERNAME" values:"name" doc:"SASL user (required with SASL_MECHANISM)"`
	SASLPassword  string `env:"SASL_PASSWORD" secret:"true" values:"password" doc:"SASL password (never logged; prefer SASL_PASSWORD_FILE)"`
	// SASLPasswordFromFile is the content of the file SASL_PASSWORD_FILE names, without its
	// final line break.
	SASLPasswordFromFile string `env:"SASL_PASSWORD_FILE,file" secret:"true" values:"file" doc:"file holding the SASL password (wins over SASL_PASSWORD)"`
}

// Load reads the worker configuration from environ (Environ in production) and args (the
// worker's flags, which win over the environment), and validates it. -h gives an error
// matching flag.ErrHelp; positional arguments are an error.
func Load(environ map[string]string, args []string) (*Config, error) {
	fs := flag.NewFlagSet("worker", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	flags := AddFlags(fs, Variables())
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("unexpected argument %q: the worker takes flags only", fs.Arg(0))
	}
	return FromEnv(flags.Over(environ))
}

// FromEnv parses and validates the worker configuration from environ (full variable names).
func FromEnv(environ map[string]string) (*Config, error) {
	var c Config
	if err := parse(&c, environ); err != nil {
		return nil, err
	}
	if err := c.Validate(); err != nil {
		return nil, err
	}
	return &c, nil
}

// SecurityFromEnv parses and validates only the TLS/SASL variables (client commands).
func SecurityFromEnv(environ map[string]string) (*Security, error) {
	var s Security
	if err := parse(&s, environ); err != nil {
		return nil, err
	}
	if err := s.Validate(); err != nil {
		return nil, err
	}
	return &s, nil
}

// Environ is the process environment as a map (the production input of FromEnv).
func Environ() map[string]string { return env.ToMap(os.Environ()) }

// parse fills v (*Config or *Security) from environ: an unset or empty variable takes its
// default. Errors name the variable, and one run reports every bad value.
func parse(v any, environ map[string]string) error {
	err := env.ParseWithOptions(v, env.Options{
		Prefix: EnvPrefix, Environment: environ,
		// The library's int is 32-bit and decimal; byte budgets may exceed 2 GiB.
		FuncMap: map[reflect.Type]env.ParserFunc{reflect.TypeOf(0): func(s string) (any, error) {
			n, err := strconv.ParseInt(s, 0, strconv.IntSize)
			return int(n), err
		}},
	})
	var agg env.AggregateError
	if !errors.As(err, &agg) {
		return err
	}
	msgs := make([]string, len(agg.Errors))
	for i, e := range agg.Errors {
		msgs[i] = e.Error()
		var pe env.ParseError
		if errors.As(e, &pe) {
			f, _ := reflect.TypeOf(Config{}).FieldByName(pe.Name)
			msgs[i] = fmt.Sprintf("%s%s: cannot parse as %s: %v", EnvPrefix, envName(f), pe.Type, pe.Err)
		}
	}
	return fmt.Errorf("configuration: %s", strings.Join(msgs, "; "))
}

// flagValue is one mirrored flag; set records whether it was given on the command line.
type flagValue struct {
	v   string
	set bool
	b   bool
}

func (f *flagValue) String() string {
	if f == nil {
		return ""
	}
	return f.v
}

func (f *flagValue) Set(s string) error { f.v, f.set = s, true; return nil }

// IsBoolFlag lets boolean variables be given as a bare flag (--tls-enabled).
func (f *flagValue) IsBoolFlag() bool { return f.b }

// Flags are the flags AddFlags registered, by full variable name.
type Flags map[string]*flagValue

// AddFlags registers one flag per variable on fs (--window-size for DISTFEAT_WINDOW_SIZE),
// its usage naming the variable and its allowed values.
func AddFlags(fs *flag.FlagSet, vars []Variable) Flags {
	flags := Flags{}
	for _, v := range vars {
		fv := &flagValue{v: v.Default, b: v.IsBool()}
		flags[v.Env()] = fv
		fs.Var(fv, v.Flag(), fmt.Sprintf("%s (%s; `%s`)", v.Doc, v.Env(), v.Values))
	}
	return flags
}

// Over returns a copy of environ with the flags given on the command line laid over it
// (flags win over the environment). Call it after the flag set is parsed.
func (f Flags) Over(environ map[string]string) map[string]string {
	out := maps.Clone(environ)
	if out == nil {
		out = map[string]string{}
	}
	for name, fv := range f {
		if fv.set {
			out[name] = fv.v
		}
	}
	return out
}

// configError names the offending variable.
func configError(name, format string, args ...any) error {
	return fmt.Errorf("configuration: %s%s: %s", EnvPrefix, name, fmt.Sprintf(format, args...))
}

// Validate checks the configuration; errors name the variable.
func (c *Config) Validate() error {
	if len(c.Brokers) == 0 || c.Brokers[0] == "" {
		return configError("BROKERS", "at least one broker address is required")
	}
	for _, b := range c.Brokers {
		if !strings.Contains(b, ":") {
			return configError("BROKERS", "%q is not host:port", b)
		}
	}
	for _, nv := range [][2]string{{"INPUT_TOPIC", c.InputTopic}, {"OUTPUT_TOPIC", c.OutputTopic}, {"DLQ_TOPIC", c.DLQTopic}, {"GROUP", c.Group}} {
		if strings.TrimSpace(nv[1]) == "" {
			return configError(nv[0], "must not be empty")
		}
	}
	if c.InputTopic == c.OutputTopic || c.InputTopic == c.DLQTopic {
		return configError("INPUT_TOPIC", "%q must differ from the output and dead-letter topics", c.InputTopic)
	}
	if p := c.PointsTopic; p != "" && (p == c.InputTopic || p == c.OutputTopic || p == c.DLQTopic) {
		return configError("POINT_FEATURES_TOPIC", "%q must differ from the input, output and dead-letter topics", p)
	}
	if err := c.validateModel(); err != nil {
		return err
	}
	if _, err := c.WindowConfig(); err != nil {
		return err
	}
	for _, nv := range []struct {
		name     string
		v, least int64
		msg      string
	}{
		{"MAX_MESSAGE_BYTES", int64(c.MaxMessageBytes), 1, "must be > 0"},
		{"MAX_OUTPUT_BYTES", int64(c.MaxOutputBytes), MinOutputBytes, "must be at least 8192 (room for a dead letter's headers)"},
		{"MAX_BUFFER_BYTES", int64(c.MaxBufferBytes), 1 << 20, "must be at least 1048576 (1 MiB)"},
		{"SESSION_TIMEOUT", int64(c.SessionTimeout), int64(100 * time.Millisecond), "must be at least 100ms"},
		{"COMMIT_INTERVAL", int64(c.CommitInterval), 1, "must be > 0"},
		{"SHUTDOWN_TIMEOUT", int64(c.ShutdownTimeout), 1, "must be > 0"},
	} {
		if nv.v < nv.least {
			return configError(nv.name, "%s", nv.msg)
		}
	}
	if _, err := ParseLogLevel(c.LogLevel); err != nil {
		return configError("LOG_LEVEL", "%v", err)
	}
	if c.LogFormat != "text" && c.LogFormat != "json" {
		return configError("LOG_FORMAT", "%q: want text or json", c.LogFormat)
	}
	return c.Security.Validate()
}

// Predicting reports whether the worker applies a model (MODEL or MODELS_TOPIC).
func (c *Models) Predicting() bool { return c.Model != "" || c.ModelsTopic != "" }

// PredictionsTopicName is the topic of the predictions: PREDICTIONS_TOPIC, else outputTopic
// (OUTPUT_TOPIC) + ".predictions" when the worker predicts, else "".
func (c *Models) PredictionsTopicName(outputTopic string) string {
	if c.PredictionsTopic != "" || !c.Predicting() {
		return c.PredictionsTopic
	}
	return outputTopic + ".predictions"
}

// PredictionsTopicName is Models.PredictionsTopicName with the configured OUTPUT_TOPIC.
func (c *Config) PredictionsTopicName() string { return c.Models.PredictionsTopicName(c.OutputTopic) }

// validateModel checks the model variables: a models topic needs a name and a name a topic,
// a predictions topic needs a model, the coverage is 0 or in (0, 1), and the predictions and
// models topics differ from the others.
func (c *Config) validateModel() error {
	if c.ModelsTopic != "" && strings.TrimSpace(c.ModelName) == "" {
		return configError("MODEL_NAME", "required with MODELS_TOPIC %q: the key of this worker's model on it", c.ModelsTopic)
	}
	if c.ModelName != "" && c.ModelsTopic == "" {
		return configError("MODEL_NAME", "%q is set but MODELS_TOPIC is not: name the topic the model comes from", c.ModelName)
	}
	if c.PredictionsTopic != "" && !c.Predicting() {
		return configError("PREDICTIONS_TOPIC", "%q is set but neither MODEL nor MODELS_TOPIC is: no model makes predictions", c.PredictionsTopic)
	}
	if cv := c.ModelCoverage; cv != 0 && !(cv > 0 && cv < 1) {
		return configError("MODEL_COVERAGE", "%v: want 0 (no interval) or a coverage between 0 and 1 such as 0.9", cv)
	}
	others := []string{c.InputTopic, c.OutputTopic, c.DLQTopic, c.PointsTopic}
	if p := c.PredictionsTopicName(); p != "" && slices.Contains(others, p) {
		return configError("PREDICTIONS_TOPIC", "%q must differ from the input, output, dead-letter and per-point topics", p)
	}
	if m := c.ModelsTopic; m != "" && (slices.Contains(others, m) || m == c.PredictionsTopicName()) {
		return configError("MODELS_TOPIC", "%q must differ from the input, output, dead-letter, per-point and predictions topics", m)
	}
	return nil
}

// ParseLogLevel parses debug, info, warn or error (slog's names).
func ParseLogLevel(s string) (slog.Level, error) {
	var l slog.Level
	err := l.UnmarshalText([]byte(s))
	return l, err
}

// Redacted returns every variable's value as slog attributes (window_size=10s), with the
// secrets replaced by [redacted] when set.
func (c *Config) Redacted() []any {
	var out []any
	v := reflect.ValueOf(*c)
	for _, f := range reflect.VisibleFields(v.Type()) {
		name := envName(f)
		if name == "" {
			continue
		}
		val := v.FieldByIndex(f.Index).Interface()
		if f.Tag.Get("secret") == "true" && !v.FieldByIndex(f.Index).IsZero() {
			val = "[redacted]"
		}
		out = append(out, strings.ToLower(name), val)
	}
	return out
}
