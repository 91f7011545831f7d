package embedding

import (
	"slices"
	"testing"

	"github.com/distfeat/distfeat/spec"
)

// TestPointRetention: with WithPointRetention a sketch keeps its window's points in the
// order added (merged windows: its own, then the other's), however Add was split or shared
// among goroutines; Reset gives the bytes back; a window that does not fit the budget drops
// all its points (Points reports false) and frees them, and the budget never goes over.
func TestPointRetention(t *testing.T) {
	s, err := spec.ParseSpec([]byte(marginalTestSpec))
	if err != nil {
		t.Fatal(err)
	}
	s.Families = append(s.Families, spec.Family{Name: "mt", Kind: spec.KindMarginal, SetFamily: "psi", SigmaP: 0.3, SigmaX: 0.2, Features: 16})
	u := uniformPoints(NewRNG(8, "retain"), 5000, 2)

	budget := NewPointBudget(1 << 20)
	e, err := New(s, WithPointRetention(budget), WithAddWorkers(4))
	if err != nil {
		t.Fatal(err)
	}
	a, b := e.NewSketch(), e.NewSketch()
	a.Add(u[:2*100])
	a.Add(u[2*100 : 2*3000]) // large enough to be shared among goroutines
	b.Add(u[2*3000:])
	if err := a.Merge(b); err != nil {
		t.Fatal(err)
	}
	got, ok := a.Points()
	if !ok || !slices.Equal(got, u) {
		t.Fatalf("retained %d values (ok %v), want the %d added in order", len(got), ok, len(u))
	}
	if used := budget.Used(); used < int64(8*len(u)) || used > budget.Limit() {
		t.Fatalf("budget used %d, want between %d and the limit %d", used, 8*len(u), budget.Limit())
	}
	if a.SizeBytes() < 8*len(u) {
		t.Errorf("SizeBytes %d does not count the %d bytes of points", a.SizeBytes(), 8*len(u))
	}
	a.Reset()
	b.Reset()
	if budget.Used() != 0 {
		t.Fatalf("after Reset the budget holds %d bytes", budget.Used())
	}
	// The bits of the window features do not depend on retention.
	plain := mustNew(t, s)
	if w1, w2 := plain.Embed(u), e.Embed(u); !equalBits(w1[0], w2[0]) {
		t.Errorf("window features differ with point retention")
	}

	small := NewPointBudget(8 * 2 * 1000)
	e2, err := New(s, WithPointRetention(small))
	if err != nil {
		t.Fatal(err)
	}
	c := e2.NewSketch()
	c.Add(u[:2*500])
	if _, ok := c.Points(); !ok {
		t.Fatalf("500 points within a budget of 1000 were not retained")
	}
	c.Add(u[2*500 : 2*1500])
	if _, ok := c.Points(); ok || small.Dropped() != 1 || small.Used() != 0 {
		t.Fatalf("over the budget: ok %v, dropped %d, used %d; want false, 1, 0", ok, small.Dropped(), small.Used())
	}
	c.Add(u[2*1500 : 2*1510])
	if _, ok := c.Points(); ok || small.Used() != 0 {
		t.Fatalf("a window that lost its points must not retain later ones")
	}
	c.Reset()
	c.Add(u[:2*10])
	if p, ok := c.Points(); !ok || len(p) != 20 {
		t.Fatalf("after Reset the sketch retains again: %d values, ok %v", len(p), ok)
	}
	// Without a marginal_transfer family, retention is off.
	e3, err := New(mustSpec(t, marginalTestSpec), WithPointRetention(NewPointBudget(1<<20)))
	if err != nil {
		t.Fatal(err)
	}
	d := e3.NewSketch()
	d.Add(u[:20])
	if _, ok := d.Points(); ok {
		t.Errorf("a spec without marginal_transfer families retains points")
	}
}

func mustSpec(t *testing.T, doc string) *spec.Spec {
	t.Helper()
	s, err := spec.ParseSpec([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	return s
}
