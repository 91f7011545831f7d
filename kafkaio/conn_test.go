package kafkaio_test

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/segmentio/kafka-go"

	"github.com/distfeat/distfeat/config"
	"github.com/distfeat/distfeat/internal/testbroker"
	"github.com/distfeat/distfeat/kafkaio"
)

// users of every test broker that requires SASL: one per mechanism, admin for the broker.
var users = []testbroker.User{
	{Mechanism: testbroker.MechanismSCRAM, Name: "admin", Password: "admin-pw", Super: true},
	{Mechanism: testbroker.MechanismPlain, Name: "alice", Password: "alice-pw"},
	{Mechanism: testbroker.MechanismSCRAM, Name: "bob", Password: "bob-pw"},
	{Mechanism: testbroker.MechanismSCRAM5, Name: "carol", Password: "carol-pw"},
}

// secured starts a broker with the given TLS certificate (nil: plain) and users.
func secured(t *testing.T, cert *testbroker.Certificate, u []testbroker.User) string {
	t.Helper()
	opts := testbroker.Options{Partitions: 1, Users: u}
	if cert != nil {
		opts.TLS = cert.Server
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	b, err := testbroker.Start(ctx, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(b.Close)
	return b.Addrs()[0]
}

// securedMutual starts a broker whose listener requires a client certificate; its own
// clients present own.
func securedMutual(t *testing.T, server *tls.Config, own tls.Certificate) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	b, err := testbroker.Start(ctx, testbroker.Options{Partitions: 1, TLS: server,
		TLSClient: &tls.Config{Certificates: []tls.Certificate{own}, InsecureSkipVerify: true, MinVersion: tls.VersionTLS12}}) //nolint:gosec // the broker's own client
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(b.Close)
	return b.Addrs()[0]
}

// pemFile writes b to a file in a test directory and returns its path.
func pemFile(t *testing.T, b []byte) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "file.pem")
	if err := os.WriteFile(p, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestProbeNamesTheLayer: against brokers that require TLS and SASL, every mechanism
// connects over TLS and over plain TCP, and each misconfiguration is reported as a failure
// of its own layer, naming what to check, and as fatal or retriable.
func TestProbeNamesTheLayer(t *testing.T) {
	cert, err := testbroker.NewCertificate("127.0.0.1", "localhost")
	if err != nil {
		t.Fatal(err)
	}
	other, err := testbroker.NewCertificate("127.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	tlsSASL := secured(t, cert, users)
	plainSASL := secured(t, nil, users)
	tlsOpen := secured(t, cert, nil)
	mutual := cert.Server.Clone() // requires a client certificate signed by the CA
	mutual.ClientAuth, mutual.ClientCAs = tls.RequireAndVerifyClientCert, x509.NewCertPool()
	mutual.ClientCAs.AppendCertsFromPEM(cert.CAPEM)
	tlsMutual := securedMutual(t, mutual, cert.Server.Certificates[0])
	certFile, keyFile := pemFile(t, cert.CertPEM), pemFile(t, cert.KeyPEM)
	ca, otherCA := pemFile(t, cert.CAPEM), pemFile(t, other.CAPEM)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closedPort := ln.Addr().String()
	ln.Close()

	type want struct {
		layer kafkaio.Layer // "" : connects
		says  []string
	}
	ok := want{}
	cases := []struct {
		name   string
		broker string
		env    map[string]string
		want   want
	}{
		{"plain over TLS", tlsSASL, map[string]string{"TLS_CA_FILE": ca, "SASL_MECHANISM": "plain", "SASL_USERNAME": "alice", "SASL_PASSWORD": "alice-pw"}, ok},
		{"scram-sha-256 over TLS", tlsSASL, map[string]string{"TLS_CA_FILE": ca, "SASL_MECHANISM": "scram-sha-256", "SASL_USERNAME": "bob", "SASL_PASSWORD": "bob-pw"}, ok},
		{"scram-sha-512 over TLS", tlsSASL, map[string]string{"TLS_CA_FILE": ca, "SASL_MECHANISM": "scram-sha-512", "SASL_USERNAME": "carol", "SASL_PASSWORD": "carol-pw"}, ok},
		{"plain over TCP", plainSASL, map[string]string{"SASL_MECHANISM": "plain", "SASL_USERNAME": "alice", "SASL_PASSWORD": "alice-pw"}, ok},
		{"scram-sha-256 over TCP", plainSASL, map[string]string{"SASL_MECHANISM": "scram-sha-256", "SASL_USERNAME": "bob", "SASL_PASSWORD": "bob-pw"}, ok},
		{"scram-sha-512 over TCP", plainSASL, map[string]string{"SASL_MECHANISM": "scram-sha-512", "SASL_USERNAME": "carol", "SASL_PASSWORD": "carol-pw"}, ok},
		{"TLS without SASL", tlsOpen, map[string]string{"TLS_CA_FILE": ca}, ok},

		{"wrong password plain", tlsSASL, map[string]string{"TLS_CA_FILE": ca, "SASL_MECHANISM": "plain", "SASL_USERNAME": "alice", "SASL_PASSWORD": "nope"},
			want{kafkaio.LayerSASL, []string{`user "alice"`, "PLAIN", "DISTFEAT_SASL_PASSWORD"}}},
		{"wrong password scram", plainSASL, map[string]string{"SASL_MECHANISM": "scram-sha-256", "SASL_USERNAME": "bob", "SASL_PASSWORD": "nope"},
			want{kafkaio.LayerSASL, []string{`user "bob"`, "SCRAM-SHA-256", "DISTFEAT_SASL_PASSWORD"}}},
		{"unknown user", tlsSASL, map[string]string{"TLS_CA_FILE": ca, "SASL_MECHANISM": "scram-sha-512", "SASL_USERNAME": "mallory", "SASL_PASSWORD": "x"},
			want{kafkaio.LayerSASL, []string{`user "mallory"`, "SCRAM-SHA-512", "DISTFEAT_SASL_USERNAME"}}},
		{"user of another mechanism", plainSASL, map[string]string{"SASL_MECHANISM": "plain", "SASL_USERNAME": "bob", "SASL_PASSWORD": "bob-pw"},
			want{kafkaio.LayerSASL, []string{`user "bob"`, "PLAIN"}}},
		{"no SASL against SASL", plainSASL, nil,
			want{kafkaio.LayerSASL, []string{"requires SASL", "DISTFEAT_SASL_MECHANISM"}}},
		{"wrong CA", tlsSASL, map[string]string{"TLS_CA_FILE": otherCA, "SASL_MECHANISM": "plain", "SASL_USERNAME": "alice", "SASL_PASSWORD": "alice-pw"},
			want{kafkaio.LayerTLS, []string{"authority", "DISTFEAT_TLS_CA_FILE"}}},
		{"wrong server name", tlsSASL, map[string]string{"TLS_CA_FILE": ca, "TLS_SERVER_NAME": "kafka.example"},
			want{kafkaio.LayerTLS, []string{`"kafka.example"`, "DISTFEAT_TLS_SERVER_NAME"}}},
		{"client certificate", tlsMutual, map[string]string{"TLS_CA_FILE": ca, "TLS_CERT_FILE": certFile, "TLS_KEY_FILE": keyFile}, ok},
		{"no client certificate", tlsMutual, map[string]string{"TLS_CA_FILE": ca},
			want{kafkaio.LayerTLS, []string{"refused", "DISTFEAT_TLS_CERT_FILE"}}},
		{"TLS client, plain listener", plainSASL, map[string]string{"TLS_CA_FILE": ca, "SASL_MECHANISM": "plain", "SASL_USERNAME": "alice", "SASL_PASSWORD": "alice-pw"},
			want{kafkaio.LayerTLS, []string{"speaks plain TCP", "DISTFEAT_TLS_ENABLED"}}},
		{"plain client, TLS listener", tlsSASL, map[string]string{"SASL_MECHANISM": "plain", "SASL_USERNAME": "alice", "SASL_PASSWORD": "alice-pw"},
			want{kafkaio.LayerTLS, []string{"expects TLS", "DISTFEAT_TLS_ENABLED=true"}}},
		{"plain client, TLS listener, no SASL", tlsOpen, nil,
			want{kafkaio.LayerTLS, []string{"expects TLS"}}},
		{"nothing listening", closedPort, nil,
			want{kafkaio.LayerTCP, []string{"cannot connect", "DISTFEAT_BROKERS"}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			env := map[string]string{}
			for k, v := range tc.env {
				env[config.EnvPrefix+k] = v
			}
			sec, err := config.SecurityFromEnv(env)
			if err != nil {
				t.Fatal(err)
			}
			dialer, _, err := kafkaio.Clients(sec)
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			err = kafkaio.Probe(ctx, kafkaio.Target{Brokers: []string{tc.broker}, Dialer: dialer, User: sec.SASLUsername})
			if tc.want.layer == "" {
				if err != nil {
					t.Fatalf("probe: %v", err)
				}
				return
			}
			var ce *kafkaio.Error
			if !errors.As(err, &ce) {
				t.Fatalf("probe: %v, want a %s failure", err, tc.want.layer)
			}
			if ce.Layer != tc.want.layer {
				t.Errorf("layer %s, want %s: %v", ce.Layer, tc.want.layer, err)
			}
			for _, s := range tc.want.says {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("%q does not say %q", err, s)
				}
			}
			if fatal := tc.want.layer != kafkaio.LayerTCP; kafkaio.Fatal(err) != fatal {
				t.Errorf("Fatal = %v, want %v", kafkaio.Fatal(err), fatal)
			}
			t.Logf("%s", err)
		})
	}
}

// TestAuthorization: Kafka's authorisation errors, alone, wrapped or inside a batch's write
// errors, become retriable authorisation failures naming the principal, the operation and
// the resource; other errors pass unchanged.
func TestAuthorization(t *testing.T) {
	for _, tc := range []struct {
		name string
		err  error
		want string // "" : unchanged
	}{
		{"topic", kafka.TopicAuthorizationFailed, `principal User:svc may not write topic "out"`},
		{"wrapped group", fmt.Errorf("join: %w", kafka.GroupAuthorizationFailed), `principal User:svc may not write topic "out"`},
		{"write errors", kafka.WriteErrors{nil, kafka.TopicAuthorizationFailed, kafka.TopicAuthorizationFailed}, `2 of 3 records`},
		{"not authorisation", kafka.NotEnoughReplicas, ""},
		{"write errors without authorisation", kafka.WriteErrors{kafka.NotEnoughReplicas}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := kafkaio.Authorization(tc.err, "svc", "write", `topic "out"`)
			if tc.want == "" {
				if got != nil {
					t.Errorf("%v became %v", tc.err, got)
				}
				return
			}
			if got == nil || got.Layer != kafkaio.LayerAuthorization || !got.Retriable() {
				t.Fatalf("%v: %v, want a retriable authorisation failure", tc.err, got)
			}
			if !strings.Contains(got.Error(), tc.want) {
				t.Errorf("%q does not say %q", got, tc.want)
			}
		})
	}
}

// TestProbeTriesEveryBroker: one unreachable bootstrap broker is not a failure while another
// answers; when none does, the failure that got furthest is reported (a TLS failure over a
// refused connection).
func TestProbeTriesEveryBroker(t *testing.T) {
	cert, err := testbroker.NewCertificate("127.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	good := secured(t, nil, nil)
	tlsOnly := secured(t, cert, nil)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := ln.Addr().String()
	ln.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := kafkaio.Probe(ctx, kafkaio.Target{Brokers: []string{dead, good}, Dialer: &kafka.Dialer{}}); err != nil {
		t.Errorf("one broker answers: %v", err)
	}
	err = kafkaio.Probe(ctx, kafkaio.Target{Brokers: []string{dead, tlsOnly}, Dialer: &kafka.Dialer{}})
	var ce *kafkaio.Error
	if !errors.As(err, &ce) || ce.Layer != kafkaio.LayerTLS || ce.Broker != tlsOnly {
		t.Errorf("no broker answers: %v, want the TLS failure of %s", err, tlsOnly)
	}
}
