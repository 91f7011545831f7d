//go:build dev

package devcmd

import (
	"context"
	"fmt"
	"io"
	"runtime"
	"runtime/pprof"
	"sort"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/segmentio/kafka-go"

	"github.com/distfeat/distfeat/cmd/distfeat/internal/cli"
	"github.com/distfeat/distfeat/config"
	"github.com/distfeat/distfeat/consumer"
	"github.com/distfeat/distfeat/internal/outfile"
	"github.com/distfeat/distfeat/internal/synth"
	"github.com/distfeat/distfeat/internal/testbroker"
	"github.com/distfeat/distfeat/kafkaio"
	"github.com/distfeat/distfeat/schema"
	"github.com/distfeat/distfeat/service"
	"github.com/distfeat/distfeat/spec"
)

// runBench measures end-to-end throughput through the embedded broker: the worker pipeline
// (decode, window, finalise, encode, produce with acks=all, commit) against the same
// machine's raw kafka-go consume→produce rate for the same records (the ceiling).
func runBench(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("bench", "", "", stderr)
	sets := fs.Int("sets", 400, "sets to push")
	points := fs.Int("points", 2500, "points per set")
	chunk := fs.Int("chunk", 500, "points per input record")
	format := fs.String("format", "arrow", "input record format (`json|arrow`)")
	workers := fs.Int("workers", 1, "workers in the group (in process)")
	partitions := fs.Int("partitions", 8, "partitions per topic")
	specPath := fs.String("spec", cli.EnvOr("SPEC", ""), "feature spec JSON `file` (DISTFEAT_SPEC; empty: the built-in default)")
	timeout := fs.Duration("timeout", 10*time.Minute, "give up after this long")
	cpuProfile := fs.String("cpuprofile", "", "write a CPU profile of the first run's pipeline phase (worker, broker and feature consumer; not the producer or the ceiling) to this `file`")
	blockProfile := fs.String("blockprofile", "", "write a profile of where goroutines waited during the first run's pipeline phase to this `file`")
	repeat := fs.Int("repeat", 3, "independent runs (fresh broker each); medians are reported")
	points2 := fs.Bool("point-output", false, "also write the per-point features of the spec's marginal_transfer families to a points topic (DISTFEAT_POINT_FEATURES_TOPIC); the pipeline then ends when the group has committed every input record, i.e. when all output is acknowledged")
	if err := cli.ParseArgs(fs, args); err != nil {
		return err
	}
	sp, err := spec.LoadSpec(*specPath)
	if err != nil {
		return err
	}
	// The profile files are opened before any run, so a bad path fails at once.
	var cpuOut, blockOut *outfile.File
	if *cpuProfile != "" {
		if cpuOut, err = outfile.CreateContext(ctx, *cpuProfile); err != nil {
			return fmt.Errorf("--cpuprofile: %w", err)
		}
		defer cpuOut.Abort()
	}
	if *blockProfile != "" {
		if blockOut, err = outfile.CreateContext(ctx, *blockProfile); err != nil {
			return fmt.Errorf("--blockprofile: %w", err)
		}
		defer blockOut.Abort()
	}
	ctx, cancel := context.WithTimeout(ctx, *timeout)
	defer cancel()
	prog := cli.NewProgress(stderr, "bench")
	defer prog.Done()

	o := benchOptions{sets: *sets, points: *points, chunk: *chunk, format: *format, workers: *workers,
		partitions: *partitions, specPath: *specPath, dim: sp.Dim, cpuProfile: cpuOut, blockProfile: blockOut,
		pointOutput: *points2}
	var runs []benchResult
	for i := 0; i < *repeat; i++ {
		r, err := benchOnce(ctx, o, prog)
		o.cpuProfile, o.blockProfile = nil, nil // the first run only
		if err != nil {
			return err
		}
		runs = append(runs, r)
	}
	prog.Done()
	fmt.Fprintf(stdout, "distfeat bench: %d sets, %d points, %d records (%s, chunk %d), spec %s, %d partitions, %d worker(s), %d run(s)\n",
		*sets, runs[0].points, runs[0].records, *format, *chunk, sp.ID(), *partitions, *workers, len(runs))
	for i, r := range runs {
		fmt.Fprintf(stdout, "  run %d: ceiling %9.0f points/s (%s)   pipeline %9.0f points/s, %7.1f windows/s (%s, %.2f of %d cores)   %3.0f%%\n",
			i+1, r.rawRate(), r.raw.Round(time.Millisecond), r.pipeRate(), r.windowRate(), r.pipe.Round(time.Millisecond),
			r.cores(), runtime.GOMAXPROCS(0), 100*r.pipeRate()/r.rawRate())
	}
	raw := median(runs, benchResult.rawRate)
	pipe := median(runs, benchResult.pipeRate)
	fmt.Fprintf(stdout, "  median ceiling (kafka-go consume→produce, no embedding): %10.0f points/s  %8.0f records/s\n",
		raw, raw*float64(runs[0].records)/float64(runs[0].points))
	end := "ready → last window"
	if *points2 {
		end = "ready → all committed, per-point output on"
	}
	fmt.Fprintf(stdout, "  median distfeat pipeline (%s): %10.0f points/s  %8.1f windows/s\n",
		end, pipe, median(runs, benchResult.windowRate))
	fmt.Fprintf(stdout, "  pipeline / ceiling: %.0f%%\n", 100*pipe/raw)
	return nil
}

// benchOptions sizes one bench run.
type benchOptions struct {
	sets, points, chunk, workers, partitions, dim int
	format, specPath                              string
	cpuProfile, blockProfile                      *outfile.File // profile the pipeline phase into these files (nil = none)
	pointOutput                                   bool          // per-point output to benchPointsTopic
}

// benchPointsTopic is the per-point topic of bench --point-output.
const benchPointsTopic = "points.features"

// benchResult is one run's measurements.
type benchResult struct {
	points, records, windows int
	raw, pipe                time.Duration
	pipeCPU                  time.Duration // process CPU time (user + system) during the pipeline run
}

func (r benchResult) rawRate() float64    { return float64(r.points) / r.raw.Seconds() }
func (r benchResult) pipeRate() float64   { return float64(r.points) / r.pipe.Seconds() }
func (r benchResult) windowRate() float64 { return float64(r.windows) / r.pipe.Seconds() }

// cores is the average number of cores the whole process (worker, embedded broker and the
// bench's own feature consumer) kept busy during the pipeline run.
func (r benchResult) cores() float64 { return r.pipeCPU.Seconds() / r.pipe.Seconds() }

// processCPU is the CPU time (user + system) this process has used so far.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// median of f over the runs.
func median(runs []benchResult, f func(benchResult) float64) float64 {
	v := make([]float64, len(runs))
	for i, r := range runs {
		v[i] = f(r)
	}
	sort.Float64s(v)
	if len(v)%2 == 1 {
		return v[len(v)/2]
	}
	return (v[len(v)/2-1] + v[len(v)/2]) / 2
}

// benchOnce runs one measurement on a fresh embedded broker: produce, the raw copy (ceiling),
// then the worker pipeline over the same records.
func benchOnce(ctx context.Context, o benchOptions, prog *cli.Progress) (benchResult, error) {
	const rawOut = "bench.raw"
	b, err := testbroker.Start(ctx, testbroker.Options{Partitions: o.partitions,
		Topics: []string{testbroker.TopicPoints, testbroker.TopicFeatures, testbroker.TopicDLQ, rawOut, benchPointsTopic}})
	if err != nil {
		return benchResult{}, err
	}
	defer b.Close()
	brokers := b.Addrs()

	prog.Update("producing %d sets × %d points", o.sets, o.points)
	batches := synth.Batches(7, o.sets, o.points, o.dim, time.Now().UnixMilli())
	records, total, err := publish(ctx, brokers, o.format, o.dim, o.chunk, batches, prog)
	if err != nil {
		return benchResult{}, err
	}
	prog.Update("ceiling: raw consume→produce of %d records", records)
	rawElapsed, err := rawCopy(ctx, brokers, testbroker.TopicPoints, rawOut, records)
	if err != nil {
		return benchResult{}, fmt.Errorf("ceiling run: %w", err)
	}
	prog.Update("pipeline: %d workers", o.workers)
	if o.blockProfile != nil {
		runtime.SetBlockProfileRate(int(time.Microsecond)) // one sample per µs spent blocked
	}
	if o.cpuProfile != nil {
		if err := pprof.StartCPUProfile(o.cpuProfile); err != nil {
			return benchResult{}, err
		}
	}
	pipeElapsed, pipeCPU, windows, err := benchPipeline(ctx, brokers, o, prog)
	if o.cpuProfile != nil {
		pprof.StopCPUProfile()
		if cerr := o.cpuProfile.Commit(); err == nil {
			err = cerr
		}
	}
	if o.blockProfile != nil {
		if werr := writeBlockProfile(o.blockProfile); err == nil {
			err = werr
		}
	}
	if err != nil {
		return benchResult{}, fmt.Errorf("pipeline run: %w", err)
	}
	return benchResult{points: total, records: records, windows: windows, raw: rawElapsed, pipe: pipeElapsed,
		pipeCPU: pipeCPU}, nil
}

// rawCopy reads every record of src (all partitions) and writes it to dst with acks=all,
// returning the time until the last write is acknowledged.
func rawCopy(ctx context.Context, brokers []string, src, dst string, records int) (time.Duration, error) {
	parts, err := kafkaio.PlainCluster(brokers).Partitions(ctx, src)
	if err != nil {
		return 0, err
	}
	w := &kafka.Writer{Addr: kafka.TCP(brokers...), Topic: dst, Balancer: &kafka.Murmur2Balancer{Consistent: true},
		RequiredAcks: kafka.RequireAll, BatchTimeout: time.Millisecond, BatchSize: consumer.DefaultFlushMessages, BatchBytes: config.DefaultMaxOutputBytes}
	defer w.Close()
	var copied atomic.Int64
	start := time.Now()
	var wg sync.WaitGroup
	errs := make(chan error, len(parts))
	for _, p := range parts {
		wg.Add(1)
		go func(p int) {
			defer wg.Done()
			r := kafka.NewReader(kafka.ReaderConfig{Brokers: brokers, Topic: src, Partition: p, MinBytes: 1, MaxBytes: 16 << 20, MaxWait: 50 * time.Millisecond})
			defer r.Close()
			if err := r.SetOffset(kafka.FirstOffset); err != nil {
				errs <- err
				return
			}
			var batch []kafka.Message
			for {
				m, err := r.ReadMessage(ctx)
				if err != nil {
					errs <- err
					return
				}
				batch = append(batch, kafka.Message{Key: m.Key, Value: m.Value, Headers: m.Headers})
				if len(batch) >= 64 || m.Offset+1 >= m.HighWaterMark {
					if err := w.WriteMessages(ctx, batch...); err != nil {
						errs <- err
						return
					}
					batch = batch[:0]
				}
				if m.Offset+1 >= m.HighWaterMark {
					copied.Add(m.Offset + 1)
					return
				}
			}
		}(p)
	}
	wg.Wait()
	elapsed := time.Since(start)
	close(errs)
	for err := range errs {
		return 0, err
	}
	if int(copied.Load()) != records {
		return 0, fmt.Errorf("copied %d records, expected %d", copied.Load(), records)
	}
	return elapsed, nil
}

// benchPipeline runs workers until every set's window has been received; the clock starts
// when the first worker is ready (has joined the group). It returns the elapsed time, the
// process's CPU time over the same span and the windows received.
func benchPipeline(ctx context.Context, brokers []string, o benchOptions, prog *cli.Progress) (time.Duration, time.Duration, int, error) {
	specPath, workers, sets := o.specPath, o.workers, o.sets
	wctx, stop := context.WithCancel(ctx)
	var wg sync.WaitGroup
	defer func() { stop(); wg.Wait() }()
	addrs := make(chan string, workers)
	log := service.NewLogger(io.Discard, "error", "text")
	for i := 0; i < workers; i++ {
		cfg := demoWorkerConfig(brokers)
		cfg.Group = cfg0Group
		cfg.Spec = specPath
		if o.pointOutput {
			cfg.PointsTopic = benchPointsTopic
			cfg.CommitInterval = 50 * time.Millisecond
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			_ = service.Serve(wctx, cfg, log, func(a string) { addrs <- a })
		}()
	}
	var start time.Time
	var cpu0 time.Duration
	select {
	case a := <-addrs:
		if err := waitReady(ctx, a, nil); err != nil {
			return 0, 0, 0, err
		}
		start, cpu0 = time.Now(), processCPU()
	case <-ctx.Done():
		return 0, 0, 0, ctx.Err()
	}
	seen := map[string]bool{}
	err := kafkaio.ConsumeFeatures(ctx, kafkaio.PlainCluster(brokers), testbroker.TopicFeatures, true, 0, func(m kafkaio.Record, _ []schema.FeatureRecord, _ []string) bool {
		seen[string(m.Key)] = true
		prog.Update("%d/%d windows", len(seen), sets)
		return len(seen) < sets
	}, func(kafkaio.Record, error) {})
	if err == nil && o.pointOutput {
		prog.Update("waiting for the group to commit (all per-point output acknowledged)")
		err = waitGroupCommitted(ctx, brokers, cfg0Group, testbroker.TopicPoints)
		if err == nil {
			err = checkPointRecords(ctx, brokers)
		}
	}
	elapsed, cpu := time.Since(start), processCPU()-cpu0
	if err != nil {
		return 0, 0, 0, err
	}
	if len(seen) < sets {
		return 0, 0, 0, fmt.Errorf("only %d of %d windows arrived: %w", len(seen), sets, ctx.Err())
	}
	return elapsed, cpu, len(seen), nil
}

// cfg0Group is the bench workers' consumer group.
const cfg0Group = "distfeat-bench"

// waitGroupCommitted waits until group has committed the end offset of every partition of
// topic: every output of every input record is then acknowledged.
func waitGroupCommitted(ctx context.Context, brokers []string, group, topic string) error {
	cc := kafkaio.PlainCluster(brokers)
	parts, err := cc.Partitions(ctx, topic)
	if err != nil {
		return err
	}
	ends, err := cc.OffsetRanges(ctx, topic, parts)
	if err != nil {
		return err
	}
	client := &kafka.Client{Addr: kafka.TCP(brokers...)}
	for {
		resp, err := client.OffsetFetch(ctx, &kafka.OffsetFetchRequest{GroupID: group, Topics: map[string][]int{topic: parts}})
		if err == nil {
			done := true
			for _, p := range resp.Topics[topic] {
				done = done && p.CommittedOffset >= ends[p.Partition].End
			}
			if done {
				return nil
			}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("the group did not commit %s's end offsets: %w", topic, ctx.Err())
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// checkPointRecords fails when bench --point-output wrote no per-point records (every
// window over the retention budget, say): the rate would then not measure them.
func checkPointRecords(ctx context.Context, brokers []string) error {
	cc := kafkaio.PlainCluster(brokers)
	parts, err := cc.Partitions(ctx, benchPointsTopic)
	if err != nil {
		return err
	}
	ends, err := cc.OffsetRanges(ctx, benchPointsTopic, parts)
	if err != nil {
		return err
	}
	n := int64(0)
	for _, r := range ends {
		n += r.End - r.First
	}
	if n == 0 {
		return fmt.Errorf("no per-point records on %s: does the spec have a marginal_transfer family, and do the windows' points fit a quarter of DISTFEAT_MAX_BUFFER_BYTES?", benchPointsTopic)
	}
	return nil
}

// writeBlockProfile writes the block profile gathered since SetBlockProfileRate to f, commits
// it and stops gathering.
func writeBlockProfile(f *outfile.File) error {
	runtime.SetBlockProfileRate(0)
	if err := pprof.Lookup("block").WriteTo(f, 0); err != nil {
		return err
	}
	return f.Commit()
}
