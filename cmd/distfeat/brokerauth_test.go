//go:build dev

package main

import (
	"bytes"
	"context"
	"errors"
	"io"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/segmentio/kafka-go"

	"github.com/distfeat/distfeat/config"
	"github.com/distfeat/distfeat/internal/testbroker"
	"github.com/distfeat/distfeat/kafkaio"
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
		dialer, _, err := kafkaio.Clients(sec)
		if err != nil {
			return err
		}
		pctx, pcancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer pcancel()
		return kafkaio.Probe(pctx, kafkaio.Target{Brokers: []string{"127.0.0.1:" + addr}, Dialer: dialer, User: user})
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
	var ce *kafkaio.Error
	if err := probe("scram-sha-256", "bob", "wrong"); !errors.As(err, &ce) || ce.Layer != kafkaio.LayerSASL {
		t.Errorf("wrong password: %v, want a SASL failure", err)
	}
	if s := text(&out); !strings.Contains(s, "TLS (generated certificate") || !strings.Contains(s, "SCRAM-SHA-256 bob") {
		t.Errorf("start-up line does not describe the security: %q", s)
	}
}

// TestBrokerCommandACLs: with --acls a --user may do exactly what --grant allows (here write
// the input topic, not the output topic), a --superuser everything; malformed or
// inconsistent flags are usage errors naming the flag.
func TestBrokerCommandACLs(t *testing.T) {
	for _, tc := range []struct {
		args []string
		says string
	}{
		{[]string{"--grant", "w:write:topic:points", "--user", "plain:w:pw"}, "--grant needs --acls"},
		{[]string{"--acls"}, "--acls needs --user"},
		{[]string{"--acls", "--user", "plain:w:pw", "--grant", "w:scribble:topic:points"}, `operation "scribble"`},
		{[]string{"--acls", "--user", "plain:w:pw", "--grant", "nobody:write:topic:points"}, `no --user "nobody"`},
		{[]string{"--acls", "--user", "plain:w:pw", "--grant", "w:write:cluster:x"}, `resource type "cluster"`},
		{[]string{"--user", "kerberos:w:pw"}, "kerberos"},
		{[]string{"--user", "plain:w"}, "mechanism:name:password"},
	} {
		var out, errb strings.Builder
		code := run(context.Background(), append([]string{"broker", "--addr", "127.0.0.1:0"}, tc.args...), &out, &errb)
		if code != 2 || !strings.Contains(errb.String(), tc.says) {
			t.Errorf("broker %v: exit %d, stderr %q; want 2 and %q", tc.args, code, errb.String(), tc.says)
		}
	}

	addr := "127.0.0.1:" + freePort(t)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan int, 1)
	var errb bytes.Buffer
	go func() {
		done <- run(ctx, []string{"broker", "--addr", addr, "--partitions", "1", "--acls", "--superuser", "plain:admin:admin-pw",
			"--user", "scram-sha-256:w:w-pw", "--grant", "w:describe:topic:points", "--grant", "w:write:topic:points", "--grant", "w:describe:topic:features"},
			io.Discard, &lockedWriter{w: &errb, mu: &sync.Mutex{}})
	}()
	t.Cleanup(func() { cancel(); <-done })
	write := func(mech, user, pw, topic string) error {
		m, err := testbroker.Mechanism(mech, user, pw)
		if err != nil {
			t.Fatal(err)
		}
		tr := &kafka.Transport{SASL: m}
		defer tr.CloseIdleConnections()
		w := &kafka.Writer{Addr: kafka.TCP(addr), Topic: topic, Transport: tr, RequiredAcks: kafka.RequireAll, MaxAttempts: 1}
		defer w.Close()
		wctx, wcancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer wcancel()
		return w.WriteMessages(wctx, kafka.Message{Value: []byte("x")})
	}
	deadline := time.Now().Add(time.Minute)
	for write("PLAIN", "admin", "admin-pw", "points") != nil {
		if time.Now().After(deadline) {
			t.Fatal("broker not serving after a minute")
		}
		time.Sleep(50 * time.Millisecond)
	}
	if err := write("SCRAM-SHA-256", "w", "w-pw", "points"); err != nil {
		t.Errorf("granted write: %v", err)
	}
	err := write("SCRAM-SHA-256", "w", "w-pw", "features")
	if kafkaio.Authorization(err, "w", "write", "topic features") == nil {
		t.Errorf("write without a grant: %v, want an authorisation error", err)
	}
}
