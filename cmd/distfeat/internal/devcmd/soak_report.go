//go:build dev

package devcmd

// The soak's report: timeline, throughput, memory, failures.

import (
	"bytes"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/distfeat/distfeat/internal/outfile"
)

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

// writeCSV writes every sample to f and commits it.
func (r *soakReport) writeCSV(f *outfile.File) error {
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
	if _, err := f.Write(b.Bytes()); err != nil {
		return err
	}
	return f.Commit()
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
