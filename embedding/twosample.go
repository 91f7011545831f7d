package embedding

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/distfeat/distfeat/internal/numeric"
	"github.com/distfeat/distfeat/sequential"
	"github.com/distfeat/distfeat/spec"
	"github.com/distfeat/distfeat/twosample"
)

// twoSampleFamily is a compiled `two_sample` family (docs/drift.md): a streaming two-sample
// test of each window against the reference sample of the spec, by the twosample package.
//
// Compilation reads the reference file twice, in bounded memory: the first 1000 points
// (normalised like the windows' points) give the moment features' centre and, unless the
// family sets bandwidth, the median heuristic; then every point is summarised. Draws: the
// frequencies with NewRNG(seed, name), the simulated null with NewRNG(seed, name+"/null").
// Sines and cosines are numeric.SincosFlat (bit-identical to numeric.Sincos); a window's
// random Fourier sums use the mmd family's SIMD kernel when the machine has one
// (twoSampleKernel), with the same integers. The sketch is the twosample.Window (point count and
// fixed-point feature sums); the output is Result.Vector as float32:
// [mmd2, statistic, p_value, n, T_mean, p_mean, T_mom, p_mom, T_rff, p_rff,
// mmd2 of band 1 … band K].
//
// With `ert` the family also has the column `<name>_seq` (SequentialColumns) and a
// calibrated sequential.Detector; a window's finalisation writes only the detector's
// constants there, and the caller that sees a key's windows in order (processor.Sequential)
// fills in the statistic and the alarm.
type twoSampleFamily struct {
	ref   *twosample.Reference
	alpha float64
	seq   *sequential.Detector // nil without ert
	cols  []Column
	// seqNotes are the between-windows detector's start-up warnings (SequentialWarnings).
	seqNotes []string
}

// TwoSampleColumns is the length of a two_sample family's vector for K bands.
func TwoSampleColumns(bands int) int { return twoSampleFixed + bands }

// twoSampleFixed is the number of values before the per-band MMD²s.
const twoSampleFixed = 10

// Positions of a two_sample vector's values (docs/drift.md).
const (
	// TwoSampleMMD2 is the index of the unbiased MMD² in a two_sample family's vector.
	TwoSampleMMD2 = 0
	// TwoSampleStatistic is the index of the aggregated statistic.
	TwoSampleStatistic = 1
	// TwoSamplePValue is the index of the test's p-value.
	TwoSamplePValue = 2
)

// referencePilot is how many leading reference points give the centre and the median
// heuristic (the median costs their pairwise distances).
const referencePilot = 1000

// compileTwoSample summarises the family's reference file.
func compileTwoSample(sp *spec.Spec, idx int) (family, error) {
	f := &sp.Families[idx]
	fieldErr := func(err error) error {
		return &spec.SpecError{Field: fmt.Sprintf("families[%d].reference", idx), Msg: err.Error()}
	}
	norm := referenceNormalizer(sp)
	var pilot []float64
	errEnough := errors.New("enough")
	_, err := readReference(f.ReferenceFile, sp.Dim, norm, func(u []float64) error {
		pilot = append(pilot, u...)
		if len(pilot) >= referencePilot*sp.Dim {
			return errEnough
		}
		return nil
	}, nil)
	if err != nil && !errors.Is(err, errEnough) {
		return nil, fieldErr(err)
	}
	if len(pilot) == 0 {
		return nil, fieldErr(fmt.Errorf("%s holds no points", f.ReferenceFile))
	}
	bw := f.Bandwidth
	if bw == 0 {
		if bw, err = twosample.MedianBandwidth(pilot, sp.Dim, referencePilot); err != nil {
			return nil, fieldErr(fmt.Errorf("%s: %v; set the family's bandwidth", f.ReferenceFile, err))
		}
	}
	fm, err := twosample.NewFeatureMap(twosample.Center(pilot, sp.Dim, referencePilot),
		twosample.DyadicBandwidths(bw, f.Bands), f.Frequencies, NewRNG(sp.Seed, f.Name), numeric.SincosFlat,
		twoSampleOptions(numeric.MMDBestPath())...)
	if err != nil {
		return nil, fieldErr(err)
	}
	b := fm.NewReferenceBuilder()
	var endLine func()
	if f.BetweenWindows {
		b.ByWindows()
		endLine = b.EndWindow // each line of the reference is one of its windows
	}
	digest, err := readReference(f.ReferenceFile, sp.Dim, norm, func(u []float64) error {
		b.Add(u)
		return nil
	}, endLine)
	if err != nil {
		return nil, fieldErr(err)
	}
	if f.ReferenceDigest != "" && digest != f.ReferenceDigest {
		return nil, fieldErr(fmt.Errorf("%s changed since the spec was loaded (its SHA-256 is now %s)", f.ReferenceFile, digest))
	}
	ref, err := b.Build(twosample.Config{Ridge: f.Ridge, Weights: twosample.MomentWeights(f.MomentWeight), BetweenWindows: f.BetweenWindows},
		NewRNG(sp.Seed, f.Name+"/null"))
	if err != nil {
		return nil, fieldErr(fmt.Errorf("%s: %w", f.ReferenceFile, err))
	}
	fam := &twoSampleFamily{ref: ref, alpha: f.Alpha,
		cols: []Column{{Name: f.Name, Family: f.Name, Len: TwoSampleColumns(f.Bands)}}}
	if f.ERT > 0 {
		bw := ref.Between()
		if bw.Windows > 0 {
			// Rank p-values among the reference's windows: the chain with their discrete law.
			fam.seq, err = sequential.CalibrateRanks(f.ERT, f.CusumK, int(bw.Windows))
		} else {
			fam.seq, err = sequential.Calibrate(f.ERT, f.CusumK)
		}
		if err != nil {
			return nil, &spec.SpecError{Field: fmt.Sprintf("families[%d].ert", idx), Msg: err.Error()}
		}
		if bw.Windows > 0 {
			fam.seqNotes = betweenNotes(f, bw, fam.seq)
		}
		// The plug-in raise for the evidence's persistence (none at or below 1).
		fam.seq = fam.seq.Persistent(bw.Persistence)
		fam.cols = append(fam.cols, Column{Name: f.Name + "_seq", Family: f.Name, Len: SequentialLen})
	}
	return fam, nil
}

// betweenNotes are the start-up warnings of a between-windows family's detector d (before a
// raise): when the steps of the rank p-values' run time put it well above the ERT, and when
// the reference's evidence persists, so that the threshold is raised.
func betweenNotes(f *spec.Family, b twosample.Between, d *sequential.Detector) []string {
	var notes []string
	if d.NullARL() > 1.2*f.ERT {
		notes = append(notes, fmt.Sprintf("with rank p-values among the reference's %d windows the run time moves in steps, and the nearest threshold above ert %g windows gives %.0f: false alarms rarer than asked; a smaller cusum_k or a reference of more windows has finer steps",
			b.Windows, f.ERT, d.NullARL()))
	}
	if persistent(b) {
		notes = append(notes, fmt.Sprintf("the evidence of the reference's consecutive windows persists (persistence %.2f ± %.2f over %d windows, 1 for independent windows), "+
			"so a CUSUM calibrated for independent windows would alarm far sooner than ert %g windows on a stream that wanders like its reference; "+
			"its threshold is raised ×%.2f to %.3g",
			b.Persistence, b.PersistenceSE, b.Windows, f.ERT, b.Persistence, float64(d.Threshold()*b.Persistence)))
		if d.K() < 3 {
			notes[len(notes)-1] += fmt.Sprintf("; with cusum_k %g that is not enough: on measured wandering streams false alarms still came up to 2.4× sooner than ert (cusum_k 3 held them within 16%%)", d.K())
		}
	}
	return notes
}

// persistent reports whether a between-windows reference's evidence persists from window to
// window beyond its estimate's noise (more than two standard errors above 1): then the
// threshold's raise (sequential.Detector.Persistent, by any persistence above 1) is more
// than noise, and the start-up warning says so.
func persistent(b twosample.Between) bool {
	return b.Windows > 0 && b.Persistence > 1+2*b.PersistenceSE
}

// twoSampleOptions gives the feature map the mmd kernel on a SIMD path (twoSampleKernel);
// on the portable path the windows keep the scalar SincosFlat, which is faster there than
// the portable kernel on one point's arguments at a time.
func twoSampleOptions(path numeric.MMDPath) []twosample.Option {
	if path != numeric.MMDPathAVX2 && path != numeric.MMDPathAVX512 {
		return nil
	}
	return []twosample.Option{twosample.WithFixedSincos(newTwoSampleKernel(path))}
}

// twoSampleKernel is numeric.MMDAccumulate as a twosample.FixedSincos. A window's point
// gives its arguments θ_f (computed by twosample, products rounded one by one: the mmd
// kernel's own θ = ω·u fuses them, which would change bits for d ≥ 2); they are passed as
// the frequencies of a single one-dimensional point u = 1, for which the kernel's θ is
// θ_f·1 = θ_f exactly, and it adds ToFixed(sin θ_f) and ToFixed(cos θ_f), bit-identical to
// ToFixed of numeric.Sincos (or SincosFlat) for |θ| ≤ numeric.SincosMaxArg on every path.
// Calling the kernel point by point costs little: its per-call overhead was measured at
// ~10 ns against ~80 ns for 104 arguments, and batching points (one-hot points of dimension
// B) measured slower.
type twoSampleKernel struct {
	path numeric.MMDPath
	one  []float64 // the point u = 1
}

func newTwoSampleKernel(path numeric.MMDPath) *twoSampleKernel {
	return &twoSampleKernel{path: path, one: []float64{1}}
}

// Lanes is numeric.MMDLanes: the kernel's rows are whole blocks of frequencies.
func (k *twoSampleKernel) Lanes() int { return numeric.MMDLanes }

// MaxArg is numeric.SincosMaxArg, the polynomial kernel's range (beyond it numeric.Sincos
// calls math.Sincos).
func (k *twoSampleKernel) MaxArg() float64 { return numeric.SincosMaxArg }

// AddFixed adds the fixed-point sines of theta to acc[:len(theta)] and cosines to the rest.
func (k *twoSampleKernel) AddFixed(theta []float64, acc []int64) {
	numeric.MMDAccumulate(k.path, theta, k.one, 1, len(theta), acc)
}

// referenceNormalizer maps a raw point into the unit cube as Embedder.Normalize does
// (clipped, or an error under out_of_bounds "reject").
func referenceNormalizer(sp *spec.Spec) func(x, u []float64) error {
	return func(x, u []float64) error {
		for j, v := range x {
			lo, w := sp.Bounds.Lo[j], sp.Bounds.Hi[j]-sp.Bounds.Lo[j]
			t := (v - lo) / w
			if t < 0 || t > 1 {
				if sp.OutOfBounds == "reject" {
					return fmt.Errorf("coordinate %d: %v outside [%v, %v]: %w", j, v, lo, sp.Bounds.Hi[j], ErrOutOfBounds)
				}
				t = min(max(t, 0), 1)
			}
			u[j] = t
		}
		return nil
	}
}

// referenceLine is one line of a reference file: a set in the format embed reads (only its
// points matter). Like every set file's, its lines may carry other fields (labels, ids),
// which are ignored: calibrate --two-sample proposes any set file it reads as a reference.
type referenceLine struct {
	Set    *string         `json:"set"`
	Points [][]float64     `json:"points"`
	T      json.RawMessage `json:"t"`
	End    json.RawMessage `json:"end"`
}

// readReference calls each with every point of the reference file, normalised, and endLine
// (if not nil) after each line's points, and returns the file's SHA-256. Errors name the file
// and line. each may stop the reading by returning an error (returned wrapped).
func readReference(path string, dim int, norm func(x, u []float64) error, each func(u []float64) error, endLine func()) (string, error) {
	file, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer file.Close()
	h := sha256.New()
	r := bufio.NewReaderSize(io.TeeReader(file, h), 1<<16)
	u := make([]float64, dim)
	for line := 1; ; line++ {
		text, rerr := r.ReadBytes('\n')
		if rerr != nil && rerr != io.EOF {
			return "", fmt.Errorf("read %s: %w", path, rerr)
		}
		if t := bytes.TrimSpace(text); len(t) > 0 {
			dec := json.NewDecoder(bytes.NewReader(t))
			var rec referenceLine
			if err := dec.Decode(&rec); err != nil {
				return "", fmt.Errorf("%s line %d: %v", path, line, err)
			}
			for p, x := range rec.Points {
				if len(x) != dim {
					return "", fmt.Errorf("%s line %d: point %d has %d coordinates, the spec's dim is %d", path, line, p, len(x), dim)
				}
				if err := norm(x, u); err != nil {
					return "", fmt.Errorf("%s line %d: point %d: %w", path, line, p, err)
				}
				if err := each(u); err != nil {
					return "", err
				}
			}
			if endLine != nil {
				endLine()
			}
		}
		if rerr == io.EOF {
			break
		}
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

func (t *twoSampleFamily) columns() []Column { return t.cols }

func (t *twoSampleFamily) newSketch() familySketch {
	return &twoSampleSketch{fam: t, w: t.ref.FeatureMap().NewWindow()}
}

// twoSampleSketch is one window's twosample.Window.
type twoSampleSketch struct {
	fam *twoSampleFamily
	w   *twosample.Window
}

func (s *twoSampleSketch) add(u []float64, _ int) { s.w.Add(u) }

func (s *twoSampleSketch) merge(other familySketch) {
	if err := s.w.Merge(other.(*twoSampleSketch).w); err != nil {
		panic("embedding: two_sample merge: " + err.Error()) // same compiled spec: unreachable
	}
}

func (s *twoSampleSketch) reset() { s.w.Reset() }

func (s *twoSampleSketch) sizeBytes() int { return s.w.SizeBytes() + 16 }

// addNanos: one argument and one sine and cosine (the mmd kernel) per frequency, and the
// moment features: ≈ 0.8 ns per feature (BenchmarkTwoSample: ≈ 157 ns for 204 at d = 2).
func (s *twoSampleSketch) addNanos() float64 {
	fm := s.fam.ref.FeatureMap()
	return 0.8 * float64(fm.Features())
}

func (s *twoSampleSketch) finalize(_ int64, out [][]float32) {
	res, err := s.fam.ref.Test(s.w)
	if err != nil {
		panic("embedding: two_sample test: " + err.Error()) // same compiled spec: unreachable
	}
	for i, v := range res.Vector() {
		out[0][i] = float32(v)
	}
	if d := s.fam.seq; d != nil {
		clear(out[1])
		out[1][SeqThreshold] = float32(d.Threshold())
		out[1][SeqERT] = float32(d.ERT())
	}
}

// SequentialLen is the length of a `<name>_seq` vector (docs/drift.md):
// [statistic, threshold, ert, alarm, run].
const SequentialLen = 5

// Positions in a `<name>_seq` vector.
const (
	// SeqStatistic is the CUSUM statistic after the window, in units of evidence −ln p.
	SeqStatistic = iota
	// SeqThreshold is the calibrated threshold h: the alarm fires when the statistic
	// reaches it.
	SeqThreshold
	// SeqERT is the expected run time, in windows, the threshold was calibrated for.
	SeqERT
	// SeqAlarm is 1 at a window that alarmed (the state then resets), else 0.
	SeqAlarm
	// SeqRun is the number of windows, this one included, since the statistic last left
	// 0: at an alarm, the change is estimated to have begun that many windows back.
	SeqRun
)

// SequentialColumn locates a two_sample family's sequential detector among an Embedder's
// columns.
type SequentialColumn struct {
	// PValue is the column of the family's test vector (its p-value at TwoSamplePValue).
	PValue int
	// Column is the `<name>_seq` column.
	Column int
	// Family is the family's name.
	Family string
	// Detector is the calibrated detector.
	Detector *sequential.Detector
}

// SequentialColumns lists the embedder's two_sample families with sequential detection.
func (e *Embedder) SequentialColumns() []SequentialColumn {
	var out []SequentialColumn
	for i, f := range e.fams {
		if t, ok := f.(*twoSampleFamily); ok && t.seq != nil {
			out = append(out, SequentialColumn{PValue: e.colsOf[i][0], Column: e.colsOf[i][0] + 1, Family: e.names[i], Detector: t.seq})
		}
	}
	return out
}

// SequentialWarnings says, for each two_sample family with `ert` whose deployment's run time
// between false alarms may be more than ±20% from the ERT because of its reference's
// sampling error (sequential.Detector.Advise; docs/drift.md), by how much, and what
// reference size would keep it within ±20%; and for each between_windows family whose
// reference's evidence persists from window to window, that its threshold was raised. The
// worker and `embed` print them at start-up.
func (e *Embedder) SequentialWarnings() []string {
	var out []string
	for i, f := range e.fams {
		t, ok := f.(*twoSampleFamily)
		if !ok || t.seq == nil {
			continue
		}
		if t.ref.Between().Windows > 0 {
			// The reference-spread model is the pooled null's.
			for _, n := range t.seqNotes {
				out = append(out, fmt.Sprintf("two_sample family %q: between_windows: %s (docs/drift.md, Correlated windows)", e.names[i], n))
			}
			continue
		}
		m, ert := t.ref.Points(), t.seq.ERT()
		a := t.seq.Advise(m)
		if a.Short >= (1-a.Within)*ert && a.Long <= (1+a.Within)*ert {
			continue
		}
		long := fmt.Sprintf("%.0f", a.Long)
		if a.Long >= 1e12 {
			long = "more than 10^12"
		}
		w := fmt.Sprintf("two_sample family %q: ert %g windows holds on average over references, not for one: with this reference of %d points, "+
			"the windows' evidence level varies by about ±%.2f from reference to reference, and this deployment's mean time between false alarms lies between about %.0f and %s windows (± one standard deviation of the reference's sampling error)",
			e.names[i], ert, m, a.Spread, a.Short, long)
		if a.Points > 0 {
			w += fmt.Sprintf("; a reference of about %d points would keep it within ±%.0f%% (extrapolated)", a.Points, 100*a.Within)
		}
		out = append(out, w+" (docs/drift.md)")
	}
	return out
}

// DriftColumn locates a two_sample family's vector among an Embedder's columns.
type DriftColumn struct {
	// Column is the index in Columns (and in each finalised window's vectors).
	Column int
	// Family is the family's name.
	Family string
	// Alpha is the family's flagging level.
	Alpha float64
}

// DriftColumns lists the embedder's two_sample families; a window's p-value is
// vectors[c.Column][TwoSamplePValue].
func (e *Embedder) DriftColumns() []DriftColumn {
	var out []DriftColumn
	for i, f := range e.fams {
		if t, ok := f.(*twoSampleFamily); ok {
			out = append(out, DriftColumn{Column: e.colsOf[i][0], Family: e.names[i], Alpha: t.alpha})
		}
	}
	return out
}
