package embedding

import (
	"fmt"
	"testing"

	"github.com/distfeat/distfeat/internal/benchclock"
	"github.com/distfeat/distfeat/spec"
)

// BenchmarkMMDWindow is the mmd cost per point of whole windows, add and finalisation
// included, for both methods: D = 1024 (512 frequencies), bandwidth 0.1, d = 1, 2, 3,
// windows of 100 … 10 000 points added in one call. It reports cpu-ns/point (the thread's
// CPU time, which a loaded machine inflates less than the wall clock) beside ns/op. Run:
//
//	go test ./embedding -run '^$' -bench MMDWindow -benchtime=20x
func BenchmarkMMDWindow(b *testing.B) {
	for _, d := range []int{1, 2, 3} {
		for _, method := range []string{spec.MethodDirect, spec.MethodNUFFT} {
			s, err := spec.ParseSpec(fmt.Appendf(nil, `{"dim": %d, "families": [
				{"name": "m", "kind": "mmd", "features": 1024, "bandwidth": 0.1, "method": %q}]}`, d, method))
			if err != nil {
				b.Fatal(err)
			}
			e := mustNew(b, s)
			for _, n := range []int{100, 500, 2500, 10000} {
				u := uniformPoints(NewRNG(1, "bench"), n, d)
				b.Run(fmt.Sprintf("d=%d/%s/n=%d", d, method, n), func(b *testing.B) {
					sk := e.NewSketch()
					clk := benchclock.Start(b)
					for range b.N {
						sk.Reset()
						sk.Add(u)
						sk.Finalize(nil)
					}
					clk.Stop(float64(n), "cpu-ns/point")
				})
			}
		}
	}
}
