package main

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"reflect"
	"strconv"
	"strings"
	"time"

	"github.com/caarlos0/env/v10"
	"github.com/segmentio/kafka-go"
	"github.com/segmentio/kafka-go/sasl"
	"github.com/segmentio/kafka-go/sasl/plain"
	"github.com/segmentio/kafka-go/sasl/scram"

	"github.com/distfeat/distfeat/window"
)

// envPrefix is the prefix of every distfeat environment variable.
const envPrefix = "DISTFEAT_"

// workerConfig is the worker's configuration (DESIGN §7), read from DISTFEAT_* variables.
// Every field can also be given as a flag named after the variable (--window-size for
// DISTFEAT_WINDOW_SIZE); flags win over the environment.
type workerConfig struct {
	Brokers     []string `env:"BROKERS" envSeparator:"," envDefault:"127.0.0.1:9092"`
	InputTopic  string   `env:"INPUT_TOPIC" envDefault:"points"`
	OutputTopic string   `env:"OUTPUT_TOPIC" envDefault:"features"`
	DLQTopic    string   `env:"DLQ_TOPIC" envDefault:"points.dlq"`
	Group       string   `env:"GROUP" envDefault:"distfeat"`
	Spec        string   `env:"SPEC"`

	Window          string        `env:"WINDOW" envDefault:"set"`
	WindowSize      string        `env:"WINDOW_SIZE"`
	WindowHop       string        `env:"WINDOW_HOP"`
	WindowGap       time.Duration `env:"WINDOW_GAP" envDefault:"30s"`
	AllowedLateness time.Duration `env:"ALLOWED_LATENESS" envDefault:"0s"`
	IdleTimeout     time.Duration `env:"IDLE_TIMEOUT" envDefault:"60s"`
	MaxOpenWindows  int           `env:"MAX_OPEN_WINDOWS" envDefault:"1000"`
	MaxMessageBytes int           `env:"MAX_MESSAGE_BYTES" envDefault:"1048576"`

	SessionTimeout time.Duration `env:"SESSION_TIMEOUT" envDefault:"10s"`
	CommitInterval time.Duration `env:"COMMIT_INTERVAL" envDefault:"1s"`

	MetricsAddr     string        `env:"METRICS_ADDR" envDefault:":9464"`
	ShutdownTimeout time.Duration `env:"SHUTDOWN_TIMEOUT" envDefault:"20s"`
	LogLevel        string        `env:"LOG_LEVEL" envDefault:"info"`
	LogFormat       string        `env:"LOG_FORMAT" envDefault:"text"`

	SecurityConfig
}

// SecurityConfig (exported so the environment parser reaches the embedded fields) holds the
// TLS and SASL settings shared by every command that talks to a
// cluster (worker, produce, tail).
type SecurityConfig struct {
	TLSEnabled            bool   `env:"TLS_ENABLED"`
	TLSCAFile             string `env:"TLS_CA_FILE"`
	TLSCertFile           string `env:"TLS_CERT_FILE"`
	TLSKeyFile            string `env:"TLS_KEY_FILE"`
	TLSServerName         string `env:"TLS_SERVER_NAME"`
	TLSInsecureSkipVerify bool   `env:"TLS_INSECURE_SKIP_VERIFY"`

	SASLMechanism    string `env:"SASL_MECHANISM"`
	SASLUsername     string `env:"SASL_USERNAME"`
	SASLPassword     string `env:"SASL_PASSWORD"`
	SASLPasswordFile string `env:"SASL_PASSWORD_FILE"`
}

// parseClientFlags parses a client command's flags, with the TLS/SASL variables mirrored as
// flags, and returns the dialer and transport they configure.
func parseClientFlags(fs *flag.FlagSet, args []string) (*kafka.Dialer, *kafka.Transport, error) {
	applySecurity := configFlags(fs, &SecurityConfig{})
	if err := fs.Parse(args); err != nil {
		return nil, nil, errUsage
	}
	applySecurity()
	sec, err := loadSecurityConfig()
	if err != nil {
		return nil, nil, err
	}
	return sec.kafkaClients()
}

// loadSecurityConfig reads the TLS/SASL variables for the client commands.
func loadSecurityConfig() (*SecurityConfig, error) {
	var c SecurityConfig
	if err := env.ParseWithOptions(&c, env.Options{Prefix: envPrefix}); err != nil {
		return nil, envError(err, &c)
	}
	if err := c.validate(); err != nil {
		return nil, err
	}
	return &c, nil
}

// configFlags registers one string flag per configuration variable on fs and returns a
// function that copies the flags that were set into the environment (so env parsing and
// validation see one source of truth).
func configFlags(fs *flag.FlagSet, cfg any) func() {
	names := map[string]*string{}
	for _, f := range reflect.VisibleFields(reflect.TypeOf(cfg).Elem()) {
		name := f.Tag.Get("env")
		if name == "" || f.Anonymous {
			continue
		}
		flagName := strings.ToLower(strings.ReplaceAll(name, "_", "-"))
		def := f.Tag.Get("envDefault")
		names[name] = fs.String(flagName, "", fmt.Sprintf("%s%s (default %q)", envPrefix, name, def))
	}
	return func() {
		fs.Visit(func(f *flag.Flag) {
			env := strings.ToUpper(strings.ReplaceAll(f.Name, "-", "_"))
			if v, ok := names[env]; ok {
				os.Setenv(envPrefix+env, *v)
			}
		})
	}
}

// loadWorkerConfig parses and validates the environment. Errors name the variable.
func loadWorkerConfig() (*workerConfig, error) {
	var cfg workerConfig
	if err := env.ParseWithOptions(&cfg, env.Options{Prefix: envPrefix}); err != nil {
		return nil, envError(err, &cfg)
	}
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	return &cfg, nil
}

// envError rewrites the environment parser's errors, which name Go fields, to name the
// DISTFEAT_ variables instead.
func envError(err error, cfg any) error {
	var agg env.AggregateError
	if !errors.As(err, &agg) {
		return fmt.Errorf("configuration: %w", err)
	}
	vars := map[string]string{}
	for _, f := range reflect.VisibleFields(reflect.TypeOf(cfg).Elem()) {
		if name := f.Tag.Get("env"); name != "" {
			vars[f.Name] = name
		}
	}
	var msgs []string
	for _, e := range agg.Errors {
		var pe env.ParseError
		if errors.As(e, &pe) {
			msgs = append(msgs, fmt.Sprintf("%s%s: cannot parse as %s: %v", envPrefix, vars[pe.Name], pe.Type, pe.Err))
			continue
		}
		msgs = append(msgs, e.Error())
	}
	return fmt.Errorf("configuration: %s", strings.Join(msgs, "; "))
}

// configError names the offending variable.
func configError(name, format string, args ...any) error {
	return fmt.Errorf("configuration: %s%s: %s", envPrefix, name, fmt.Sprintf(format, args...))
}

func (c *workerConfig) validate() error {
	if len(c.Brokers) == 0 || c.Brokers[0] == "" {
		return configError("BROKERS", "at least one broker address is required")
	}
	for _, b := range c.Brokers {
		if !strings.Contains(b, ":") {
			return configError("BROKERS", "%q is not host:port", b)
		}
	}
	for name, v := range map[string]string{"INPUT_TOPIC": c.InputTopic, "OUTPUT_TOPIC": c.OutputTopic, "DLQ_TOPIC": c.DLQTopic, "GROUP": c.Group} {
		if strings.TrimSpace(v) == "" {
			return configError(name, "must not be empty")
		}
	}
	if c.InputTopic == c.OutputTopic || c.InputTopic == c.DLQTopic {
		return configError("INPUT_TOPIC", "%q must differ from the output and dead-letter topics", c.InputTopic)
	}
	if _, err := c.windowConfig(); err != nil {
		return err
	}
	if c.MaxMessageBytes <= 0 {
		return configError("MAX_MESSAGE_BYTES", "must be > 0")
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
	if _, err := parseLogLevel(c.LogLevel); err != nil {
		return configError("LOG_LEVEL", "%v", err)
	}
	if c.LogFormat != "text" && c.LogFormat != "json" {
		return configError("LOG_FORMAT", "%q: want text or json", c.LogFormat)
	}
	return c.SecurityConfig.validate()
}

func (c *SecurityConfig) validate() error {
	switch strings.ToLower(c.SASLMechanism) {
	case "", "plain", "scram-sha-256", "scram-sha-512":
	default:
		return configError("SASL_MECHANISM", "%q: want plain, scram-sha-256 or scram-sha-512", c.SASLMechanism)
	}
	if c.SASLMechanism != "" && c.SASLUsername == "" {
		return configError("SASL_USERNAME", "required with DISTFEAT_SASL_MECHANISM")
	}
	if (c.TLSCertFile == "") != (c.TLSKeyFile == "") {
		return configError("TLS_CERT_FILE", "DISTFEAT_TLS_CERT_FILE and DISTFEAT_TLS_KEY_FILE go together")
	}
	return nil
}

// windowConfig converts the window variables into window.Config.
func (c *workerConfig) windowConfig() (window.Config, error) {
	wc := window.Config{
		Mode:            window.Mode(c.Window),
		Gap:             c.WindowGap.Milliseconds(),
		AllowedLateness: c.AllowedLateness.Milliseconds(),
		IdleTimeout:     c.IdleTimeout,
		MaxOpen:         c.MaxOpenWindows,
	}
	switch wc.Mode {
	case "set", "session":
	case "count":
		n, err := parseCount("WINDOW_SIZE", c.WindowSize, true)
		if err != nil {
			return wc, err
		}
		h, err := parseCount("WINDOW_HOP", c.WindowHop, false)
		if err != nil {
			return wc, err
		}
		wc.Size, wc.Hop = n, h
	case "time":
		d, err := parseDuration("WINDOW_SIZE", c.WindowSize, true)
		if err != nil {
			return wc, err
		}
		h, err := parseDuration("WINDOW_HOP", c.WindowHop, false)
		if err != nil {
			return wc, err
		}
		wc.Size, wc.Hop = d, h
	default:
		return wc, configError("WINDOW", "%q: want set, count, time or session", c.Window)
	}
	if c.IdleTimeout < 0 {
		return wc, configError("IDLE_TIMEOUT", "must be ≥ 0")
	}
	if c.MaxOpenWindows <= 0 {
		return wc, configError("MAX_OPEN_WINDOWS", "must be > 0")
	}
	if err := wc.Validate(); err != nil {
		return wc, fmt.Errorf("configuration: %w", err)
	}
	return wc, nil
}

func parseCount(name, v string, required bool) (int64, error) {
	if v == "" {
		if required {
			return 0, configError(name, "required for DISTFEAT_WINDOW=count (a number of points)")
		}
		return 0, nil
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n <= 0 {
		return 0, configError(name, "%q: want a positive number of points", v)
	}
	return n, nil
}

func parseDuration(name, v string, required bool) (int64, error) {
	if v == "" {
		if required {
			return 0, configError(name, "required for DISTFEAT_WINDOW=time (a duration such as 10s)")
		}
		return 0, nil
	}
	d, err := time.ParseDuration(v)
	if err != nil || d < time.Millisecond {
		return 0, configError(name, "%q: want a duration of at least 1ms, such as 10s", v)
	}
	return d.Milliseconds(), nil
}

func parseLogLevel(s string) (slog.Level, error) {
	var l slog.Level
	err := l.UnmarshalText([]byte(s))
	return l, err
}

// kafkaSecurity builds the TLS configuration and SASL mechanism. Secrets are read here and
// never logged.
func (c *SecurityConfig) kafkaSecurity() (*tls.Config, sasl.Mechanism, error) {
	var tlsCfg *tls.Config
	if c.TLSEnabled || c.TLSCAFile != "" || c.TLSCertFile != "" {
		tlsCfg = &tls.Config{MinVersion: tls.VersionTLS12, ServerName: c.TLSServerName, InsecureSkipVerify: c.TLSInsecureSkipVerify}
		if c.TLSCAFile != "" {
			pem, err := os.ReadFile(c.TLSCAFile)
			if err != nil {
				return nil, nil, configError("TLS_CA_FILE", "%v", err)
			}
			pool := x509.NewCertPool()
			if !pool.AppendCertsFromPEM(pem) {
				return nil, nil, configError("TLS_CA_FILE", "%s holds no PEM certificate", c.TLSCAFile)
			}
			tlsCfg.RootCAs = pool
		}
		if c.TLSCertFile != "" {
			cert, err := tls.LoadX509KeyPair(c.TLSCertFile, c.TLSKeyFile)
			if err != nil {
				return nil, nil, configError("TLS_CERT_FILE", "%v", err)
			}
			tlsCfg.Certificates = []tls.Certificate{cert}
		}
	}
	if c.SASLMechanism == "" {
		return tlsCfg, nil, nil
	}
	password := c.SASLPassword
	if c.SASLPasswordFile != "" {
		b, err := os.ReadFile(c.SASLPasswordFile)
		if err != nil {
			return nil, nil, configError("SASL_PASSWORD_FILE", "%v", err)
		}
		password = strings.TrimRight(string(b), "\r\n")
	}
	var mech sasl.Mechanism
	switch strings.ToLower(c.SASLMechanism) {
	case "plain":
		mech = plain.Mechanism{Username: c.SASLUsername, Password: password}
	case "scram-sha-256", "scram-sha-512":
		algo := scram.SHA256
		if strings.HasSuffix(strings.ToLower(c.SASLMechanism), "512") {
			algo = scram.SHA512
		}
		m, err := scram.Mechanism(algo, c.SASLUsername, password)
		if err != nil {
			return nil, nil, configError("SASL_MECHANISM", "%v", err)
		}
		mech = m
	}
	return tlsCfg, mech, nil
}

// kafkaClients builds the dialer (consumer group, readers) and transport (writer, offset
// client) with the same security settings.
func (c *SecurityConfig) kafkaClients() (*kafka.Dialer, *kafka.Transport, error) {
	tlsCfg, mech, err := c.kafkaSecurity()
	if err != nil {
		return nil, nil, err
	}
	dialer := &kafka.Dialer{Timeout: 10 * time.Second, DualStack: true, TLS: tlsCfg, SASLMechanism: mech}
	transport := &kafka.Transport{TLS: tlsCfg, SASL: mech, DialTimeout: 10 * time.Second}
	return dialer, transport, nil
}

// redacted returns the configuration for logging, with secrets removed.
func (c *workerConfig) redacted() []any {
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

var errUsage = errors.New("usage")
