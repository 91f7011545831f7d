package kafkaio_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/segmentio/kafka-go/sasl/plain"

	"github.com/distfeat/distfeat/config"
	"github.com/distfeat/distfeat/kafkaio"
)

// TestClients: the dialer and the transport carry the same TLS configuration and SASL
// mechanism, built from the settings (the password file's content wins over the variable;
// the mechanism name is case-insensitive), and a user name SCRAM cannot prepare is a
// start-up error naming DISTFEAT_SASL_MECHANISM.
func TestClients(t *testing.T) {
	path := filepath.Join(t.TempDir(), "password")
	if err := os.WriteFile(path, []byte("from-file-secret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name     string
		env      map[string]string
		wantMech string // the mechanism's Name(), "" for none
		wantTLS  bool
	}{
		{"none", nil, "", false},
		{"tls", map[string]string{"TLS_ENABLED": "true", "TLS_SERVER_NAME": "kafka.internal"}, "", true},
		{"plain from file", map[string]string{"SASL_MECHANISM": "PLAIN", "SASL_USERNAME": "svc",
			"SASL_PASSWORD": "from-env-secret", "SASL_PASSWORD_FILE": path}, "PLAIN", false},
		{"scram-sha-256", map[string]string{"SASL_MECHANISM": "scram-sha-256", "SASL_USERNAME": "svc", "SASL_PASSWORD": "pw"}, "SCRAM-SHA-256", false},
		{"scram-sha-512 over tls", map[string]string{"SASL_MECHANISM": "SCRAM-SHA-512", "SASL_USERNAME": "svc", "SASL_PASSWORD": "pw",
			"TLS_ENABLED": "true"}, "SCRAM-SHA-512", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			env := map[string]string{}
			for k, v := range tc.env {
				env[config.EnvPrefix+k] = v
			}
			sec, err := config.SecurityFromEnv(env)
			if err != nil {
				t.Fatal(err)
			}
			dialer, transport, err := kafkaio.Clients(sec)
			if err != nil {
				t.Fatal(err)
			}
			if dialer.SASLMechanism != transport.SASL || dialer.TLS != transport.TLS {
				t.Fatalf("dialer (%v, %v) and transport (%v, %v) differ", dialer.SASLMechanism, dialer.TLS, transport.SASL, transport.TLS)
			}
			if (dialer.TLS != nil) != tc.wantTLS {
				t.Errorf("TLS %v, want TLS %v", dialer.TLS, tc.wantTLS)
			}
			if dialer.TLS != nil && dialer.TLS.ServerName != tc.env["TLS_SERVER_NAME"] {
				t.Errorf("TLS server name %q, want %q", dialer.TLS.ServerName, tc.env["TLS_SERVER_NAME"])
			}
			got := ""
			if dialer.SASLMechanism != nil {
				got = dialer.SASLMechanism.Name()
			}
			if got != tc.wantMech {
				t.Fatalf("mechanism %q, want %q", got, tc.wantMech)
			}
			if m, ok := dialer.SASLMechanism.(plain.Mechanism); ok && (m.Username != "svc" || m.Password != "from-file-secret") {
				t.Errorf("plain mechanism %q / %q, want svc with the file's password", m.Username, m.Password)
			}
		})
	}
	// SASLprep prohibits control characters in a SCRAM user name.
	sec, err := config.SecurityFromEnv(map[string]string{config.EnvPrefix + "SASL_MECHANISM": "scram-sha-512",
		config.EnvPrefix + "SASL_USERNAME": "svc\u0007", config.EnvPrefix + "SASL_PASSWORD": "pw"})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := kafkaio.Clients(sec); err == nil || !strings.Contains(err.Error(), "DISTFEAT_SASL_MECHANISM") {
		t.Errorf("SCRAM user name with a control character: %v, want an error naming DISTFEAT_SASL_MECHANISM", err)
	}
}
