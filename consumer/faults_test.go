package consumer

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/segmentio/kafka-go"

	"github.com/distfeat/distfeat/internal/testbroker"
	"github.com/distfeat/distfeat/processor"
	"github.com/distfeat/distfeat/schema"
	"github.com/distfeat/distfeat/window"
)

// These tests need the embedded broker (they stop, restart and fault it), so they skip when
// the suite runs against a real cluster.
func skipOnRealCluster(t *testing.T) {
	t.Helper()
	if _, ok := os.LookupEnv(testbroker.EnvBrokers); ok {
		t.Skipf("%s is set: broker fault tests need the embedded broker", testbroker.EnvBrokers)
	}
}

// freeLoopbackAddr reserves a free loopback port and releases it, for a broker to be started
// there later. (Another process could take the port in between; on a test machine that is
// rare enough, and the failure would be a clear "address in use" from testbroker.Start.)
func freeLoopbackAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

// startBroker starts an embedded broker the test controls; it is closed at cleanup.
func startBroker(t *testing.T, opts testbroker.Options) *testbroker.Broker {
	t.Helper()
	ctx, cancel := testContext(30 * time.Second)
	defer cancel()
	b, err := testbroker.Start(ctx, opts)
	if err != nil {
		t.Fatalf("start broker: %v", err)
	}
	t.Cleanup(b.Close)
	return b
}

func defaultTopics(addr string) testbroker.Env {
	return testbroker.Env{Brokers: []string{addr}, Points: testbroker.TopicPoints, Features: testbroker.TopicFeatures, DLQ: testbroker.TopicDLQ}
}

// logCounter counts the worker's log records by message (Info and above), passing them on.
type logCounter struct {
	next slog.Handler
	mu   *sync.Mutex
	n    map[string]int
	last map[string]string // message → attributes of its last occurrence
}

func newLogCounter(next slog.Handler) *logCounter {
	return &logCounter{next: next, mu: &sync.Mutex{}, n: map[string]int{}, last: map[string]string{}}
}

func (l *logCounter) Enabled(ctx context.Context, lv slog.Level) bool {
	return lv >= slog.LevelInfo || l.next.Enabled(ctx, lv)
}

func (l *logCounter) Handle(ctx context.Context, r slog.Record) error {
	if r.Level >= slog.LevelInfo {
		var attrs []string
		r.Attrs(func(a slog.Attr) bool {
			attrs = append(attrs, a.String())
			return true
		})
		l.mu.Lock()
		l.n[r.Message]++
		l.last[r.Message] = strings.Join(attrs, " ")
		l.mu.Unlock()
	}
	if l.next.Enabled(ctx, r.Level) {
		return l.next.Handle(ctx, r)
	}
	return nil
}

func (l *logCounter) WithAttrs(as []slog.Attr) slog.Handler {
	return &logCounter{next: l.next.WithAttrs(as), mu: l.mu, n: l.n, last: l.last}
}

func (l *logCounter) WithGroup(g string) slog.Handler {
	return &logCounter{next: l.next.WithGroup(g), mu: l.mu, n: l.n, last: l.last}
}

func (l *logCounter) count(msg string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.n[msg]
}

// lastAttrs returns the attributes of msg's last occurrence.
func (l *logCounter) lastAttrs(msg string) string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.last[msg]
}

// committed reads the group's committed offsets of the input topic (-1: none).
func (h *harness) committed(group string) map[int]int64 {
	h.t.Helper()
	out := map[int]int64{}
	for p, c := range h.commits(group) {
		out[p] = c.CommittedOffset
	}
	return out
}

// commits reads the group's commits (offset and metadata) of the input topic.
func (h *harness) commits(group string) map[int]kafka.OffsetFetchPartition {
	h.t.Helper()
	ends := h.topicEnds(h.env.Points)
	var ids []int
	for p := range ends {
		ids = append(ids, p)
	}
	tr := &kafka.Transport{}
	defer tr.CloseIdleConnections()
	client := &kafka.Client{Addr: kafka.TCP(h.env.Brokers...), Transport: tr, Timeout: 10 * time.Second}
	ctx, cancel := testContext(15 * time.Second)
	defer cancel()
	resp, err := client.OffsetFetch(ctx, &kafka.OffsetFetchRequest{GroupID: group, Topics: map[string][]int{h.env.Points: ids}})
	if err != nil {
		h.t.Fatalf("offset fetch %s: %v", group, err)
	}
	out := map[int]kafka.OffsetFetchPartition{}
	for _, p := range resp.Topics[h.env.Points] {
		if p.Error != nil {
			h.t.Fatalf("offset fetch %s/%d: %v", group, p.Partition, p.Error)
		}
		out[p.Partition] = p
	}
	return out
}

// waitUntil polls cond every 20 ms until it holds. timeout is what the step takes on an idle
// machine with ample room; the wait itself is at least testbroker.StallTimeout, so that only a
// hang fails, not a slow or loaded machine.
func waitUntil(t *testing.T, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	timeout = max(timeout, testbroker.StallTimeout)
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s", timeout, what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// checkAllWindows waits until every set in want has its window and checks them: one window
// per set, the right n, features bit-identical to the offline embedding, and any duplicate
// delivery byte-identical (byWindow).
func (h *harness) checkAllWindows(t *testing.T, features *collector, timeout time.Duration, want []schema.Batch) {
	t.Helper()
	msgs := features.waitFor(t, timeout, fmt.Sprintf("%d windows", len(want)), func(m []kafka.Message) bool { return distinctWindows(m) >= len(want) })
	pts := map[string][]float64{}
	for _, b := range want {
		pts[b.Set] = b.Points
	}
	h.checkWindowsExact(t, windowsBySet(t, msgs), pts)
}

// blockOutput makes the broker fail every produce request to topic with a retriable
// NOT_ENOUGH_REPLICAS for each of its partitions while blocked is true, through a kfake
// control function (other topics, and every request once blocked is false, go through).
// It returns a counter of the requests it failed.
func blockOutput(b *testbroker.Broker, topic string, blocked *atomic.Bool) *atomic.Int64 {
	return failOutput(b, topic, blocked, kafka.NotEnoughReplicas)
}

// failOutput is blockOutput answering with the given Kafka error code.
func failOutput(b *testbroker.Broker, topic string, blocked *atomic.Bool, code kafka.Error) *atomic.Int64 {
	return b.FailProduce(topic, blocked, int16(code))
}

// TestBrokerDownAtStartup: a worker started while nothing listens at the broker address is
// not ready, does not exit and keeps retrying; once a broker starts there it joins, turns
// ready and delivers every window.
func TestBrokerDownAtStartup(t *testing.T) {
	t.Parallel() // each test has its own broker; most of their time is waiting
	skipOnRealCluster(t)
	addr := freeLoopbackAddr(t)
	h := newHarnessEnv(t, defaultTopics(addr), smallSpec)
	logs := newLogCounter(testLogger(t).Handler())
	rw := h.startLogged(h.config("down-at-start", window.Config{}), nil, slog.New(logs))

	// 1.5 s without a broker: the worker first checks that its topics exist, with a back-off
	// that starts at 200 ms and doubles, so ≥ 2 failed attempts are logged by then (3–4 in
	// practice).
	const retrying = "cannot check the topics yet, retrying"
	deadline := time.Now().Add(1500 * time.Millisecond)
	for time.Now().Before(deadline) {
		if rw.w.Ready() {
			t.Fatal("Ready() is true with no broker listening")
		}
		select {
		case err := <-rw.done:
			rw.done <- err // for the cleanup's shutdown
			t.Fatalf("worker Run returned while the broker was down: %v", err)
		default:
		}
		time.Sleep(50 * time.Millisecond)
	}
	if n := logs.count(retrying); n < 2 {
		t.Fatalf("%d retries logged in 1.5 s without a broker, want ≥ 2", n)
	}

	startBroker(t, testbroker.Options{Addr: addr, Partitions: 2})
	features := h.collect(h.env.Features)
	sets := randomSets(31, "up", 8, 40, 1_700_000_000_000)
	h.produce("json", 25, sets...)
	// The worker's back-off is ≤ 3.2 s at this point (200 ms doubling over ≤ 5 attempts);
	// 60 s leaves room for a slow -race run on 2 shared cores.
	h.checkAllWindows(t, features, 60*time.Second, sets)
	waitUntil(t, 10*time.Second, "Ready() after the broker started", rw.w.Ready)
	if n := testutilCounter(rw.metrics.Rebalances); n < 1 {
		t.Errorf("rebalances_total = %v, want ≥ 1", n)
	}
	// Stop the worker while the broker runs: the broker was started after the worker, so
	// its cleanup would close it first, and a stop that cannot commit is not clean.
	rw.shutdown(t)
}

// TestBrokerRestartMidStream: the broker (with a data directory) is stopped and restarted on
// the same address while sets are half produced and windows are open. The worker rejoins,
// resumes from its committed offsets with its replay checkpoints (so the windows it had
// delivered are not emitted again), and every window is delivered exactly once with exactly
// its points — also those that straddle the restart.
func TestBrokerRestartMidStream(t *testing.T) {
	t.Parallel() // each test has its own broker; most of their time is waiting
	skipOnRealCluster(t)
	opts := testbroker.Options{Addr: freeLoopbackAddr(t), Partitions: 2, DataDir: t.TempDir()}
	b := startBroker(t, opts)
	h := newHarnessEnv(t, defaultTopics(opts.Addr), smallSpec)
	features := h.collect(h.env.Features)
	const group = "restart"
	logs := newLogCounter(testLogger(t).Handler())
	rw := h.startLogged(h.config(group, window.Config{}), nil, slog.New(logs))

	sets := randomSets(32, "r", 16, 60, 1_700_000_000_000)
	straddle, done := sets[:8], sets[8:]
	var firstHalves, secondHalves []schema.Batch
	for _, s := range straddle {
		parts := splitAt(s, 30)
		firstHalves, secondHalves = append(firstHalves, parts[0]), append(secondHalves, parts[1])
	}
	// The straddling windows open first, so the committed offsets stay at their first
	// records and the 8 windows closed after them lie above the commit: a replay from there
	// re-closes them, and only the checkpoint in the commit metadata keeps them from being
	// emitted twice.
	h.produce("arrow", 30, firstHalves...)
	h.produce("json", 20, done...)
	features.waitFor(t, 60*time.Second, "the first 8 windows", func(m []kafka.Message) bool { return distinctWindows(m) >= len(done) })
	ends := h.topicEnds(h.env.Points)
	waitUntil(t, 10*time.Second, "commits whose checkpoints cover every record", func() bool {
		for p, c := range h.commits(group) {
			m, err := processor.ParseMetadata(c.Metadata)
			if err != nil || m.ReplayUntil != ends[p] || c.CommittedOffset >= ends[p] {
				return false
			}
		}
		return true
	})

	b.Close()
	// Down for 1.5 s: several heartbeat intervals (200 ms), so the worker's generation fails
	// and it must rejoin; short enough to keep the test quick.
	time.Sleep(1500 * time.Millisecond)
	startBroker(t, opts)

	extra := randomSets(33, "after", 4, 30, 1_700_000_000_000)
	h.produce("json", 20, secondHalves...)
	h.produce("arrow", 20, extra...)
	all := append(append([]schema.Batch(nil), sets...), extra...)
	h.checkAllWindows(t, features, 60*time.Second, all)
	waitUntil(t, 10*time.Second, "Ready() after the restart", rw.w.Ready)
	const noCheckpoints = "offset fetch for checkpoints failed; replaying without suppression"
	if n := logs.count(noCheckpoints); n != 0 {
		t.Errorf("the checkpoints could not be read after the restart (%d times, last: %s): the replay was not suppressed", n, logs.lastAttrs(noCheckpoints))
	}
	// Every window once: the topic holds exactly one record per window.
	if msgs := features.waitDrained(h, h.env.Features, 30*time.Second); len(msgs) != len(all) {
		t.Errorf("%d feature records for %d windows: windows delivered before the restart were emitted again", len(msgs), len(all))
	}
	// Stop the worker while the restarted broker runs (its cleanup would close it first).
	rw.shutdown(t)
}

// splitAt cuts b into its first n points (no End) and the rest (b's End).
func splitAt(b schema.Batch, n int) [2]schema.Batch {
	first, rest := b, b
	first.Points, first.N, first.End = b.Points[:2*n], n, false
	rest.Points, rest.N = b.Points[2*n:], b.N-n
	return [2]schema.Batch{first, rest}
}

// TestOutputBackPressure: the features topic refuses writes (retriable NOT_ENOUGH_REPLICAS)
// for 2.5 s while input keeps arriving. During the outage (a) the committed input offsets
// never pass the first offset of a window that is not delivered, (b) the worker stops
// reading (its in-flight output is bounded) while the input's end offsets keep growing, and
// (c) once the topic accepts writes again every window is delivered exactly as computed,
// produce_errors_total > 0 and the commits catch up.
func TestOutputBackPressure(t *testing.T) {
	t.Parallel() // each test has its own broker; most of their time is waiting
	skipOnRealCluster(t)
	b := startBroker(t, testbroker.Options{Partitions: 2})
	h := newHarnessEnv(t, defaultTopics(b.Addrs()[0]), smallSpec)
	features := h.collect(h.env.Features)
	const group = "backpressure"
	cfg := h.config(group, window.Config{})
	// One message per output batch: every window is its own batch, so the pipeline's
	// MaxInFlight batches are full after a handful of windows however fast records arrive.
	cfg.FlushMessages = 1
	rw := h.start(cfg, nil)
	okRecords := func() float64 { return testutilCounter(rw.metrics.Records.WithLabelValues("ok")) }

	// Before: 6 complete sets, then the first half of set "span", whose window stays open
	// across the outage.
	before := randomSets(41, "a", 6, 20, 1)
	h.produce("json", 100, before...)
	features.waitFor(t, 30*time.Second, "6 windows", func(m []kafka.Message) bool { return distinctWindows(m) >= len(before) })
	endsA := h.topicEnds(h.env.Points)
	span := randomSets(42, "span", 1, 20, 1)[0]
	spanParts := splitAt(span, 10)
	h.produce("json", 100, spanParts[0])
	endsSpan := h.topicEnds(h.env.Points)
	// bound[p]: the first offset of the earliest window of p that is not delivered yet: the
	// span window's first record on its partition, else the partition's end (every window
	// below it is delivered; everything produced from now on is not).
	bound := map[int]int64{}
	spanPart := -1
	for p, end := range endsSpan {
		bound[p] = end
		if end != endsA[p] {
			spanPart, bound[p] = p, endsA[p]
		}
	}
	if spanPart < 0 {
		t.Fatal("could not locate the span record")
	}
	// The commit rule with an open window: the span partition commits exactly up to the
	// span's first record, the other up to its end.
	waitUntil(t, 10*time.Second, fmt.Sprintf("commits to reach %v", bound), func() bool {
		c := h.committed(group)
		for p, want := range bound {
			if c[p] != want {
				return false
			}
		}
		return true
	})

	var blocked atomic.Bool
	blocked.Store(true)
	failed := blockOutput(b, h.env.Features, &blocked)
	featuresBefore := len(features.snapshot())

	// During: 120 one-record sets at once, far more than a worker with its output blocked may
	// process (it stalls once MaxInFlight+2 one-window batches per partition are held: ~12
	// records). The test then waits for one of two outcomes: the worker processes
	// them all (no back-pressure: fail), or records_total{ok} stops moving for 2 s while
	// records wait. What is asserted is where the worker stops, not when: on a loaded
	// machine it only stops later, at the same bound.
	okBefore := okRecords()
	during := randomSets(100, "b", 120, 5, 1)
	h.produce("json", 100, during...)
	produced := float64(len(during))
	const quiet = 2 * time.Second
	commitsHeld := func() {
		t.Helper()
		for p, off := range h.committed(group) {
			if off > bound[p] {
				t.Fatalf("partition %d: committed offset %d passes %d, the first offset of an undelivered window (output blocked)", p, off, bound[p])
			}
		}
	}
	// The quiet period counts from the worker's last step once it has taken one (it must
	// process a few of the records before its output pipeline is full).
	last, moved := okBefore, time.Now()
	for last == okBefore || time.Since(moved) < quiet {
		commitsHeld()
		if n := okRecords(); n != last {
			last, moved = n, time.Now()
		}
		if last == okBefore && time.Since(moved) > testbroker.StallTimeout {
			t.Fatalf("the worker processed none of the %v records produced during the outage in %s", produced, testbroker.StallTimeout)
		}
		if last-okBefore >= produced {
			t.Fatalf("records_total{ok} grew by %v with the output blocked: every record produced during the outage was processed, no back-pressure", last-okBefore)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if n := len(features.snapshot()); n != featuresBefore {
		t.Fatalf("%d feature records written while the output was blocked: the fault did not take", n-featuresBefore)
	}
	if failed.Load() == 0 {
		t.Fatal("no produce request to the features topic was failed: the fault did not take")
	}
	// The lag gauge is refreshed from the broker every second even while the loop is
	// stalled, so lag alerts can fire during an output outage.
	gaugeLag := func() float64 {
		lag := 0.0
		for p := range bound {
			lag += testutilCounter(rw.metrics.ConsumerLag.WithLabelValues(partitionLabel(p)))
		}
		return lag
	}
	waitUntil(t, 10*time.Second, "distfeat_consumer_lag > 0 during the stall", func() bool { return gaugeLag() > 0 })
	// Still stopped, however long the wait took: the records produced during the outage are
	// not all processed and nothing was committed past the open windows.
	commitsHeld()
	processed := okRecords() - okBefore
	if processed >= produced {
		t.Fatalf("processed %v of %v records produced during the outage: no back-pressure", processed, produced)
	}
	// The bound itself: per partition, MaxInFlight batches in flight, one more waiting to be
	// submitted and the window in the processor's hand, one record (= one window) each.
	inFlight := 4 // the default, which h.config keeps
	if cfg.MaxInFlight > 0 {
		inFlight = cfg.MaxInFlight
	}
	if limit := float64(len(bound) * (inFlight + 2)); processed > limit {
		t.Errorf("processed %v records with the output blocked, more than the %v that %d partitions × (MaxInFlight %d + 2) one-window batches hold",
			processed, limit, len(bound), inFlight)
	}
	t.Logf("outage: %d produce requests failed, %v records produced, %v processed before the stall; lag %v, distfeat_consumer_lag %v",
		failed.Load(), produced, processed, produced-processed, gaugeLag())

	// (c) Recovery.
	blocked.Store(false)
	h.produce("json", 100, spanParts[1])
	want := append(append(append([]schema.Batch(nil), before...), during...), span)
	h.checkAllWindows(t, features, 60*time.Second, want)
	if n := testutilCounter(rw.metrics.ProduceErrors); n == 0 {
		t.Error("produce_errors_total = 0 after the outage")
	}
	endsAll := h.topicEnds(h.env.Points)
	waitUntil(t, 10*time.Second, "commits to reach the input's end after recovery", func() bool {
		c := h.committed(group)
		for p, end := range endsAll {
			if c[p] != end {
				return false
			}
		}
		return true
	})
}

// TestShutdownDuringOutputOutage: a worker told to stop while its output topic refuses
// writes (and its partition loops are blocked on back-pressure) still returns within its
// shutdown timeout, with ErrShutdownIncomplete (not nil, as a clean stop), without
// committing past the undelivered windows; a worker started in the same group after the
// outage delivers every window.
func TestShutdownDuringOutputOutage(t *testing.T) {
	t.Parallel() // each test has its own broker; most of their time is waiting
	skipOnRealCluster(t)
	b := startBroker(t, testbroker.Options{Partitions: 2})
	h := newHarnessEnv(t, defaultTopics(b.Addrs()[0]), smallSpec)
	features := h.collect(h.env.Features)
	const group = "stop-blocked"
	cfg := h.config(group, window.Config{})
	cfg.ShutdownTimeout = time.Second
	// One message per output batch: every window is its own batch, so MaxInFlight (4) is
	// reached after a handful of windows however fast the records arrive.
	cfg.FlushMessages = 1
	rw := h.start(cfg, nil)

	before := randomSets(51, "a", 4, 20, 1)
	h.produce("json", 100, before...)
	features.waitFor(t, 30*time.Second, "4 windows", func(m []kafka.Message) bool { return distinctWindows(m) >= len(before) })
	endsBefore := h.topicEnds(h.env.Points)
	waitUntil(t, 10*time.Second, "commits to reach the input's end", func() bool {
		c := h.committed(group)
		for p, end := range endsBefore {
			if c[p] != end {
				return false
			}
		}
		return true
	})

	var blocked atomic.Bool
	blocked.Store(true)
	failed := blockOutput(b, h.env.Features, &blocked)
	// 40 one-record sets: ~20 windows per partition, far more than MaxInFlight+2 batches, so
	// both partition loops end up blocked handing a batch to their full pipelines.
	during := randomSets(52, "b", 40, 5, 1)
	h.produce("json", 100, during...)
	total := float64(len(before) + len(during))
	okRecords := func() float64 { return testutilCounter(rw.metrics.Records.WithLabelValues("ok")) }
	waitUntil(t, 10*time.Second, "failed writes to the blocked output", func() bool { return failed.Load() > 0 })
	// Wait for the stall: records_total{ok} unchanged for 300 ms (60 flush intervals) short
	// of every record; all records processed means there is no back-pressure.
	last, since := okRecords(), time.Now()
	waitUntil(t, 10*time.Second, "the partition loops to stall on back-pressure", func() bool {
		if n := okRecords(); n != last {
			last, since = n, time.Now()
		}
		if last >= total {
			t.Fatalf("all %v records were processed with the output blocked: no back-pressure", total)
		}
		return time.Since(since) >= 300*time.Millisecond
	})

	stopped := time.Now()
	rw.stop()
	// ShutdownTimeout bounds the final flush; 5 s more covers leaving the group and a slow
	// -race run. Without a bound the worker would wait for the outage to end.
	select {
	case err := <-rw.done:
		rw.done <- nil // for the cleanup's shutdown
		// The stop could not deliver the blocked output: Run says so rather than
		// returning nil as after a clean stop.
		if !errors.Is(err, ErrShutdownIncomplete) || !strings.Contains(err.Error(), "not committed") {
			t.Fatalf("worker Run after a blocked shutdown = %v, want ErrShutdownIncomplete", err)
		}
		t.Logf("Run: %v", err)
	case <-time.After(cfg.ShutdownTimeout + 5*time.Second):
		blocked.Store(false) // let the worker finish so the cleanup does not hang as well
		t.Fatalf("worker did not stop within %s of its shutdown with the output blocked", cfg.ShutdownTimeout+5*time.Second)
	}
	t.Logf("stopped in %s with the output blocked", time.Since(stopped).Round(time.Millisecond))
	for p, off := range h.committed(group) {
		if off > endsBefore[p] {
			t.Errorf("partition %d: committed %d after the blocked shutdown, past %d, the first undelivered window", p, off, endsBefore[p])
		}
	}

	blocked.Store(false)
	h.start(cfg, nil)
	h.checkAllWindows(t, features, 60*time.Second, append(before, during...))
}
