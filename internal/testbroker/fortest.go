package testbroker

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/segmentio/kafka-go"
)

// EnvBrokers names the environment variable that points ForTest at a real cluster: a comma
// separated list of bootstrap addresses (plaintext, no authentication).
const EnvBrokers = "DISTFEAT_TEST_BROKERS"

// T is the part of *testing.T (and *testing.B) that ForTest uses. It is an interface so that
// this package, which the distfeat binary links for its `broker` subcommand, does not import
// package testing.
type T interface {
	Helper()
	Name() string
	Cleanup(func())
	Logf(format string, args ...any)
	Fatalf(format string, args ...any)
}

// ReaderMaxWait is the kafka.ReaderConfig.MaxWait for readers in tests (and in the dev
// commands that read back what they produced). kafka-go uses MaxWait not only as the time the
// broker may wait for data but also as the read deadline for the fetch response's first bytes:
// a broker that needs longer than MaxWait to assemble a response makes kafka-go drop the
// fetch and send it again from the same offset, and a reader whose backlog has grown past
// what the broker can serve within MaxWait makes no progress at all. The embedded broker
// under the race detector needs ~13 ms per MB of response on an idle fast machine (tsan's
// shadow-memory updates for the copies dominate the profile) and several times that on a slow
// or loaded one, so 50–100 ms livelocked the tests that read ~3 MB back at once. With
// MinBytes 1 the broker answers as soon as any data is there, so a long MaxWait only
// lengthens fetches that find nothing (to ¾ of MaxWait, kafka-go's RTT allowance), and so
// how long Reader.Close waits for an idle fetch.
const ReaderMaxWait = time.Second

// ReaderMaxBytes is the kafka.ReaderConfig.MaxBytes for readers in tests: it bounds the work
// of one fetch, and so its time to the first byte, independently of the backlog (~13 ms
// under -race on an idle machine against the 1 s of ReaderMaxWait). A larger record still
// comes back whole (Kafka and kfake return the first batch of a fetch even when it exceeds
// the limit).
const ReaderMaxBytes = 1 << 20

// StallTimeout is how long a test waits without any progress (a record read, an offset or a
// counter moving) before it fails. Tests wait on progress, not on the total time a step
// takes, so a slow or loaded machine only makes them slower; this limit only catches a hang.
const StallTimeout = time.Minute

// Env is where a test's Kafka traffic goes: bootstrap addresses and the three topic names.
type Env struct {
	Brokers  []string
	Points   string
	Features string
	DLQ      string
	// Extra are the names of the further topics ForTestExtra created, by the name asked for.
	Extra map[string]string
	// Real says the cluster is the one DISTFEAT_TEST_BROKERS names (a real Kafka, shared
	// with other tests and, in make test-kafka, with a cluster of three more JVMs): group
	// timeouts that suit the embedded broker may be too short for it on a loaded machine.
	Real bool
}

// ForTest gives the test a Kafka cluster with fresh points/features/DLQ topics of the given
// partition count (0 → DefaultPartitions) and registers their removal with t.Cleanup.
//
// Without DISTFEAT_TEST_BROKERS it starts a private embedded broker on 127.0.0.1 with the
// default topic names. With it, the test runs against that real cluster instead: the topics
// get unique names (distfeat-test-<test>-<random>.points, …), are created with the broker's
// default replication factor, and are deleted at cleanup. A set but empty variable is a
// fatal error rather than a silent fall-back to the embedded broker.
func ForTest(t T, partitions int) Env {
	t.Helper()
	return ForTestExtra(t, partitions)
}

// ForTestExtra is ForTest with further topics of the same partition count: named as asked
// on the embedded broker, made unique like the others on a real cluster (Env.Extra maps
// the one to the other).
func ForTestExtra(t T, partitions int, extra ...string) Env {
	t.Helper()
	if partitions == 0 {
		partitions = DefaultPartitions
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	if raw, ok := os.LookupEnv(EnvBrokers); ok {
		env, err := realCluster(ctx, t, raw, partitions, extra)
		if err != nil {
			t.Fatalf("testbroker: %s=%q: %v", EnvBrokers, raw, err)
		}
		return env
	}

	env := Env{Points: TopicPoints, Features: TopicFeatures, DLQ: TopicDLQ, Extra: map[string]string{}}
	topics := []string{TopicPoints, TopicFeatures, TopicDLQ}
	for _, x := range extra {
		env.Extra[x] = x
		topics = append(topics, x)
	}
	b, err := Start(ctx, Options{Partitions: partitions, Topics: topics})
	if err != nil {
		t.Fatalf("testbroker: %v", err)
	}
	t.Cleanup(b.Close)
	env.Brokers = b.Addrs()
	return env
}

// ForCluster is ForTest on the real cluster at brokers (plaintext, no authentication)
// whatever DISTFEAT_TEST_BROKERS says: for a test that runs a cluster of its own.
func ForCluster(t T, brokers []string, partitions int) Env {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	env, err := realCluster(ctx, t, strings.Join(brokers, ","), partitions, nil)
	if err != nil {
		t.Fatalf("testbroker: %v: %v", brokers, err)
	}
	return env
}

// realCluster creates uniquely named topics on the cluster listed in raw.
func realCluster(ctx context.Context, t T, raw string, partitions int, extra []string) (Env, error) {
	var brokers []string
	for _, a := range strings.Split(raw, ",") {
		if a = strings.TrimSpace(a); a != "" {
			brokers = append(brokers, a)
		}
	}
	if len(brokers) == 0 {
		return Env{}, errors.New("no broker address listed")
	}
	var suffix [4]byte
	if _, err := rand.Read(suffix[:]); err != nil {
		return Env{}, err
	}
	base := "distfeat-test-" + topicSafe(t.Name()) + "-" + hex.EncodeToString(suffix[:])
	env := Env{Brokers: brokers, Points: base + ".points", Features: base + ".features", DLQ: base + ".points.dlq", Extra: map[string]string{}, Real: true}
	topics := []string{env.Points, env.Features, env.DLQ}
	for _, x := range extra {
		env.Extra[x] = base + "." + x
		topics = append(topics, env.Extra[x])
	}

	tr := &kafka.Transport{DialTimeout: 5 * time.Second}
	cl := &kafka.Client{Addr: kafka.TCP(brokers...), Transport: tr, Timeout: 20 * time.Second}
	req := &kafka.CreateTopicsRequest{}
	for _, name := range topics {
		req.Topics = append(req.Topics, kafka.TopicConfig{Topic: name, NumPartitions: partitions, ReplicationFactor: -1})
	}
	res, err := cl.CreateTopics(ctx, req)
	if err != nil {
		tr.CloseIdleConnections()
		return Env{}, fmt.Errorf("create topics: %w", err)
	}
	for name, e := range res.Errors {
		if e != nil {
			tr.CloseIdleConnections()
			return Env{}, fmt.Errorf("create topic %s: %w", name, e)
		}
	}
	t.Cleanup(func() {
		defer tr.CloseIdleConnections()
		dctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		res, err := cl.DeleteTopics(dctx, &kafka.DeleteTopicsRequest{Topics: topics})
		if err == nil {
			for _, e := range res.Errors {
				err = errors.Join(err, e)
			}
		}
		if err != nil {
			t.Logf("testbroker: deleting test topics %v: %v", topics, err)
		}
	})
	// Topic creation is asynchronous on a real cluster: wait until metadata lists the
	// topics, or the first produce would fail with UNKNOWN_TOPIC_OR_PARTITION, and until each
	// partition's leader answers for it: Kafka's metadata names a leader a moment before that
	// broker has taken the partition on, and a produce in between gets NOT_LEADER_OR_FOLLOWER,
	// which kafka.Writer does not retry.
	for {
		err := metadataHasTopics(ctx, cl, topics)
		if err == nil {
			err = leadersAnswer(ctx, cl, topics, partitions)
		}
		if err == nil {
			return env, nil
		}
		select {
		case <-ctx.Done():
			return Env{}, fmt.Errorf("topics %v not ready: %w (last error: %v)", topics, ctx.Err(), err)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// topicSafe maps a test name to Kafka's topic alphabet [a-zA-Z0-9._-], bounded in length so
// that the full topic name stays far below Kafka's 249-character limit.
func topicSafe(name string) string {
	var sb strings.Builder
	for _, r := range name {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-', r == '_':
			sb.WriteRune(r)
		default:
			sb.WriteByte('_')
		}
		if sb.Len() >= 80 {
			break
		}
	}
	return sb.String()
}

// leadersAnswer checks that every partition of topics answers a ListOffsets request from its
// leader.
func leadersAnswer(ctx context.Context, cl *kafka.Client, topics []string, partitions int) error {
	rctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	req := &kafka.ListOffsetsRequest{Topics: map[string][]kafka.OffsetRequest{}}
	for _, t := range topics {
		for p := range partitions {
			req.Topics[t] = append(req.Topics[t], kafka.FirstOffsetOf(p))
		}
	}
	res, err := cl.ListOffsets(rctx, req)
	if err != nil {
		return err
	}
	for _, t := range topics {
		if len(res.Topics[t]) != partitions {
			return fmt.Errorf("topic %s: %d of %d partitions answered", t, len(res.Topics[t]), partitions)
		}
		for _, p := range res.Topics[t] {
			if p.Error != nil {
				return fmt.Errorf("topic %s partition %d: %w", t, p.Partition, p.Error)
			}
		}
	}
	return nil
}
