package sequential

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestRunTimeAtSimulated checks the scaling behind RunTimeAt (evidence of mean μ is the chain
// with K/μ and scale c·μ) against simulation: 4000 streams per row, p-values exp(−μ·E) with
// E ~ Exp(1), until the first alarm. The run lengths are close to geometric (sd ≈ mean), so
// the mean of 4000 has a standard error of about 1.6%; the tolerance is 4.5 of them.
func TestRunTimeAtSimulated(t *testing.T) {
	for _, c := range []struct{ ert, mu float64 }{{100, 0.86}, {100, 1.14}, {1000, 1.14}, {1000, 1.07}} {
		d, err := Calibrate(c.ert, 0)
		if err != nil {
			t.Fatal(err)
		}
		want := d.RunTimeAt(c.mu)
		rng := rand.New(rand.NewPCG(11, uint64(1000*c.mu)))
		const streams = 4000
		total := 0.0
		for range streams {
			var st State
			for w := 1; ; w++ {
				var step Step
				if st, step = d.Update(st, math.Exp(-c.mu*rng.ExpFloat64())); step.Alarm {
					total += float64(w)
					break
				}
			}
		}
		got := total / streams
		if math.Abs(got/want-1) > 4.5/math.Sqrt(streams) {
			t.Errorf("ERT %v, evidence mean %v: simulated run time %.1f, RunTimeAt %.1f", c.ert, c.mu, got, want)
		}
		if (c.mu > 1) != (want < c.ert) {
			t.Errorf("ERT %v, evidence mean %v: RunTimeAt %.1f on the wrong side of the ERT", c.ert, c.mu, want)
		}
	}
	d, err := Calibrate(1000, 0)
	if err != nil {
		t.Fatal(err)
	}
	if got := d.RunTimeAt(1); math.Abs(got/1000-1) > 1e-8 {
		t.Errorf("RunTimeAt(1) = %v, want the ERT 1000", got)
	}
}

// TestAdvise: the advised reference size is consistent with the spread model: at that size
// both run times are within ±20% of the ERT, at a quarter of it they are not; a bigger
// reference narrows the range.
func TestAdvise(t *testing.T) {
	for _, ert := range []float64{100, 1000, 1e4} {
		d, err := Calibrate(ert, 0)
		if err != nil {
			t.Fatal(err)
		}
		a := d.Advise(2000)
		if !(a.Short < ert && a.Long > ert) {
			t.Errorf("ERT %v: range %.0f … %.0f does not hold the ERT", ert, a.Short, a.Long)
		}
		if a.Points <= 2000 {
			t.Fatalf("ERT %v: advised %d points, no more than the 2000 that miss ±20%%", ert, a.Points)
		}
		at := d.Advise(a.Points)
		// The bisection stops within 0.5/2¹⁶ of the largest spread that passes: allow 0.2%.
		if at.Short < 0.798*ert || at.Long > 1.202*ert {
			t.Errorf("ERT %v: at the advised %d points the range is %.0f … %.0f, beyond ±20%%", ert, a.Points, at.Short, at.Long)
		}
		if q := d.Advise(a.Points / 4); q.Short >= 0.8*ert && q.Long <= 1.2*ert {
			t.Errorf("ERT %v: a quarter of the advised size (%d points) is already within ±20%%: %.0f … %.0f", ert, a.Points/4, q.Short, q.Long)
		}
		if b := d.Advise(8000); !(b.Short > a.Short && b.Long < a.Long) {
			t.Errorf("ERT %v: 8000 points give %.0f … %.0f, not inside 2000 points' %.0f … %.0f", ert, b.Short, b.Long, a.Short, a.Long)
		}
		t.Logf("ERT %v, 2000 points: spread ±%.3f, run time %.0f … %.0f, ±20%% from %d points", ert, a.Spread, a.Short, a.Long, a.Points)
	}
}
