package embedding

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/distfeat/distfeat/spec"
)

// TestMMDNUFFTMatchesDirect: the nufft method's features are the direct method's (same
// draws, same layout) within 1e-6 of the feature scale √(2/D), the requirement
// (the transform's error is at most about 4.5e-7 of it at w = 8, internal/nufft's TestAccuracy;
// float32 rounding adds at most 6e-8 relative to |features| ≤ √(2/D)), for d = 1, 2, 3,
// bandwidths from 0.05 to 2 and windows from 1 to 3000 points.
func TestMMDNUFFTMatchesDirect(t *testing.T) {
	for _, d := range []int{1, 2, 3} {
		for _, bw := range []float64{0.05, 0.3, 2} {
			doc := func(method string) *spec.Spec {
				s, err := spec.ParseSpec(fmt.Appendf(nil, `{"dim": %d, "seed": 3, "families": [
					{"name": "m", "kind": "mmd", "features": 512, "bandwidth": %v, "method": %q}]}`, d, bw, method))
				if err != nil {
					t.Fatal(err)
				}
				return s
			}
			direct, nufft := mustNew(t, doc("direct")), mustNew(t, doc("nufft"))
			if _, ok := nufft.fams[0].newSketch().(*mmdGridSketch); !ok {
				t.Fatalf("d=%d: method nufft did not compile to the grid sketch", d)
			}
			scale := math.Sqrt(2.0 / 512)
			rng := NewRNG(uint64(d), "nufft-vs-direct")
			for _, n := range []int{1, 37, 3000} {
				u := uniformPoints(rng, n, d)
				want, got := direct.Embed(u)[0], nufft.Embed(u)[0]
				worst := 0.0
				for i := range want {
					worst = max(worst, math.Abs(float64(got[i])-float64(want[i])))
				}
				if worst > 1e-6*scale {
					t.Errorf("d=%d bandwidth %v, %d points: max |nufft − direct| = %.3g = %.3g of √(2/D), want ≤ 1e-6",
						d, bw, n, worst, worst/scale)
				}
			}
		}
	}
}

// TestMMDMethodAuto: auto (the version-3 default) picks nufft where the frozen cost model
// says so (d = 2 at the default bandwidth and D = 1024; d = 1) and direct above dim 3, for a
// very small bandwidth in d = 3 (a large grid), for bandwidth 0.03 in d = 2 (a grid of more
// than 4× the direct state), and in version-1/2 specs (whose default is direct).
func TestMMDMethodAuto(t *testing.T) {
	cases := []struct {
		doc  string
		grid bool
	}{
		{`{"version": 3, "dim": 2, "families": [{"name": "m", "kind": "mmd", "bandwidth": 0.1}]}`, true},
		{`{"version": 3, "dim": 1, "families": [{"name": "m", "kind": "mmd", "bandwidth": 0.1}]}`, true},
		{`{"version": 3, "dim": 4, "families": [{"name": "m", "kind": "mmd", "bandwidth": 0.1}]}`, false},
		{`{"version": 3, "dim": 3, "families": [{"name": "m", "kind": "mmd", "bandwidth": 0.02}]}`, false},
		{`{"version": 3, "dim": 2, "families": [{"name": "m", "kind": "mmd", "bandwidth": 0.03}]}`, false},
		{`{"version": 2, "dim": 2, "families": [{"name": "m", "kind": "mmd", "bandwidth": 0.1}]}`, false},
		{`{"dim": 2, "families": [{"name": "m", "kind": "mmd", "bandwidth": 0.1}]}`, false},
		{`{"dim": 2, "families": [{"name": "m", "kind": "mmd", "bandwidth": 0.1, "method": "auto"}]}`, true},
		{`{"version": 3, "dim": 2, "families": [{"name": "m", "kind": "mmd", "bandwidth": 0.1, "method": "direct"}]}`, false},
	}
	for _, c := range cases {
		s, err := spec.ParseSpec([]byte(c.doc))
		if err != nil {
			t.Fatal(err)
		}
		_, grid := mustNew(t, s).fams[0].newSketch().(*mmdGridSketch)
		if grid != c.grid {
			t.Errorf("%s: nufft = %v, want %v", c.doc, grid, c.grid)
		}
	}
}

// TestMMDNUFFTGridLimit: an explicit nufft family whose grid would exceed 2²⁰ cells (a tiny
// bandwidth in d = 3) is refused at compile time with the field and the grid named.
func TestMMDNUFFTGridLimit(t *testing.T) {
	s, err := spec.ParseSpec([]byte(`{"dim": 3, "families": [{"name": "m", "kind": "mmd", "features": 64, "bandwidth": 0.005, "method": "nufft"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	_, err = New(s)
	var se *spec.SpecError
	if !errors.As(err, &se) || se.Field != "families[0].method" || !strings.Contains(se.Msg, "cells") {
		t.Fatalf("New: %v, want a SpecError on families[0].method about the grid's cells", err)
	}
}
