//go:build dev

package devcmd

// distfeat soak: the reproducible commands for issue #4, items 4 (many keys) and 5 (soak with a
// mid-run rebalance). Both run `distfeat worker` child processes against the embedded broker,
// sample each worker's resident memory (/proc/<pid>/status) and Prometheus metrics every
// second, and check the emitted windows against the expected set at the end.

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/distfeat/distfeat/cmd/distfeat/internal/cli"
	"github.com/distfeat/distfeat/consumer"
	"github.com/distfeat/distfeat/internal/outfile"
)

// Output buffering of one partition loop, from consumer.Config's defaults (MaxInFlight
// unacknowledged batches plus the pending one, FlushMessages records each), and the window
// manager's free list of released sketches (min(MaxOpen, 256) per partition,
// window/manager.go). They enter the stated memory bound of --keys mode.
const (
	soakOutputBatches   = consumer.DefaultMaxInFlight + 1
	soakOutputBatchMsgs = consumer.DefaultFlushMessages
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
	stall       time.Duration
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
	o, err := parseSoakFlags(args, stderr)
	if err != nil {
		return nil, err
	}
	var csv *outfile.File // opened before the soak, so a bad --timeline fails at once
	if o.timelineCSV != "" {
		if csv, err = outfile.CreateContext(ctx, o.timelineCSV); err != nil {
			return nil, fmt.Errorf("--timeline: %w", err)
		}
		defer csv.Abort()
	}
	rep, err := soak(ctx, o, stderr)
	if rep != nil {
		rep.print(stdout)
		if csv != nil {
			if werr := rep.writeCSV(csv); werr != nil {
				fmt.Fprintf(stderr, "soak: %v\n", werr)
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

// soakUsage is the description in `distfeat soak -h`.
const soakUsage = `Runs the embedded broker and ` + "`distfeat worker`" + ` child processes in one group, produces synthetic
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
override variables with --worker-env. Everything listens on 127.0.0.1 only.`

// parseSoakFlags parses and checks the soak's flags.
func parseSoakFlags(args []string, stderr io.Writer) (*soakOptions, error) {
	fs := newFlagSet("soak", "", soakUsage, stderr)
	var o soakOptions
	self, _ := os.Executable()
	fs.StringVar(&o.workerBin, "worker-bin", self, "distfeat binary (`file`) to run the workers with")
	fs.IntVar(&o.workers, "workers", 2, "worker processes in the consumer group")
	fs.IntVar(&o.partitions, "partitions", 8, "partitions per topic")
	fs.StringVar(&o.specPath, "spec", cli.EnvOr("SPEC", ""), "feature spec JSON `file` (DISTFEAT_SPEC; empty: the built-in default)")
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
	fs.DurationVar(&o.stall, "stall", 5*time.Minute, "give up when nothing moved (points produced, points processed, windows received) for this long (0: never)")
	fs.IntVar(&o.rssBaseline, "rss-baseline", 256, "--keys mode: `MiB` added to the memory bound for the runtime, Kafka clients and buffers")
	fs.BoolVar(&o.verbose, "v", false, "copy the workers' logs to stderr")
	if err := cli.ParseArgs(fs, args); err != nil {
		return nil, err
	}
	killSet := false
	fs.Visit(func(f *flag.Flag) { killSet = killSet || f.Name == "kill-at" })
	if o.keysMode() && !killSet {
		o.killAt = 0
	}
	return &o, o.validate()
}

// validate checks the option values against each other.
func (o *soakOptions) validate() error {
	switch {
	case o.workerBin == "":
		return errors.New("--worker-bin: cannot find the distfeat binary (os.Executable failed)")
	case o.workers < 1 || o.partitions < 1:
		return errors.New("need --workers ≥ 1 and --partitions ≥ 1")
	case o.format != "json" && o.format != "arrow":
		return fmt.Errorf("--format %q: want json or arrow", o.format)
	case o.killAt < 0 || o.killAt >= 1:
		return fmt.Errorf("--kill-at %v: want a fraction in [0, 1)", o.killAt)
	case o.signal != "kill" && o.signal != "term":
		return fmt.Errorf("--signal %q: want kill or term", o.signal)
	case o.killAt > 0 && o.workers < 2 && !o.replace:
		return errors.New("--kill-at with one worker needs --replace")
	case o.maxOpen < 1:
		return errors.New("--max-open-windows must be ≥ 1")
	case o.interval <= 0 || o.rows < 1:
		return errors.New("need --interval > 0 and --rows ≥ 1")
	}
	if o.keysMode() {
		if o.keyRecords < 1 || o.keyPoints < o.keyRecords {
			return errors.New("--keys mode needs --key-points ≥ --key-records ≥ 1")
		}
	} else if o.sets < 1 || o.points < 1 || o.chunk < 1 || o.interleave < 1 || o.lead < 1 {
		return errors.New("need --sets, --points, --chunk, --interleave and --lead ≥ 1")
	}
	return nil
}
