package consumer

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/segmentio/kafka-go"
	"github.com/segmentio/kafka-go/sasl"
	"github.com/segmentio/kafka-go/sasl/scram"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/distfeat/distfeat/internal/metrics"
	"github.com/distfeat/distfeat/internal/realkafka"
	"github.com/distfeat/distfeat/internal/testbroker"
	"github.com/distfeat/distfeat/kafkaio"
	"github.com/distfeat/distfeat/schema"
	"github.com/distfeat/distfeat/window"
)

// grant is one ACL: an operation on a topic or group.
type grant struct {
	rt   kafka.ResourceType
	name string
	op   kafka.ACLOperationType
}

// workerGrants is everything the worker needs on the default topics and group g.
func workerGrants(g string) []grant {
	topic, group := kafka.ResourceTypeTopic, kafka.ResourceTypeGroup
	read, write, describe := kafka.ACLOperationTypeRead, kafka.ACLOperationTypeWrite, kafka.ACLOperationTypeDescribe
	return []grant{
		{topic, testbroker.TopicPoints, describe}, {topic, testbroker.TopicPoints, read}, {topic, testbroker.TopicPoints, write},
		{topic, testbroker.TopicFeatures, describe}, {topic, testbroker.TopicFeatures, write},
		{topic, testbroker.TopicDLQ, describe}, {topic, testbroker.TopicDLQ, write},
		{group, g, read}, {group, g, describe},
	}
}

// securedHarness is a broker that requires SCRAM-SHA-256 and checks ACLs: "admin" (super
// user) for the test's own clients, "worker" with the given grants for the worker. With a
// real Kafka named in the environment (realkafka.FromEnv) it is that broker's SASL_PLAINTEXT
// listener, with topics and a group of unique names (name maps the default names to them)
// and the grants created as ACLs.
type securedHarness struct {
	*harness
	admin       *kafka.Transport
	adminDialer *kafka.Dialer
	worker      *kafka.Dialer
	workerTr    *kafka.Transport
	names       map[string]string // default topic and group names → this harness's
}

// name is this harness's name of a default topic or group name.
func (s *securedHarness) name(n string) string {
	if r, ok := s.names[n]; ok {
		return r
	}
	return n
}

func newSecuredHarness(t *testing.T, group string, grants []grant) *securedHarness {
	t.Helper()
	mech := func(user, pw string) sasl.Mechanism {
		m, err := scram.Mechanism(scram.SHA256, user, pw)
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	var env testbroker.Env
	names := map[string]string{}
	workerPW := "worker-pw"
	if ep, ok := realkafka.FromEnv(); ok {
		// Topics created through the PLAINTEXT listener (a super user there), used through
		// the SASL one.
		env = testbroker.ForTest(t, 1)
		env.Brokers = []string{ep.SASL}
		names[testbroker.TopicPoints], names[testbroker.TopicFeatures], names[testbroker.TopicDLQ] = env.Points, env.Features, env.DLQ
		names[group] = strings.TrimSuffix(env.Points, ".points") + "." + group
		workerPW = realkafka.Users[0].Password
	} else {
		var acls []kfake.ACL
		for _, g := range grants {
			acls = append(acls, kfake.ACL{Resource: kmsg.ACLResourceType(g.rt), Name: g.name, Pattern: kmsg.ACLResourcePatternTypeLiteral, Operation: kmsg.ACLOperation(g.op), Allow: true})
		}
		b := startBroker(t, testbroker.Options{Partitions: 1, ACLs: true, Users: []testbroker.User{
			{Mechanism: testbroker.MechanismSCRAM, Name: "admin", Password: "admin-pw", Super: true},
			{Mechanism: testbroker.MechanismSCRAM, Name: "worker", Password: workerPW, ACLs: acls},
		}})
		env = defaultTopics(b.Addrs()[0])
	}
	admin, worker := mech("admin", "admin-pw"), mech("worker", workerPW)
	s := &securedHarness{
		harness:     newHarnessEnv(t, env, smallSpec),
		admin:       &kafka.Transport{SASL: admin},
		adminDialer: &kafka.Dialer{Timeout: 10 * time.Second, SASLMechanism: admin},
		worker:      &kafka.Dialer{Timeout: 10 * time.Second, SASLMechanism: worker},
		workerTr:    &kafka.Transport{SASL: worker},
		names:       names,
	}
	t.Cleanup(s.admin.CloseIdleConnections)
	if len(names) > 0 {
		for _, g := range grants {
			s.allow(t, g)
		}
		s.waitDescribable(t)
	}
	return s
}

// waitDescribable waits until the worker's principal sees the three topics in the metadata:
// Kafka applies new ACLs a moment after CreateACLs returns, and a worker started before then
// would find its topics missing (Kafka leaves topics a principal may not describe out of the
// metadata) and stop at start-up.
func (s *securedHarness) waitDescribable(t *testing.T) {
	t.Helper()
	topics := []string{s.env.Points, s.env.Features, s.env.DLQ}
	waitUntil(t, 30*time.Second, "the worker's ACLs in force", func() bool {
		tr := &kafka.Transport{SASL: s.worker.SASLMechanism} // a fresh metadata cache each time
		defer tr.CloseIdleConnections()
		ctx, cancel := testContext(5 * time.Second)
		defer cancel()
		md, err := (&kafka.Client{Addr: kafka.TCP(s.env.Brokers...), Transport: tr}).Metadata(ctx, &kafka.MetadataRequest{Topics: topics})
		if err != nil {
			return false
		}
		seen := 0
		for _, tp := range md.Topics {
			if tp.Error == nil {
				seen++
			}
		}
		return seen == len(topics)
	})
}

// allow grants g to the worker while it runs.
func (s *securedHarness) allow(t *testing.T, g grant) {
	t.Helper()
	ctx, cancel := testContext(15 * time.Second)
	defer cancel()
	cl := &kafka.Client{Addr: kafka.TCP(s.env.Brokers...), Transport: s.admin}
	resp, err := cl.CreateACLs(ctx, &kafka.CreateACLsRequest{ACLs: []kafka.ACLEntry{{
		ResourceType: g.rt, ResourceName: s.name(g.name), ResourcePatternType: kafka.PatternTypeLiteral,
		Principal: "User:worker", Host: "*", Operation: g.op, PermissionType: kafka.ACLPermissionTypeAllow,
	}}})
	if err == nil {
		err = errors.Join(resp.Errors...)
	}
	if err != nil {
		t.Fatalf("create ACL: %v", err)
	}
}

// produceAs publishes messages as admin, in order, on the one input partition.
func (s *securedHarness) produceAs(t *testing.T, msgs ...kafka.Message) {
	t.Helper()
	w := &kafka.Writer{Addr: kafka.TCP(s.env.Brokers...), Topic: s.env.Points, Transport: s.admin, RequiredAcks: kafka.RequireAll, BatchTimeout: time.Millisecond}
	defer w.Close()
	ctx, cancel := testContext(30 * time.Second)
	defer cancel()
	if err := w.WriteMessages(ctx, msgs...); err != nil {
		t.Fatalf("produce: %v", err)
	}
}

// collectAs reads topic's one partition as admin from the beginning in the background.
func (s *securedHarness) collectAs(t *testing.T, topic string) *collector {
	t.Helper()
	c := &collector{}
	c.cond = sync.NewCond(&c.mu)
	r := kafka.NewReader(kafka.ReaderConfig{Brokers: s.env.Brokers, Topic: topic, Partition: 0, Dialer: s.adminDialer, MinBytes: 1, MaxBytes: 16 << 20, MaxWait: 50 * time.Millisecond})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer r.Close()
		for {
			m, err := r.ReadMessage(ctx)
			if ctx.Err() != nil {
				return
			}
			if err != nil {
				time.Sleep(50 * time.Millisecond)
				continue
			}
			c.mu.Lock()
			c.msgs = append(c.msgs, m)
			c.mu.Unlock()
		}
	}()
	t.Cleanup(func() { cancel(); <-done })
	return c
}

// committedAs is the group's committed offset of input partition 0 (-1: none).
func (s *securedHarness) committedAs(t *testing.T, group string) int64 {
	t.Helper()
	ctx, cancel := testContext(15 * time.Second)
	defer cancel()
	cl := &kafka.Client{Addr: kafka.TCP(s.env.Brokers...), Transport: s.admin}
	resp, err := cl.OffsetFetch(ctx, &kafka.OffsetFetchRequest{GroupID: s.name(group), Topics: map[string][]int{s.env.Points: {0}}})
	if err != nil {
		t.Fatalf("offset fetch: %v", err)
	}
	for _, p := range resp.Topics[s.env.Points] {
		if p.Partition == 0 {
			return p.CommittedOffset
		}
	}
	return -1
}

// TestACLDenial: a worker whose principal lacks one permission — reading the input topic,
// writing the output or dead-letter topic, reading its group — keeps running, is not
// ready, logs the principal and the resource, commits nothing past output it could not
// write; once the permission is granted it delivers every window and dead letter (nothing
// lost) and commits everything.
func TestACLDenial(t *testing.T) {
	t.Parallel()
	skipOnPlainRealCluster(t)
	const group = "acl-group"
	topic, grp := kafka.ResourceTypeTopic, kafka.ResourceTypeGroup
	for _, tc := range []struct {
		name      string
		deny      grant
		resource  string // as the log names it
		notReady  string // in NotReadyReason
		logMsg    string
		maxCommit int64 // highest commit allowed while denied
	}{
		{"input", grant{topic, testbroker.TopicPoints, kafka.ACLOperationTypeRead}, `topic "points"`, "input not readable", "fetch failed, retrying", 0},
		{"output", grant{topic, testbroker.TopicFeatures, kafka.ACLOperationTypeWrite}, `topic "features"`, "output failing", "output write failed permanently: partition stalled, worker not ready", 0},
		// The first set (offset 0) is written; the dead letter of offset 1 is not.
		{"dead-letter", grant{topic, testbroker.TopicDLQ, kafka.ACLOperationTypeWrite}, `topic "points.dlq"`, "output failing", "output write failed permanently: partition stalled, worker not ready", 1},
		{"group", grant{grp, group, kafka.ACLOperationTypeRead}, `group "acl-group"`, "not a member", "consumer group: cannot join yet, retrying", -1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var grants []grant
			for _, g := range workerGrants(group) {
				if g != tc.deny {
					grants = append(grants, g)
				}
			}
			s := newSecuredHarness(t, group, grants)
			features, dlq := s.collectAs(t, s.env.Features), s.collectAs(t, s.env.DLQ)
			sets := randomSets(81, tc.name, 3, 20, 1)
			var msgs []kafka.Message
			for i, b := range sets {
				v, err := schema.EncodeJSON(b)
				if err != nil {
					t.Fatal(err)
				}
				msgs = append(msgs, kafka.Message{Key: []byte(b.Set), Value: v})
				if i == 0 {
					msgs = append(msgs, kafka.Message{Key: []byte("poison"), Value: []byte(`{"points": [[0.1, 0.2]`)})
				}
			}
			s.produceAs(t, msgs...)

			cfg := s.config(s.name(group), window.Config{})
			cfg.Dialer, cfg.Transport, cfg.User = s.worker, s.workerTr, "worker"
			cfg.PermanentRetry = 200 * time.Millisecond
			logs := newLogCounter(testLogger(t).Handler())
			rw := s.startLogged(cfg, nil, slog.New(logs))

			waitUntil(t, 60*time.Second, "the denial logged", func() bool { return logs.count(tc.logMsg) > 1 })
			attrs := logs.lastAttrs(tc.logMsg)
			resource := tc.resource
			for def, real := range s.names {
				resource = strings.Replace(resource, `"`+def+`"`, `"`+real+`"`, 1)
			}
			for _, want := range []string{"User:worker", resource} {
				if !strings.Contains(attrs, want) {
					t.Errorf("log line %q does not name %s: %s", tc.logMsg, want, attrs)
				}
			}
			if r := rw.w.NotReadyReason(); !strings.Contains(r, tc.notReady) {
				t.Errorf("NotReadyReason = %q, want %q", r, tc.notReady)
			}
			if c := s.committedAs(t, group); c > tc.maxCommit {
				t.Errorf("committed offset %d while denied, want ≤ %d (nothing past unwritten output)", c, tc.maxCommit)
			}
			select {
			case err := <-rw.done:
				t.Fatalf("worker ended while denied: %v", err)
			default:
			}

			s.allow(t, tc.deny)
			s.checkAllWindows(t, features, 60*time.Second, sets)
			dlq.waitFor(t, 60*time.Second, "the dead letter", func(m []kafka.Message) bool { return len(m) >= 1 })
			waitUntil(t, 30*time.Second, "Ready() once allowed", rw.w.Ready)
			end := int64(len(msgs))
			waitUntil(t, 30*time.Second, fmt.Sprintf("commit of offset %d", end), func() bool { return s.committedAs(t, group) == end })
		})
	}
}

// TestWorkerAuthFailureIsFatal: a worker with a wrong password, or speaking plain TCP to a
// broker that requires SASL, ends Run at once with the authentication failure named (user,
// mechanism, variables to check) instead of retrying an "unexpected EOF" forever.
func TestWorkerAuthFailureIsFatal(t *testing.T) {
	t.Parallel()
	skipOnPlainRealCluster(t)
	s := newSecuredHarness(t, "g", workerGrants("g"))
	for _, tc := range []struct {
		name   string
		dialer *kafka.Dialer
		tr     *kafka.Transport
		says   []string
	}{
		{"wrong password", s.adminDialerFor(t, "worker", "wrong"), nil, []string{`user "worker"`, "SCRAM-SHA-256", "DISTFEAT_SASL_PASSWORD"}},
		{"no SASL", &kafka.Dialer{}, &kafka.Transport{}, []string{"requires SASL", "DISTFEAT_SASL_MECHANISM"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := s.config(s.name("g"), window.Config{})
			cfg.Dialer, cfg.Transport, cfg.User = tc.dialer, tc.tr, "worker"
			if cfg.Transport == nil {
				cfg.Transport = &kafka.Transport{SASL: tc.dialer.SASLMechanism}
			}
			w, err := NewWorker(cfg, s.emb, s.out, metrics.New(prometheus.NewRegistry(), "test"), testLogger(t), nil)
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := testContext(60 * time.Second)
			defer cancel()
			err = w.Run(ctx)
			if ctx.Err() != nil {
				t.Fatalf("Run retried until the test's limit instead of failing: %v", err)
			}
			var ce *kafkaio.Error
			if !errors.As(err, &ce) || ce.Layer != kafkaio.LayerSASL {
				t.Fatalf("Run: %v, want a SASL authentication failure", err)
			}
			for _, want := range tc.says {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("%q does not say %q", err, want)
				}
			}
		})
	}
}

// adminDialerFor is a dialer logging in as user with password (SCRAM-SHA-256).
func (s *securedHarness) adminDialerFor(t *testing.T, user, password string) *kafka.Dialer {
	t.Helper()
	m, err := scram.Mechanism(scram.SHA256, user, password)
	if err != nil {
		t.Fatal(err)
	}
	return &kafka.Dialer{Timeout: 10 * time.Second, SASLMechanism: m}
}

// skipOnPlainRealCluster skips a test that needs SASL and ACLs when the environment names a
// real cluster without its secured listeners (the embedded broker provides them otherwise).
func skipOnPlainRealCluster(t *testing.T) {
	t.Helper()
	if _, secured := realkafka.FromEnv(); !secured {
		skipOnRealCluster(t)
	}
}
