package consumer

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"math"
	"os"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/segmentio/kafka-go"

	"github.com/distfeat/distfeat/config"
	"github.com/distfeat/distfeat/embedding"
	"github.com/distfeat/distfeat/internal/metrics"
	"github.com/distfeat/distfeat/internal/testbroker"
	"github.com/distfeat/distfeat/kafkaio"
	"github.com/distfeat/distfeat/schema"
	"github.com/distfeat/distfeat/spec"
	"github.com/distfeat/distfeat/window"
)

// smallSpec keeps the integration tests fast: every family, small sizes.
const smallSpec = `{"version":1,"seed":7,"dim":2,"bounds":{"lo":[0,0],"hi":[1,1]},
 "families":[{"name":"mmd","kind":"mmd","features":64,"bandwidth":0.2},
             {"name":"hdd_js","kind":"hdd","divergence":"js","features":64,"sigma":0.5,"grid":16,"basis":10,"lambdas":3},
             {"name":"l2","kind":"l2","basis":10}]}`

// harness is one test's broker, spec and workers.
type harness struct {
	t   *testing.T
	env testbroker.Env
	emb *embedding.Embedder
	out *schema.Output
	// tr is the test's own clients' transport: kafka.DefaultTransport serves metadata from
	// a process-wide cache, which on a real cluster shared by every test does not list the
	// topics a test has just created.
	tr *kafka.Transport
}

func newHarness(t *testing.T, partitions int, specJSON string) *harness {
	t.Helper()
	return newHarnessEnv(t, testbroker.ForTest(t, partitions), specJSON)
}

// newHarnessEnv is newHarness on a broker the test manages itself (fault injection, restarts).
func newHarnessEnv(t *testing.T, env testbroker.Env, specJSON string) *harness {
	t.Helper()
	sp, err := spec.ParseSpec([]byte(specJSON))
	if err != nil {
		t.Fatalf("spec: %v", err)
	}
	emb, err := embedding.New(sp)
	if err != nil {
		t.Fatalf("embedder: %v", err)
	}
	tr := &kafka.Transport{}
	t.Cleanup(tr.CloseIdleConnections)
	return &harness{t: t, env: env, emb: emb, out: schema.NewOutput(sp, emb.Columns()), tr: tr}
}

// config returns a worker configuration with short timeouts suited to tests.
func (h *harness) config(group string, wc window.Config) Config {
	if wc.Mode == "" {
		wc = window.Config{Mode: "set", IdleTimeout: time.Minute, MaxOpen: 1000}
	}
	if wc.MaxOpen == 0 {
		wc.MaxOpen = 1000
	}
	// 2 s sessions keep the embedded broker's tests quick. A real Kafka in make test-kafka
	// shares the 2-core machine with the failover test's three-node cluster, and there
	// TestDeadLetters and TestScaleOut once stalled for a minute in one run (not reproduced
	// alone): a member starved of CPU for 2 s is dropped from the group and must rejoin.
	// 6 s is the session the cmd/distfeat worker tests use on the same cluster.
	session := 2 * time.Second
	if h.env.Real {
		session = 6 * time.Second
	}
	return Config{
		Topics:   config.Topics{Brokers: h.env.Brokers, InputTopic: h.env.Points, OutputTopic: h.env.Features, DLQTopic: h.env.DLQ, Group: group},
		Delivery: config.Delivery{CommitInterval: 100 * time.Millisecond, SessionTimeout: session},
		Window:   wc, HeartbeatInterval: session / 10, RebalanceTimeout: session,
		ShutdownTimeout: 10 * time.Second,
	}
}

// runningWorker is a worker under test.
type runningWorker struct {
	w       *Worker
	metrics *metrics.Metrics
	stop    context.CancelFunc
	done    chan error
	once    sync.Once
}

// start runs a worker until the test ends (or stop is called).
func (h *harness) start(cfg Config, clock window.Clock) *runningWorker {
	h.t.Helper()
	return h.startLogged(cfg, clock, testLogger(h.t))
}

// startLogged is start with the worker's logger given.
func (h *harness) startLogged(cfg Config, clock window.Clock, log *slog.Logger) *runningWorker {
	h.t.Helper()
	m := metrics.New(prometheus.NewRegistry(), "test")
	w, err := NewWorker(cfg, h.emb, h.out, m, log, clock)
	if err != nil {
		h.t.Fatalf("NewWorker: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	rw := &runningWorker{w: w, metrics: m, stop: cancel, done: make(chan error, 1)}
	go func() { rw.done <- w.Run(ctx) }()
	h.t.Cleanup(func() { rw.shutdown(h.t) })
	return rw
}

// shutdown stops the worker cleanly and waits for it.
func (rw *runningWorker) shutdown(t *testing.T) {
	t.Helper()
	rw.once.Do(func() {
		rw.stop()
		select {
		case err := <-rw.done:
			if err != nil {
				t.Errorf("worker Run: %v", err)
			}
		case <-time.After(30 * time.Second):
			t.Errorf("worker did not stop within 30s")
		}
	})
}

func testLogger(t *testing.T) *slog.Logger {
	if os.Getenv("DISTFEAT_TEST_LOG") != "" {
		return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	return slog.New(slog.NewTextHandler(io.Discard, nil))
}

// produce publishes batches in the given format, split into records of chunk points.
func (h *harness) produce(format string, chunk int, batches ...schema.Batch) {
	h.t.Helper()
	pw := kafkaio.NewPointWriter(kafkaio.WriterConfig{Brokers: h.env.Brokers, Topic: h.env.Points, Format: format, Dim: h.emb.Dim()})
	defer pw.Close()
	var parts []schema.Batch
	for _, b := range batches {
		parts = append(parts, kafkaio.Split(b, chunk)...)
	}
	ctx, cancel := context.WithTimeout(context.Background(), testbroker.StallTimeout)
	defer cancel()
	if err := pw.Write(ctx, parts...); err != nil {
		h.t.Fatalf("produce: %v", err)
	}
}

// produceRaw publishes records as given (for poison records).
func (h *harness) produceRaw(msgs ...kafka.Message) {
	h.t.Helper()
	w := &kafka.Writer{Addr: kafka.TCP(h.env.Brokers...), Topic: h.env.Points, Balancer: &kafka.Murmur2Balancer{Consistent: true},
		RequiredAcks: kafka.RequireAll, BatchTimeout: time.Millisecond, Transport: h.tr}
	defer w.Close()
	ctx, cancel := context.WithTimeout(context.Background(), testbroker.StallTimeout)
	defer cancel()
	if err := w.WriteMessages(ctx, msgs...); err != nil {
		h.t.Fatalf("produce raw: %v", err)
	}
}

// collector reads a topic (all partitions) from the beginning in the background.
type collector struct {
	mu   sync.Mutex
	msgs []kafka.Message
	cond *sync.Cond
}

func (h *harness) collect(topic string) *collector {
	h.t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	c := &collector{}
	c.cond = sync.NewCond(&c.mu)
	client := &kafka.Client{Addr: kafka.TCP(h.env.Brokers...), Transport: h.tr}
	md, err := client.Metadata(ctx, &kafka.MetadataRequest{Topics: []string{topic}})
	if err != nil || len(md.Topics) != 1 {
		h.t.Fatalf("metadata %s: %v", topic, err)
	}
	var wg sync.WaitGroup
	for _, p := range md.Topics[0].Partitions {
		r := kafka.NewReader(kafka.ReaderConfig{Brokers: h.env.Brokers, Topic: topic, Partition: p.ID, MinBytes: 1, MaxBytes: testbroker.ReaderMaxBytes, MaxWait: testbroker.ReaderMaxWait})
		if err := r.SetOffset(kafka.FirstOffset); err != nil {
			h.t.Fatal(err)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer r.Close()
			for {
				m, err := r.ReadMessage(ctx)
				if err != nil {
					if ctx.Err() != nil {
						return
					}
					// The reader reports connection errors (a broker restart in the fault
					// tests) and keeps retrying by itself.
					time.Sleep(50 * time.Millisecond)
					continue
				}
				c.mu.Lock()
				c.msgs = append(c.msgs, m)
				c.cond.Broadcast()
				c.mu.Unlock()
			}
		}()
	}
	h.t.Cleanup(func() { cancel(); wg.Wait() })
	return c
}

// waitFor blocks until pred holds over the collected messages. It waits on progress: it
// fails only when no message arrived for stall (at least testbroker.StallTimeout, whatever
// the caller passes), so a slow or loaded machine makes it wait longer, not fail.
func (c *collector) waitFor(t *testing.T, stall time.Duration, what string, pred func([]kafka.Message) bool) []kafka.Message {
	t.Helper()
	stall = max(stall, testbroker.StallTimeout)
	seen, moved := -1, time.Now()
	for {
		c.mu.Lock()
		msgs := append([]kafka.Message(nil), c.msgs...)
		c.mu.Unlock()
		if pred(msgs) {
			return msgs
		}
		if len(msgs) != seen {
			seen, moved = len(msgs), time.Now()
		}
		if time.Since(moved) > stall {
			t.Fatalf("no new message for %s while waiting for %s (have %d messages)", stall, what, len(msgs))
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// snapshot returns the messages collected so far.
func (c *collector) snapshot() []kafka.Message {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]kafka.Message(nil), c.msgs...)
}

// distinctKeys counts distinct (key, window-id) pairs.
func distinctWindows(msgs []kafka.Message) int {
	seen := map[string]bool{}
	for _, m := range msgs {
		seen[string(m.Key)+"\x00"+headerOf(m, schema.HeaderWindowID)] = true
	}
	return len(seen)
}

func headerOf(m kafka.Message, key string) string {
	for _, h := range m.Headers {
		if h.Key == key {
			return string(h.Value)
		}
	}
	return ""
}

// byWindow groups output messages by (key, window-id) and fails on any two deliveries of the
// same window with different bytes.
func byWindow(t *testing.T, msgs []kafka.Message) map[string]kafka.Message {
	t.Helper()
	out := map[string]kafka.Message{}
	for _, m := range msgs {
		id := string(m.Key) + "/" + headerOf(m, schema.HeaderWindowID)
		if prev, ok := out[id]; ok && string(prev.Value) != string(m.Value) {
			t.Errorf("window %s delivered twice with different bytes", id)
		}
		out[id] = m
	}
	return out
}

// sortedKeys returns map keys in order.
func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// testutilCounter reads a counter or gauge.
func testutilCounter(c prometheus.Collector) float64 { return testutil.ToFloat64(c) }

// testContext is a context bounded by d, for one client call in a test.
func testContext(d time.Duration) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), d)
}

// topicEnds returns the end offset (high watermark) of every partition of topic.
func (h *harness) topicEnds(topic string) map[int]int64 {
	h.t.Helper()
	tr := &kafka.Transport{}
	defer tr.CloseIdleConnections()
	client := &kafka.Client{Addr: kafka.TCP(h.env.Brokers...), Transport: tr, Timeout: 10 * time.Second}
	ctx, cancel := testContext(15 * time.Second)
	defer cancel()
	md, err := client.Metadata(ctx, &kafka.MetadataRequest{Topics: []string{topic}})
	if err != nil || len(md.Topics) != 1 {
		h.t.Fatalf("metadata %s: %v", topic, err)
	}
	var reqs []kafka.OffsetRequest
	for _, p := range md.Topics[0].Partitions {
		reqs = append(reqs, kafka.LastOffsetOf(p.ID))
	}
	resp, err := client.ListOffsets(ctx, &kafka.ListOffsetsRequest{Topics: map[string][]kafka.OffsetRequest{topic: reqs}})
	if err != nil {
		h.t.Fatalf("list offsets %s: %v", topic, err)
	}
	out := map[int]int64{}
	for _, p := range resp.Topics[topic] {
		if p.Error != nil {
			h.t.Fatalf("list offsets %s/%d: %v", topic, p.Partition, p.Error)
		}
		out[p.Partition] = p.LastOffset
	}
	return out
}

// waitDrained waits until the collector of topic (a fresh topic, offsets from 0) holds every
// record the topic holds now, and returns them: an exact view once the producers are done.
func (c *collector) waitDrained(h *harness, topic string, timeout time.Duration) []kafka.Message {
	h.t.Helper()
	var total int64
	for _, end := range h.topicEnds(topic) {
		total += end
	}
	return c.waitFor(h.t, timeout, fmt.Sprintf("all %d records of %s", total, topic), func(m []kafka.Message) bool { return int64(len(m)) >= total })
}

// waitGroupMembers waits until the consumer group is Stable with n members that all have
// partitions assigned.
func (h *harness) waitGroupMembers(group string, n int, timeout time.Duration) {
	h.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	if err := testbroker.WaitGroupMembers(ctx, h.env.Brokers, group, n); err != nil {
		h.t.Fatal(err)
	}
}

// decodedWindow is one delivered feature record.
type decodedWindow struct {
	rec schema.FeatureRecord
	msg kafka.Message
}

// windowsBySet decodes delivered feature records (deduplicated by window, duplicates checked
// byte-identical by byWindow) and groups them by set.
func windowsBySet(t *testing.T, msgs []kafka.Message) map[string][]decodedWindow {
	t.Helper()
	out := map[string][]decodedWindow{}
	for _, wm := range sortedWindowIDs(byWindow(t, msgs)) {
		recs, _, err := schema.DecodeFeatures(wm.msg.Value)
		if err != nil || len(recs) != 1 {
			t.Fatalf("window %s/%s: decode: %v (%d rows)", wm.msg.Key, headerOf(wm.msg, schema.HeaderWindowID), err, len(recs))
		}
		out[recs[0].Set] = append(out[recs[0].Set], decodedWindow{rec: recs[0], msg: wm.msg})
	}
	return out
}

// checkWindowsExact asserts that the delivered windows are exactly want (one per set), each
// with the right n and bit-identical to the offline embedding of its points: a poison record
// that leaked even one point into a window would change its features.
func (h *harness) checkWindowsExact(t *testing.T, got map[string][]decodedWindow, want map[string][]float64) {
	t.Helper()
	for _, set := range sortedKeys(got) {
		if _, ok := want[set]; !ok {
			t.Errorf("unexpected window(s) for set %.40q: %d", set, len(got[set]))
		}
	}
	for _, set := range sortedKeys(want) {
		ws := got[set]
		if len(ws) != 1 {
			t.Errorf("set %.40q: %d windows, want 1", set, len(ws))
			continue
		}
		pts := want[set]
		r := ws[0].rec
		if r.N != int64(len(pts)/2) {
			t.Errorf("set %.40q: n=%d, want %d", set, r.N, len(pts)/2)
			continue
		}
		if !h.sameAsOffline(t, r, pts) {
			t.Errorf("set %.40q: features differ from the offline embedding of its valid points: the window holds other points", set)
		}
	}
}

// sameAsOffline reports whether r's vectors are bit-identical to the offline embedding of pts.
func (h *harness) sameAsOffline(t *testing.T, r schema.FeatureRecord, pts []float64) bool {
	t.Helper()
	want := h.offline(t, schema.Batch{Points: pts, N: len(pts) / 2})
	if len(want) != len(r.Vectors) {
		return false
	}
	for c := range want {
		if len(want[c]) != len(r.Vectors[c]) {
			return false
		}
		for j := range want[c] {
			if math.Float32bits(want[c][j]) != math.Float32bits(r.Vectors[c][j]) {
				return false
			}
		}
	}
	return true
}
