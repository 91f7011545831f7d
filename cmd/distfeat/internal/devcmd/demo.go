//go:build dev

package devcmd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"sync"
	"time"

	"github.com/distfeat/distfeat/cmd/distfeat/internal/cli"
	"github.com/distfeat/distfeat/config"
	"github.com/distfeat/distfeat/embedding"
	"github.com/distfeat/distfeat/internal/stats"
	"github.com/distfeat/distfeat/internal/synth"
	"github.com/distfeat/distfeat/internal/testbroker"
	"github.com/distfeat/distfeat/kafkaio"
	"github.com/distfeat/distfeat/schema"
	"github.com/distfeat/distfeat/service"
	"github.com/distfeat/distfeat/spec"
)

// demoOptions sizes the demo.
type demoOptions struct {
	sets, points, workers, partitions int
	seed                              uint64
	timeout                           time.Duration
	verbose                           bool
}

func runDemo(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("demo", "", "", stderr)
	var o demoOptions
	fs.IntVar(&o.sets, "sets", 40, "synthetic sets (truncated Gaussian mixtures on [0,1]²)")
	fs.IntVar(&o.points, "points", 2500, "points per set")
	fs.IntVar(&o.workers, "workers", 2, "workers in the consumer group")
	fs.IntVar(&o.partitions, "partitions", 8, "partitions of the input topic")
	fs.Uint64Var(&o.seed, "seed", 1, "seed of the synthetic sets")
	fs.DurationVar(&o.timeout, "timeout", 2*time.Minute, "give up waiting for features after this long")
	fs.BoolVar(&o.verbose, "v", false, "show the workers' logs")
	if err := cli.ParseArgs(fs, args); err != nil {
		return err
	}
	if o.sets < 2 || o.points < 1 || o.workers < 1 {
		return fmt.Errorf("need --sets ≥ 2, --points ≥ 1, --workers ≥ 1")
	}
	rep, err := demo(ctx, o, stderr)
	if rep != nil {
		rep.print(stdout)
	}
	if err != nil {
		return err
	}
	if !rep.ok() {
		return errors.New("check failed (see report)")
	}
	return nil
}

// demoReport is what the demo measured.
type demoReport struct {
	sets, windows, duplicates, points int
	elapsed                           time.Duration
	identical, mismatched             int
	mmdPairs                          int
	mmdMaxErr, mmdR2                  float64
	jsPairs                           int
	jsR2, jsRMSE                      float64
	failures                          []string
}

func (r *demoReport) ok() bool { return len(r.failures) == 0 }

func (r *demoReport) print(w io.Writer) {
	fmt.Fprintf(w, "distfeat demo\n")
	fmt.Fprintf(w, "  sets produced          %d (%d points each, %d points in all)\n", r.sets, r.points/max(r.sets, 1), r.points)
	fmt.Fprintf(w, "  windows received       %d (%d duplicate deliveries)\n", r.windows, r.duplicates)
	if r.elapsed > 0 {
		fmt.Fprintf(w, "  throughput             %.0f points/s, %.1f windows/s (produce → last feature record)\n",
			float64(r.points)/r.elapsed.Seconds(), float64(r.windows)/r.elapsed.Seconds())
	}
	fmt.Fprintf(w, "  bit-identical to embed %d of %d windows\n", r.identical, r.identical+r.mismatched)
	fmt.Fprintf(w, "  mmd vs exact MMK       %d pairs: max |error| %.2e, R² %.4f\n", r.mmdPairs, r.mmdMaxErr, r.mmdR2)
	fmt.Fprintf(w, "  hdd_js vs exact JS     %d pairs: R² %.4f, RMSE %.4f (true densities, quadrature)\n", r.jsPairs, r.jsR2, r.jsRMSE)
	if r.ok() {
		fmt.Fprintf(w, "  result                 PASS\n")
		return
	}
	for _, f := range r.failures {
		fmt.Fprintf(w, "  FAIL                   %s\n", f)
	}
}

// demo runs the whole pipeline in process: embedded broker, workers, producer, reader and
// the checks against exact kernels.
func demo(ctx context.Context, o demoOptions, stderr io.Writer) (*demoReport, error) {
	logLevel := "error"
	if o.verbose {
		logLevel = "info"
	}
	log := service.NewLogger(stderr, logLevel, "text")
	prog := cli.NewProgress(stderr, "demo")
	defer prog.Done()

	prog.Update("starting embedded broker")
	b, err := testbroker.Start(ctx, testbroker.Options{Partitions: o.partitions})
	if err != nil {
		return nil, err
	}
	defer b.Close()
	brokers := b.Addrs()

	sp := spec.DefaultSpec()
	emb, err := embedding.New(sp)
	if err != nil {
		return nil, err
	}
	stopWorkers := startDemoWorkers(ctx, brokers, o.workers, log)
	defer stopWorkers()

	// The sets: synthetic truncated mixtures, kept for the checks.
	sets := synth.Sets(o.seed, o.sets, o.points, sp.Dim)
	batches := make([]schema.Batch, len(sets))
	t0 := time.Now().UnixMilli()
	rep := &demoReport{sets: len(sets)}
	for i, s := range sets {
		batches[i] = schema.Batch{Set: s.ID, Points: s.Points, N: len(s.Points) / sp.Dim, EventTime: t0 + int64(i), End: true}
		rep.points += batches[i].N
	}

	// Read features from the beginning while producing.
	rctx, stopReader := context.WithTimeout(ctx, o.timeout)
	defer stopReader()
	rd := newDemoReader(rep, len(sets), prog)
	readErr := make(chan error, 1)
	go func() {
		readErr <- kafkaio.ConsumeFeatures(rctx, kafkaio.PlainCluster(brokers), testbroker.TopicFeatures, true, 0, rd.onRecord, rd.onBad)
	}()

	start := time.Now()
	if err := produceDemo(ctx, brokers, sp.Dim, batches, prog); err != nil {
		return rep, err
	}
	select {
	case <-rd.done:
	case <-rctx.Done():
	}
	rep.elapsed = time.Since(start)
	stopReader()
	if err := <-readErr; err != nil {
		return rep, err
	}
	rd.mu.Lock()
	rep.windows = len(rd.got)
	rd.mu.Unlock()
	if rep.windows < len(sets) {
		rep.failures = append(rep.failures, fmt.Sprintf("only %d of %d windows arrived within %s", rep.windows, len(sets), o.timeout))
	}

	prog.Update("checking against offline embedding and exact kernels")
	checkDemo(rep, emb, sets, rd.got)
	return rep, nil
}

// startDemoWorkers runs n workers in process, each with its own metrics endpoint on a free
// loopback port; the returned function stops them and waits.
func startDemoWorkers(ctx context.Context, brokers []string, n int, log *slog.Logger) (stop func()) {
	wctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	for i := 0; i < n; i++ {
		cfg := demoWorkerConfig(brokers)
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			if err := service.Serve(wctx, cfg, log.With("worker", i), nil); err != nil {
				log.Error("worker stopped", "worker", i, "err", err)
			}
		}(i)
	}
	return func() { cancel(); wg.Wait() }
}

// produceDemo publishes the first half of the sets as JSON records, the rest as Arrow.
func produceDemo(ctx context.Context, brokers []string, dim int, batches []schema.Batch, prog *cli.Progress) error {
	half := len(batches) / 2
	if _, _, err := publish(ctx, brokers, kafkaio.FormatJSON, dim, 500, batches[:half], prog); err != nil {
		return fmt.Errorf("produce (json): %w", err)
	}
	if _, _, err := publish(ctx, brokers, kafkaio.FormatArrow, dim, 500, batches[half:], prog); err != nil {
		return fmt.Errorf("produce (arrow): %w", err)
	}
	return nil
}

// demoReader collects the first delivery of each set's feature record and compares later
// deliveries with it byte for byte.
type demoReader struct {
	rep  *demoReport
	want int
	prog *cli.Progress
	done chan struct{}

	mu  sync.Mutex
	got map[string][]schema.FeatureRecord
	raw map[string][]byte
}

func newDemoReader(rep *demoReport, want int, prog *cli.Progress) *demoReader {
	return &demoReader{rep: rep, want: want, prog: prog, done: make(chan struct{}),
		got: map[string][]schema.FeatureRecord{}, raw: map[string][]byte{}}
}

func (d *demoReader) onRecord(m kafkaio.Record, recs []schema.FeatureRecord, _ []string) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	key := string(m.Key)
	if prev, ok := d.raw[key]; ok {
		d.rep.duplicates++
		if string(prev) != string(m.Value) {
			d.rep.failures = append(d.rep.failures, fmt.Sprintf("set %s delivered twice with different bytes", key))
		}
		return true
	}
	d.raw[key] = m.Value
	d.got[key] = recs
	d.prog.Update("%d/%d windows received", len(d.got), d.want)
	if len(d.got) == d.want {
		close(d.done)
		return false
	}
	return true
}

func (d *demoReader) onBad(m kafkaio.Record, err error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.rep.failures = append(d.rep.failures, fmt.Sprintf("undecodable feature record at partition %d offset %d: %v", m.Partition, m.Offset, err))
}

// demoWorkerConfig is a worker configuration for the demo's embedded broker.
func demoWorkerConfig(brokers []string) *config.Config {
	return &config.Config{
		Topics: config.Topics{Brokers: brokers, InputTopic: testbroker.TopicPoints, OutputTopic: testbroker.TopicFeatures,
			DLQTopic: testbroker.TopicDLQ, Group: "distfeat-demo"},
		Window: "set", IdleTimeout: time.Minute, MaxOpenWindows: 1000,
		Delivery: config.Delivery{Limits: config.Limits{MaxMessageBytes: 1 << 20},
			SessionTimeout: 6 * time.Second, CommitInterval: time.Second},
		MetricsAddr: "127.0.0.1:0", ShutdownTimeout: 10 * time.Second, LogLevel: "info", LogFormat: "text",
	}
}

// checkDemo compares received features with the offline embedding (bit for bit) and with
// exact kernels: the empirical mean-map kernel for mmd, the JS kernel between the true
// mixture densities for hdd_js.
func checkDemo(rep *demoReport, emb *embedding.Embedder, sets []synth.Set, got map[string][]schema.FeatureRecord) {
	colIdx := map[string]int{}
	for i, c := range emb.Columns() {
		colIdx[c.Name] = i
	}
	vec := func(name string) func(id string) []float32 {
		return func(id string) []float32 {
			if recs := got[id]; len(recs) > 0 {
				return recs[0].Vectors[colIdx[name]]
			}
			return nil
		}
	}
	checkIdentical(rep, emb, sets, got)
	sp := emb.Spec()
	if fam, ok := familyOf(sp, spec.KindMMD); ok {
		checkMMD(rep, sp.Dim, fam, sets, vec(fam.Name))
	}
	if fam, ok := familyOf(sp, spec.KindHDD); ok && fam.Divergence == "js" && sp.Dim == 2 {
		checkJS(rep, fam, sets, vec(fam.Name))
	}
}

// checkIdentical: every received window is bit-identical to the offline path.
func checkIdentical(rep *demoReport, emb *embedding.Embedder, sets []synth.Set, got map[string][]schema.FeatureRecord) {
	for _, s := range sets {
		recs := got[s.ID]
		if len(recs) == 0 {
			continue
		}
		u := make([]float64, len(s.Points))
		if _, err := emb.Normalize(u, s.Points); err != nil {
			rep.failures = append(rep.failures, err.Error())
			continue
		}
		want := emb.Embed(u)
		same := recs[0].N == int64(len(s.Points)/emb.Dim())
		for i := range want {
			for j := range want[i] {
				if math.Float32bits(want[i][j]) != math.Float32bits(recs[0].Vectors[i][j]) {
					same = false
				}
			}
		}
		if same {
			rep.identical++
		} else {
			rep.mismatched++
		}
	}
	if rep.mismatched > 0 {
		rep.failures = append(rep.failures, fmt.Sprintf("%d windows differ from distfeat embed on the same points", rep.mismatched))
	}
}

// checkMMD: z̄ᵀz̄′ against the exact biased MMK of the same samples (O(n²) per pair, so on the
// first 8 sets). With D features the error's standard deviation is about 1/√D ≈ 0.03.
func checkMMD(rep *demoReport, dim int, fam spec.Family, sets []synth.Set, vec func(id string) []float32) {
	est, exact := pairwise(sets[:min(8, len(sets))], vec,
		func(i, j int) float64 { return synth.ExactMMK(sets[i].Points, sets[j].Points, dim, fam.Bandwidth) })
	rep.mmdPairs = len(est)
	rep.mmdR2 = stats.RSquared(est, exact)
	for i := range est {
		rep.mmdMaxErr = math.Max(rep.mmdMaxErr, math.Abs(est[i]-exact[i]))
	}
	// 0.15 is five standard deviations of a single-pair error at D=1024 (the error of a
	// mean of D/2 bounded terms has sd ≤ √(2/D) ≈ 0.044; over ≤ 28 pairs a 5-sd
	// excursion has probability < 1e-5).
	if rep.mmdPairs > 0 && rep.mmdMaxErr > 0.15 {
		rep.failures = append(rep.failures, fmt.Sprintf("mmd kernel error %.3f exceeds 0.15", rep.mmdMaxErr))
	}
}

// checkJS: z(A(p̂))ᵀz(A(q̂)) against exp(−JS(p,q)/(2σ²)) of the true densities.
func checkJS(rep *demoReport, fam spec.Family, sets []synth.Set, vec func(id string) []float32) {
	k := min(20, len(sets))
	dens := make([][]float64, k)
	const g = 128
	for i := 0; i < k; i++ {
		dens[i] = gridDensity(sets[i].Mixture, g)
	}
	est, exact := pairwise(sets[:k], vec,
		func(i, j int) float64 { return math.Exp(-jsDivergence(dens[i], dens[j]) / (2 * fam.Sigma * fam.Sigma)) })
	rep.jsPairs = len(est)
	rep.jsR2 = stats.RSquared(est, exact)
	var se float64
	for i := range est {
		se += (est[i] - exact[i]) * (est[i] - exact[i])
	}
	if len(est) > 0 {
		rep.jsRMSE = math.Sqrt(se / float64(len(est)))
	}
	// The paper's Gram experiment reaches R² = 0.966 with D = 7000; the default spec has
	// D = 4096, and 190 pairs of 2500-point sets give a comfortably lower bar of 0.9.
	if rep.jsPairs > 0 && rep.jsR2 < 0.9 {
		rep.failures = append(rep.failures, fmt.Sprintf("hdd_js kernel R² %.3f below 0.9", rep.jsR2))
	}
}

// pairwise returns, over all pairs i < j of sets that both have features, the estimated
// kernel (inner product of the received vectors) and the exact one.
func pairwise(sets []synth.Set, vec func(id string) []float32, exactKernel func(i, j int) float64) (est, exact []float64) {
	for i := range sets {
		for j := i + 1; j < len(sets); j++ {
			a, b := vec(sets[i].ID), vec(sets[j].ID)
			if a == nil || b == nil {
				continue
			}
			est = append(est, stats.Dot32(a, b))
			exact = append(exact, exactKernel(i, j))
		}
	}
	return est, exact
}

func familyOf(s *spec.Spec, kind string) (spec.Family, bool) {
	for _, f := range s.Families {
		if f.Kind == kind {
			return f, true
		}
	}
	return spec.Family{}, false
}

// gridDensity evaluates a mixture density at the g×g cell midpoints of [0,1]².
func gridDensity(m *synth.Mixture, g int) []float64 {
	out := make([]float64, g*g)
	u := make([]float64, 2)
	for i := 0; i < g; i++ {
		for j := 0; j < g; j++ {
			u[0], u[1] = (float64(i)+0.5)/float64(g), (float64(j)+0.5)/float64(g)
			out[i*g+j] = m.Density(u)
		}
	}
	return out
}

// jsDivergence is ∫ ½p ln(2p/(p+q)) + ½q ln(2q/(p+q)) by the midpoint rule.
func jsDivergence(p, q []float64) float64 {
	var s float64
	for i := range p {
		a, b := p[i], q[i]
		m := a + b
		if a > 0 {
			s += 0.5 * a * math.Log(2*a/m)
		}
		if b > 0 {
			s += 0.5 * b * math.Log(2*b/m)
		}
	}
	return s / float64(len(p))
}
