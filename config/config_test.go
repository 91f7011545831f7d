package config_test

import (
	"errors"
	"flag"
	"log/slog"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/distfeat/distfeat/config"
)

// env builds an environment from short names (WINDOW for DISTFEAT_WINDOW).
func env(m map[string]string) map[string]string {
	full := map[string]string{}
	for k, v := range m {
		full[config.EnvPrefix+k] = v
	}
	return full
}

// TestConfigErrorsNameTheVariable: every invalid setting is a start-up error naming the
// offending DISTFEAT_ variable.
func TestConfigErrorsNameTheVariable(t *testing.T) {
	cases := []struct {
		env  map[string]string
		want string
	}{
		{map[string]string{"BROKERS": "localhost"}, "DISTFEAT_BROKERS"},
		{map[string]string{"WINDOW": "tumbling"}, "DISTFEAT_WINDOW"},
		{map[string]string{"WINDOW": "count"}, "DISTFEAT_WINDOW_SIZE"},
		{map[string]string{"WINDOW": "count", "WINDOW_SIZE": "-3"}, "DISTFEAT_WINDOW_SIZE"},
		{map[string]string{"WINDOW": "count", "WINDOW_SIZE": "10", "WINDOW_HOP": "x"}, "DISTFEAT_WINDOW_HOP"},
		{map[string]string{"WINDOW": "time", "WINDOW_SIZE": "10"}, "DISTFEAT_WINDOW_SIZE"},
		{map[string]string{"WINDOW": "count", "WINDOW_SIZE": "10", "WINDOW_HOP": "20"}, "DISTFEAT_WINDOW_HOP"},
		{map[string]string{"WINDOW": "session", "WINDOW_GAP": "0s"}, "DISTFEAT_WINDOW_GAP"},
		// Set and session windows have no size: a size or hop given there is refused, not ignored.
		{map[string]string{"WINDOW_SIZE": "100"}, "DISTFEAT_WINDOW_SIZE"},
		{map[string]string{"WINDOW": "set", "WINDOW_HOP": "10"}, "DISTFEAT_WINDOW_HOP"},
		{map[string]string{"WINDOW": "session", "WINDOW_SIZE": "10s"}, "DISTFEAT_WINDOW_SIZE"},
		{map[string]string{"WINDOW": "session", "WINDOW_HOP": "5s"}, "DISTFEAT_WINDOW_HOP"},
		{map[string]string{"MAX_OPEN_WINDOWS": "0"}, "DISTFEAT_MAX_OPEN_WINDOWS"},
		{map[string]string{"MAX_EVENT_LEAD": "-1s"}, "DISTFEAT_MAX_EVENT_LEAD"},
		{map[string]string{"MAX_EVENT_LEAD": "soon"}, "DISTFEAT_MAX_EVENT_LEAD"},
		{map[string]string{"MAX_OPEN_WINDOWS": "many"}, "DISTFEAT_MAX_OPEN_WINDOWS"},
		{map[string]string{"IDLE_TIMEOUT": "soon"}, "DISTFEAT_IDLE_TIMEOUT"},
		{map[string]string{"MAX_MESSAGE_BYTES": "0"}, "DISTFEAT_MAX_MESSAGE_BYTES"},
		{map[string]string{"SESSION_TIMEOUT": "1ms"}, "DISTFEAT_SESSION_TIMEOUT"},
		{map[string]string{"LOG_LEVEL": "loud"}, "DISTFEAT_LOG_LEVEL"},
		{map[string]string{"LOG_FORMAT": "xml"}, "DISTFEAT_LOG_FORMAT"},
		{map[string]string{"OUTPUT_TOPIC": "points"}, "DISTFEAT_INPUT_TOPIC"},
		{map[string]string{"GROUP": " "}, "DISTFEAT_GROUP"},
		{map[string]string{"COMMIT_INTERVAL": "-1s"}, "DISTFEAT_COMMIT_INTERVAL"},
		{map[string]string{"TLS_ENABLED": "maybe"}, "DISTFEAT_TLS_ENABLED"},
		{map[string]string{"SASL_MECHANISM": "kerberos"}, "DISTFEAT_SASL_MECHANISM"},
		{map[string]string{"SASL_MECHANISM": "plain"}, "DISTFEAT_SASL_USERNAME"},
		{map[string]string{"MODELS_TOPIC": "models"}, "DISTFEAT_MODEL_NAME"},
		{map[string]string{"MODEL_NAME": "mc"}, "DISTFEAT_MODEL_NAME"},
		{map[string]string{"PREDICTIONS_TOPIC": "preds"}, "DISTFEAT_PREDICTIONS_TOPIC"},
		{map[string]string{"MODEL": "m.json", "MODEL_COVERAGE": "90"}, "DISTFEAT_MODEL_COVERAGE"},
		{map[string]string{"MODEL": "m.json", "PREDICTIONS_TOPIC": "features"}, "DISTFEAT_PREDICTIONS_TOPIC"},
		{map[string]string{"MODELS_TOPIC": "points.dlq", "MODEL_NAME": "mc"}, "DISTFEAT_MODELS_TOPIC"},
		{map[string]string{"TLS_CERT_FILE": "/x.pem"}, "DISTFEAT_TLS_CERT_FILE"},
	}
	for _, tc := range cases {
		t.Run(tc.want, func(t *testing.T) {
			_, err := config.Load(env(tc.env), nil)
			if err == nil {
				t.Fatalf("%v: no error", tc.env)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("%v: error %q does not name %s", tc.env, err, tc.want)
			}
		})
	}
}

// TestDefaults: with nothing set, every field takes the documented default, and the defaults
// in the Variable table are the ones Load applies.
func TestDefaults(t *testing.T) {
	cfg, err := config.Load(env(nil), nil)
	if err != nil {
		t.Fatal(err)
	}
	want := config.Config{
		Topics: config.Topics{Brokers: []string{"127.0.0.1:9092"}, InputTopic: "points", OutputTopic: "features",
			DLQTopic: "points.dlq", Group: "distfeat"},
		Window: "set", WindowGap: 30 * time.Second,
		IdleTimeout: time.Minute, MaxEventLead: time.Minute, MaxOpenWindows: 1000,
		Delivery: config.Delivery{Limits: config.Limits{MaxMessageBytes: 1 << 20, MaxOutputBytes: 1_000_000}, MaxBufferBytes: 128 << 20,
			SessionTimeout: 10 * time.Second, CommitInterval: time.Second},
		MetricsAddr: ":9464", ShutdownTimeout: 20 * time.Second, LogLevel: "info", LogFormat: "text",
		Models: config.Models{ModelCoverage: 0.9},
	}
	if got := *cfg; !reflect.DeepEqual(got, want) {
		t.Errorf("defaults:\n got  %+v\n want %+v", got, want)
	}
	// An empty value means the default, as an unset one does.
	cfg, err = config.Load(env(map[string]string{"WINDOW_GAP": "", "BROKERS": ""}), nil)
	if err != nil || cfg.WindowGap != 30*time.Second || cfg.Brokers[0] != "127.0.0.1:9092" {
		t.Errorf("empty values: %+v, %v", cfg, err)
	}
}

// TestConfigFlagsMirrorVariables: a flag named after a variable overrides the environment.
func TestConfigFlagsMirrorVariables(t *testing.T) {
	e := env(map[string]string{"WINDOW": "set", "SASL_USERNAME": "from-env", "TLS_ENABLED": "false"})
	cfg, err := config.Load(e, []string{"--window", "time", "--window-size", "10s", "--window-hop", "5s", "--sasl-username", "u", "--tls-enabled"})
	if err != nil {
		t.Fatal(err)
	}
	wc, err := cfg.WindowConfig()
	if err != nil {
		t.Fatal(err)
	}
	if wc.Mode != "time" || wc.Size != (10*time.Second).Milliseconds() || wc.Hop != 5000 {
		t.Errorf("window config %+v, want time 10s hop 5s", wc)
	}
	if cfg.SASLUsername != "u" {
		t.Errorf("embedded security flag not applied: %q", cfg.SASLUsername)
	}
	if !cfg.TLSEnabled {
		t.Error("bare boolean flag --tls-enabled not applied")
	}
}

// TestLoadArgs: -h is flag.ErrHelp, positional arguments and unknown flags are errors.
func TestLoadArgs(t *testing.T) {
	if _, err := config.Load(env(nil), []string{"-h"}); !errors.Is(err, flag.ErrHelp) {
		t.Errorf("-h: %v, want flag.ErrHelp", err)
	}
	if _, err := config.Load(env(nil), []string{"points.csv"}); err == nil || !strings.Contains(err.Error(), "points.csv") {
		t.Errorf("positional argument: %v, want an error naming it", err)
	}
	if _, err := config.Load(env(nil), []string{"--brokerz", "x:1"}); err == nil {
		t.Error("unknown flag accepted")
	}
}

// TestVariablesDescribed: every variable has a name, documentation and a value placeholder,
// flags are the lower-case dashed names, and names are unique.
func TestVariablesDescribed(t *testing.T) {
	seen := map[string]bool{}
	for _, v := range config.Variables() {
		if v.Name == "" || v.Doc == "" || v.Values == "" || strings.ContainsAny(v.Values, " \t") {
			t.Errorf("%+v: name, doc and a one-word value placeholder are required", v)
		}
		if seen[v.Name] {
			t.Errorf("%s described twice", v.Name)
		}
		seen[v.Name] = true
		if want := strings.ToLower(strings.ReplaceAll(v.Name, "_", "-")); v.Flag() != want || v.Env() != "DISTFEAT_"+v.Name {
			t.Errorf("%s: flag %q env %q", v.Name, v.Flag(), v.Env())
		}
	}
	if len(config.SecurityVariables()) != 10 {
		t.Errorf("%d security variables, want the 6 TLS and 4 SASL ones", len(config.SecurityVariables()))
	}
}

// TestSecretsNotLogged: the redacted configuration never carries the SASL password.
func TestSecretsNotLogged(t *testing.T) {
	cfg, err := config.Load(env(map[string]string{"SASL_MECHANISM": "plain", "SASL_USERNAME": "svc", "SASL_PASSWORD": "hunter2-secret"}), nil)
	if err != nil {
		t.Fatal(err)
	}
	var sb strings.Builder
	slog.New(slog.NewJSONHandler(&sb, nil)).Info("start", cfg.Redacted()...)
	if strings.Contains(sb.String(), "hunter2") {
		t.Errorf("password in log line: %s", sb.String())
	}
}

// TestBooleanSwitches: the opt-in switches reach the configuration from the environment and
// from their flags, and are off by default (keyless records are dead-lettered unless allowed).
func TestBooleanSwitches(t *testing.T) {
	cases := []struct {
		name string
		env  map[string]string
		args []string
		get  func(*config.Config) bool
		want bool
	}{
		{"allow keyless default", nil, nil, func(c *config.Config) bool { return c.AllowKeyless }, false},
		{"allow keyless env", map[string]string{"ALLOW_KEYLESS": "true"}, nil, func(c *config.Config) bool { return c.AllowKeyless }, true},
		{"allow keyless flag", nil, []string{"--allow-keyless"}, func(c *config.Config) bool { return c.AllowKeyless }, true},
		{"reset checkpoints env", map[string]string{"RESET_CHECKPOINTS": "true"}, nil, func(c *config.Config) bool { return c.ResetCheckpoints }, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := config.Load(env(tc.env), tc.args)
			if err != nil {
				t.Fatal(err)
			}
			if got := tc.get(cfg); got != tc.want {
				t.Errorf("got %v, want %v", got, tc.want)
			}
		})
	}
}

// TestSASLPasswordFile: DISTFEAT_SASL_PASSWORD_FILE's content, without its final line break,
// is the password and wins over DISTFEAT_SASL_PASSWORD; a missing file is an error naming
// the variable; neither password reaches the log.
func TestSASLPasswordFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "password")
	if err := os.WriteFile(path, []byte("from-file-secret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Load(env(map[string]string{"SASL_MECHANISM": "plain", "SASL_USERNAME": "svc",
		"SASL_PASSWORD": "from-env-secret", "SASL_PASSWORD_FILE": path}), nil)
	if err != nil {
		t.Fatal(err)
	}
	cs, err := cfg.ClientSecurity()
	if err != nil {
		t.Fatal(err)
	}
	if cs.SASLMechanism != "plain" || cs.SASLPassword != "from-file-secret" || cs.SASLUsername != "svc" || cs.TLS != nil {
		t.Errorf("client security %q %q (TLS %v), want plain svc with the file's password and no TLS", cs.SASLMechanism, cs.SASLUsername, cs.TLS)
	}
	var sb strings.Builder
	slog.New(slog.NewTextHandler(&sb, nil)).Info("start", cfg.Redacted()...)
	if strings.Contains(sb.String(), "secret") || !strings.Contains(sb.String(), "sasl_password_file=[redacted]") {
		t.Errorf("log line: %s", sb.String())
	}
	_, err = config.Load(env(map[string]string{"SASL_PASSWORD_FILE": path + ".missing"}), nil)
	if err == nil || !strings.Contains(err.Error(), "DISTFEAT_SASL_PASSWORD_FILE") {
		t.Errorf("missing password file: %v, want an error naming DISTFEAT_SASL_PASSWORD_FILE", err)
	}
}

// TestParseErrorsNameEveryVariable: one start reports every unparsable value, each by its
// variable; byte budgets beyond 2 GiB parse (the library's own int parser is 32-bit).
func TestParseErrorsNameEveryVariable(t *testing.T) {
	_, err := config.Load(env(map[string]string{"IDLE_TIMEOUT": "soon", "MAX_OPEN_WINDOWS": "many", "TLS_ENABLED": "maybe"}), nil)
	for _, name := range []string{"DISTFEAT_IDLE_TIMEOUT", "DISTFEAT_MAX_OPEN_WINDOWS", "DISTFEAT_TLS_ENABLED"} {
		if err == nil || !strings.Contains(err.Error(), name) {
			t.Errorf("error %v does not name %s", err, name)
		}
	}
	cfg, err := config.Load(env(map[string]string{"MAX_BUFFER_BYTES": "8589934592"}), nil)
	if err != nil || cfg.MaxBufferBytes != 8<<30 {
		t.Errorf("8 GiB buffer: %v, %v", cfg, err)
	}
}

// TestPredictionsTopicName: the predictions topic defaults to the output topic's name +
// ".predictions" only when the worker predicts.
func TestPredictionsTopicName(t *testing.T) {
	for _, tc := range []struct {
		env  map[string]string
		want string
	}{
		{nil, ""},
		{map[string]string{"MODEL": "m.json"}, "features.predictions"},
		{map[string]string{"MODELS_TOPIC": "models", "MODEL_NAME": "mc", "OUTPUT_TOPIC": "f"}, "f.predictions"},
		{map[string]string{"MODEL": "m.json", "PREDICTIONS_TOPIC": "p"}, "p"},
	} {
		cfg, err := config.Load(env(tc.env), nil)
		if err != nil {
			t.Fatal(err)
		}
		if got := cfg.PredictionsTopicName(); got != tc.want {
			t.Errorf("%v: predictions topic %q, want %q", tc.env, got, tc.want)
		}
	}
}

// TestMaxEventLead: DISTFEAT_MAX_EVENT_LEAD reaches the window configuration in ms (the
// processor dead-letters event times further ahead of their record as future), 1m by
// default, 0 turning the bound off.
func TestMaxEventLead(t *testing.T) {
	for _, tc := range []struct {
		value string
		want  int64
	}{{"", 60_000}, {"5m", 300_000}, {"0", 0}, {"1500ms", 1500}} {
		cfg, err := config.Load(env(map[string]string{"MAX_EVENT_LEAD": tc.value, "WINDOW": "time", "WINDOW_SIZE": "10s"}), nil)
		if err != nil {
			t.Fatalf("%q: %v", tc.value, err)
		}
		wc, err := cfg.WindowConfig()
		if err != nil || wc.MaxLead != tc.want {
			t.Errorf("MAX_EVENT_LEAD=%q: MaxLead %d (%v), want %d", tc.value, wc.MaxLead, err, tc.want)
		}
	}
}
