// Package testbroker runs an embedded Kafka-protocol broker (kfake from franz-go) for
// distfeat's `broker` and `demo` subcommands and for tests, and hands tests either such a
// broker or uniquely named topics on a real cluster (DISTFEAT_TEST_BROKERS).
//
// # kfake and kafka-go
//
// distfeat's Kafka client is segmentio/kafka-go (v0.4.51); kfake is only the server. The tests
// in this package pin what the rest of the project relies on, against this very broker, and
// TestProtocolVersions checks the versions below are still the ones negotiated:
//
//   - kafka.Writer (RequiredAcks=RequireAll, custom Balancer, every compression codec):
//     Produce v8 over kafka.Transport. kfake accepts Produce v3–v13 and Fetch v4–v18 (the
//     Kafka 4 minimums); kafka-go never falls back below them against kfake.
//   - kafka.Reader on an explicit partition, including SetOffset into the middle of a
//     produced batch, and Conn.ReadOffsets: Fetch v10, ListOffsets v1, Metadata v6.
//   - kafka.ConsumerGroup / Generation (kafka-go's connection-based group path):
//     FindCoordinator v0, JoinGroup v2, SyncGroup v0, Heartbeat v0, LeaveGroup v0,
//     OffsetFetch v1 (start offsets) and OffsetCommit v2 (Generation.CommitOffsets).
//   - kafka.Client.OffsetCommit / OffsetFetch: v7 / v5, with FindCoordinator v2.
//     Generation.CommitOffsets cannot carry commit metadata, so the consumer commits through
//     kafka.Client with the Generation's ID and MemberID; the metadata string round-trips
//     byte for byte, and a commit with a superseded generation ID is refused with
//     ILLEGAL_GENERATION (kafka.IllegalGeneration), so a member that missed a rebalance
//     cannot move offsets it no longer owns. (kafka-go encodes an empty GroupInstanceID
//     as null, so kfake does not treat the v7 commit as coming from a static member.)
//   - Membership: ConsumerGroup.Close sends LeaveGroup and the survivors rebalance at once;
//     a member that stops heartbeating is evicted after its session timeout.
//   - Options.DataDir (kfake.DataDir): records survive a broker restart.
//
// No kafka-go Transport pinning or other workaround was needed. What Start does configure,
// and why:
//
//   - kfake.NumBrokers(1): kfake starts three brokers by default.
//   - kfake.GroupMinSessionTimeout(100 ms): Kafka's (and kfake's) minimum is 6 s, which
//     would make kill-a-worker tests wait ≥ 6 s per eviction. kfake, like Kafka without
//     group.initial.rebalance.delay.ms, completes a join as soon as all known members
//     have rejoined, so group tests are fast.
//   - kfake.ListenFn: kfake always listens on 127.0.0.1:<port>; ListenFn honours Options.Addr.
//   - Options.TLS, Users and ACLs turn on kfake's TLS listener, SASL users (PLAIN,
//     SCRAM-SHA-256/512) and ACL checks; the broker's own clients (start-up check, reaper)
//     then log in as the first super user (auth.go).
//   - Auto topic creation stays off (kfake's default), so topics must be seeded.
//   - A reaper (reaper.go) enforces session timeouts kfake misses: a member that dies while
//     waiting in JoinGroup can be left without a session timer and hold its partitions in
//     a Stable group forever (issue 9 item 2); the reaper removes members of Stable groups
//     that stay silent for longer than their session timeout.
//
// Tests should use a private kafka.Transport (and close its idle connections) rather than
// kafka.DefaultTransport, which is process-wide and caches connections and metadata of
// brokers that earlier tests have already closed.
package testbroker

import (
	"context"
	"crypto/tls"
	"fmt"
	"log/slog"
	"net"
	"strings"
	"sync"
	"time"

	"github.com/segmentio/kafka-go"
	"github.com/twmb/franz-go/pkg/kfake"

	"github.com/distfeat/distfeat/config"
)

// The worker's default topic names (DISTFEAT_INPUT_TOPIC, _OUTPUT_TOPIC, _DLQ_TOPIC).
const (
	TopicPoints   = config.DefaultInputTopic
	TopicFeatures = config.DefaultOutputTopic
	TopicDLQ      = config.DefaultDLQTopic
)

// DefaultPartitions is the partition count of the seeded topics when Options.Partitions is 0.
const DefaultPartitions = 8

// Options configures Start. The zero value is a single broker on a random loopback port with
// the three default topics of DefaultPartitions partitions each.
type Options struct {
	// Addr is the listen address, e.g. "127.0.0.1:9092". Empty means "127.0.0.1:0" (a
	// random free port). The listener's address is also the address advertised in
	// metadata, so it should be one clients can dial (not a wildcard address).
	Addr string

	// Partitions is the partition count of every seeded topic; 0 means DefaultPartitions.
	Partitions int

	// Topics to create at start-up; nil means points, features and points.dlq.
	Topics []string

	// DataDir, when set, makes the broker persist its state there and reload it on the
	// next Start with the same directory. Empty keeps everything in memory.
	DataDir string

	// TLS, when non-nil, makes the listener TLS with this configuration (NewCertificate).
	TLS *tls.Config

	// TLSClient is the TLS configuration of the broker's own clients (start-up check,
	// reaper) when TLS is set; nil: no certificate verification and no client certificate
	// (set it when TLS requires client certificates).
	TLSClient *tls.Config

	// Users, when non-empty, makes the broker require SASL authentication by these users;
	// at least one must be a super user.
	Users []User

	// ACLs makes the broker check every request against the users' ACLs (super users
	// bypass them). It needs Users.
	ACLs bool

	// Logger receives the broker's own log lines (at Debug for kfake's info/debug, Warn and
	// Error otherwise). Nil discards them.
	Logger *slog.Logger
}

// Broker is a running embedded single-node Kafka-protocol broker.
type Broker struct {
	cluster *kfake.Cluster
	tr      *kafka.Transport // the broker's own clients' (TLS, first super user)
	addrs   []string
	topics  []string
	reaper  *reaper
	once    sync.Once
}

// Start runs a broker as described by opts and waits until it answers a metadata request
// listing the seeded topics. ctx bounds only the start-up; the broker runs until Close.
//
// The broker accepts group session timeouts down to 100 ms (Kafka's default minimum is 6 s)
// so that tests can use short sessions; AllowAutoTopicCreation is off, as on a well-run
// production cluster, so a misspelt topic is an error rather than a silent new topic.
func Start(ctx context.Context, opts Options) (*Broker, error) {
	parts := opts.Partitions
	if parts == 0 {
		parts = DefaultPartitions
	}
	if parts < 0 {
		return nil, fmt.Errorf("testbroker: partitions must be > 0, got %d", parts)
	}
	topics := opts.Topics
	if topics == nil {
		topics = []string{TopicPoints, TopicFeatures, TopicDLQ}
	}
	for _, t := range topics {
		if t == "" {
			return nil, fmt.Errorf("testbroker: empty topic name in %q", topics)
		}
	}
	addr := opts.Addr
	if addr == "" {
		addr = "127.0.0.1:0"
	}
	if _, _, err := net.SplitHostPort(addr); err != nil {
		return nil, fmt.Errorf("testbroker: listen address %q: %w", addr, err)
	}

	kopts := []kfake.Opt{
		kfake.NumBrokers(1),
		kfake.ClusterID("distfeat"),
		// kfake always listens on 127.0.0.1:<port>; ListenFn lets Addr choose the host too.
		kfake.ListenFn(func(network, _ string) (net.Listener, error) { return net.Listen(network, addr) }),
		kfake.GroupMinSessionTimeout(100 * time.Millisecond),
		kfake.DefaultNumPartitions(parts),
	}
	if len(topics) > 0 {
		kopts = append(kopts, kfake.SeedTopics(int32(parts), topics...))
	}
	akopts, tr, err := authOpts(opts)
	if err != nil {
		return nil, err
	}
	kopts = append(kopts, akopts...)
	if opts.DataDir != "" {
		kopts = append(kopts, kfake.DataDir(opts.DataDir))
	}
	if opts.Logger != nil {
		kopts = append(kopts, kfake.WithLogger(slogAdapter{opts.Logger}))
	}
	c, err := kfake.NewCluster(kopts...)
	if err != nil {
		return nil, fmt.Errorf("testbroker: start kfake on %s: %w", addr, err)
	}
	b := &Broker{cluster: c, tr: tr, addrs: c.ListenAddrs(), topics: topics}
	if err := b.waitReady(ctx); err != nil {
		c.Close()
		return nil, err
	}
	b.reaper = startReaper(c, b.addrs, tr, opts.Logger)
	return b, nil
}

// waitReady polls metadata until every seeded topic is listed, so callers never race the
// broker's start-up.
func (b *Broker) waitReady(ctx context.Context) error {
	defer b.tr.CloseIdleConnections()
	cl := &kafka.Client{Addr: kafka.TCP(b.addrs...), Transport: b.tr}
	for {
		err := metadataHasTopics(ctx, cl, b.topics)
		if err == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("testbroker: broker at %v not ready: %w (last error: %v)", b.addrs, ctx.Err(), err)
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// metadataHasTopics returns nil when a metadata request lists all topics without errors.
func metadataHasTopics(ctx context.Context, cl *kafka.Client, topics []string) error {
	rctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	md, err := cl.Metadata(rctx, &kafka.MetadataRequest{Topics: topics})
	if err != nil {
		return err
	}
	seen := make(map[string]bool, len(md.Topics))
	for _, t := range md.Topics {
		if t.Error != nil {
			return fmt.Errorf("topic %s: %w", t.Name, t.Error)
		}
		if len(t.Partitions) == 0 {
			return fmt.Errorf("topic %s: no partitions yet", t.Name)
		}
		seen[t.Name] = true
	}
	var missing []string
	for _, t := range topics {
		if !seen[t] {
			missing = append(missing, t)
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("topics not in metadata yet: %s", strings.Join(missing, ", "))
	}
	return nil
}

// Addrs returns the broker's host:port addresses (one for this single-node broker).
func (b *Broker) Addrs() []string { return append([]string(nil), b.addrs...) }

// Cluster exposes the underlying kfake cluster for tests that inject faults (kfake's
// Control hooks) or move partitions. Production code should not need it.
func (b *Broker) Cluster() *kfake.Cluster { return b.cluster }

// Close stops the broker and closes its listener. It is safe to call more than once.
func (b *Broker) Close() {
	b.once.Do(func() {
		if b.reaper != nil {
			b.reaper.close()
		}
	})
	b.cluster.Close()
}

// slogAdapter routes kfake's log lines to slog.
type slogAdapter struct{ l *slog.Logger }

// Logf implements kfake.Logger.
func (a slogAdapter) Logf(level kfake.LogLevel, msg string, args ...any) {
	var sl slog.Level
	switch level {
	case kfake.LogLevelNone:
		return
	case kfake.LogLevelError:
		sl = slog.LevelError
	case kfake.LogLevelWarn:
		sl = slog.LevelWarn
	default:
		sl = slog.LevelDebug
	}
	if !a.l.Enabled(context.Background(), sl) {
		return
	}
	a.l.Log(context.Background(), sl, fmt.Sprintf(msg, args...), "component", "kfake")
}
