package main

import (
	"context"
	"crypto/tls"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/segmentio/kafka-go"

	"github.com/distfeat/distfeat/internal/realkafka"
	"github.com/distfeat/distfeat/internal/testbroker"
)

// securedCluster is a TLS broker that requires SCRAM-SHA-512, with the files a client
// needs: the CA and the worker's password. With a real Kafka named in the environment
// (realkafka.FromEnv) it is that broker's SASL_SSL listener (SASL_PLAINTEXT without TLS),
// with topics of unique names (topic maps the default names to them) that the users may use.
type securedCluster struct {
	env          testbroker.Env
	caFile       string
	otherCAFile  string
	passwordFile string
	topics       map[string]string
}

// topic is c's name of a default topic name.
func (c securedCluster) topic(name string) string {
	if r, ok := c.topics[name]; ok {
		return r
	}
	return name
}

func startSecuredCluster(t *testing.T) securedCluster { return startCluster(t, true) }

// userTopics are the topics of TestEveryMechanismEndToEnd, one set per user.
func userTopics() []string {
	var topics []string
	for _, u := range []string{"alice", "bob", "worker"} {
		topics = append(topics, u+".points", u+".features", u+".dlq")
	}
	return topics
}

// startCluster starts the cluster of startSecuredCluster, with a TLS listener or a plain one.
func startCluster(t *testing.T, withTLS bool) securedCluster {
	t.Helper()
	other, err := testbroker.NewCertificate("127.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	c := securedCluster{caFile: filepath.Join(dir, "ca.pem"), otherCAFile: filepath.Join(dir, "other-ca.pem"), passwordFile: filepath.Join(dir, "password")}
	files := map[string][]byte{c.otherCAFile: other.CAPEM, c.passwordFile: []byte("worker-secret-pw\n")}
	if ep, ok := realkafka.FromEnv(); ok {
		c.env = testbroker.ForTestExtra(t, 2, userTopics()...)
		c.topics = map[string]string{testbroker.TopicPoints: c.env.Points, testbroker.TopicFeatures: c.env.Features, testbroker.TopicDLQ: c.env.DLQ}
		for def, real := range c.env.Extra {
			c.topics[def] = real
		}
		grantUsers(t, ep, strings.TrimSuffix(c.env.Points, ".points"))
		c.env.Brokers = []string{ep.SASL}
		if withTLS {
			c.env.Brokers = []string{ep.SASLSSL}
		}
		c.caFile = ep.CAFile
	} else {
		cert, err := testbroker.NewCertificate("127.0.0.1")
		if err != nil {
			t.Fatal(err)
		}
		var tlsConfig *tls.Config
		if withTLS {
			tlsConfig = cert.Server
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		topics := append([]string{testbroker.TopicPoints, testbroker.TopicFeatures, testbroker.TopicDLQ}, userTopics()...)
		b, err := testbroker.Start(ctx, testbroker.Options{Partitions: 2, Topics: topics, TLS: tlsConfig, Users: []testbroker.User{
			{Mechanism: testbroker.MechanismSCRAM, Name: "admin", Password: "admin-pw", Super: true},
			{Mechanism: testbroker.MechanismSCRAM5, Name: "worker", Password: "worker-secret-pw"},
			{Mechanism: testbroker.MechanismSCRAM, Name: "bob", Password: "bob-pw"},
			{Mechanism: testbroker.MechanismPlain, Name: "alice", Password: "alice-pw"},
		}})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(b.Close)
		c.env = testbroker.Env{Brokers: b.Addrs(), Points: testbroker.TopicPoints, Features: testbroker.TopicFeatures, DLQ: testbroker.TopicDLQ}
		files[c.caFile] = cert.CAPEM
	}
	for path, b := range files {
		if err := os.WriteFile(path, b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return c
}

// grantUsers lets the real broker's users (realkafka.Users) use the topics named with
// prefix and every group, as the admin through the SASL listener.
func grantUsers(t *testing.T, ep realkafka.Endpoints, prefix string) {
	t.Helper()
	mech, err := testbroker.Mechanism(testbroker.MechanismSCRAM, realkafka.Admin.Name, realkafka.Admin.Password)
	if err != nil {
		t.Fatal(err)
	}
	tr := &kafka.Transport{SASL: mech}
	defer tr.CloseIdleConnections()
	var acls []kafka.ACLEntry
	for _, u := range realkafka.Users {
		for _, r := range []struct {
			rt      kafka.ResourceType
			name    string
			pattern kafka.PatternType
		}{{kafka.ResourceTypeTopic, prefix, kafka.PatternTypePrefixed}, {kafka.ResourceTypeGroup, "*", kafka.PatternTypeLiteral}} {
			acls = append(acls, kafka.ACLEntry{ResourceType: r.rt, ResourceName: r.name, ResourcePatternType: r.pattern,
				Principal: "User:" + u.Name, Host: "*", Operation: kafka.ACLOperationTypeAll, PermissionType: kafka.ACLPermissionTypeAllow})
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cl := &kafka.Client{Addr: kafka.TCP(ep.SASL), Transport: tr}
	resp, err := cl.CreateACLs(ctx, &kafka.CreateACLsRequest{ACLs: acls})
	if err == nil {
		err = errors.Join(resp.Errors...)
	}
	if err != nil {
		t.Fatalf("create ACLs: %v", err)
	}
}

// clientEnv is the environment of a client of c: TLS with c's CA, SCRAM-SHA-512 as worker
// with the password from its file, with overrides (NAME=value, later wins).
func (c securedCluster) clientEnv(overrides ...string) []string {
	return append(append(os.Environ(),
		"DISTFEAT_BROKERS="+strings.Join(c.env.Brokers, ","),
		"DISTFEAT_TLS_CA_FILE="+c.caFile,
		"DISTFEAT_SASL_MECHANISM=scram-sha-512", "DISTFEAT_SASL_USERNAME=worker",
		"DISTFEAT_SASL_PASSWORD_FILE="+c.passwordFile,
		"DISTFEAT_INPUT_TOPIC="+c.env.Points, "DISTFEAT_OUTPUT_TOPIC="+c.env.Features, "DISTFEAT_DLQ_TOPIC="+c.env.DLQ,
	), overrides...)
}

// TestSecuredClusterEndToEnd: against a broker that requires TLS and SCRAM-SHA-512, the
// production binary's produce, worker and tail work with the CA file and a password file,
// and the password never reaches the worker's log.
func TestSecuredClusterEndToEnd(t *testing.T) {
	c := startSecuredCluster(t)
	specPath, _ := writeSpec(t)
	const sets = 4
	produce := exec.Command(binPath, "produce", "--synthetic", "gmm", "--sets", strconv.Itoa(sets), "--points", "50", "--chunk", "1000")
	produce.Env = c.clientEnv()
	if out, err := produce.CombinedOutput(); err != nil {
		t.Fatalf("produce: %v\n%s", err, out)
	}
	w := startWorkerProc(t, c.env, specPath, "secure", c.clientEnv()[len(os.Environ()):]...)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	tail := exec.CommandContext(ctx, binPath, "tail", "--from-beginning", "--max", strconv.Itoa(sets))
	tail.Env = c.clientEnv()
	out, err := tail.Output()
	if err != nil {
		t.Fatalf("tail: %v\n%s", err, out)
	}
	if n := strings.Count(string(out), "\n"); n != sets {
		t.Errorf("tail printed %d feature records, want %d:\n%s", n, sets, out)
	}
	w.mu.Lock()
	log := w.stderr.String()
	w.mu.Unlock()
	if strings.Contains(log, "worker-secret-pw") {
		t.Error("the SASL password is in the worker's log")
	}
}

// TestEveryMechanismEndToEnd: produce, the worker and tail log in with each SASL mechanism,
// over TLS and over plain TCP, and the sets come out as feature records.
func TestEveryMechanismEndToEnd(t *testing.T) {
	specPath, _ := writeSpec(t)
	for _, withTLS := range []bool{true, false} {
		c := startCluster(t, withTLS)
		for _, u := range [][3]string{{"plain", "alice", "alice-pw"}, {"scram-sha-256", "bob", "bob-pw"}, {"scram-sha-512", "worker", "worker-secret-pw"}} {
			name := u[0] + " over TCP"
			if withTLS {
				name = u[0] + " over TLS"
			}
			t.Run(name, func(t *testing.T) {
				env := []string{"DISTFEAT_SASL_MECHANISM=" + u[0], "DISTFEAT_SASL_USERNAME=" + u[1], "DISTFEAT_SASL_PASSWORD_FILE=", "DISTFEAT_SASL_PASSWORD=" + u[2]}
				if !withTLS {
					env = append(env, "DISTFEAT_TLS_CA_FILE=")
				}
				points, features, dlq := c.topic(u[1]+".points"), c.topic(u[1]+".features"), c.topic(u[1]+".dlq")
				topics := []string{"DISTFEAT_INPUT_TOPIC=" + points, "DISTFEAT_OUTPUT_TOPIC=" + features, "DISTFEAT_DLQ_TOPIC=" + dlq}
				ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
				defer cancel()
				produce := exec.CommandContext(ctx, binPath, "produce", "--synthetic", "gmm", "--sets", "2", "--points", "50")
				produce.Env = c.clientEnv(append(env, topics...)...)
				if out, err := produce.CombinedOutput(); err != nil {
					t.Fatalf("produce: %v\n%s", err, out)
				}
				wenv := testbroker.Env{Brokers: c.env.Brokers, Points: points, Features: features, DLQ: dlq}
				startWorkerProc(t, wenv, specPath, u[1], c.clientEnv(append(env, topics...)...)[len(os.Environ()):]...)
				tail := exec.CommandContext(ctx, binPath, "tail", "--from-beginning", "--max", "2")
				tail.Env = c.clientEnv(append(env, topics...)...)
				out, err := tail.Output()
				if err != nil {
					t.Fatalf("tail: %v\n%s", err, out)
				}
				if n := strings.Count(string(out), "\n"); n != 2 {
					t.Errorf("tail printed %d feature records, want 2", n)
				}
			})
		}
	}
}

// TestSecuredClusterFailures: each misconfiguration of a client of a secured cluster ends
// the command with exit code 1 and a message naming the failing layer and what to check —
// the worker too, which does not retry an authentication or TLS failure.
func TestSecuredClusterFailures(t *testing.T) {
	c := startSecuredCluster(t)
	specPath, _ := writeSpec(t)
	for _, tc := range []struct {
		name string
		args []string
		env  []string
		says []string
	}{
		{"worker wrong password", []string{"worker"}, []string{"DISTFEAT_SASL_PASSWORD_FILE=", "DISTFEAT_SASL_PASSWORD=wrong", "DISTFEAT_SPEC=" + specPath, "DISTFEAT_METRICS_ADDR=127.0.0.1:0"},
			[]string{"SASL authentication failure", `user "worker"`, "SCRAM-SHA-512", "DISTFEAT_SASL_PASSWORD"}},
		{"worker unknown user", []string{"worker"}, []string{"DISTFEAT_SASL_USERNAME=nobody", "DISTFEAT_SPEC=" + specPath, "DISTFEAT_METRICS_ADDR=127.0.0.1:0"},
			[]string{"SASL authentication failure", `user "nobody"`}},
		{"worker wrong CA", []string{"worker"}, []string{"DISTFEAT_TLS_CA_FILE=" + c.otherCAFile, "DISTFEAT_SPEC=" + specPath, "DISTFEAT_METRICS_ADDR=127.0.0.1:0"},
			[]string{"TLS failure", "authority", "DISTFEAT_TLS_CA_FILE"}},
		{"produce wrong password", []string{"produce", "--synthetic", "gmm", "--sets", "1"}, []string{"DISTFEAT_SASL_PASSWORD_FILE=", "DISTFEAT_SASL_PASSWORD=wrong"},
			[]string{"SASL authentication failure", `user "worker"`}},
		{"produce plain to TLS", []string{"produce", "--synthetic", "gmm", "--sets", "1"}, []string{"DISTFEAT_TLS_CA_FILE="},
			[]string{"TLS failure", "expects TLS", "DISTFEAT_TLS_ENABLED=true"}},
		{"tail wrong CA", []string{"tail", "--max", "1"}, []string{"DISTFEAT_TLS_CA_FILE=" + c.otherCAFile},
			[]string{"TLS failure", "DISTFEAT_TLS_CA_FILE"}},
		{"tail no SASL", []string{"tail", "--max", "1"}, []string{"DISTFEAT_SASL_MECHANISM=", "DISTFEAT_SASL_USERNAME=", "DISTFEAT_SASL_PASSWORD_FILE="},
			[]string{"requires SASL", "DISTFEAT_SASL_MECHANISM"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			cmd := exec.CommandContext(ctx, binPath, tc.args...)
			cmd.Env = c.clientEnv(tc.env...)
			out, err := cmd.CombinedOutput()
			if ctx.Err() != nil {
				t.Fatalf("still running after 2 minutes (retrying instead of failing):\n%s", tailLines(string(out), 10))
			}
			if code := cmd.ProcessState.ExitCode(); code != 1 {
				t.Errorf("exit code %d (%v), want 1", code, err)
			}
			for _, want := range tc.says {
				if !strings.Contains(string(out), want) {
					t.Errorf("output does not say %q:\n%s", want, tailLines(string(out), 10))
				}
			}
			if strings.Contains(string(out), "panic") {
				t.Errorf("crashed:\n%s", out)
			}
		})
	}
}

// TestHealthcheckNamesTheFailure: the container probe tells a worker that is not there (a
// refused TCP connection) from one that answers not ready (503 with its reason).
func TestHealthcheckNamesTheFailure(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, _ *http.Request) {
		http.Error(rw, "not ready: input not readable on partition(s) 0 (not authorised)", http.StatusServiceUnavailable)
	}))
	defer srv.Close()
	for _, tc := range []struct {
		name, addr string
		says       []string
	}{
		{"nothing listening", "127.0.0.1:" + freePort(t), []string{"TCP failure", "nothing accepts connections", "DISTFEAT_METRICS_ADDR"}},
		{"not ready", strings.TrimPrefix(srv.URL, "http://"), []string{"503", "input not readable on partition(s) 0 (not authorised)"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out, errb strings.Builder
			code := run(context.Background(), []string{"healthcheck", "--ready", "--addr", tc.addr}, &out, &errb)
			if code != 1 {
				t.Errorf("exit %d, want 1", code)
			}
			for _, want := range tc.says {
				if !strings.Contains(errb.String(), want) {
					t.Errorf("%q does not say %q", errb.String(), want)
				}
			}
		})
	}
}
