package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/segmentio/kafka-go"

	"github.com/distfeat/distfeat/internal/realkafka"
	"github.com/distfeat/distfeat/internal/testbroker"
	"github.com/distfeat/distfeat/kafkaio"
	"github.com/distfeat/distfeat/schema"
)

// failoverDowntime is how long each killed Kafka node stays down (the 20 s: long
// enough for the cluster to elect new leaders and the group to move its coordinator, so the
// worker meets the changed cluster, not a quick reconnect).
const failoverDowntime = 20 * time.Second

// TestRealKafkaFailover: on a three-node KRaft cluster (replication factor 3,
// min.insync.replicas 2), two worker processes in one group process a stream while the test
// SIGKILLs the leader of an input partition, then of an output partition, then the group
// coordinator, restarting each after 20 s. Half of each phase's records (every window open)
// are produced before the kill, the rest once new leaders are elected. Every set's window
// is delivered, with n exact and vectors bit-identical to the offline embedding; a window
// delivered twice is byte-identical; nothing reaches the dead-letter topic. The time from
// each kill to the first and to the last window of its phase is logged.
//
// Producer and topic settings this guarantee rests on (docs/real-kafka.md): acks=all and
// min.insync.replicas 2 of 3 replicas, so an acknowledged record survives the loss of its
// leader; a producer that retries partition errors without reordering a set's records.
//
// It starts its own cluster from the jars the real-Kafka harness fetched
// (DISTFEAT_TEST_KAFKA_LIB, which `make test-kafka` sets), and skips, saying so, without.
func TestRealKafkaFailover(t *testing.T) {
	t.Parallel() // mostly waiting on the downtime: `make test-kafka` runs it beside the other suites
	lib := os.Getenv(realkafka.EnvLib)
	if lib == "" {
		t.Skipf("%s not set: the failover test runs under `make test-kafka` (kafkarun), which fetches Kafka", realkafka.EnvLib)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	c, err := realkafka.Start(ctx, lib, realkafka.Options{Nodes: 3, Dir: t.TempDir(), HeapMB: 384})
	cancel()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	env := testbroker.ForCluster(t, c.Bootstrap(), 4) // replication factor 3 (the cluster's default), min ISR 2
	specPath, emb := writeSpec(t)
	const group = "failover"
	features, dlq := collectTopic(t, env.Brokers, env.Features), collectTopic(t, env.Brokers, env.DLQ)
	startWorkerProc(t, env, specPath, group)
	startWorkerProc(t, env, specPath, group)

	md := &kafka.Client{Addr: kafka.TCP(env.Brokers...), Transport: privateTransport(t), Timeout: 5 * time.Second}
	var all []schema.Batch
	phase := func(name string, seed uint64, kill func() *realkafka.Node) {
		sets := uniformSets(seed, name, 24, 200)
		all = append(all, sets...)
		records := interleavedRecords(sets, 50) // 4 records per set
		half := len(records) / 2
		produceRetrying(t, env, records[:half])
		var victim *realkafka.Node
		var killed time.Time
		if kill != nil {
			victim = kill()
			killed = time.Now()
			victim.Kill()
			elected := waitLeadersMoved(t, md, victim.ID, env.Points, env.Features)
			t.Logf("%s: node %d killed (SIGKILL, pid %d); new leaders elected after %s", name, victim.ID, victim.PID(), elected.Sub(killed).Round(time.Millisecond))
		}
		produceRetrying(t, env, records[half:])
		first, last := features.waitSets(t, sets)
		if victim != nil {
			t.Logf("%s: first window of the phase %s after the kill, all %d windows %s after it",
				name, first.Sub(killed).Round(time.Millisecond), len(sets), last.Sub(killed).Round(time.Millisecond))
			time.Sleep(time.Until(killed.Add(failoverDowntime)))
			if err := victim.Restart(); err != nil {
				t.Fatal(err)
			}
			back := time.Now()
			waitFullISR(t, c, md, env.Points, env.Features, env.DLQ)
			t.Logf("%s: node %d restarted; back in every ISR after %s", name, victim.ID, time.Since(back).Round(time.Millisecond))
		}
	}
	leaderOf := func(topic string) func() *realkafka.Node {
		return func() *realkafka.Node {
			return c.NodeByID(partitionLeader(t, md, topic, 0))
		}
	}
	phase("warmup", 61, nil)
	phase("input-leader", 62, leaderOf(env.Points))
	phase("output-leader", 63, leaderOf(env.Features))
	phase("coordinator", 64, func() *realkafka.Node {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		res, err := md.FindCoordinator(ctx, &kafka.FindCoordinatorRequest{Key: group, KeyType: kafka.CoordinatorKeyTypeConsumer})
		if err == nil {
			err = res.Error
		}
		if err != nil {
			t.Fatalf("find coordinator: %v", err)
		}
		return c.NodeByID(res.Coordinator.NodeID)
	})
	phase("after", 65, nil)

	got, dups := features.windows(t)
	t.Logf("%d windows delivered, %d duplicate deliveries (all byte-identical)", len(got), dups)
	delivered := map[string]kafkaio.Record{}
	for set, m := range got {
		delivered[set] = kafkaio.Record{Value: m.Value}
	}
	checkDelivered(t, emb, all, delivered)
	if len(got) != len(all) {
		t.Errorf("%d windows delivered, want %d", len(got), len(all))
	}
	if n := len(dlq.snapshot()); n != 0 {
		t.Errorf("%d dead letters, want none", n)
	}
}

// produceRetrying writes batches (chunks of sets, in order) as JSON records with acks=all,
// one round at a time (at most one record of a set per round, so a retried record cannot
// overtake the next chunk of its set), retrying the records that failed. kafka.Writer does
// not retry partition errors (NOT_LEADER_OR_FOLLOWER after an election) itself.
func produceRetrying(t *testing.T, env testbroker.Env, batches []schema.Batch) {
	t.Helper()
	w := &kafka.Writer{Addr: kafka.TCP(env.Brokers...), Topic: env.Points, Balancer: &kafka.Murmur2Balancer{Consistent: true},
		RequiredAcks: kafka.RequireAll, BatchTimeout: time.Millisecond, Transport: privateTransport(t)}
	defer w.Close()
	seen := map[string]bool{}
	var round []kafka.Message
	flush := func() {
		deadline := time.Now().Add(testbroker.StallTimeout)
		for len(round) > 0 {
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			err := w.WriteMessages(ctx, round...)
			cancel()
			if err == nil {
				break
			}
			var werrs kafka.WriteErrors
			if errors.As(err, &werrs) {
				var again []kafka.Message
				for i, e := range werrs {
					if e != nil {
						again = append(again, round[i])
					}
				}
				round = again
			}
			if time.Now().After(deadline) {
				t.Fatalf("produce: %d records not written for %s: %v", len(round), testbroker.StallTimeout, err)
			}
			time.Sleep(200 * time.Millisecond)
		}
		round, seen = nil, map[string]bool{}
	}
	for _, b := range batches {
		if seen[b.Set] {
			flush()
		}
		v, err := schema.EncodeJSON(b)
		if err != nil {
			t.Fatal(err)
		}
		round = append(round, kafka.Message{Key: []byte(b.Set), Value: v})
		seen[b.Set] = true
	}
	flush()
}

// partitionLeader is the node ID leading topic's partition p.
func partitionLeader(t *testing.T, cl *kafka.Client, topic string, p int) int {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	res, err := cl.Metadata(ctx, &kafka.MetadataRequest{Topics: []string{topic}})
	if err != nil || len(res.Topics) != 1 {
		t.Fatalf("metadata %s: %v", topic, err)
	}
	for _, part := range res.Topics[0].Partitions {
		if part.ID == p {
			return part.Leader.ID
		}
	}
	t.Fatalf("%s has no partition %d", topic, p)
	return -1
}

// waitLeadersMoved waits until no partition of topics is led by node id (or leaderless) and
// returns when that was seen.
func waitLeadersMoved(t *testing.T, cl *kafka.Client, id int, topics ...string) time.Time {
	t.Helper()
	waitMetadata(t, cl, topics, fmt.Sprintf("new leaders (not node %d)", id), func(p kafka.Partition) bool {
		return p.Leader.ID >= 0 && p.Leader.ID != id
	})
	return time.Now()
}

// waitFullISR waits until every partition of topics has every node of c in its ISR.
func waitFullISR(t *testing.T, c *realkafka.Cluster, cl *kafka.Client, topics ...string) {
	t.Helper()
	waitMetadata(t, cl, topics, "full ISRs", func(p kafka.Partition) bool { return len(p.Isr) == len(c.Nodes) })
}

// waitMetadata polls metadata of topics until ok holds for every partition.
func waitMetadata(t *testing.T, cl *kafka.Client, topics []string, what string, ok func(kafka.Partition) bool) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		res, err := cl.Metadata(ctx, &kafka.MetadataRequest{Topics: topics})
		cancel()
		good := err == nil && len(res.Topics) == len(topics)
		for _, tp := range topicsOf(res) {
			for _, p := range tp.Partitions {
				good = good && ok(p)
			}
		}
		if good {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("no %s after 2 minutes (last error %v)", what, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func topicsOf(res *kafka.MetadataResponse) []kafka.Topic {
	if res == nil {
		return nil
	}
	return res.Topics
}

// topicCollector reads every partition of a topic from the beginning, carrying on through
// broker failures (a reader's error is retried, not the end), and notes when each record
// arrived.
type topicCollector struct {
	mu   sync.Mutex
	msgs []kafka.Message
	at   []time.Time
}

func collectTopic(t *testing.T, brokers []string, topic string) *topicCollector {
	t.Helper()
	cl := &kafka.Client{Addr: kafka.TCP(brokers...), Transport: privateTransport(t), Timeout: 5 * time.Second}
	ctx, cancel := context.WithCancel(context.Background())
	res, err := cl.Metadata(ctx, &kafka.MetadataRequest{Topics: []string{topic}})
	if err != nil || len(res.Topics) != 1 {
		cancel()
		t.Fatalf("metadata %s: %v", topic, err)
	}
	c := &topicCollector{}
	var wg sync.WaitGroup
	for _, p := range res.Topics[0].Partitions {
		r := kafka.NewReader(kafka.ReaderConfig{Brokers: brokers, Topic: topic, Partition: p.ID, MinBytes: 1,
			MaxBytes: testbroker.ReaderMaxBytes, MaxWait: testbroker.ReaderMaxWait})
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer r.Close()
			for {
				m, err := r.ReadMessage(ctx)
				if ctx.Err() != nil {
					return
				}
				if err != nil {
					time.Sleep(200 * time.Millisecond)
					continue
				}
				c.mu.Lock()
				c.msgs, c.at = append(c.msgs, m), append(c.at, time.Now())
				c.mu.Unlock()
			}
		}()
	}
	t.Cleanup(func() { cancel(); wg.Wait() })
	return c
}

func (c *topicCollector) snapshot() []kafka.Message {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]kafka.Message(nil), c.msgs...)
}

// waitSets waits until every set in sets has a window, failing after StallTimeout without a
// new one, and returns when the first and the last of them arrived.
func (c *topicCollector) waitSets(t *testing.T, sets []schema.Batch) (first, last time.Time) {
	t.Helper()
	want := map[string]bool{}
	for _, s := range sets {
		want[s.Set] = true
	}
	seen, moved := 0, time.Now()
	for {
		c.mu.Lock()
		have := map[string]bool{}
		first, last = time.Time{}, time.Time{}
		for i, m := range c.msgs {
			if k := string(m.Key); want[k] && !have[k] {
				have[k] = true
				if first.IsZero() {
					first = c.at[i]
				}
				last = c.at[i]
			}
		}
		c.mu.Unlock()
		if len(have) == len(want) {
			return first, last
		}
		if len(have) != seen {
			seen, moved = len(have), time.Now()
		}
		if time.Since(moved) > testbroker.StallTimeout {
			t.Fatalf("%d of %d windows, none new for %s", len(have), len(want), testbroker.StallTimeout)
		}
		time.Sleep(25 * time.Millisecond)
	}
}

// windows is the distinct windows delivered, by set, failing on a set delivered twice with
// different bytes; and the number of duplicate deliveries.
func (c *topicCollector) windows(t *testing.T) (map[string]kafka.Message, int) {
	t.Helper()
	out, dups := map[string]kafka.Message{}, 0
	for _, m := range c.snapshot() {
		id := string(m.Key)
		if prev, ok := out[id]; ok {
			dups++
			if string(prev.Value) != string(m.Value) {
				t.Errorf("set %s delivered twice with different bytes", id)
			}
			continue
		}
		out[id] = m
	}
	return out, dups
}
