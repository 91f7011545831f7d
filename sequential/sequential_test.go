package sequential

import (
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestChainARLClosedForm checks the linear solve against closed forms: the reflected simple
// random walk S' = max(0, S ± 1) (probability ½ each) first reaches h after h(h+1) steps on
// average from 0, and a walk that only climbs by one with probability q after h/q.
func TestChainARLClosedForm(t *testing.T) {
	for _, h := range []int{1, 2, 5, 40, 256} {
		if got, want := chainARL(-1, []float64{0.5, 0, 0.5}, h), float64(h*(h+1)); math.Abs(got-want) > 1e-9*want {
			t.Errorf("±1 walk, h=%d: ARL %v, want %v", h, got, want)
		}
		if got, want := chainARL(0, []float64{0.75, 0.25}, h), float64(h)/0.25; math.Abs(got-want) > 1e-9*want {
			t.Errorf("climbing walk, h=%d: ARL %v, want %v", h, got, want)
		}
	}
}

// TestNullPMF: the increment law sums to 1 and its mean is that of round(c(min(E,EMax)−K)),
// which for a fine scale is close to E[min(E, EMax)] − K = 1 − e^−EMax − K.
func TestNullPMF(t *testing.T) {
	for _, c := range []float64{5, 20, 80} {
		lo, pmf := NullPMF(DefaultK, c)
		sum, mean := 0.0, 0.0
		for i, q := range pmf {
			if q < 0 {
				t.Fatalf("c=%v: negative probability %v at J=%d", c, q, lo+int64(i))
			}
			sum += q
			mean += q * float64(lo+int64(i))
		}
		if math.Abs(sum-1) > 1e-12 {
			t.Errorf("c=%v: pmf sums to %v", c, sum)
		}
		// Rounding to the nearest integer moves the mean by at most ½ unit per draw, and by
		// much less on a smooth law (the error averages out): 1/c of a unit of E is loose.
		want := (1 - math.Exp(-EMax) - DefaultK) * c
		if math.Abs(mean-want) > 0.5 {
			t.Errorf("c=%v: mean increment %v, want %v ± 0.5", c, mean, want)
		}
	}
}

func TestCalibrateHitsERT(t *testing.T) {
	for _, ert := range []float64{10, 100, 1000, 1e4, 1e6} {
		for _, k := range []float64{0, 1.2, 2.5} {
			if ert == 10 && k == 2.5 {
				continue // below e^k: TestCalibrateErrors
			}
			d, err := Calibrate(ert, k)
			if err != nil {
				t.Fatalf("ert %v k %v: %v", ert, k, err)
			}
			if math.Abs(d.NullARL()-ert) > 1e-8*ert {
				t.Errorf("ert %v k %v: null ARL %v", ert, k, d.NullARL())
			}
			if !(d.Threshold() > 0) {
				t.Errorf("ert %v k %v: threshold %v", ert, k, d.Threshold())
			}
		}
	}
}

func TestCalibrateErrors(t *testing.T) {
	for _, c := range []struct{ ert, k float64 }{{5, 0}, {10, 2.5}, {math.NaN(), 0}, {2e6, 0}, {100, 1}, {100, -2}, {100, math.Inf(1)},
		// Out of reach: the run time jumps across the ERT (to 68 710, 142 158, 2.9·10⁶ and
		// 160 737 windows) where a window's capped evidence crosses the threshold.
		{1e5, 2.5}, {3e5, 4}, {1e6, 5}, {1e6, 6}} {
		if _, err := Calibrate(c.ert, c.k); !errors.Is(err, ErrConfig) {
			t.Errorf("Calibrate(%v, %v): error %v, want ErrConfig", c.ert, c.k, err)
		}
	}
}

// runLengths simulates n no-change streams of uniform p-values (what the detector sees while
// the stream matches the reference) and returns each one's windows until the first alarm.
func runLengths(d *Detector, n int, rng *rand.Rand) []float64 {
	out := make([]float64, n)
	for i := range out {
		var st State
		for w := 1; ; w++ {
			var step Step
			st, step = d.Update(st, 1-rng.Float64()) // (0, 1]
			if step.Alarm {
				out[i] = float64(w)
				break
			}
		}
	}
	return out
}

// ksGeometric is the Kolmogorov–Smirnov distance between the sample's empirical law and the
// geometric law on 1, 2, … with the given mean, and its asymptotic p-value (conservative for
// a discrete law).
func ksGeometric(x []float64, mean float64) (dist, p float64) {
	s := slices.Clone(x)
	slices.Sort(s)
	n := float64(len(s))
	q := 1 - 1/mean
	for i := 0; i < len(s); {
		j := i
		for j < len(s) && s[j] == s[i] {
			j++
		}
		f := 1 - math.Pow(q, s[i]) // P(RL ≤ s[i])
		fBelow := 1 - math.Pow(q, s[i]-1)
		dist = max(dist, math.Abs(float64(j)/n-f), math.Abs(float64(i)/n-fBelow))
		i = j
	}
	return dist, kolmogorovQ(math.Sqrt(n) * dist)
}

// kolmogorovQ is P(K > x) for the Kolmogorov distribution.
func kolmogorovQ(x float64) float64 {
	if x < 0.2 {
		return 1
	}
	s := 0.0
	for k := 1; k <= 100; k++ {
		s += 2 * math.Pow(-1, float64(k-1)) * math.Exp(-2*float64(k*k)*x*x)
	}
	return min(max(s, 0), 1)
}

// TestRunLengthCalibration is the calibration study: for ERT 100 and 1000 windows and two
// reference values, 2000 simulated no-change streams each (p-values uniform: exactly the
// input the detector sees while the per-window test is calibrated), on two seeds.
//
// Tolerance: the run lengths are close to geometric with mean ERT, so their standard
// deviation is about ERT and the mean of 2000 has a standard error of ERT/√2000 = 2.24% of
// ERT; ±10% is 4.5 standard errors (a false failure about once in 10⁵ runs per row). The
// memorylessness is checked with a Kolmogorov–Smirnov test against the geometric law of
// mean ERT at level 0.001 per row (conservative for a discrete law).
func TestRunLengthCalibration(t *testing.T) {
	const streams = 2000
	for _, seed := range []uint64{1, 2} {
		for _, ert := range []float64{100, 1000} {
			for _, k := range []float64{DefaultK, 2.5} {
				d, err := Calibrate(ert, k)
				if err != nil {
					t.Fatal(err)
				}
				rl := runLengths(d, streams, rand.New(rand.NewPCG(seed, uint64(ert))))
				mean := 0.0
				for _, r := range rl {
					mean += r
				}
				mean /= streams
				dist, p := ksGeometric(rl, ert)
				t.Logf("seed %d ERT %4.0f K %.1f: threshold %.3f, mean run length %7.1f (%+.1f%%), KS distance %.4f p %.3f, %d streams",
					seed, ert, k, d.Threshold(), mean, 100*(mean/ert-1), dist, p, streams)
				if math.Abs(mean/ert-1) > 0.10 {
					t.Errorf("seed %d ERT %v K %v: mean run length %v, want within ±10%%", seed, ert, k, mean)
				}
				if p < 0.001 {
					t.Errorf("seed %d ERT %v K %v: run lengths not geometric: KS distance %v, p %v", seed, ert, k, dist, p)
				}
			}
		}
	}
}

// TestUpdateResetsAndEstimatesChange: a run of strong evidence after quiet windows alarms,
// the run counts the windows since S left 0, and the state resets.
func TestUpdateResetsAndEstimatesChange(t *testing.T) {
	d, err := Calibrate(1000, 0)
	if err != nil {
		t.Fatal(err)
	}
	var st State
	for range 50 {
		st, _ = d.Update(st, 0.9) // E = 0.105 < K: S stays 0
	}
	if st != (State{}) {
		t.Fatalf("quiet windows: state %+v", st)
	}
	var step Step
	n := 0
	for !step.Alarm {
		st, step = d.Update(st, 0.01) // E = 4.6 > K
		n++
		if n > 100 {
			t.Fatal("no alarm after 100 windows of p = 0.01")
		}
	}
	if step.Run != int64(n) || st != (State{}) || step.Statistic < d.Threshold() {
		t.Errorf("alarm after %d windows: step %+v, state %+v, threshold %v", n, step, st, d.Threshold())
	}
	// The alarm needs about h/(E−K) windows: between that and one more.
	if want := d.Threshold() / (-math.Log(0.01) - d.K()); float64(n) < want-1 || float64(n) > want+1 {
		t.Errorf("alarm after %d windows, want about %.1f", n, want)
	}
}

// TestPersistent: the raised detector's threshold is r times the calibrated one (r ≤ 1: the
// detector itself), and on the stream of known persistence where the raise is exact — every
// window's p-value repeated m times, so the evidence's persistence is m and the CUSUM moves
// in blocks of m equal steps (monotone, so it alarms within a block exactly when the block's
// sum would cross) — the run length is m times the ERT in windows: the ERT in blocks. The
// unraised detector alarms far sooner there. Tolerance: ±10% is over 7 standard errors of
// the mean run length of about 2000 (geometric) run lengths.
func TestPersistent(t *testing.T) {
	d, err := Calibrate(200, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range []float64{0, 0.5, 1} {
		if d.Persistent(r) != d {
			t.Errorf("Persistent(%v) is not the detector itself", r)
		}
	}
	const m = 3
	p := d.Persistent(m)
	if got := p.Threshold() / d.Threshold(); math.Abs(got-m) > 1e-12 {
		t.Errorf("Persistent(%d) multiplied the threshold by %v", m, got)
	}
	if p.ERT() != d.ERT() || p.K() != d.K() || !(p.NullARL() > 10*d.ERT()) {
		t.Errorf("Persistent(%d): ERT %v K %v NullARL %v, want the ERT and K unchanged and the independent-windows run time far above the ERT",
			m, p.ERT(), p.K(), p.NullARL())
	}
	rng := rand.New(rand.NewPCG(8, 13))
	runLength := func(det *Detector, windows int) float64 {
		var st State
		alarms := 0
		var pv float64
		for w := range windows {
			if w%m == 0 {
				pv = 1 - rng.Float64()
			}
			var step Step
			if st, step = det.Update(st, pv); step.Alarm {
				alarms++
			}
		}
		return float64(windows) / float64(alarms)
	}
	raised, plain := runLength(p, 2000*m*200), runLength(d, 200*m*200)
	t.Logf("blocks of %d: raised %.0f windows per false alarm (want %d), unraised %.0f", m, raised, m*200, plain)
	if want := m * d.ERT(); math.Abs(raised/want-1) > 0.1 {
		t.Errorf("raised: %.0f windows per false alarm on blocks of %d repeated p-values, want %.0f ± 10%%", raised, m, want)
	}
	if !(plain < 0.5*d.ERT()) {
		t.Errorf("unraised: %.0f windows per false alarm on blocks of %d repeated p-values; want well under the ERT %v (the case no longer shows dependence)", plain, m, d.ERT())
	}
}

// TestCalibrateRanks: for p-values that are ranks among n null statistics, the chain with
// their discrete law hits the ERT within 1% (its run time is a step function of the scale), and a simulation of independent rank p-values
// agrees (1000·ERT windows, about 1000 alarms: the mean run length's standard error is
// about 3%, and ±12% is 4 of them); the continuous calibration runs far longer on them.
func TestCalibrateRanks(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 5))
	for _, n := range []int{50, 700} {
		for _, ert := range []float64{100, 1000} {
			d, err := CalibrateRanks(ert, 0, n)
			if err != nil {
				t.Fatalf("n %d ert %v: %v", n, ert, err)
			}
			if math.Abs(d.NullARL()/ert-1) > 1e-2 {
				t.Errorf("n %d ert %v: NullARL %v", n, ert, d.NullARL())
			}
			cont, err := Calibrate(ert, 0)
			if err != nil {
				t.Fatal(err)
			}
			simulate := func(det *Detector) float64 {
				var st State
				alarms, windows := 0, int(1000*ert)
				for range windows {
					var step Step
					if st, step = det.Update(st, float64(1+rng.IntN(n+1))/float64(n+1)); step.Alarm {
						alarms++
					}
				}
				return float64(windows) / float64(max(alarms, 1))
			}
			got, longer := simulate(d), simulate(cont)
			t.Logf("n %d ert %v: ranks-calibrated %.0f windows per false alarm, continuous-calibrated %.0f", n, ert, got, longer)
			if math.Abs(got/ert-1) > 0.12 {
				t.Errorf("n %d ert %v: %.0f windows per false alarm, want %v ± 12%%", n, ert, got, ert)
			}
			if n == 50 && !(longer > 1.5*ert) {
				t.Errorf("n %d ert %v: the continuous calibration ran %.0f windows on rank p-values; want far above the ERT (the case no longer shows why ranks need their own law)", n, ert, longer)
			}
		}
	}
	if _, err := CalibrateRanks(100, 0, 0); !errors.Is(err, ErrConfig) {
		t.Errorf("CalibrateRanks with n = 0: %v, want ErrConfig", err)
	}
}
