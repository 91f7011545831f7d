//go:build dev

package main

import (
	"bytes"
	"context"
	"errors"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/distfeat/distfeat/config"
	"github.com/distfeat/distfeat/internal/kafkaconn"
)

// TestBrokerCommandAuthentication: `distfeat broker --tls --user … --superuser …` serves TLS
// with a generated certificate whose CA it writes out, and accepts exactly its users: a
// client trusting that CA logs in with each mechanism, a wrong password is a SASL failure.
func TestBrokerCommandAuthentication(t *testing.T) {
	addr := freePort(t)
	ca := filepath.Join(t.TempDir(), "ca.pem")
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan int, 1)
	var out, errb bytes.Buffer
	mu := &sync.Mutex{}
	text := func(b *bytes.Buffer) string { mu.Lock(); defer mu.Unlock(); return b.String() }
	go func() {
		done <- run(ctx, []string{"broker", "--addr", "127.0.0.1:" + addr, "--partitions", "1", "--tls", "--tls-ca-out", ca,
			"--user", "plain:alice:alice-pw", "--user", "scram-sha-256:bob:bob-pw", "--superuser", "scram-sha-512:carol:carol-pw"}, &lockedWriter{w: &out, mu: mu}, &lockedWriter{w: &errb, mu: mu})
	}()
	t.Cleanup(func() {
		cancel()
		if code := <-done; code != 0 {
			t.Errorf("broker exit %d: %s", code, text(&errb))
		}
	})
	probe := func(mech, user, pw string) error {
		sec, err := config.SecurityFromEnv(map[string]string{"DISTFEAT_TLS_CA_FILE": ca, "DISTFEAT_SASL_MECHANISM": mech, "DISTFEAT_SASL_USERNAME": user, "DISTFEAT_SASL_PASSWORD": pw})
		if err != nil {
			return err
		}
		dialer, _, err := sec.KafkaClients()
		if err != nil {
			return err
		}
		pctx, pcancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer pcancel()
		return kafkaconn.Probe(pctx, kafkaconn.Target{Brokers: []string{"127.0.0.1:" + addr}, Dialer: dialer, User: user})
	}
	// Wait for the listener (the CA file is written before it starts).
	deadline := time.Now().Add(time.Minute)
	for probe("plain", "alice", "alice-pw") != nil {
		if time.Now().After(deadline) {
			t.Fatalf("broker not serving after a minute: %v\nstderr: %s", probe("plain", "alice", "alice-pw"), text(&errb))
		}
		time.Sleep(50 * time.Millisecond)
	}
	for _, u := range [][3]string{{"scram-sha-256", "bob", "bob-pw"}, {"scram-sha-512", "carol", "carol-pw"}} {
		if err := probe(u[0], u[1], u[2]); err != nil {
			t.Errorf("%s %s: %v", u[0], u[1], err)
		}
	}
	var ce *kafkaconn.Error
	if err := probe("scram-sha-256", "bob", "wrong"); !errors.As(err, &ce) || ce.Layer != kafkaconn.LayerSASL {
		t.Errorf("wrong password: %v, want a SASL failure", err)
	}
	if s := text(&out); !strings.Contains(s, "TLS (generated certificate") || !strings.Contains(s, "SCRAM-SHA-256 bob") {
		t.Errorf("start-up line does not describe the security: %q", s)
	}
}
