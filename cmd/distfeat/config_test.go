package main

import (
	"flag"
	"io"
	"strings"
	"testing"
	"time"
)

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
		{map[string]string{"MAX_OPEN_WINDOWS": "0"}, "DISTFEAT_MAX_OPEN_WINDOWS"},
		{map[string]string{"MAX_OPEN_WINDOWS": "many"}, "DISTFEAT_MAX_OPEN_WINDOWS"},
		{map[string]string{"IDLE_TIMEOUT": "soon"}, "DISTFEAT_IDLE_TIMEOUT"},
		{map[string]string{"MAX_MESSAGE_BYTES": "0"}, "DISTFEAT_MAX_MESSAGE_BYTES"},
		{map[string]string{"SESSION_TIMEOUT": "1ms"}, "DISTFEAT_SESSION_TIMEOUT"},
		{map[string]string{"LOG_LEVEL": "loud"}, "DISTFEAT_LOG_LEVEL"},
		{map[string]string{"OUTPUT_TOPIC": "points"}, "DISTFEAT_INPUT_TOPIC"},
		{map[string]string{"SASL_MECHANISM": "kerberos"}, "DISTFEAT_SASL_MECHANISM"},
		{map[string]string{"SASL_MECHANISM": "plain"}, "DISTFEAT_SASL_USERNAME"},
		{map[string]string{"TLS_CERT_FILE": "/x.pem"}, "DISTFEAT_TLS_CERT_FILE"},
	}
	for _, tc := range cases {
		t.Run(tc.want, func(t *testing.T) {
			for k, v := range tc.env {
				t.Setenv(envPrefix+k, v)
			}
			_, err := loadWorkerConfig()
			if err == nil {
				t.Fatalf("%v: no error", tc.env)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("%v: error %q does not name %s", tc.env, err, tc.want)
			}
		})
	}
}

// TestConfigFlagsMirrorVariables: a flag named after a variable overrides the environment.
func TestConfigFlagsMirrorVariables(t *testing.T) {
	t.Setenv("DISTFEAT_WINDOW", "set")
	t.Setenv("DISTFEAT_WINDOW_SIZE", "")
	fs := flag.NewFlagSet("worker", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	apply := configFlags(fs, &workerConfig{})
	if err := fs.Parse([]string{"--window", "time", "--window-size", "10s", "--window-hop", "5s", "--sasl-username", "u"}); err != nil {
		t.Fatal(err)
	}
	apply()
	cfg, err := loadWorkerConfig()
	if err != nil {
		t.Fatal(err)
	}
	wc, err := cfg.windowConfig()
	if err != nil {
		t.Fatal(err)
	}
	if wc.Mode != "time" || wc.Size != (10*time.Second).Milliseconds() || wc.Hop != 5000 {
		t.Errorf("window config %+v, want time 10s hop 5s", wc)
	}
	if cfg.SASLUsername != "u" {
		t.Errorf("embedded security flag not applied: %q", cfg.SASLUsername)
	}
}

// TestSecretsNotLogged: the redacted configuration never carries the SASL password.
func TestSecretsNotLogged(t *testing.T) {
	t.Setenv("DISTFEAT_SASL_MECHANISM", "plain")
	t.Setenv("DISTFEAT_SASL_USERNAME", "svc")
	t.Setenv("DISTFEAT_SASL_PASSWORD", "hunter2-secret")
	cfg, err := loadWorkerConfig()
	if err != nil {
		t.Fatal(err)
	}
	var sb strings.Builder
	newLogger(&sb, "info", "json").Info("start", cfg.redacted()...)
	if strings.Contains(sb.String(), "hunter2") {
		t.Errorf("password in log line: %s", sb.String())
	}
}
