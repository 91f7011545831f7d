//go:build dev

package devcmd

// The soak run: broker, checker, workers, producer, sampling loop, final check.

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/segmentio/kafka-go"

	"github.com/distfeat/distfeat/cmd/distfeat/internal/cli"
	"github.com/distfeat/distfeat/embedding"
	"github.com/distfeat/distfeat/internal/testbroker"
	"github.com/distfeat/distfeat/kafkaio"
	"github.com/distfeat/distfeat/spec"
)

// soakRun is the state of one soak: what the phases (start, loop, finish) share.
type soakRun struct {
	parent context.Context // the caller's context: its end is an interruption
	ctx    context.Context // parent bounded by --timeout
	cancel context.CancelFunc
	o      *soakOptions
	rep    *soakReport
	stderr io.Writer
	prog   *cli.Progress

	b       *testbroker.Broker
	brokers []string
	col     *soakCollector
	client  *http.Client
	admin   *kafka.Client
	exits   chan *soakWorker
	logMu   sync.Mutex

	prodMu      sync.Mutex
	prodDone    chan error
	prodRunning bool

	processedBase float64 // Σ points_total of processes that have exited
	notes         []string
	killed        bool
	complete      chan struct{} // the collector's done channel until it fires, then nil
	doneAt        time.Time

	lastMove  time.Time // when produced, processed or windows last changed (--stall)
	lastCount [3]int64  // their values then
}

// soak runs the whole thing.
func soak(parent context.Context, o *soakOptions, stderr io.Writer) (*soakReport, error) {
	rep, dim, err := newSoakReport(o)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(parent, o.timeout)
	defer cancel()
	s := &soakRun{parent: parent, ctx: ctx, cancel: cancel, o: o, rep: rep, stderr: stderr,
		prog: cli.NewProgress(stderr, "soak"), client: &http.Client{Timeout: 2 * time.Second}, exits: make(chan *soakWorker, 8)}
	defer s.prog.Done()
	rep.start = time.Now()

	b, err := testbroker.Start(ctx, testbroker.Options{Partitions: o.partitions})
	if err != nil {
		return nil, err
	}
	defer b.Close()
	s.b, s.brokers = b, b.Addrs()
	if err := soakSmallSegments(ctx, s.brokers); err != nil {
		fmt.Fprintf(stderr, "soak: %v (the soak process keeps every record in memory)\n", err)
	}

	// The checker: every feature record, from the beginning.
	s.col = newSoakCollector(o, rep)
	cctx, stopCollector := context.WithCancel(parent)
	collectorDone := make(chan error, 1)
	go func() {
		collectorDone <- kafkaio.ConsumeFeatures(cctx, kafkaio.PlainCluster(s.brokers), testbroker.TopicFeatures, true, 0, s.col.onRecord, s.col.onBad)
	}()
	defer func() { stopCollector(); <-collectorDone }()

	defer s.killAll()
	if err := s.startWorkers(); err != nil {
		return rep, err
	}
	s.startProducer(dim)
	defer s.stopProducer()
	adminTr := &kafka.Transport{DialTimeout: 5 * time.Second}
	defer adminTr.CloseIdleConnections()
	s.admin = &kafka.Client{Addr: kafka.TCP(s.brokers...), Transport: adminTr, Timeout: 5 * time.Second}

	if stop, err := s.loop(); stop || err != nil {
		return rep, err // the deferred clean-up stops the producer and the workers
	}
	s.finish(func() error { stopCollector(); err := <-collectorDone; collectorDone <- nil; return err })
	return rep, nil
}

// newSoakReport loads the spec and sizes the expectations and the memory bound.
func newSoakReport(o *soakOptions) (*soakReport, int, error) {
	sp, err := spec.LoadSpec(o.specPath)
	if err != nil {
		return nil, 0, err
	}
	emb, err := embedding.New(sp)
	if err != nil {
		return nil, 0, err
	}
	rep := &soakReport{o: o, specID: sp.ID(), sketchBytes: emb.NewSketch().SizeBytes(), emitted: map[string]float64{}}
	rep.recordBytes = sampleRecordBytes(sp, emb)
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
	return rep, sp.Dim, nil
}

// startWorker starts one more worker process in the next slot.
func (s *soakRun) startWorker() (*soakWorker, error) {
	w, err := startSoakWorker(s.o, s.brokers, len(s.rep.workers), s.exits, s.stderr, &s.logMu)
	if err != nil {
		return nil, err
	}
	s.rep.workers = append(s.rep.workers, w)
	return w, nil
}

// startWorkers starts --workers processes and waits until each is a group member.
func (s *soakRun) startWorkers() error {
	for i := 0; i < s.o.workers; i++ {
		if _, err := s.startWorker(); err != nil {
			return err
		}
	}
	s.prog.Update("waiting for %d workers to join", s.o.workers)
	for _, w := range s.rep.workers {
		rctx, rcancel := context.WithTimeout(s.ctx, time.Minute)
		err := waitReady(rctx, w.addr, w.exited)
		rcancel()
		if errors.Is(err, errExited) {
			err = fmt.Errorf("%w: %v", err, w.exitErr)
		}
		if err != nil {
			return fmt.Errorf("worker %s: %w\n%s", w.name, err, w.logs.lastLines(20))
		}
	}
	return nil
}

// killAll kills every worker still running (clean-up on any return).
func (s *soakRun) killAll() {
	for _, w := range s.rep.workers {
		stopSoakWorker(w, syscall.SIGKILL, 0)
	}
}

// startProducer starts producing the input in the background; the clock starts now.
func (s *soakRun) startProducer(dim int) {
	s.rep.start = time.Now()
	s.prodDone = make(chan error, 1)
	s.prodRunning = true
	go func() {
		s.prodDone <- soakProduce(s.ctx, s.o, s.brokers, dim, s.col, func(records, points int64) {
			s.prodMu.Lock()
			s.rep.records, s.rep.produced = records, points
			s.prodMu.Unlock()
		})
	}()
}

// stopProducer cancels a producer that is still running and waits for it.
func (s *soakRun) stopProducer() {
	if s.prodRunning {
		s.cancel()
		<-s.prodDone
	}
}

func (s *soakRun) produced() int64 {
	s.prodMu.Lock()
	defer s.prodMu.Unlock()
	return s.rep.produced
}

// processed is Σ distfeat_points_total over every worker process so far.
func (s *soakRun) processed() float64 {
	p := s.processedBase
	for _, w := range s.rep.workers {
		if w.running() {
			p += w.metrics["distfeat_points_total"]
		}
	}
	return p
}

// retire folds an exited process's counters into the running totals.
func (s *soakRun) retire(w *soakWorker) { s.processedBase += w.metrics["distfeat_points_total"] }

// note records an event for the next timeline row.
func (s *soakRun) note(format string, args ...any) {
	s.notes = append(s.notes, fmt.Sprintf(format, args...))
}

// scrape refreshes w's metrics (kept as they were when the scrape fails).
func (s *soakRun) scrape(ctx context.Context, w *soakWorker) {
	if m, err := scrapeMetrics(ctx, s.client, w.addr); err == nil {
		w.metrics = m
	}
}

// sample appends one timeline row and trims what the broker no longer needs.
func (s *soakRun) sample() {
	smp := soakSample{t: time.Since(s.rep.start), produced: s.produced(), note: s.notes}
	s.notes = nil
	for _, w := range s.rep.workers {
		if w.running() {
			w.sampleProc()
			s.scrape(s.ctx, w)
			smp.rss = append(smp.rss, w.rss)
			smp.open += w.metrics["distfeat_windows_open"]
			smp.sketch += w.metrics["distfeat_sketch_bytes"]
		} else {
			smp.rss = append(smp.rss, -1)
		}
		smp.evicted += w.metrics[`distfeat_windows_emitted_total{reason="evicted"}`]
	}
	smp.processed = int64(s.processed())
	smp.windows, smp.recvPts = s.col.progress()
	if c := [3]int64{smp.produced, smp.processed, int64(smp.windows)}; c != s.lastCount || s.lastMove.IsZero() {
		s.lastCount, s.lastMove = c, time.Now()
	}
	s.rep.samples = append(s.rep.samples, smp)
	s.col.trim(s.b, testbroker.TopicFeatures)
	trimConsumed(s.ctx, s.b, s.admin, s.o.partitions)
	s.prog.Update("%d/%d windows, %s/%s points produced, RSS %s", smp.windows, s.rep.expectedWindows,
		siCount(smp.produced), siCount(s.o.totalPoints()), rssList(smp.rss))
}

// loop runs until every expected window arrived and settled, or something went wrong.
// stop means return at once (interrupted, or an error) instead of finishing.
func (s *soakRun) loop() (stop bool, err error) {
	killTick := time.NewTicker(100 * time.Millisecond)
	defer killTick.Stop()
	sampleTick := time.NewTicker(s.o.interval)
	defer sampleTick.Stop()
	s.killed = s.o.killAt == 0
	s.complete = s.col.done
	for {
		select {
		case <-s.ctx.Done():
			if s.parent.Err() != nil {
				s.rep.fail("interrupted: %d of %d sets complete", s.col.completeCount(), s.rep.expectedWindows)
				return true, nil
			}
			s.rep.fail("gave up after --timeout %s: %d of %d sets complete", s.o.timeout, s.col.completeCount(), s.rep.expectedWindows)
			return false, nil
		case err := <-s.prodDone:
			s.prodRunning = false
			s.rep.produceElapsed = time.Since(s.rep.start)
			if err != nil {
				return true, fmt.Errorf("produce: %w", err)
			}
			s.note("all %s points produced", siCount(s.produced()))
		case w := <-s.exits:
			if w.expect {
				continue
			}
			s.retire(w)
			s.rep.fail("worker %s exited unexpectedly: %v\n%s", w.name, w.exitErr, w.logs.lastLines(20))
			return false, nil
		case <-s.complete:
			s.complete = nil
			s.doneAt = time.Now()
			s.rep.elapsed = s.doneAt.Sub(s.rep.start)
			s.note("last expected window received")
		case <-killTick.C:
			if err := s.maybeKill(); err != nil {
				return true, err
			}
		case <-sampleTick.C:
			s.sample()
			if s.complete == nil && !s.prodRunning && s.killed && time.Since(s.doneAt) >= s.o.settle {
				return false, nil
			}
			if s.o.stall > 0 && s.complete != nil && time.Since(s.lastMove) >= s.o.stall {
				s.rep.fail("gave up after --stall %s without progress (no point produced or processed, no window received): %d of %d sets complete",
					s.o.stall, s.col.completeCount(), s.rep.expectedWindows)
				return false, nil
			}
		}
	}
}

// maybeKill stops w0 (and starts a replacement) once the workers have processed --kill-at of
// the points.
func (s *soakRun) maybeKill() error {
	if s.killed {
		return nil
	}
	for _, w := range s.rep.workers {
		if w.running() {
			s.scrape(s.ctx, w)
		}
	}
	total := float64(s.o.totalPoints())
	p := s.processed()
	if p < s.o.killAt*total {
		return nil
	}
	s.killed = true
	victim := s.rep.workers[0]
	victim.sampleProc()
	s.scrape(s.ctx, victim)
	how := s.stopVictim(victim)
	if s.complete == nil {
		s.rep.fail("the rebalance point (--kill-at %.2f) was reached only after the last window: not a mid-run rebalance; use more points or a smaller --lead", s.o.killAt)
	}
	s.note("%s at %.0f%% processed", how, 100*p/total)
	s.rep.rebalance = fmt.Sprintf("%s at t=%.1fs, %.1f%% of the points processed", how, time.Since(s.rep.start).Seconds(), 100*p/total)
	if s.o.replace {
		w, err := s.startWorker()
		if err != nil {
			return err
		}
		s.note("started %s (pid %d)", w.name, w.cmd.Process.Pid)
		s.rep.rebalance += fmt.Sprintf("; replacement %s started", w.name)
	}
	return nil
}

// stopVictim sends --signal to the victim, waits for it and says what happened.
func (s *soakRun) stopVictim(victim *soakWorker) string {
	sig := syscall.SIGKILL
	if s.o.signal == "term" {
		sig = syscall.SIGTERM
	}
	stopStart := time.Now()
	code := stopSoakWorker(victim, sig, 60*time.Second)
	s.retire(victim)
	if sig == syscall.SIGKILL {
		return fmt.Sprintf("SIGKILL %s (pid %d)", victim.name, victim.cmd.Process.Pid)
	}
	if code != "0" {
		s.rep.fail("%s did not exit 0 after SIGTERM: %s\n%s", victim.name, code, victim.logs.lastLines(20))
	}
	return fmt.Sprintf("SIGTERM %s (pid %d): exit %s after %s", victim.name, victim.cmd.Process.Pid, code, time.Since(stopStart).Round(time.Millisecond))
}

// finish takes the last sample, stops the workers cleanly, reads the feature topic to its
// end (stopCollector then ends the checker) and checks.
func (s *soakRun) finish(stopCollector func() error) {
	rep := s.rep
	if n := len(rep.samples); n == 0 || time.Since(rep.start)-rep.samples[n-1].t > s.o.interval/2 || len(s.notes) > 0 {
		s.sample()
	}
	if !s.killed && rep.ok() {
		rep.fail("the run finished before the rebalance point (--kill-at %.2f); use more points or a smaller --lead", s.o.killAt)
	}
	// The final phase gets its own time limit, so that a run that timed out is still
	// stopped cleanly and checked (the report then lists what is missing). It is only a far
	// ceiling: reading the feature topic to its end gives up after a minute without a record.
	ctx, cancelFinal := context.WithTimeout(s.parent, 10*time.Minute)
	defer cancelFinal()
	s.stopWorkers(ctx)
	_, rep.selfHWM, _ = procMemory(os.Getpid())
	rep.loadEnd = loadAvg()

	// Read the feature topic to its end, so every delivery (also those from the final
	// flushes) is compared, then check.
	if end, err := topicEnd(ctx, s.brokers, testbroker.TopicFeatures); err != nil {
		rep.fail("feature topic end offsets: %v", err)
	} else if err := s.col.waitDeliveries(ctx, end, time.Minute); err != nil {
		rep.fail("%v", err)
	}
	if err := stopCollector(); err != nil {
		rep.fail("reading features: %v", err)
	}
	if n, err := topicEnd(ctx, s.brokers, testbroker.TopicDLQ); err != nil {
		rep.fail("dead-letter topic end offsets: %v", err)
	} else {
		rep.deadLetters = n
	}
	s.col.check()
}

// stopWorkers scrapes the remaining workers a last time, stops them with SIGTERM (each must
// exit 0) and sums their counters into the report.
func (s *soakRun) stopWorkers(ctx context.Context) {
	rep := s.rep
	var gens []string
	for _, w := range rep.workers {
		if w.running() {
			s.scrape(ctx, w)
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
}
