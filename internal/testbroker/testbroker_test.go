package testbroker

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/segmentio/kafka-go"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// newTransport returns a private transport (kafka.DefaultTransport is shared process-wide
// and would keep pooled connections and cached metadata of brokers that other tests closed).
func newTransport(t *testing.T) *kafka.Transport {
	t.Helper()
	tr := &kafka.Transport{DialTimeout: 2 * time.Second, MetadataTTL: time.Second}
	t.Cleanup(tr.CloseIdleConnections)
	return tr
}

func startBroker(t *testing.T, opts Options) *Broker {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	b, err := Start(ctx, opts)
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	t.Cleanup(b.Close)
	return b
}

func TestStartTopicsAndPartitions(t *testing.T) {
	tests := []struct {
		name      string
		opts      Options
		wantParts int
		wantTopic []string
	}{
		{"defaults", Options{}, DefaultPartitions, []string{TopicPoints, TopicFeatures, TopicDLQ}},
		{"three partitions", Options{Partitions: 3}, 3, []string{TopicPoints, TopicFeatures, TopicDLQ}},
		{"custom topics", Options{Partitions: 2, Topics: []string{"a", "b.c"}}, 2, []string{"a", "b.c"}},
		{"explicit loopback addr", Options{Addr: "127.0.0.1:0", Partitions: 1}, 1, []string{TopicPoints, TopicFeatures, TopicDLQ}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			b := startBroker(t, tc.opts)
			addrs := b.Addrs()
			if len(addrs) != 1 || !strings.HasPrefix(addrs[0], "127.0.0.1:") || strings.HasSuffix(addrs[0], ":0") {
				t.Fatalf("Addrs() = %v, want one 127.0.0.1:<port>", addrs)
			}
			cl := &kafka.Client{Addr: kafka.TCP(addrs...), Transport: newTransport(t), Timeout: 5 * time.Second}
			md, err := cl.Metadata(context.Background(), &kafka.MetadataRequest{})
			if err != nil {
				t.Fatal(err)
			}
			got := map[string]int{}
			for _, tp := range md.Topics {
				got[tp.Name] = len(tp.Partitions)
			}
			if len(got) != len(tc.wantTopic) {
				t.Errorf("topics = %v, want exactly %v", got, tc.wantTopic)
			}
			for _, name := range tc.wantTopic {
				if got[name] != tc.wantParts {
					t.Errorf("topic %s has %d partitions, want %d", name, got[name], tc.wantParts)
				}
			}
		})
	}
}

func TestStartFixedPort(t *testing.T) {
	// Reserve a free port, release it, and ask the broker to use exactly that one.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	b := startBroker(t, Options{Addr: addr, Partitions: 1})
	if got := b.Addrs(); len(got) != 1 || got[0] != addr {
		t.Fatalf("Addrs() = %v, want [%s]", got, addr)
	}
	// A second broker on the same address must fail, not silently pick another port.
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if b2, err := Start(ctx, Options{Addr: addr}); err == nil {
		b2.Close()
		t.Fatalf("second Start on %s succeeded, want address-in-use error", addr)
	}
}

func TestStartRejectsBadOptions(t *testing.T) {
	ctx := context.Background()
	for _, o := range []Options{{Partitions: -1}, {Addr: "no-port"}, {Topics: []string{"points", ""}}} {
		if b, err := Start(ctx, o); err == nil {
			b.Close()
			t.Errorf("Start(%+v) succeeded, want error", o)
		}
	}
}

func TestCloseTwice(t *testing.T) {
	b := startBroker(t, Options{Partitions: 1})
	b.Close()
	b.Close() // must not panic; Cleanup calls it a third time
}

// partitionByKey routes "p<N>/..." keys to partition N so the test knows where each message
// lands without depending on kafkaio's balancer.
type partitionByKey struct{}

func (partitionByKey) Balance(msg kafka.Message, partitions ...int) int {
	var p int
	fmt.Sscanf(string(msg.Key), "p%d/", &p)
	return partitions[p%len(partitions)]
}

// TestWriterReaderRoundTrip: kafka-go Writer (RequiredAcks=all, explicit BatchTimeout, custom
// Balancer) → kfake → kafka-go Reader, with headers, keys and timestamps intact.
// Each compression codec kafka-go offers is exercised, since kfake stores batches as sent.
func TestWriterReaderRoundTrip(t *testing.T) {
	for _, codec := range []kafka.Compression{0, kafka.Gzip, kafka.Snappy, kafka.Lz4, kafka.Zstd} {
		name := "none"
		if codec != 0 {
			name = codec.String()
		}
		t.Run(name, func(t *testing.T) { testRoundTrip(t, startBroker(t, Options{Partitions: 4}), codec) })
	}
}

// testRoundTrip needs a broker whose points topic has 4 partitions.
func testRoundTrip(t *testing.T, b *Broker, codec kafka.Compression) {
	const parts = 4
	tr := newTransport(t)
	w := &kafka.Writer{
		Addr:         kafka.TCP(b.Addrs()...),
		Topic:        TopicPoints,
		Balancer:     partitionByKey{},
		RequiredAcks: kafka.RequireAll,
		BatchTimeout: 5 * time.Millisecond,
		Compression:  codec,
		Transport:    tr,
	}
	defer w.Close()
	ts := time.UnixMilli(1732000000123).UTC()
	var msgs []kafka.Message
	for p := 0; p < parts; p++ {
		for i := 0; i < 3; i++ {
			msgs = append(msgs, kafka.Message{
				Key:     []byte(fmt.Sprintf("p%d/k%d", p, i)),
				Value:   []byte(fmt.Sprintf("v%d.%d", p, i)),
				Headers: []kafka.Header{{Key: "content-type", Value: []byte("application/json")}},
				Time:    ts.Add(time.Duration(i) * time.Millisecond),
			})
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := w.WriteMessages(ctx, msgs...); err != nil {
		t.Fatalf("WriteMessages: %v", err)
	}

	for p := 0; p < parts; p++ {
		r := kafka.NewReader(kafka.ReaderConfig{
			Brokers:   b.Addrs(),
			Topic:     TopicPoints,
			Partition: p,
			MaxWait:   ReaderMaxWait,
			Dialer:    &kafka.Dialer{Timeout: 2 * time.Second},
		})
		for i := 0; i < 3; i++ {
			m, err := r.ReadMessage(ctx)
			if err != nil {
				r.Close()
				t.Fatalf("partition %d: ReadMessage: %v", p, err)
			}
			wantKey := fmt.Sprintf("p%d/k%d", p, i)
			if string(m.Key) != wantKey || string(m.Value) != fmt.Sprintf("v%d.%d", p, i) || m.Partition != p || m.Offset != int64(i) {
				t.Errorf("partition %d #%d: got key=%q value=%q partition=%d offset=%d", p, i, m.Key, m.Value, m.Partition, m.Offset)
			}
			if len(m.Headers) != 1 || m.Headers[0].Key != "content-type" || string(m.Headers[0].Value) != "application/json" {
				t.Errorf("partition %d #%d: headers = %v", p, i, m.Headers)
			}
			if want := ts.Add(time.Duration(i) * time.Millisecond); !m.Time.Equal(want) {
				t.Errorf("partition %d #%d: time = %v, want %v", p, i, m.Time, want)
			}
		}
		r.Close()
	}

	// A replay starts from a committed offset inside a produced batch: reading from offset 2
	// must return exactly offset 2 first (kfake serves whole batches; kafka-go skips the
	// records before the requested offset).
	r := kafka.NewReader(kafka.ReaderConfig{
		Brokers: b.Addrs(), Topic: TopicPoints, Partition: 2, MaxWait: ReaderMaxWait,
		Dialer: &kafka.Dialer{Timeout: 2 * time.Second},
	})
	defer r.Close()
	if err := r.SetOffset(2); err != nil {
		t.Fatal(err)
	}
	if m, err := r.ReadMessage(ctx); err != nil || m.Offset != 2 || string(m.Key) != "p2/k2" {
		t.Fatalf("read from offset 2: offset %d key %q err %v", m.Offset, m.Key, err)
	}

	// Conn-level offsets (what lag metrics use): first 0, last 3 on every partition.
	conn, err := kafka.DialLeader(ctx, "tcp", b.Addrs()[0], TopicPoints, 1)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	first, last, err := conn.ReadOffsets()
	if err != nil || first != 0 || last != 3 {
		t.Fatalf("ReadOffsets = %d, %d, %v; want 0, 3, nil", first, last, err)
	}
}

// TestWriterUnknownTopicFails checks that auto-creation is off: writing to a missing topic
// is an error, not a silently created topic.
func TestWriterUnknownTopicFails(t *testing.T) {
	b := startBroker(t, Options{Partitions: 1})
	w := &kafka.Writer{
		Addr:         kafka.TCP(b.Addrs()...),
		Topic:        "no-such-topic",
		RequiredAcks: kafka.RequireAll,
		BatchTimeout: 5 * time.Millisecond,
		MaxAttempts:  2,
		Transport:    newTransport(t),
	}
	defer w.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	err := w.WriteMessages(ctx, kafka.Message{Value: []byte("x")})
	if !errors.Is(err, kafka.UnknownTopicOrPartition) {
		t.Fatalf("WriteMessages to a missing topic: err = %v, want UnknownTopicOrPartition", err)
	}
}

func newGroup(t *testing.T, addrs []string, group, topic string) *kafka.ConsumerGroup {
	t.Helper()
	cg, err := kafka.NewConsumerGroup(kafka.ConsumerGroupConfig{
		ID:                group,
		Brokers:           addrs,
		Topics:            []string{topic},
		HeartbeatInterval: 100 * time.Millisecond,
		// Generous timeouts: the tests never wait for them (members leave explicitly or are
		// raw silent members with their own short session), and a loaded CI machine must
		// not see spurious evictions.
		SessionTimeout:   10 * time.Second,
		RebalanceTimeout: 10 * time.Second,
		JoinGroupBackoff: 100 * time.Millisecond,
		StartOffset:      kafka.FirstOffset,
		Timeout:          2 * time.Second,
	})
	if err != nil {
		t.Fatal(err)
	}
	return cg
}

func assigned(g *kafka.Generation, topic string) []int {
	var ps []int
	for _, a := range g.Assignments[topic] {
		ps = append(ps, a.ID)
	}
	sort.Ints(ps)
	return ps
}

// TestConsumerGroupCommitMetadata is the compatibility smoke test the consumer relies on:
// group join, Generation.CommitOffsets, kafka.Client.OffsetCommit with metadata (using the
// generation's ID and member ID), OffsetFetch returning the metadata, a rebalance when a
// second member joins, the old generation being fenced, and committed offsets showing up as
// the next generation's starting offsets.
func TestConsumerGroupCommitMetadata(t *testing.T) {
	testConsumerGroup(t, startBroker(t, Options{Partitions: 4}))
}

// testConsumerGroup needs a broker whose points topic has 4 partitions.
func testConsumerGroup(t *testing.T, b *Broker) {
	const parts = 4
	addrs := b.Addrs()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	const group = "smoke"

	cg1 := newGroup(t, addrs, group, TopicPoints)
	defer cg1.Close()
	gen1, err := cg1.Next(ctx)
	if err != nil {
		t.Fatalf("first member Next: %v", err)
	}
	if got := assigned(gen1, TopicPoints); len(got) != parts {
		t.Fatalf("single member assigned %v, want all %d partitions", got, parts)
	}
	for _, a := range gen1.Assignments[TopicPoints] {
		if a.Offset != kafka.FirstOffset {
			t.Errorf("partition %d starts at %d, want FirstOffset (nothing committed yet)", a.ID, a.Offset)
		}
	}

	// Connection-based commit (no metadata) on partition 0.
	if err := gen1.CommitOffsets(map[string]map[int]int64{TopicPoints: {0: 7}}); err != nil {
		t.Fatalf("Generation.CommitOffsets: %v", err)
	}

	// Client-based commit with metadata on partitions 1..3, fenced by the generation.
	cl := &kafka.Client{Addr: kafka.TCP(addrs...), Transport: newTransport(t), Timeout: 5 * time.Second}
	meta := func(p int) string { return fmt.Sprintf(`{"v":1,"wm":%d,"note":"ü"}`, 1000+p) }
	commit := func(gen *kafka.Generation, offsets map[int]int64) (*kafka.OffsetCommitResponse, error) {
		req := &kafka.OffsetCommitRequest{GroupID: group, GenerationID: int(gen.ID), MemberID: gen.MemberID}
		var cs []kafka.OffsetCommit
		for p, off := range offsets {
			cs = append(cs, kafka.OffsetCommit{Partition: p, Offset: off, Metadata: meta(p)})
		}
		req.Topics = map[string][]kafka.OffsetCommit{TopicPoints: cs}
		return cl.OffsetCommit(ctx, req)
	}
	res, err := commit(gen1, map[int]int64{1: 11, 2: 12, 3: 13})
	if err != nil {
		t.Fatalf("Client.OffsetCommit: %v", err)
	}
	for _, p := range res.Topics[TopicPoints] {
		if p.Error != nil {
			t.Fatalf("Client.OffsetCommit partition %d: %v", p.Partition, p.Error)
		}
	}

	fetch := func() map[int]kafka.OffsetFetchPartition {
		t.Helper()
		res, err := cl.OffsetFetch(ctx, &kafka.OffsetFetchRequest{GroupID: group, Topics: map[string][]int{TopicPoints: {0, 1, 2, 3}}})
		if err != nil || res.Error != nil {
			t.Fatalf("OffsetFetch: %v / %v", err, res.Error)
		}
		m := map[int]kafka.OffsetFetchPartition{}
		for _, p := range res.Topics[TopicPoints] {
			if p.Error != nil {
				t.Fatalf("OffsetFetch partition %d: %v", p.Partition, p.Error)
			}
			m[p.Partition] = p
		}
		return m
	}
	got := fetch()
	if got[0].CommittedOffset != 7 || got[0].Metadata != "" {
		t.Errorf("partition 0: offset %d metadata %q, want 7 and empty", got[0].CommittedOffset, got[0].Metadata)
	}
	for p := 1; p < parts; p++ {
		if got[p].CommittedOffset != int64(10+p) || got[p].Metadata != meta(p) {
			t.Errorf("partition %d: offset %d metadata %q, want %d and %q", p, got[p].CommittedOffset, got[p].Metadata, 10+p, meta(p))
		}
	}

	// The generation ends when a second member joins: its context is cancelled.
	ended := make(chan struct{})
	gen1.Start(func(gctx context.Context) {
		<-gctx.Done()
		close(ended)
	})
	cg2 := newGroup(t, addrs, group, TopicPoints)
	defer cg2.Close()

	var (
		wg         sync.WaitGroup
		gen2a      *kafka.Generation
		gen2b      *kafka.Generation
		errA, errB error
	)
	select {
	case <-ended:
	case <-ctx.Done():
		t.Fatal("first generation did not end after a second member joined")
	}
	wg.Add(2)
	go func() { defer wg.Done(); gen2a, errA = cg1.Next(ctx) }()
	go func() { defer wg.Done(); gen2b, errB = cg2.Next(ctx) }()
	wg.Wait()
	if errA != nil || errB != nil {
		t.Fatalf("second generation: %v / %v", errA, errB)
	}
	if gen2a.ID != gen2b.ID || gen2a.ID <= gen1.ID {
		t.Fatalf("generation IDs: old %d, new %d and %d", gen1.ID, gen2a.ID, gen2b.ID)
	}
	pa, pb := assigned(gen2a, TopicPoints), assigned(gen2b, TopicPoints)
	all := append(append([]int(nil), pa...), pb...)
	sort.Ints(all)
	if len(pa) == 0 || len(pb) == 0 || fmt.Sprint(all) != "[0 1 2 3]" {
		t.Fatalf("rebalanced assignment %v + %v, want a split of [0 1 2 3]", pa, pb)
	}
	// Committed offsets are the new generation's start offsets.
	for _, g := range []*kafka.Generation{gen2a, gen2b} {
		for _, a := range g.Assignments[TopicPoints] {
			want := int64(7)
			if a.ID > 0 {
				want = int64(10 + a.ID)
			}
			if a.Offset != want {
				t.Errorf("generation %d partition %d starts at %d, want committed %d", g.ID, a.ID, a.Offset, want)
			}
		}
	}

	// A commit with the old generation is fenced (ILLEGAL_GENERATION), so a member that
	// missed a rebalance cannot move offsets of partitions it no longer owns.
	res, err = commit(gen1, map[int]int64{1: 99})
	if err == nil {
		for _, p := range res.Topics[TopicPoints] {
			err = errors.Join(err, p.Error)
		}
	}
	if !errors.Is(err, kafka.IllegalGeneration) {
		t.Errorf("commit with stale generation: err = %v, want IllegalGeneration", err)
	}
	if got := fetch(); got[1].CommittedOffset != 11 {
		t.Errorf("stale commit moved partition 1 to %d", got[1].CommittedOffset)
	}
	// A commit by a current member with the current generation works.
	res, err = commit(gen2b, map[int]int64{pb[0]: 42})
	if err == nil {
		for _, p := range res.Topics[TopicPoints] {
			err = errors.Join(err, p.Error)
		}
	}
	if err != nil {
		t.Fatalf("commit with current generation: %v", err)
	}
	if got := fetch(); got[pb[0]].CommittedOffset != 42 || got[pb[0]].Metadata != meta(pb[0]) {
		t.Errorf("partition %d after current commit: %+v", pb[0], got[pb[0]])
	}
}

// TestLeaveGroupOnClose: ConsumerGroup.Close sends LeaveGroup, so the survivor is handed every
// partition right away rather than after the leaver's session timeout (30 s here, longer than
// the test's deadline, so a missing LeaveGroup fails the test instead of slowing it).
func TestLeaveGroupOnClose(t *testing.T) {
	const parts = 4
	b := startBroker(t, Options{Partitions: parts})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	mk := func() *kafka.ConsumerGroup {
		cg, err := kafka.NewConsumerGroup(kafka.ConsumerGroupConfig{
			ID: "leave", Brokers: b.Addrs(), Topics: []string{TopicPoints},
			HeartbeatInterval: 100 * time.Millisecond, SessionTimeout: 30 * time.Second,
			RebalanceTimeout: 5 * time.Second, JoinGroupBackoff: 100 * time.Millisecond, Timeout: 2 * time.Second,
		})
		if err != nil {
			t.Fatal(err)
		}
		return cg
	}
	cg1 := mk()
	defer cg1.Close()
	gen, err := cg1.Next(ctx)
	if err != nil {
		t.Fatal(err)
	}
	ended := make(chan struct{})
	gen.Start(func(gctx context.Context) { <-gctx.Done(); close(ended) })
	cg2 := mk()
	<-ended
	var wg sync.WaitGroup
	var g2 *kafka.Generation
	var err2 error
	wg.Add(1)
	go func() { defer wg.Done(); g2, err2 = cg2.Next(ctx) }()
	gen, err = cg1.Next(ctx)
	wg.Wait()
	if err != nil || err2 != nil {
		t.Fatalf("two-member generation: %v / %v", err, err2)
	}
	if n := len(gen.Assignments[TopicPoints]) + len(g2.Assignments[TopicPoints]); n != parts {
		t.Fatalf("two members hold %d partitions, want %d", n, parts)
	}
	ended = make(chan struct{})
	gen.Start(func(gctx context.Context) { <-gctx.Done(); close(ended) })
	if err := cg2.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	select {
	case <-ended:
	case <-ctx.Done():
		t.Fatal("survivor's generation did not end after the other member closed (LeaveGroup not honoured?)")
	}
	gen, err = cg1.Next(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got := assigned(gen, TopicPoints); len(got) != parts {
		t.Fatalf("survivor assigned %v, want all %d partitions", got, parts)
	}
}

// TestSilentMemberEvicted: a member that joined and then stopped heartbeating without leaving
// (a killed worker) is removed after its session timeout, and a live kafka-go member then gets
// every partition. The silent member is driven through kafka.Client's raw group APIs.
func TestSilentMemberEvicted(t *testing.T) {
	const parts = 4
	b := startBroker(t, Options{Partitions: parts})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	const group = "evict"
	cl := &kafka.Client{Addr: kafka.TCP(b.Addrs()...), Transport: newTransport(t), Timeout: 5 * time.Second}
	join := &kafka.JoinGroupRequest{
		GroupID: group, SessionTimeout: 500 * time.Millisecond, RebalanceTimeout: 500 * time.Millisecond,
		ProtocolType: "consumer",
		Protocols:    []kafka.GroupProtocol{{Name: "range", Metadata: kafka.GroupProtocolSubscription{Topics: []string{TopicPoints}}}},
	}
	jr, err := cl.JoinGroup(ctx, join)
	if err == nil && errors.Is(jr.Error, kafka.MemberIDRequired) {
		join.MemberID = jr.MemberID // JoinGroup v4+: rejoin with the assigned member ID
		jr, err = cl.JoinGroup(ctx, join)
	}
	if err != nil || jr.Error != nil {
		t.Fatalf("raw JoinGroup: %v / %v", err, jr.Error)
	}
	all := make([]int, parts)
	for i := range all {
		all[i] = i
	}
	sr, err := cl.SyncGroup(ctx, &kafka.SyncGroupRequest{
		GroupID: group, GenerationID: jr.GenerationID, MemberID: jr.MemberID,
		ProtocolType: "consumer", ProtocolName: jr.ProtocolName,
		Assignments: []kafka.SyncGroupRequestAssignment{{
			MemberID:   jr.MemberID,
			Assignment: kafka.GroupProtocolAssignment{AssignedPartitions: map[string][]int{TopicPoints: all}},
		}},
	})
	if err != nil || sr.Error != nil {
		t.Fatalf("raw SyncGroup: %v / %v", err, sr.Error)
	}
	// From here on the raw member is silent.
	cg := newGroup(t, b.Addrs(), group, TopicPoints)
	defer cg.Close()
	gen, err := cg.Next(ctx)
	if err != nil {
		t.Fatalf("live member Next: %v", err)
	}
	if got := assigned(gen, TopicPoints); len(got) != parts {
		t.Fatalf("live member assigned %v, want all %d partitions once the silent member is evicted", got, parts)
	}
	if gen.ID <= int32(jr.GenerationID) {
		t.Fatalf("generation %d not newer than the silent member's %d", gen.ID, jr.GenerationID)
	}
}

// TestProtocolVersions records the (API, version) pairs kafka-go actually sends to kfake in the
// scenarios above and checks them against the table in the package comment, so that a
// kafka-go or kfake upgrade that changes the negotiation is noticed (and the table updated).
func TestProtocolVersions(t *testing.T) {
	b := startBroker(t, Options{Partitions: 4})
	var mu sync.Mutex
	seen := map[string]bool{}
	b.Cluster().Control(func(r kmsg.Request) (kmsg.Response, error, bool) {
		b.Cluster().KeepControl()
		mu.Lock()
		seen[fmt.Sprintf("%s v%d", kmsg.NameForKey(r.Key()), r.GetVersion())] = true
		mu.Unlock()
		return nil, nil, false // observe only; kfake handles the request
	})
	testRoundTrip(t, b, 0)
	testConsumerGroup(t, b)

	mu.Lock()
	defer mu.Unlock()
	var got []string
	for k := range seen {
		got = append(got, k)
	}
	sort.Strings(got)
	t.Logf("requests seen: %s", strings.Join(got, ", "))
	for _, want := range []string{
		"Produce v8", "Fetch v10", "ListOffsets v1", // Writer (Transport), Reader, Conn.ReadOffsets
		"FindCoordinator v0", "JoinGroup v2", "SyncGroup v0", "Heartbeat v0", // ConsumerGroup (Conn)
		"OffsetFetch v1", "OffsetCommit v2", // ConsumerGroup start offsets, Generation.CommitOffsets
		"OffsetCommit v7", "OffsetFetch v5", "FindCoordinator v2", // kafka.Client with metadata
	} {
		if !seen[want] {
			t.Errorf("expected %s among the requests (package comment out of date?)", want)
		}
	}
}

// TestDataDirPersists: with Options.DataDir, records survive a broker restart (the broker
// subcommand's persistent mode), and seeding an existing directory does not recreate or
// truncate the topics.
func TestDataDirPersists(t *testing.T) {
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	b1, err := Start(ctx, Options{Partitions: 2, DataDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	w := &kafka.Writer{
		Addr: kafka.TCP(b1.Addrs()...), Topic: TopicFeatures, Balancer: partitionByKey{},
		RequiredAcks: kafka.RequireAll, BatchTimeout: 5 * time.Millisecond, Transport: newTransport(t),
	}
	if err := w.WriteMessages(ctx, kafka.Message{Key: []byte("p1/x"), Value: []byte("kept")}); err != nil {
		t.Fatal(err)
	}
	w.Close()
	b1.Close()

	b2 := startBroker(t, Options{Partitions: 2, DataDir: dir})
	r := kafka.NewReader(kafka.ReaderConfig{Brokers: b2.Addrs(), Topic: TopicFeatures, Partition: 1, MaxWait: ReaderMaxWait})
	defer r.Close()
	m, err := r.ReadMessage(ctx)
	if err != nil || string(m.Value) != "kept" || m.Offset != 0 {
		t.Fatalf("after restart: %q at offset %d, err %v", m.Value, m.Offset, err)
	}
}

// TestLoggerAdapter maps kfake's levels onto slog's and drops what the handler filters.
func TestLoggerAdapter(t *testing.T) {
	var buf strings.Builder
	l := slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelWarn}))
	a := slogAdapter{l}
	a.Logf(kfake.LogLevelError, "boom %d", 1)
	a.Logf(kfake.LogLevelWarn, "careful %s", "x")
	a.Logf(kfake.LogLevelInfo, "chatty")
	a.Logf(kfake.LogLevelNone, "never")
	out := buf.String()
	for _, want := range []string{"level=ERROR", `msg="boom 1"`, "level=WARN", `msg="careful x"`, "component=kfake"} {
		if !strings.Contains(out, want) {
			t.Errorf("log output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "chatty") || strings.Contains(out, "never") {
		t.Errorf("info/none lines were not filtered:\n%s", out)
	}
	// A broker with a logger starts and works.
	startBroker(t, Options{Partitions: 1, Logger: l})
}
