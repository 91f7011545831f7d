// Package config is the worker's configuration: every DISTFEAT_ variable described once
// (name, default, documentation, mirrored flag), parsed from the environment and flags,
// validated with errors that name the variable. The deployment tests and the README read the
// variables through Variables, so manifests and docs cannot drift from the code.
package config

import (
	"flag"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"time"
)

// EnvPrefix is the prefix of every distfeat environment variable.
const EnvPrefix = "DISTFEAT_"

// Config is the worker's configuration (DESIGN §7). Every field is a Variable; see Variables
// for names, defaults and meaning.
type Config struct {
	Brokers     []string
	InputTopic  string
	OutputTopic string
	DLQTopic    string
	PointsTopic string // per-point output (marginal_transfer), "" for none
	Group       string
	Spec        string

	Window          string
	WindowSize      string
	WindowHop       string
	WindowGap       time.Duration
	AllowedLateness time.Duration
	IdleTimeout     time.Duration
	MaxOpenWindows  int
	MaxMessageBytes int
	MaxOutputBytes  int
	MaxBufferBytes  int

	ResetCheckpoints bool
	AllowKeyless     bool

	SessionTimeout time.Duration
	CommitInterval time.Duration

	MetricsAddr     string
	ShutdownTimeout time.Duration
	LogLevel        string
	LogFormat       string

	Security
}

// Security holds the TLS and SASL settings shared by every command that talks to a cluster
// (worker, produce, tail).
type Security struct {
	TLSEnabled            bool
	TLSCAFile             string
	TLSCertFile           string
	TLSKeyFile            string
	TLSServerName         string
	TLSInsecureSkipVerify bool

	SASLMechanism    string
	SASLUsername     string
	SASLPassword     string
	SASLPasswordFile string
}

// Load reads the worker configuration from env (os.LookupEnv in production) and args (the
// worker's flags, which win over the environment), and validates it. -h gives an error
// matching flag.ErrHelp; positional arguments are an error.
func Load(env Lookup, args []string) (*Config, error) {
	fs := flag.NewFlagSet("worker", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	flags := AddFlags(fs, Variables())
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("unexpected argument %q: the worker takes flags only", fs.Arg(0))
	}
	return FromLookup(Overlay(flags, env))
}

// FromLookup parses and validates the worker configuration from lookup (full variable names).
func FromLookup(lookup Lookup) (*Config, error) {
	var c Config
	if err := apply(&c, Variables(), lookup); err != nil {
		return nil, err
	}
	if err := c.Validate(); err != nil {
		return nil, err
	}
	return &c, nil
}

// LoadSecurity parses and validates only the TLS/SASL variables (client commands).
func LoadSecurity(lookup Lookup) (*Security, error) {
	var c Config
	if err := apply(&c, SecurityVariables(), lookup); err != nil {
		return nil, err
	}
	if err := c.Security.Validate(); err != nil {
		return nil, err
	}
	return &c.Security, nil
}

// Overlay looks a name up in first, then in second: flags over the environment.
func Overlay(first, second Lookup) Lookup {
	return func(name string) (string, bool) {
		if v, ok := first(name); ok {
			return v, true
		}
		return second(name)
	}
}

// MapLookup looks names up in m (tests, or an environment already read).
func MapLookup(m map[string]string) Lookup {
	return func(name string) (string, bool) { v, ok := m[name]; return v, ok }
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

// AddFlags registers one flag per variable on fs (--window-size for DISTFEAT_WINDOW_SIZE),
// its usage naming the allowed values, and returns a Lookup of the flags given on the command
// line, keyed like the environment. Call the Lookup after fs.Parse.
func AddFlags(fs *flag.FlagSet, vars []Variable) Lookup {
	vals := map[string]*flagValue{}
	for _, v := range vars {
		fv := &flagValue{v: v.Default, b: v.IsBool()}
		vals[v.Env()] = fv
		fs.Var(fv, v.Flag(), fmt.Sprintf("%s (%s; `%s`)", v.Doc, v.Env(), v.Values))
	}
	return func(name string) (string, bool) {
		fv, ok := vals[name]
		if !ok || !fv.set {
			return "", false
		}
		return fv.v, true
	}
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
	if _, err := c.WindowConfig(); err != nil {
		return err
	}
	if c.MaxMessageBytes <= 0 {
		return configError("MAX_MESSAGE_BYTES", "must be > 0")
	}
	if c.MaxOutputBytes < 8<<10 {
		return configError("MAX_OUTPUT_BYTES", "must be at least 8192 (room for a dead letter's headers)")
	}
	if c.MaxBufferBytes < 1<<20 {
		return configError("MAX_BUFFER_BYTES", "must be at least 1048576 (1 MiB)")
	}
	if c.SessionTimeout < 100*time.Millisecond {
		return configError("SESSION_TIMEOUT", "must be at least 100ms")
	}
	if c.CommitInterval <= 0 {
		return configError("COMMIT_INTERVAL", "must be > 0")
	}
	if c.ShutdownTimeout <= 0 {
		return configError("SHUTDOWN_TIMEOUT", "must be > 0")
	}
	if _, err := ParseLogLevel(c.LogLevel); err != nil {
		return configError("LOG_LEVEL", "%v", err)
	}
	if c.LogFormat != "text" && c.LogFormat != "json" {
		return configError("LOG_FORMAT", "%q: want text or json", c.LogFormat)
	}
	return c.Security.Validate()
}

// ParseLogLevel parses debug, info, warn or error (slog's names).
func ParseLogLevel(s string) (slog.Level, error) {
	var l slog.Level
	err := l.UnmarshalText([]byte(s))
	return l, err
}

// Redacted returns the configuration as slog attributes, with secrets removed.
func (c *Config) Redacted() []any {
	pw := ""
	if c.SASLPassword != "" || c.SASLPasswordFile != "" {
		pw = "[redacted]"
	}
	return []any{
		"brokers", c.Brokers, "input", c.InputTopic, "output", c.OutputTopic, "dlq", c.DLQTopic,
		"group", c.Group, "spec", c.Spec, "window", c.Window, "window_size", c.WindowSize,
		"window_hop", c.WindowHop, "idle_timeout", c.IdleTimeout, "max_open_windows", c.MaxOpenWindows,
		"metrics_addr", c.MetricsAddr, "tls", c.TLSEnabled || c.TLSCAFile != "", "sasl", c.SASLMechanism,
		"sasl_password", pw,
	}
}
