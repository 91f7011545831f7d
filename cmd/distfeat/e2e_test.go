package main

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/segmentio/kafka-go"

	"github.com/distfeat/distfeat/embedding"
	"github.com/distfeat/distfeat/internal/testbroker"
	"github.com/distfeat/distfeat/kafkaio"
	"github.com/distfeat/distfeat/schema"
	"github.com/distfeat/distfeat/spec"
)

// binPath is the distfeat binary built once for the process-level tests; binDir holds it
// (and the dev build, devBinary).
var binPath, binDir string

// devBuild is the -tags dev binary, built on first use (devBinary).
var devBuild struct {
	once sync.Once
	path string
	err  error
	out  []byte
}

// devBinary returns the path of a -tags dev build of distfeat (with broker, demo, bench and
// soak), built once per test process.
func devBinary(t *testing.T) string {
	t.Helper()
	devBuild.once.Do(func() {
		devBuild.path = filepath.Join(binDir, "distfeat-dev")
		devBuild.out, devBuild.err = exec.Command("go", "build", "-tags=dev", "-o", devBuild.path, ".").CombinedOutput()
	})
	if devBuild.err != nil {
		t.Fatalf("building with -tags dev: %v\n%s", devBuild.err, devBuild.out)
	}
	return devBuild.path
}

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "distfeat-e2e")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	binDir, binPath = dir, filepath.Join(dir, "distfeat")
	// The production build (no dev tag, as deploy/Dockerfile builds it), even under
	// GOFLAGS=-tags=dev: the process tests run the worker as shipped.
	build := exec.Command("go", "build", "-tags=", "-o", binPath, ".")
	build.Stderr = os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "building distfeat for the end-to-end tests:", err)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// testSpec is small so that many windows finalise quickly; it still has every family.
const testSpec = `{"version":1,"seed":11,"dim":2,"bounds":{"lo":[0,0],"hi":[1,1]},
 "families":[{"name":"mmd","kind":"mmd","features":128,"bandwidth":0.1},
             {"name":"hdd_js","kind":"hdd","divergence":"js","features":128,"sigma":0.5,"grid":16,"basis":16,"lambdas":3},
             {"name":"l2","kind":"l2","basis":16}]}`

// workerProc is a `distfeat worker` child process.
type workerProc struct {
	cmd    *exec.Cmd
	stderr *bytes.Buffer
	mu     *sync.Mutex
}

func startWorkerProc(t *testing.T, env testbroker.Env, specPath, group string, extra ...string) *workerProc {
	t.Helper()
	cmd := exec.Command(binPath, "worker")
	cmd.Env = append(os.Environ(),
		"DISTFEAT_BROKERS="+strings.Join(env.Brokers, ","),
		"DISTFEAT_INPUT_TOPIC="+env.Points, "DISTFEAT_OUTPUT_TOPIC="+env.Features, "DISTFEAT_DLQ_TOPIC="+env.DLQ,
		"DISTFEAT_GROUP="+group, "DISTFEAT_SPEC="+specPath,
		"DISTFEAT_SESSION_TIMEOUT=1500ms", "DISTFEAT_COMMIT_INTERVAL=100ms",
		"DISTFEAT_METRICS_ADDR=127.0.0.1:0", "DISTFEAT_LOG_LEVEL=info",
	)
	cmd.Env = append(cmd.Env, extra...)
	var buf bytes.Buffer
	mu := &sync.Mutex{}
	cmd.Stderr = &lockedWriter{w: &buf, mu: mu}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &workerProc{cmd: cmd, stderr: &buf, mu: mu}
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			_ = cmd.Process.Signal(syscall.SIGTERM)
			done := make(chan struct{})
			go func() { _ = cmd.Wait(); close(done) }()
			select {
			case <-done:
			case <-time.After(30 * time.Second):
				_ = cmd.Process.Kill()
				t.Errorf("worker did not exit within 30s of SIGTERM")
			}
		}
		if t.Failed() {
			mu.Lock()
			t.Logf("worker %d log:\n%s", cmd.Process.Pid, tailLines(buf.String(), 40))
			mu.Unlock()
		}
	})
	return p
}

type lockedWriter struct {
	w  *bytes.Buffer
	mu *sync.Mutex
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

func tailLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

func writeSpec(t *testing.T) (string, *embedding.Embedder) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "spec.json")
	if err := os.WriteFile(path, []byte(testSpec), 0o644); err != nil {
		t.Fatal(err)
	}
	sp, err := spec.ParseSpec([]byte(testSpec))
	if err != nil {
		t.Fatal(err)
	}
	emb, err := embedding.New(sp)
	if err != nil {
		t.Fatal(err)
	}
	return path, emb
}

// interleavedRecords splits sets into chunks and orders the chunks round-robin across sets,
// so that many windows are open at any moment (the hard case for commits and replays).
func interleavedRecords(sets []schema.Batch, chunk int) []schema.Batch {
	var parts [][]schema.Batch
	for _, s := range sets {
		var p []schema.Batch
		for off := 0; off < s.N; off += chunk {
			end := min(off+chunk, s.N)
			p = append(p, schema.Batch{Set: s.Set, Points: s.Points[2*off : 2*end], N: end - off, EventTime: s.EventTime, End: end == s.N})
		}
		parts = append(parts, p)
	}
	var out []schema.Batch
	for i := 0; ; i++ {
		added := false
		for _, p := range parts {
			if i < len(p) {
				out = append(out, p[i])
				added = true
			}
		}
		if !added {
			return out
		}
	}
}

// privateTransport is a kafka.Transport of the test's own: kafka.DefaultTransport serves
// metadata from a process-wide cache, which on a real cluster shared by every test does not
// list the topics a test has just created.
func privateTransport(t *testing.T) *kafka.Transport {
	tr := &kafka.Transport{}
	t.Cleanup(tr.CloseIdleConnections)
	return tr
}

// produceBatches writes already-chunked batches as JSON records, in order.
func produceBatches(t *testing.T, env testbroker.Env, batches []schema.Batch) {
	t.Helper()
	w := &kafka.Writer{Addr: kafka.TCP(env.Brokers...), Topic: env.Points, Balancer: &kafka.Murmur2Balancer{Consistent: true},
		RequiredAcks: kafka.RequireAll, BatchTimeout: time.Millisecond, BatchSize: 200, Transport: privateTransport(t)}
	defer w.Close()
	msgs := make([]kafka.Message, len(batches))
	for i, b := range batches {
		v, err := schema.EncodeJSON(b)
		if err != nil {
			t.Fatal(err)
		}
		msgs[i] = kafka.Message{Key: []byte(b.Set), Value: v}
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := w.WriteMessages(ctx, msgs...); err != nil {
		t.Fatal(err)
	}
}

func uniformSets(seed uint64, prefix string, n, points int) []schema.Batch {
	rng := embedding.NewRNG(seed, "e2e")
	out := make([]schema.Batch, n)
	for i := range out {
		pts := make([]float64, 2*points)
		for j := range pts {
			// A set-specific shift makes the sets' distributions differ.
			pts[j] = math.Mod(rng.Float64()*0.7+float64(i%7)*0.04, 1)
		}
		out[i] = schema.Batch{Set: fmt.Sprintf("%s-%04d", prefix, i), Points: pts, N: points, EventTime: 1_700_000_000_000 + int64(i), End: true}
	}
	return out
}

// featureReader collects the feature topic in the background.
type featureReader struct {
	mu   sync.Mutex
	msgs []kafkaio.Record
}

func readFeatures(t *testing.T, env testbroker.Env) *featureReader {
	t.Helper()
	fr := &featureReader{}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = kafkaio.ConsumeFeatures(ctx, kafkaio.PlainCluster(env.Brokers), env.Features, true, 0, func(m kafkaio.Record, _ []schema.FeatureRecord, _ []string) bool {
			fr.mu.Lock()
			fr.msgs = append(fr.msgs, m)
			fr.mu.Unlock()
			return true
		}, func(m kafkaio.Record, err error) { t.Errorf("undecodable feature record: %v", err) })
	}()
	t.Cleanup(func() { cancel(); <-done })
	return fr
}

// windows returns the distinct windows delivered so far, failing on conflicting duplicates.
func (fr *featureReader) windows(t *testing.T) (map[string]kafkaio.Record, int) {
	t.Helper()
	fr.mu.Lock()
	defer fr.mu.Unlock()
	out := map[string]kafkaio.Record{}
	dups := 0
	for _, m := range fr.msgs {
		id := string(m.Key)
		if prev, ok := out[id]; ok {
			dups++
			if !bytes.Equal(prev.Value, m.Value) {
				t.Errorf("set %s delivered twice with different bytes", id)
			}
			continue
		}
		out[id] = m
	}
	return out, dups
}

// waitWindows waits until n distinct windows arrived. It waits on progress: it fails only
// when no new window arrived for stall, so a slow or loaded machine makes it wait longer,
// not fail.
func (fr *featureReader) waitWindows(t *testing.T, n int, stall time.Duration) map[string]kafkaio.Record {
	t.Helper()
	seen, moved := -1, time.Now()
	for {
		w, _ := fr.windows(t)
		if len(w) >= n {
			return w
		}
		if len(w) != seen {
			seen, moved = len(w), time.Now()
		}
		if time.Since(moved) > stall {
			t.Fatalf("%d of %d windows, none new for %s", len(w), n, stall)
		}
		time.Sleep(25 * time.Millisecond)
	}
}

// TestWorkerKilledMidStream runs two worker processes, kills one with SIGKILL (no clean
// shutdown, no commit, no leave) while many windows are open, and checks that after the
// group rebalances every window is delivered, none is lost, and any window delivered twice
// is byte-identical, and that vectors equal the offline embedding.
func TestWorkerKilledMidStream(t *testing.T) {
	env := testbroker.ForTest(t, 4)
	specPath, emb := writeSpec(t)
	fr := readFeatures(t, env)
	victim := startWorkerProc(t, env, specPath, "kill")
	startWorkerProc(t, env, specPath, "kill")

	sets := uniformSets(21, "k", 120, 400)
	records := interleavedRecords(sets, 50) // 8 records per set, 120 sets interleaved
	half := len(records) / 2
	produceBatches(t, env, records[:half])
	// Let both workers join and consume for a moment, then kill one without any chance to
	// clean up. The first half holds no set's end record, so all 120 windows are open.
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if err := testbroker.WaitGroupMembers(ctx, env.Brokers, "kill", 2); err != nil {
		t.Fatal(err)
	}
	time.Sleep(500 * time.Millisecond)
	if err := victim.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = victim.cmd.Wait()
	produceBatches(t, env, records[half:])

	fr.waitWindows(t, len(sets), 120*time.Second)
	time.Sleep(300 * time.Millisecond) // let late duplicates arrive so they are compared too
	got, dups := fr.windows(t)
	t.Logf("%d windows delivered, %d duplicate deliveries (all byte-identical)", len(got), dups)
	checkDelivered(t, emb, sets, got)
}

// TestWorkerSIGTERM: SIGTERM makes the worker flush, commit and exit 0; a successor in the
// same group re-emits nothing.
func TestWorkerSIGTERM(t *testing.T) {
	env := testbroker.ForTest(t, 2)
	specPath, _ := writeSpec(t)
	fr := readFeatures(t, env)
	w := startWorkerProc(t, env, specPath, "term")
	sets := uniformSets(22, "t", 20, 100)
	produceBatches(t, env, interleavedRecords(sets, 40))
	fr.waitWindows(t, len(sets), 60*time.Second)
	start := time.Now()
	if err := w.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	err := w.cmd.Wait()
	if err != nil {
		t.Fatalf("worker exit after SIGTERM: %v", err)
	}
	t.Logf("worker exited 0 %s after SIGTERM", time.Since(start).Round(time.Millisecond))
	startWorkerProc(t, env, specPath, "term")
	more := uniformSets(23, "u", 5, 100)
	produceBatches(t, env, more)
	fr.waitWindows(t, len(sets)+len(more), 60*time.Second)
	time.Sleep(500 * time.Millisecond)
	if _, dups := fr.windows(t); dups != 0 {
		t.Errorf("%d windows re-emitted after a clean SIGTERM hand-over, want 0", dups)
	}
}

// TestHealthcheckCommand: `distfeat healthcheck` succeeds against a live worker (healthz and,
// once it has joined, readyz) and fails when nothing listens.
func TestHealthcheckCommand(t *testing.T) {
	env := testbroker.ForTest(t, 1)
	specPath, _ := writeSpec(t)
	port := freePort(t)
	startWorkerProc(t, env, specPath, "health", "DISTFEAT_METRICS_ADDR=127.0.0.1:"+port)
	deadline := time.Now().Add(30 * time.Second)
	for {
		out, err := exec.Command(binPath, "healthcheck", "--ready", "--addr", "127.0.0.1:"+port).CombinedOutput()
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("healthcheck --ready never succeeded: %v\n%s", err, out)
		}
		time.Sleep(100 * time.Millisecond)
	}
	if out, err := exec.Command(binPath, "healthcheck", "--addr", ":"+port).CombinedOutput(); err != nil {
		t.Errorf("healthcheck on the wildcard address form: %v\n%s", err, out)
	}
	dead := freePort(t)
	if out, err := exec.Command(binPath, "healthcheck", "--addr", "127.0.0.1:"+dead).CombinedOutput(); err == nil {
		t.Errorf("healthcheck succeeded with nothing listening:\n%s", out)
	}
}

// freePort returns a loopback port that was free a moment ago.
func freePort(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	return port
}

// TestWorkerKilledTimeWindows is the kill test for hopping event-time windows, whose replay
// relies on the watermark carried in the commit metadata: every window arrives with exactly
// the points whose event times fall in it (no partial copies, no late-data losses), and any
// duplicate delivery is byte-identical.
func TestWorkerKilledTimeWindows(t *testing.T) {
	env := testbroker.ForTest(t, 4)
	specPath, emb := writeSpec(t)
	fr := readFeatures(t, env)
	extra := []string{"DISTFEAT_WINDOW=time", "DISTFEAT_WINDOW_SIZE=2s", "DISTFEAT_WINDOW_HOP=1s", "DISTFEAT_IDLE_TIMEOUT=3s"}
	victim := startWorkerProc(t, env, specPath, "killtime", extra...)
	startWorkerProc(t, env, specPath, "killtime", extra...)

	// 24 sets; event time advances in lock-step across sets (200 ms per round, 3 points per
	// set per round), so no record is late. 60 rounds = 12 s of event time.
	const sets, rounds, per = 24, 60, 3
	const t0 = int64(1_700_000_000_000)
	rng := embedding.NewRNG(41, "killtime")
	type pointAt struct {
		t   int64
		pts []float64
	}
	bySet := map[string][]pointAt{}
	var records []schema.Batch
	for r := 0; r < rounds; r++ {
		ts := t0 + int64(r)*200
		for s := 0; s < sets; s++ {
			set := fmt.Sprintf("ts-%02d", s)
			pts := make([]float64, 2*per)
			for i := range pts {
				pts[i] = rng.Float64()
			}
			records = append(records, schema.Batch{Set: set, Points: pts, N: per, EventTime: ts})
			bySet[set] = append(bySet[set], pointAt{ts, pts})
		}
	}
	// Expected windows: [k·1s, k·1s+2s) for every k holding points.
	type wkey struct {
		set string
		k   int64
	}
	want := map[wkey][]float64{}
	for set, pas := range bySet {
		for _, pa := range pas {
			for k := pa.t/1000 - 1; k <= pa.t/1000; k++ {
				if pa.t >= k*1000 && pa.t < k*1000+2000 {
					want[wkey{set, k}] = append(want[wkey{set, k}], pa.pts...)
				}
			}
		}
	}
	half := len(records) / 2
	produceBatches(t, env, records[:half])
	// Kill only once every partition has a commit with a checkpoint, so that the replay
	// goes through the watermark checkpoint (not a replay from the beginning).
	waitCommitted(t, env, "killtime", 4, 60*time.Second)
	if err := victim.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = victim.cmd.Wait()
	produceBatches(t, env, records[half:])

	// The last windows close by the 3 s idle timeout once the stream ends.
	deadline := time.Now().Add(120 * time.Second)
	var got map[string]kafkaio.Record
	for {
		got = fr.allWindows(t)
		if len(got) >= len(want) || time.Now().After(deadline) {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	time.Sleep(300 * time.Millisecond)
	got = fr.allWindows(t)
	if len(got) != len(want) {
		t.Errorf("%d distinct windows delivered, want %d", len(got), len(want))
	}
	fr.mu.Lock()
	t.Logf("%d windows, %d deliveries (duplicates are byte-identical)", len(got), len(fr.msgs))
	fr.mu.Unlock()
	for _, m := range got {
		recs, _, err := schema.DecodeFeatures(m.Value)
		if err != nil {
			t.Fatal(err)
		}
		r := recs[0]
		k := r.WindowStart / 1000
		pts, ok := want[wkey{r.Set, k}]
		if !ok {
			t.Errorf("unexpected window %s [%d, %d)", r.Set, r.WindowStart, r.WindowEnd)
			continue
		}
		if r.N != int64(len(pts)/2) || r.WindowEnd != r.WindowStart+2000 || r.Seq != uint64(k) {
			t.Errorf("window %s/%d: n=%d [%d,%d) seq=%d, want n=%d", r.Set, k, r.N, r.WindowStart, r.WindowEnd, r.Seq, len(pts)/2)
			continue
		}
		u := make([]float64, len(pts))
		if _, err := emb.Normalize(u, pts); err != nil {
			t.Fatal(err)
		}
		wantVec := emb.Embed(u) // fixed-point sums: the order of points does not matter
		for c := range wantVec {
			for j := range wantVec[c] {
				if math.Float32bits(wantVec[c][j]) != math.Float32bits(r.Vectors[c][j]) {
					t.Fatalf("window %s/%d: vectors differ from the offline embedding of its points", r.Set, k)
				}
			}
		}
	}
}

// allWindows returns the distinct windows by (key, window-id), failing on conflicting
// duplicates.
func (fr *featureReader) allWindows(t *testing.T) map[string]kafkaio.Record {
	t.Helper()
	fr.mu.Lock()
	defer fr.mu.Unlock()
	out := map[string]kafkaio.Record{}
	for _, m := range fr.msgs {
		id := string(m.Key) + "/" + headerValue(m, "window-id")
		if prev, ok := out[id]; ok && !bytes.Equal(prev.Value, m.Value) {
			t.Errorf("window %s delivered twice with different bytes", id)
		}
		out[id] = m
	}
	return out
}

func headerValue(m kafkaio.Record, key string) string {
	for _, h := range m.Headers {
		if h.Key == key {
			return string(h.Value)
		}
	}
	return ""
}

// waitCommitted waits until the group has a committed offset with commit metadata on each
// of the topic's partitions.
func waitCommitted(t *testing.T, env testbroker.Env, group string, partitions int, timeout time.Duration) {
	t.Helper()
	client := &kafka.Client{Addr: kafka.TCP(env.Brokers...), Timeout: 5 * time.Second, Transport: privateTransport(t)}
	ids := make([]int, partitions)
	for i := range ids {
		ids[i] = i
	}
	deadline := time.Now().Add(timeout)
	for {
		resp, err := client.OffsetFetch(context.Background(), &kafka.OffsetFetchRequest{GroupID: group, Topics: map[string][]int{env.Points: ids}})
		done := 0
		if err == nil {
			for _, p := range resp.Topics[env.Points] {
				if p.Error == nil && p.CommittedOffset > 0 && p.Metadata != "" {
					done++
				}
			}
		}
		if done == partitions {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("only %d of %d partitions committed within %s (%v)", done, partitions, timeout, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// checkDelivered requires, for every set, its window in got with its exact n (no partial
// window emitted) and, when emb is not nil, the offline embedding's bytes.
func checkDelivered(t *testing.T, emb *embedding.Embedder, sets []schema.Batch, got map[string]kafkaio.Record) {
	t.Helper()
	for _, s := range sets {
		m, ok := got[s.Set]
		if !ok {
			t.Errorf("set %s lost", s.Set)
			continue
		}
		recs, _, err := schema.DecodeFeatures(m.Value)
		if err != nil {
			t.Fatal(err)
		}
		if recs[0].N != int64(s.N) {
			t.Errorf("set %s: n=%d, want %d (a partial window was emitted)", s.Set, recs[0].N, s.N)
			continue
		}
		if emb == nil {
			continue
		}
		u := make([]float64, len(s.Points))
		if _, err := emb.Normalize(u, s.Points); err != nil {
			t.Fatal(err)
		}
		want := emb.Embed(u)
		for c := range want {
			for j := range want[c] {
				if math.Float32bits(want[c][j]) != math.Float32bits(recs[0].Vectors[c][j]) {
					t.Fatalf("set %s: vectors differ from the offline embedding", s.Set)
				}
			}
		}
	}
}
