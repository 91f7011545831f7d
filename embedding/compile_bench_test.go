package embedding

import (
	"fmt"
	"testing"

	"github.com/distfeat/distfeat/internal/benchclock"
	"github.com/distfeat/distfeat/spec"
)

// BenchmarkCompile is start-up: compiling a spec, i.e. every family's random draws. The
// hdd_js family with D = 7000 (G = 64, M = 5, basis 100) is the start-up case: in
// version 1 its dense Gaussian matrix is 3500 × 1000 normal draws.
func BenchmarkCompile(b *testing.B) {
	for _, version := range []int{1, 2} {
		s, err := spec.ParseSpec(fmt.Appendf(nil, `{"version": %d, "dim": 2, "families": [{"name": "hdd_js", "kind": "hdd",
			"divergence": "js", "features": 7000, "sigma": 0.5, "grid": 64, "lambdas": 5, "basis": 100}]}`, version))
		if err != nil {
			b.Fatal(err)
		}
		b.Run(fmt.Sprintf("hdd_js-D7000/v%d", version), func(b *testing.B) {
			clk := benchclock.Start(b)
			for range b.N {
				if _, err := New(s); err != nil {
					b.Fatal(err)
				}
			}
			clk.Stop(0, "")
		})
	}
	b.Run("default", func(b *testing.B) {
		clk := benchclock.Start(b)
		for range b.N {
			if _, err := New(spec.DefaultSpec()); err != nil {
				b.Fatal(err)
			}
		}
		clk.Stop(0, "")
	})
}
