package main

// distfeat soak: the reproducible commands for issue #4, items 4 (many keys) and 5 (soak with a
// mid-run rebalance). Both run `distfeat worker` child processes against the embedded broker,
// sample each worker's resident memory (/proc/<pid>/status) and Prometheus metrics every
// second, and check the emitted windows against the expected set at the end.

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/segmentio/kafka-go"

	"github.com/distfeat/distfeat/embedding"
	"github.com/distfeat/distfeat/internal/synth"
	"github.com/distfeat/distfeat/internal/testbroker"
	"github.com/distfeat/distfeat/producer"
	"github.com/distfeat/distfeat/schema"
)

// Output buffering of one partition loop, from consumer.Config's documented defaults
// (MaxInFlight 4 unacknowledged batches plus the pending one, FlushMessages 256 records
// each), and the window manager's free list of released sketches (min(MaxOpen, 256) per
// partition, window/manager.go). They enter the stated memory bound of --keys mode.
const (
	soakOutputBatches   = 4 + 1
	soakOutputBatchMsgs = 256
	soakFreeListCap     = 256
	// soakGCFactor: with GOGC=100 the Go heap may grow to twice the live heap before a
	// collection, and freed pages return to the OS lazily, so RSS can reach ~2× live.
	soakGCFactor = 2

	// soakGroup is the workers' consumer group.
	soakGroup = "distfeat-soak"
)

// soakOptions are the soak command's settings.
type soakOptions struct {
	workerBin  string
	workers    int
	partitions int
	specPath   string
	format     string
	chunk      int
	seed       uint64

	// set mode (issue #4 item 5)
	sets, points int
	interleave   int
	lead         int

	// --keys mode (issue #4 item 4)
	keys       int
	keyPoints  int
	keyRecords int

	maxOpen        int
	idleTimeout    time.Duration
	sessionTimeout time.Duration
	workerEnv      []string

	killAt  float64
	signal  string
	replace bool

	interval    time.Duration
	rows        int
	timelineCSV string
	settle      time.Duration
	timeout     time.Duration
	rssBaseline int // MiB
	verbose     bool
}

func (o *soakOptions) keysMode() bool { return o.keys > 0 }

func (o *soakOptions) totalPoints() int64 {
	if o.keysMode() {
		return int64(o.keys) * int64(o.keyPoints)
	}
	return int64(o.sets) * int64(o.points)
}

// runSoak is the `distfeat soak` command.
func runSoak(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	_, err := soakMain(ctx, args, stdout, stderr)
	return err
}

// soakMain parses the flags, runs the soak, prints the report and returns it, with an error
// when a check failed (the test asserts on the report too).
func soakMain(ctx context.Context, args []string, stdout, stderr io.Writer) (*soakReport, error) {
	fs := newFlagSet("soak", "", `Runs the embedded broker and `+"`distfeat worker`"+` child processes in one group, produces synthetic
sets progressively, causes a rebalance mid-run, samples each worker's RSS and metrics every
second and checks the emitted windows against the expected set. Exits non-zero on a mismatch.

  set mode (default):  --sets × --points, one window per set expected (issue #4 item 5)
  --keys N:            N set IDs with --key-points each, interleaved so that N windows would be
                       open at once; DISTFEAT_MAX_OPEN_WINDOWS evicts; every point must be emitted
                       exactly once, the evicted metric must be > 0 and each worker's peak RSS
                       (VmHWM) must stay under the printed bound (issue #4 item 4):
                         --rss-baseline + 2 (GOGC=100 headroom) × partitions ×
                           ((MAX_OPEN_WINDOWS + free list min(MAX_OPEN_WINDOWS, 256)) × sketch bytes
                            + 5 output batches × 256 feature records × record bytes)

Workers are started from --worker-bin with DISTFEAT_* set for the embedded broker; add or
override variables with --worker-env. Everything listens on 127.0.0.1 only.`, stderr)
	var o soakOptions
	self, _ := os.Executable()
	fs.StringVar(&o.workerBin, "worker-bin", self, "distfeat binary (`file`) to run the workers with")
	fs.IntVar(&o.workers, "workers", 2, "worker processes in the consumer group")
	fs.IntVar(&o.partitions, "partitions", 8, "partitions per topic")
	fs.StringVar(&o.specPath, "spec", envOr("SPEC", ""), "feature spec JSON `file` (DISTFEAT_SPEC; empty: the built-in default)")
	fs.StringVar(&o.format, "format", "arrow", "input record format (`json|arrow`)")
	fs.IntVar(&o.chunk, "chunk", 500, "set mode: points per input record")
	fs.Uint64Var(&o.seed, "seed", 1, "seed of the synthetic data")
	fs.IntVar(&o.sets, "sets", 4000, "set mode: synthetic sets (truncated Gaussian mixtures)")
	fs.IntVar(&o.points, "points", 2500, "set mode: points per set")
	fs.IntVar(&o.interleave, "interleave", 64, "set mode: sets whose records are interleaved round-robin, so that several windows per partition are open")
	fs.IntVar(&o.lead, "lead", 1_000_000, "set mode: produce at most this many points ahead of the points in received windows")
	fs.IntVar(&o.keys, "keys", 0, "many-keys mode: number of distinct set IDs (0: set mode)")
	fs.IntVar(&o.keyPoints, "key-points", 4, "--keys mode: points per set ID")
	fs.IntVar(&o.keyRecords, "key-records", 2, "--keys mode: records per set ID (all keys' first records, then all second records, …; the last has end=true)")
	fs.IntVar(&o.maxOpen, "max-open-windows", 1000, "DISTFEAT_MAX_OPEN_WINDOWS of the workers (per partition)")
	fs.DurationVar(&o.idleTimeout, "idle-timeout", time.Hour, "DISTFEAT_IDLE_TIMEOUT of the workers (long, so that only the documented eviction closes windows early)")
	fs.DurationVar(&o.sessionTimeout, "session-timeout", 3*time.Second, "DISTFEAT_SESSION_TIMEOUT of the workers (how long a killed worker keeps its partitions)")
	fs.Func("worker-env", "extra `KEY=VALUE` for the workers' environment (repeatable; wins over the soak's own settings)", func(s string) error {
		if !strings.Contains(s, "=") {
			return fmt.Errorf("%q: want KEY=VALUE", s)
		}
		o.workerEnv = append(o.workerEnv, s)
		return nil
	})
	fs.Float64Var(&o.killAt, "kill-at", 0.4, "stop worker w0 when the workers have processed this `fraction` of the points, and start a replacement (0: no rebalance; --keys mode defaults to 0)")
	fs.StringVar(&o.signal, "signal", "kill", "how to stop w0 (`kill|term`): kill (SIGKILL: no flush, no commit, no leave) or term (SIGTERM: clean hand-over)")
	fs.BoolVar(&o.replace, "replace", true, "start a replacement worker after stopping w0")
	fs.DurationVar(&o.interval, "interval", time.Second, "sampling interval")
	fs.IntVar(&o.rows, "rows", 30, "at most this many rows in the printed timeline (samples are merged)")
	fs.StringVar(&o.timelineCSV, "timeline", "", "also write every sample to this CSV `file`")
	fs.DurationVar(&o.settle, "settle", 2*time.Second, "wait this long after the last expected window for late duplicates before stopping the workers")
	fs.DurationVar(&o.timeout, "timeout", 45*time.Minute, "give up after this long")
	fs.IntVar(&o.rssBaseline, "rss-baseline", 256, "--keys mode: `MiB` added to the memory bound for the runtime, Kafka clients and buffers")
	fs.BoolVar(&o.verbose, "v", false, "copy the workers' logs to stderr")
	if err := parseArgs(fs, args); err != nil {
		return nil, err
	}
	killSet := false
	fs.Visit(func(f *flag.Flag) { killSet = killSet || f.Name == "kill-at" })
	if o.keysMode() && !killSet {
		o.killAt = 0
	}
	switch {
	case o.workerBin == "":
		return nil, errors.New("--worker-bin: cannot find the distfeat binary (os.Executable failed)")
	case o.workers < 1 || o.partitions < 1:
		return nil, errors.New("need --workers ≥ 1 and --partitions ≥ 1")
	case o.format != "json" && o.format != "arrow":
		return nil, fmt.Errorf("--format %q: want json or arrow", o.format)
	case o.killAt < 0 || o.killAt >= 1:
		return nil, fmt.Errorf("--kill-at %v: want a fraction in [0, 1)", o.killAt)
	case o.signal != "kill" && o.signal != "term":
		return nil, fmt.Errorf("--signal %q: want kill or term", o.signal)
	case o.killAt > 0 && o.workers < 2 && !o.replace:
		return nil, errors.New("--kill-at with one worker needs --replace")
	case o.maxOpen < 1:
		return nil, errors.New("--max-open-windows must be ≥ 1")
	case o.interval <= 0 || o.rows < 1:
		return nil, errors.New("need --interval > 0 and --rows ≥ 1")
	}
	if o.keysMode() {
		if o.keyRecords < 1 || o.keyPoints < o.keyRecords {
			return nil, errors.New("--keys mode needs --key-points ≥ --key-records ≥ 1")
		}
	} else if o.sets < 1 || o.points < 1 || o.chunk < 1 || o.interleave < 1 || o.lead < 1 {
		return nil, errors.New("need --sets, --points, --chunk, --interleave and --lead ≥ 1")
	}
	rep, err := soak(ctx, &o, stderr)
	if rep != nil {
		rep.print(stdout)
		if o.timelineCSV != "" {
			if werr := rep.writeCSV(o.timelineCSV); werr != nil {
				fmt.Fprintf(stderr, "soak: writing %s: %v\n", o.timelineCSV, werr)
			}
		}
	}
	if err != nil {
		return rep, err
	}
	if !rep.ok() {
		return rep, errors.New("check failed (see report)")
	}
	return rep, nil
}

// soakWorker is one `distfeat worker` child process.
type soakWorker struct {
	name string
	cmd  *exec.Cmd
	addr string // metrics listener
	logs *soakTail

	exited  chan struct{}
	exitErr error
	expect  bool // its exit was asked for (stop signal)

	// Sampled state; the last values survive the process.
	rss, hwm int64 // bytes
	metrics  map[string]float64
}

func (w *soakWorker) running() bool {
	select {
	case <-w.exited:
		return false
	default:
		return true
	}
}

// sampleProc refreshes RSS and peak RSS from /proc (no-op once the process is gone).
func (w *soakWorker) sampleProc() {
	if !w.running() {
		return
	}
	rss, hwm, err := procMemory(w.cmd.Process.Pid)
	if err != nil {
		return
	}
	w.rss = rss
	if hwm > w.hwm {
		w.hwm = hwm
	}
}

// soakSample is one row of the timeline.
type soakSample struct {
	t         time.Duration
	produced  int64 // points written to the input topic
	processed int64 // Σ distfeat_points_total over every worker process so far (incl. reprocessing)
	windows   int   // distinct windows received
	recvPts   int64 // Σ n over distinct windows received
	open      float64
	sketch    float64
	evicted   float64  // Σ over every worker process so far
	rss       []int64  // per worker slot; -1: not running
	note      []string // events since the previous sample
}

// soakWindow is one distinct (set, window-id) received.
type soakWindow struct {
	n   int64
	sum [32]byte
}

// soakReport is what the soak measured and checked.
type soakReport struct {
	o                  *soakOptions
	specID             string
	sketchBytes        int
	recordBytes        int
	start              time.Time
	produceElapsed     time.Duration
	elapsed            time.Duration // production start → last expected window
	produced, records  int64
	loadStart, loadEnd string

	workers []*soakWorker
	samples []soakSample

	rebalance string

	windows, deliveries, duplicates int
	expectedWindows                 int
	windowsPerKey                   [3]int // min, max, keys with > 1 window
	replayed                        float64
	emitted                         map[string]float64 // by reason, Σ over processes
	deadLetters                     int64
	selfHWM                         int64
	bound                           int64
	unbounded                       int64

	failures []string
}

func (r *soakReport) ok() bool { return len(r.failures) == 0 }

func (r *soakReport) fail(format string, args ...any) {
	r.failures = append(r.failures, fmt.Sprintf(format, args...))
}

// soak runs the whole thing.
func soak(parent context.Context, o *soakOptions, stderr io.Writer) (*soakReport, error) {
	spec, err := embedding.LoadSpec(o.specPath)
	if err != nil {
		return nil, err
	}
	emb, err := embedding.New(spec)
	if err != nil {
		return nil, err
	}
	rep := &soakReport{o: o, specID: spec.ID(), sketchBytes: emb.NewSketch().SizeBytes(), emitted: map[string]float64{}}
	rep.recordBytes = sampleRecordBytes(spec, emb)
	if o.keysMode() {
		perPartition := int64(o.maxOpen+min(o.maxOpen, soakFreeListCap))*int64(rep.sketchBytes) +
			soakOutputBatches*soakOutputBatchMsgs*int64(rep.recordBytes)
		rep.bound = int64(o.rssBaseline)<<20 + soakGCFactor*int64(o.partitions)*perPartition
		rep.unbounded = int64(o.keys) * int64(rep.sketchBytes)
		rep.expectedWindows = o.keys
	} else {
		rep.expectedWindows = o.sets
	}
	rep.loadStart = loadAvg()
	ctx, cancel := context.WithTimeout(parent, o.timeout)
	defer cancel()
	prog := newProgress(stderr, "soak")
	defer prog.done()
	rep.start = time.Now()

	b, err := testbroker.Start(ctx, testbroker.Options{Partitions: o.partitions})
	if err != nil {
		return nil, err
	}
	defer b.Close()
	brokers := b.Addrs()
	if err := soakSmallSegments(ctx, brokers); err != nil {
		fmt.Fprintf(stderr, "soak: %v (the soak process keeps every record in memory)\n", err)
	}

	// The checker: every feature record, from the beginning.
	col := newSoakCollector(o, rep)
	cctx, stopCollector := context.WithCancel(parent)
	collectorDone := make(chan error, 1)
	go func() {
		collectorDone <- consumeFeatures(cctx, plainConn(brokers), testbroker.TopicFeatures, true, 0, col.onRecord, col.onBad)
	}()
	defer func() { stopCollector(); <-collectorDone }()

	// The workers.
	exits := make(chan *soakWorker, 8)
	var logMu sync.Mutex
	startWorker := func() (*soakWorker, error) {
		w, err := startSoakWorker(o, brokers, len(rep.workers), exits, stderr, &logMu)
		if err != nil {
			return nil, err
		}
		rep.workers = append(rep.workers, w)
		return w, nil
	}
	defer func() {
		for _, w := range rep.workers {
			stopSoakWorker(w, syscall.SIGKILL, 0)
		}
	}()
	for i := 0; i < o.workers; i++ {
		if _, err := startWorker(); err != nil {
			return rep, err
		}
	}
	prog.update("waiting for %d workers to join", o.workers)
	for _, w := range rep.workers {
		rctx, rcancel := context.WithTimeout(ctx, time.Minute)
		err := soakWaitReady(rctx, w)
		rcancel()
		if err != nil {
			return rep, fmt.Errorf("worker %s: %w\n%s", w.name, err, w.logs.lastLines(20))
		}
	}

	// The producer.
	rep.start = time.Now()
	var prodMu sync.Mutex
	prodDone := make(chan error, 1)
	go func() {
		prodDone <- soakProduce(ctx, o, brokers, spec.Dim, col, func(records, points int64) {
			prodMu.Lock()
			rep.records, rep.produced = records, points
			prodMu.Unlock()
		})
	}()
	produced := func() int64 { prodMu.Lock(); defer prodMu.Unlock(); return rep.produced }
	prodRunning := true
	defer func() {
		if prodRunning {
			cancel()
			<-prodDone
		}
	}()

	total := o.totalPoints()
	killTick := time.NewTicker(100 * time.Millisecond)
	defer killTick.Stop()
	sampleTick := time.NewTicker(o.interval)
	defer sampleTick.Stop()
	client := &http.Client{Timeout: 2 * time.Second}
	adminTr := &kafka.Transport{DialTimeout: 5 * time.Second}
	defer adminTr.CloseIdleConnections()
	admin := &kafka.Client{Addr: kafka.TCP(brokers...), Transport: adminTr, Timeout: 5 * time.Second}
	killed := o.killAt == 0
	var processedBase float64 // Σ points_total of processes that have exited
	processed := func() float64 {
		s := processedBase
		for _, w := range rep.workers {
			if w.running() {
				s += w.metrics["distfeat_points_total"]
			}
		}
		return s
	}
	var notes []string
	sample := func() {
		s := soakSample{t: time.Since(rep.start), produced: produced(), note: notes}
		notes = nil
		var evicted float64
		for _, w := range rep.workers {
			if w.running() {
				w.sampleProc()
				if m, err := scrapeMetrics(ctx, client, w.addr); err == nil {
					w.metrics = m
				}
				s.rss = append(s.rss, w.rss)
				s.open += w.metrics["distfeat_windows_open"]
				s.sketch += w.metrics["distfeat_sketch_bytes"]
			} else {
				s.rss = append(s.rss, -1)
			}
			evicted += w.metrics[`distfeat_windows_emitted_total{reason="evicted"}`]
		}
		s.processed = int64(processed())
		s.evicted = evicted
		s.windows, s.recvPts = col.progress()
		rep.samples = append(rep.samples, s)
		col.trim(b, testbroker.TopicFeatures)
		trimConsumed(ctx, b, admin, o.partitions)
		prog.update("%d/%d windows, %s/%s points produced, RSS %s", s.windows, rep.expectedWindows,
			siCount(s.produced), siCount(total), rssList(s.rss))
	}
	note := func(format string, args ...any) {
		msg := fmt.Sprintf(format, args...)
		notes = append(notes, msg)
	}
	// retire folds an exited process's counters into the running totals.
	retire := func(w *soakWorker) { processedBase += w.metrics["distfeat_points_total"] }

	complete := col.done
	var doneAt time.Time
loop:
	for {
		select {
		case <-ctx.Done():
			if parent.Err() != nil {
				rep.fail("interrupted: %d of %d sets complete", col.completeCount(), rep.expectedWindows)
				return rep, nil // the deferred clean-up stops the workers
			}
			rep.fail("gave up after --timeout %s: %d of %d sets complete", o.timeout, col.completeCount(), rep.expectedWindows)
			break loop
		case err := <-prodDone:
			prodRunning = false
			rep.produceElapsed = time.Since(rep.start)
			if err != nil {
				return rep, fmt.Errorf("produce: %w", err)
			}
			note("all %s points produced", siCount(produced()))
		case w := <-exits:
			if w.expect {
				continue
			}
			retire(w)
			rep.fail("worker %s exited unexpectedly: %v\n%s", w.name, w.exitErr, w.logs.lastLines(20))
			break loop
		case <-complete:
			complete = nil
			doneAt = time.Now()
			rep.elapsed = doneAt.Sub(rep.start)
			note("last expected window received")
		case <-killTick.C:
			if !killed {
				for _, w := range rep.workers {
					if w.running() {
						if m, err := scrapeMetrics(ctx, client, w.addr); err == nil {
							w.metrics = m
						}
					}
				}
				if p := processed(); p >= o.killAt*float64(total) {
					killed = true
					victim := rep.workers[0]
					victim.sampleProc()
					if m, err := scrapeMetrics(ctx, client, victim.addr); err == nil {
						victim.metrics = m
					}
					sig := syscall.SIGKILL
					if o.signal == "term" {
						sig = syscall.SIGTERM
					}
					stopStart := time.Now()
					code := stopSoakWorker(victim, sig, 60*time.Second)
					retire(victim)
					how := fmt.Sprintf("SIGKILL %s (pid %d)", victim.name, victim.cmd.Process.Pid)
					if sig == syscall.SIGTERM {
						how = fmt.Sprintf("SIGTERM %s (pid %d): exit %s after %s", victim.name, victim.cmd.Process.Pid, code, time.Since(stopStart).Round(time.Millisecond))
						if code != "0" {
							rep.fail("%s did not exit 0 after SIGTERM: %s\n%s", victim.name, code, victim.logs.lastLines(20))
						}
					}
					if complete == nil {
						rep.fail("the rebalance point (--kill-at %.2f) was reached only after the last window: not a mid-run rebalance; use more points or a smaller --lead", o.killAt)
					}
					note("%s at %.0f%% processed", how, 100*p/float64(total))
					rep.rebalance = fmt.Sprintf("%s at t=%.1fs, %.1f%% of the points processed", how, time.Since(rep.start).Seconds(), 100*p/float64(total))
					if o.replace {
						w, err := startWorker()
						if err != nil {
							return rep, err
						}
						note("started %s (pid %d)", w.name, w.cmd.Process.Pid)
						rep.rebalance += fmt.Sprintf("; replacement %s started", w.name)
					}
				}
			}
		case <-sampleTick.C:
			sample()
			if complete == nil && !prodRunning && killed && time.Since(doneAt) >= o.settle {
				break loop
			}
		}
	}
	if n := len(rep.samples); n == 0 || time.Since(rep.start)-rep.samples[n-1].t > o.interval/2 || len(notes) > 0 {
		sample()
	}
	if !killed && rep.ok() {
		rep.fail("the run finished before the rebalance point (--kill-at %.2f); use more points or a smaller --lead", o.killAt)
	}

	// The final phase gets its own time limit, so that a run that timed out is still
	// stopped cleanly and checked (the report then lists what is missing).
	ctx, cancelFinal := context.WithTimeout(parent, 3*time.Minute)
	defer cancelFinal()

	// Final scrape, then a clean stop of every remaining worker.
	for _, w := range rep.workers {
		if w.running() {
			if m, err := scrapeMetrics(ctx, client, w.addr); err == nil {
				w.metrics = m
			}
		}
	}
	var gens []string
	for _, w := range rep.workers {
		if w.running() {
			gens = append(gens, fmt.Sprintf("%s %.0f", w.name, w.metrics["distfeat_rebalances_total"]))
		}
	}
	if rep.rebalance != "" {
		rep.rebalance += "; generations joined by the remaining workers: " + strings.Join(gens, ", ")
	}
	for _, w := range rep.workers {
		if w.running() {
			w.sampleProc()
			if code := stopSoakWorker(w, syscall.SIGTERM, 60*time.Second); code != "0" {
				rep.fail("worker %s did not exit 0 after SIGTERM: %s\n%s", w.name, code, w.logs.lastLines(20))
			}
		}
	}
	for _, w := range rep.workers {
		for k, v := range w.metrics {
			if reason, ok := strings.CutPrefix(k, `distfeat_windows_emitted_total{reason="`); ok {
				rep.emitted[strings.TrimSuffix(reason, `"}`)] += v
			}
		}
		rep.replayed += w.metrics[`distfeat_records_total{result="replayed"}`]
	}
	_, rep.selfHWM, _ = procMemory(os.Getpid())
	rep.loadEnd = loadAvg()

	// Read the feature topic to its end, so every delivery (also those from the final
	// flushes) is compared, then check.
	if end, err := topicEnd(ctx, brokers, testbroker.TopicFeatures); err != nil {
		rep.fail("feature topic end offsets: %v", err)
	} else if err := col.waitDeliveries(ctx, end, 60*time.Second); err != nil {
		rep.fail("%v", err)
	}
	stopCollector()
	if err := <-collectorDone; err != nil {
		rep.fail("reading features: %v", err)
	}
	collectorDone <- nil // for the deferred receive
	if n, err := topicEnd(ctx, brokers, testbroker.TopicDLQ); err != nil {
		rep.fail("dead-letter topic end offsets: %v", err)
	} else {
		rep.deadLetters = n
	}
	col.check()
	return rep, nil
}

// startSoakWorker starts `distfeat worker` slot as a child process with its metrics server on
// a free loopback port.
func startSoakWorker(o *soakOptions, brokers []string, slot int, exits chan<- *soakWorker, stderr io.Writer, logMu *sync.Mutex) (*soakWorker, error) {
	addr, err := freeLoopbackAddr()
	if err != nil {
		return nil, err
	}
	w := &soakWorker{name: fmt.Sprintf("w%d", slot), addr: addr, logs: &soakTail{max: 256 << 10}, exited: make(chan struct{})}
	cmd := exec.Command(o.workerBin, "worker")
	cmd.Env = append(os.Environ(),
		"DISTFEAT_BROKERS="+strings.Join(brokers, ","),
		"DISTFEAT_INPUT_TOPIC="+testbroker.TopicPoints, "DISTFEAT_OUTPUT_TOPIC="+testbroker.TopicFeatures,
		"DISTFEAT_DLQ_TOPIC="+testbroker.TopicDLQ, "DISTFEAT_GROUP="+soakGroup, "DISTFEAT_SPEC="+o.specPath,
		"DISTFEAT_WINDOW=set", "DISTFEAT_MAX_OPEN_WINDOWS="+strconv.Itoa(o.maxOpen),
		"DISTFEAT_IDLE_TIMEOUT="+o.idleTimeout.String(), "DISTFEAT_SESSION_TIMEOUT="+o.sessionTimeout.String(),
		"DISTFEAT_METRICS_ADDR="+addr, "DISTFEAT_LOG_LEVEL=info", "DISTFEAT_LOG_FORMAT=text",
	)
	cmd.Env = append(cmd.Env, o.workerEnv...) // later entries win
	var out io.Writer = w.logs
	if o.verbose {
		out = io.MultiWriter(w.logs, &soakPrefixWriter{prefix: w.name + " | ", w: stderr, mu: logMu})
	}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start worker %s (%s): %w", w.name, o.workerBin, err)
	}
	w.cmd = cmd
	go func() {
		w.exitErr = cmd.Wait()
		close(w.exited)
		select {
		case exits <- w:
		default:
		}
	}()
	return w, nil
}

// stopSoakWorker signals w and waits up to timeout for it to exit (then kills it). It returns
// the exit status: "0", an exit code, or the signal.
func stopSoakWorker(w *soakWorker, sig syscall.Signal, timeout time.Duration) string {
	if w.running() {
		w.expect = true
		_ = w.cmd.Process.Signal(sig)
		if timeout <= 0 {
			timeout = 10 * time.Second
		}
		select {
		case <-w.exited:
		case <-time.After(timeout):
			_ = w.cmd.Process.Kill()
			<-w.exited
			return fmt.Sprintf("no exit within %s (killed)", timeout)
		}
	}
	var ee *exec.ExitError
	switch {
	case w.exitErr == nil:
		return "0"
	case errors.As(w.exitErr, &ee):
		if st, ok := ee.Sys().(syscall.WaitStatus); ok && st.Signaled() {
			return "signal " + st.Signal().String()
		}
		return strconv.Itoa(ee.ExitCode())
	default:
		return w.exitErr.Error()
	}
}

// soakWaitReady polls the worker's /readyz until it is a member of a generation.
func soakWaitReady(ctx context.Context, w *soakWorker) error {
	client := &http.Client{Timeout: time.Second}
	for {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+w.addr+"/readyz", nil)
		if resp, err := client.Do(req); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		select {
		case <-ctx.Done():
			return errors.New("never became ready")
		case <-w.exited:
			return fmt.Errorf("exited before becoming ready: %v", w.exitErr)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// freeLoopbackAddr returns 127.0.0.1:<a port that was free a moment ago>.
func freeLoopbackAddr() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer ln.Close()
	return ln.Addr().String(), nil
}

// procMemory reads VmRSS and VmHWM (peak RSS) of a process, in bytes (Linux).
func procMemory(pid int) (rss, hwm int64, err error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, 0, err
	}
	for _, line := range strings.Split(string(b), "\n") {
		name, rest, ok := strings.Cut(line, ":")
		if !ok || (name != "VmRSS" && name != "VmHWM") {
			continue
		}
		f := strings.Fields(rest)
		if len(f) != 2 || f[1] != "kB" {
			continue
		}
		v, perr := strconv.ParseInt(f[0], 10, 64)
		if perr != nil {
			continue
		}
		if name == "VmRSS" {
			rss = v << 10
		} else {
			hwm = v << 10
		}
	}
	if rss == 0 && hwm == 0 {
		return 0, 0, fmt.Errorf("/proc/%d/status: no VmRSS/VmHWM", pid)
	}
	return rss, hwm, nil
}

// loadAvg is /proc/loadavg's 1, 5 and 15 minute load averages ("?" elsewhere).
func loadAvg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "?"
	}
	return strings.Join(f[:3], " ")
}

// scrapeMetrics fetches a worker's /metrics and returns the distfeat_ series by their
// exposition name (name plus labels, e.g. distfeat_windows_emitted_total{reason="evicted"}),
// plus the plain name for unlabelled series.
func scrapeMetrics(ctx context.Context, client *http.Client, addr string) (map[string]float64, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+addr+"/metrics", nil)
	if err != nil {
		return nil, err
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET /metrics: %s", resp.Status)
	}
	out := map[string]float64{}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, "distfeat_") {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		if i < 0 {
			continue
		}
		v, err := strconv.ParseFloat(line[i+1:], 64)
		if err != nil {
			continue
		}
		out[line[:i]] = v
	}
	return out, sc.Err()
}

// topicEnd is the number of records ever written to a topic: Σ over partitions of the high
// watermark (the topics start empty at offset 0; records already read may have been trimmed).
func topicEnd(ctx context.Context, brokers []string, topic string) (int64, error) {
	tr := &kafka.Transport{DialTimeout: 5 * time.Second}
	defer tr.CloseIdleConnections()
	cl := &kafka.Client{Addr: kafka.TCP(brokers...), Transport: tr, Timeout: 10 * time.Second}
	md, err := cl.Metadata(ctx, &kafka.MetadataRequest{Topics: []string{topic}})
	if err != nil {
		return 0, err
	}
	var reqs []kafka.OffsetRequest
	for _, t := range md.Topics {
		if t.Name == topic {
			for _, p := range t.Partitions {
				reqs = append(reqs, kafka.LastOffsetOf(p.ID))
			}
		}
	}
	if len(reqs) == 0 {
		return 0, fmt.Errorf("topic %q not found", topic)
	}
	res, err := cl.ListOffsets(ctx, &kafka.ListOffsetsRequest{Topics: map[string][]kafka.OffsetRequest{topic: reqs}})
	if err != nil {
		return 0, err
	}
	var n int64
	for _, po := range res.Topics[topic] {
		if po.Error != nil {
			return 0, fmt.Errorf("partition %d: %w", po.Partition, po.Error)
		}
		n += po.LastOffset
	}
	return n, nil
}

// sampleRecordBytes is the size of one encoded feature record of the spec (value plus a
// generous allowance for key and headers).
func sampleRecordBytes(spec *embedding.Spec, emb *embedding.Embedder) int {
	u := make([]float64, spec.Dim)
	for i := range u {
		u[i] = 0.5
	}
	rec := schema.FeatureRecord{Set: "key-000000", Seq: 1 << 40, N: 4, SpecID: spec.ID(), Vectors: emb.Embed(u)}
	b, err := schema.NewOutput(spec, emb.Columns()).Encode(rec)
	if err != nil {
		return 0
	}
	return len(b) + 256
}

// soakKeyID is the set ID of key k in --keys mode.
func soakKeyID(k int) string { return fmt.Sprintf("key-%06d", k) }

// soakProduce writes the input: in set mode synthetic mixtures, a group of --interleave sets
// at a time with their records interleaved, never more than --lead points ahead of the
// points in received windows; in --keys mode every key's first record, then every key's
// second record, and so on, as fast as the broker takes them.
func soakProduce(ctx context.Context, o *soakOptions, brokers []string, dim int, col *soakCollector, report func(records, points int64)) error {
	pw := producer.NewPointWriter(producer.WriterConfig{Brokers: brokers, Topic: testbroker.TopicPoints, Format: o.format, Dim: dim})
	defer pw.Close()
	t0 := time.Now().UnixMilli()
	var records, points int64
	write := func(bs []schema.Batch) error {
		for len(bs) > 0 {
			n := min(len(bs), 512)
			if err := pw.Write(ctx, bs[:n]...); err != nil {
				return err
			}
			for _, b := range bs[:n] {
				records++
				points += int64(b.N)
			}
			report(records, points)
			bs = bs[n:]
		}
		return nil
	}
	if o.keysMode() {
		rng := embedding.NewRNG(o.seed, "soak/keys")
		base, extra := o.keyPoints/o.keyRecords, o.keyPoints%o.keyRecords
		buf := make([]schema.Batch, 0, 512)
		for r := 0; r < o.keyRecords; r++ {
			n := base
			if r < extra {
				n++
			}
			for k := 0; k < o.keys; k++ {
				pts := make([]float64, n*dim)
				for i := range pts {
					pts[i] = rng.Float64()
				}
				buf = append(buf, schema.Batch{Set: soakKeyID(k), Points: pts, N: n, EventTime: t0 + int64(k), End: r == o.keyRecords-1})
				if len(buf) == cap(buf) {
					if err := write(buf); err != nil {
						return err
					}
					buf = buf[:0]
				}
			}
		}
		return write(buf)
	}
	for g := 0; g < o.sets; g += o.interleave {
		for {
			if _, recv := col.progress(); points-recv < int64(o.lead) {
				break
			}
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(20 * time.Millisecond):
			}
		}
		var parts [][]schema.Batch
		for i := g; i < min(g+o.interleave, o.sets); i++ {
			s := synth.SetAt(o.seed, i, o.points, dim)
			b := schema.Batch{Set: s.ID, Points: s.Points, N: o.points, EventTime: t0 + int64(i), End: true}
			parts = append(parts, producer.Split(b, o.chunk))
		}
		var batch []schema.Batch
		for r := 0; ; r++ {
			added := false
			for _, p := range parts {
				if r < len(p) {
					batch = append(batch, p[r])
					added = true
				}
			}
			if !added {
				break
			}
		}
		if err := write(batch); err != nil {
			return err
		}
	}
	return nil
}

// soakCollector receives every feature record and keeps, per distinct (set, window-id), the
// window's n and a hash of its bytes.
type soakCollector struct {
	o    *soakOptions
	rep  *soakReport
	want map[string]int64 // expected set → points
	done chan struct{}

	mu         sync.Mutex
	wins       map[string]soakWindow // set + "\x00" + window-id
	perKey     map[string]*soakKeyAcc
	complete   int
	windows    int
	recvPts    int64
	deliveries int64
	dups       int
	readTo     map[int]int64 // partition → next offset to read
	conflicts  []string
	bad        []string
}

type soakKeyAcc struct {
	n       int64
	windows int
}

func newSoakCollector(o *soakOptions, rep *soakReport) *soakCollector {
	c := &soakCollector{o: o, rep: rep, want: map[string]int64{}, done: make(chan struct{}),
		wins: map[string]soakWindow{}, perKey: map[string]*soakKeyAcc{}, readTo: map[int]int64{}}
	if o.keysMode() {
		for k := 0; k < o.keys; k++ {
			c.want[soakKeyID(k)] = int64(o.keyPoints)
		}
	} else {
		for i := 0; i < o.sets; i++ {
			c.want[synth.SetID(i)] = int64(o.points)
		}
	}
	return c
}

func (c *soakCollector) onRecord(m kafka.Message, recs []schema.FeatureRecord, _ []string) bool {
	key := string(m.Key)
	wid := ""
	for _, h := range m.Headers {
		if h.Key == "window-id" {
			wid = string(h.Value)
		}
	}
	sum := sha256.Sum256(m.Value)
	c.mu.Lock()
	defer c.mu.Unlock()
	c.deliveries++
	c.readTo[m.Partition] = max(c.readTo[m.Partition], m.Offset+1)
	id := key + "\x00" + wid
	if prev, ok := c.wins[id]; ok {
		c.dups++
		if prev.sum != sum {
			c.conflicts = append(c.conflicts, fmt.Sprintf("set %s window %s delivered twice with different bytes", key, wid))
		}
		return true
	}
	if len(recs) != 1 || recs[0].Set != key || strconv.FormatUint(recs[0].Seq, 10) != wid {
		c.bad = append(c.bad, fmt.Sprintf("partition %d offset %d: want one row with set = key %q and seq = window-id %q", m.Partition, m.Offset, key, wid))
		return true
	}
	n := recs[0].N
	c.wins[id] = soakWindow{n: n, sum: sum}
	c.windows++
	c.recvPts += n
	acc := c.perKey[key]
	if acc == nil {
		acc = &soakKeyAcc{}
		c.perKey[key] = acc
	}
	want, expected := c.want[key]
	before := expected && acc.n == want
	acc.n += n
	acc.windows++
	after := expected && acc.n == want
	switch {
	case after && !before:
		c.complete++
		if c.complete == len(c.want) {
			close(c.done)
		}
	case before && !after:
		c.complete--
	}
	return true
}

func (c *soakCollector) onBad(m kafka.Message, err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.deliveries++
	c.readTo[m.Partition] = max(c.readTo[m.Partition], m.Offset+1)
	c.bad = append(c.bad, fmt.Sprintf("partition %d offset %d: undecodable feature record: %v", m.Partition, m.Offset, err))
}

// trim deletes the feature records already read from the embedded broker, which keeps
// every record in memory: 100 000 keys make ~200 000 records of ~23 kB each with the
// default spec. Only hashes are needed to compare later duplicates.
func (c *soakCollector) trim(b *testbroker.Broker, topic string) {
	c.mu.Lock()
	readTo := maps.Clone(c.readTo)
	c.mu.Unlock()
	for p, off := range readTo {
		_ = b.Cluster().DeleteRecords(topic, int32(p), off)
	}
}

// soakSmallSegments sets segment.bytes of the input and feature topics to 4 MiB: the
// embedded broker frees a deleted range only a whole segment at a time (default 100 MiB per
// partition), so without it trimming (trimConsumed, soakCollector.trim) frees nothing.
func soakSmallSegments(ctx context.Context, brokers []string) error {
	tr := &kafka.Transport{DialTimeout: 5 * time.Second}
	defer tr.CloseIdleConnections()
	cl := &kafka.Client{Addr: kafka.TCP(brokers...), Transport: tr, Timeout: 10 * time.Second}
	req := &kafka.AlterConfigsRequest{}
	for _, t := range []string{testbroker.TopicPoints, testbroker.TopicFeatures} {
		req.Resources = append(req.Resources, kafka.AlterConfigRequestResource{ResourceType: kafka.ResourceTypeTopic, ResourceName: t,
			Configs: []kafka.AlterConfigRequestConfig{{Name: "segment.bytes", Value: strconv.Itoa(4 << 20)}}})
	}
	res, err := cl.AlterConfigs(ctx, req)
	if err == nil {
		for r, e := range res.Errors {
			if e != nil {
				err = errors.Join(err, fmt.Errorf("%s: %w", r.Name, e))
			}
		}
	}
	if err != nil {
		return fmt.Errorf("setting segment.bytes: %w", err)
	}
	return nil
}

// trimConsumed deletes input records below the group's committed offsets from the embedded
// broker (no member ever reads below them again), so that long soaks do not accumulate
// every point in the soak process's memory.
func trimConsumed(ctx context.Context, b *testbroker.Broker, admin *kafka.Client, partitions int) {
	parts := make([]int, partitions)
	for i := range parts {
		parts[i] = i
	}
	res, err := admin.OffsetFetch(ctx, &kafka.OffsetFetchRequest{GroupID: soakGroup, Topics: map[string][]int{testbroker.TopicPoints: parts}})
	if err != nil || res.Error != nil {
		return
	}
	for _, p := range res.Topics[testbroker.TopicPoints] {
		if p.Error == nil && p.CommittedOffset > 0 {
			_ = b.Cluster().DeleteRecords(testbroker.TopicPoints, int32(p.Partition), p.CommittedOffset)
		}
	}
}

// progress returns the distinct windows received and the points they hold.
func (c *soakCollector) progress() (windows int, points int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.windows, c.recvPts
}

func (c *soakCollector) completeCount() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.complete
}

// waitDeliveries waits until n feature records have been read.
func (c *soakCollector) waitDeliveries(ctx context.Context, n int64, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		c.mu.Lock()
		got := c.deliveries
		c.mu.Unlock()
		if got >= n {
			return nil
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return fmt.Errorf("read %d of the %d records on the feature topic", got, n)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// check compares what arrived with what was expected and records the failures in the report.
func (c *soakCollector) check() {
	c.mu.Lock()
	defer c.mu.Unlock()
	r, o := c.rep, c.o
	r.windows, r.deliveries, r.duplicates = c.windows, int(c.deliveries), c.dups
	var missing, wrongN, split, unexpected []string
	r.windowsPerKey = [3]int{-1, 0, 0}
	for key, want := range c.want {
		acc := c.perKey[key]
		if acc == nil {
			missing = append(missing, key)
			continue
		}
		if acc.n != want {
			wrongN = append(wrongN, fmt.Sprintf("%s: %d points in %d window(s), produced %d", key, acc.n, acc.windows, want))
		}
		if acc.windows > 1 {
			split = append(split, fmt.Sprintf("%s: %d windows", key, acc.windows))
			r.windowsPerKey[2]++
		}
		if r.windowsPerKey[0] < 0 || acc.windows < r.windowsPerKey[0] {
			r.windowsPerKey[0] = acc.windows
		}
		r.windowsPerKey[1] = max(r.windowsPerKey[1], acc.windows)
	}
	for key := range c.perKey {
		if _, ok := c.want[key]; !ok {
			unexpected = append(unexpected, key)
		}
	}
	some := func(list []string) string {
		slices.Sort(list)
		if len(list) > 5 {
			return strings.Join(list[:5], "; ") + fmt.Sprintf("; … (%d more)", len(list)-5)
		}
		return strings.Join(list, "; ")
	}
	if len(missing) > 0 {
		r.fail("%d sets without any window: %s", len(missing), some(missing))
	}
	if len(wrongN) > 0 {
		r.fail("%d sets whose windows do not hold exactly the produced points: %s", len(wrongN), some(wrongN))
	}
	if len(split) > 0 && !o.keysMode() {
		r.fail("%d sets split into several windows (set mode expects one per set): %s", len(split), some(split))
	}
	if len(unexpected) > 0 {
		r.fail("%d windows for sets never produced: %s", len(unexpected), some(unexpected))
	}
	if len(c.conflicts) > 0 {
		r.fail("%d duplicate deliveries differ from the first: %s", len(c.conflicts), some(c.conflicts))
	}
	if len(c.bad) > 0 {
		r.fail("%d malformed feature records: %s", len(c.bad), some(c.bad))
	}
	if r.deadLetters != 0 {
		r.fail("%d records on the dead-letter topic, want 0", r.deadLetters)
	}
	if o.keysMode() {
		if r.emitted["evicted"] <= 0 {
			r.fail("distfeat_windows_emitted_total{reason=\"evicted\"} is 0: the open-window bound never applied (%d keys, %d per partition)", o.keys, o.maxOpen)
		}
		for _, w := range r.workers {
			if w.hwm > r.bound {
				r.fail("worker %s peak RSS %s exceeds the bound %s", w.name, mib(w.hwm), mib(r.bound))
			}
		}
	}
}

// print writes the report.
func (r *soakReport) print(w io.Writer) {
	o := r.o
	mode := fmt.Sprintf("set mode: %d sets × %d points = %s points", o.sets, o.points, siCount(o.totalPoints()))
	if o.keysMode() {
		mode = fmt.Sprintf("--keys mode: %d set IDs × %d points in %d records each = %s points", o.keys, o.keyPoints, o.keyRecords, siCount(o.totalPoints()))
	}
	fmt.Fprintf(w, "distfeat soak — %s\n", mode)
	fmt.Fprintf(w, "  setup            %s records (%s), %d partitions, %d workers, spec %s (%d B sketch per open window, %d B per feature record)\n",
		siCount(r.records), o.format, o.partitions, o.workers, r.specID, r.sketchBytes, r.recordBytes)
	fmt.Fprintf(w, "  worker env       %s\n", strings.Join(append([]string{"DISTFEAT_MAX_OPEN_WINDOWS=" + strconv.Itoa(o.maxOpen),
		"DISTFEAT_IDLE_TIMEOUT=" + o.idleTimeout.String(), "DISTFEAT_SESSION_TIMEOUT=" + o.sessionTimeout.String()}, o.workerEnv...), " "))
	fmt.Fprintf(w, "  load average     %s at start, %s at end (1/5/15 min)\n", r.loadStart, r.loadEnd)
	if r.rebalance != "" {
		fmt.Fprintf(w, "  rebalance        %s\n", r.rebalance)
	}
	r.printTimeline(w)
	if r.elapsed > 0 {
		fmt.Fprintf(w, "  throughput       %s points in %s = %.0f points/s, %.1f windows/s (production start → last expected window; producing took %s)\n",
			siCount(o.totalPoints()), r.elapsed.Round(100*time.Millisecond), float64(o.totalPoints())/r.elapsed.Seconds(),
			float64(r.windows)/r.elapsed.Seconds(), r.produceElapsed.Round(100*time.Millisecond))
	}
	if rates := r.rates(); len(rates) > 0 {
		slices.Sort(rates)
		fmt.Fprintf(w, "  worker rate      points/s over %s samples: median %.0f, max %.0f (Σ distfeat_points_total, incl. reprocessing)\n",
			o.interval, rates[len(rates)/2], rates[len(rates)-1])
	}
	fmt.Fprintf(w, "  windows          %d distinct received (%d deliveries, %d duplicates", r.windows, r.deliveries, r.duplicates)
	if r.duplicates > 0 {
		fmt.Fprint(w, ", compared byte for byte")
	}
	fmt.Fprint(w, ")")
	if o.keysMode() {
		fmt.Fprintf(w, "; windows per set min %d max %d, %d sets split by eviction\n", r.windowsPerKey[0], r.windowsPerKey[1], r.windowsPerKey[2])
	} else {
		fmt.Fprintf(w, "; expected %d, one per set\n", r.expectedWindows)
	}
	var reasons []string
	for k, v := range r.emitted {
		reasons = append(reasons, fmt.Sprintf("%s=%.0f", k, v))
	}
	slices.Sort(reasons)
	fmt.Fprintf(w, "  emitted metric   distfeat_windows_emitted_total %s (Σ over worker processes; a killed worker's last scrape); records replayed %.0f\n",
		strings.Join(reasons, " "), r.replayed)
	fmt.Fprintf(w, "  dead letters     %d\n", r.deadLetters)
	var peaks []string
	for _, wk := range r.workers {
		peaks = append(peaks, fmt.Sprintf("%s %s", wk.name, mib(wk.hwm)))
	}
	fmt.Fprintf(w, "  max RSS (VmHWM)  %s; soak process (broker + checker) %s\n", strings.Join(peaks, ", "), mib(r.selfHWM))
	if o.keysMode() {
		fmt.Fprintf(w, "  RSS bound        %s per worker = %d MiB baseline + %d (GC headroom) × %d partitions × ((%d max open + %d free-list) sketches × %d B + %d×%d output records × %d B)\n",
			mib(r.bound), o.rssBaseline, soakGCFactor, o.partitions, o.maxOpen, min(o.maxOpen, soakFreeListCap), r.sketchBytes,
			soakOutputBatches, soakOutputBatchMsgs, r.recordBytes)
		fmt.Fprintf(w, "                   (without the open-window bound the %d sketches alone would hold %s)\n", o.keys, mib(r.unbounded))
	}
	if r.ok() {
		fmt.Fprintln(w, "  result           PASS")
		return
	}
	for _, f := range r.failures {
		fmt.Fprintf(w, "  FAIL             %s\n", f)
	}
}

// rates are the per-sample worker processing rates, up to the last expected window.
func (r *soakReport) rates() []float64 {
	var out []float64
	for i := 1; i < len(r.samples); i++ {
		a, b := r.samples[i-1], r.samples[i]
		if r.elapsed > 0 && b.t > r.elapsed {
			break
		}
		if dt := (b.t - a.t).Seconds(); dt > 0 {
			out = append(out, float64(b.processed-a.processed)/dt)
		}
	}
	return out
}

// printTimeline prints at most o.rows rows, merging consecutive samples (rates over the
// merged span, RSS the maximum within it).
func (r *soakReport) printTimeline(w io.Writer) {
	if len(r.samples) == 0 {
		return
	}
	step := (len(r.samples) + r.o.rows - 1) / r.o.rows
	fmt.Fprintf(w, "  timeline (every %s sample%s; RSS = max in the row, MiB)\n", r.o.interval*time.Duration(step), map[bool]string{true: "", false: "s merged"}[step == 1])
	hdr := fmt.Sprintf("    %7s %9s %9s %8s %6s %8s %8s", "t", "produced", "points/s", "windows", "open", "sketchMB", "evicted")
	for _, wk := range r.workers {
		hdr += fmt.Sprintf(" %7s", wk.name)
	}
	fmt.Fprintln(w, hdr+"  events")
	prev := soakSample{}
	for i := 0; i < len(r.samples); i += step {
		j := min(i+step, len(r.samples))
		last := r.samples[j-1]
		rate := 0.0
		if dt := (last.t - prev.t).Seconds(); dt > 0 {
			rate = float64(last.processed-prev.processed) / dt
		}
		line := fmt.Sprintf("    %6.1fs %9s %9.0f %8d %6.0f %8.1f %8.0f", last.t.Seconds(), siCount(last.produced), rate,
			last.windows, last.open, last.sketch/(1<<20), last.evicted)
		var notes []string
		for k := range r.workers {
			peak := int64(-1)
			for _, s := range r.samples[i:j] {
				if k < len(s.rss) && s.rss[k] > peak {
					peak = s.rss[k]
				}
			}
			if peak < 0 {
				line += fmt.Sprintf(" %7s", "-")
			} else {
				line += fmt.Sprintf(" %7.0f", float64(peak)/(1<<20))
			}
		}
		for _, s := range r.samples[i:j] {
			notes = append(notes, s.note...)
		}
		fmt.Fprintln(w, line+"  "+strings.Join(notes, "; "))
		prev = last
	}
}

// writeCSV writes every sample.
func (r *soakReport) writeCSV(path string) error {
	var b bytes.Buffer
	b.WriteString("t_s,produced_points,processed_points,windows,received_points,open_windows,sketch_bytes,evicted")
	for _, wk := range r.workers {
		b.WriteString(",rss_bytes_" + wk.name)
	}
	b.WriteString(",events\n")
	for _, s := range r.samples {
		fmt.Fprintf(&b, "%.3f,%d,%d,%d,%d,%.0f,%.0f,%.0f", s.t.Seconds(), s.produced, s.processed, s.windows, s.recvPts, s.open, s.sketch, s.evicted)
		for k := range r.workers {
			v := int64(-1)
			if k < len(s.rss) {
				v = s.rss[k]
			}
			if v < 0 {
				b.WriteString(",")
			} else {
				fmt.Fprintf(&b, ",%d", v)
			}
		}
		fmt.Fprintf(&b, ",%q\n", strings.Join(s.note, "; "))
	}
	return os.WriteFile(path, b.Bytes(), 0o644)
}

// soakTail keeps the last max bytes written to it.
type soakTail struct {
	mu  sync.Mutex
	max int
	buf []byte
}

func (t *soakTail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if over := len(t.buf) - t.max; over > 0 {
		t.buf = append(t.buf[:0], t.buf[over:]...)
	}
	return len(p), nil
}

// lastLines returns the last n lines, indented.
func (t *soakTail) lastLines(n int) string {
	t.mu.Lock()
	defer t.mu.Unlock()
	lines := strings.Split(strings.TrimRight(string(t.buf), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return "      " + strings.Join(lines, "\n      ")
}

// soakPrefixWriter copies whole lines to w with a prefix (the -v worker logs).
type soakPrefixWriter struct {
	prefix string
	w      io.Writer
	mu     *sync.Mutex
	part   []byte
}

func (p *soakPrefixWriter) Write(b []byte) (int, error) {
	p.part = append(p.part, b...)
	for {
		i := bytes.IndexByte(p.part, '\n')
		if i < 0 {
			return len(b), nil
		}
		p.mu.Lock()
		fmt.Fprintf(p.w, "%s%s\n", p.prefix, p.part[:i])
		p.mu.Unlock()
		p.part = p.part[i+1:]
	}
}

// siCount formats a count compactly (1.2M, 35.0k).
func siCount(n int64) string {
	switch {
	case n >= 10_000_000:
		return fmt.Sprintf("%.1fM", float64(n)/1e6)
	case n >= 1_000_000:
		return fmt.Sprintf("%.2fM", float64(n)/1e6)
	case n >= 10_000:
		return fmt.Sprintf("%.1fk", float64(n)/1e3)
	default:
		return strconv.FormatInt(n, 10)
	}
}

func mib(b int64) string { return fmt.Sprintf("%.1f MiB", float64(b)/(1<<20)) }

func rssList(rss []int64) string {
	var parts []string
	for _, v := range rss {
		if v < 0 {
			parts = append(parts, "-")
		} else {
			parts = append(parts, fmt.Sprintf("%.0f", float64(v)/(1<<20)))
		}
	}
	return strings.Join(parts, "/") + " MiB"
}
