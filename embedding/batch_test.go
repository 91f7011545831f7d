package embedding

import (
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/distfeat/distfeat/internal/numeric"
	"github.com/distfeat/distfeat/spec"
)

// TestRFFApplyBatchBitIdentical: applyBatch gives, for every window, the bits of apply, on
// every path and with 1 to 3 goroutines (the orthogonal map too), for the shapes of the hdd, mmd rbf and l2 rff stages (including an input
// length that is not a multiple of 8 and a feature count that is not a multiple of the
// row block).
func TestRFFApplyBatchBitIdentical(t *testing.T) {
	for _, tc := range []struct{ in, features, nw int }{{1000, 4096, 16}, {100, 1024, 7}, {13, 130, 13}, {1, 2, 3}, {7, 258, 6}, {1024, 1000, 1}, {50, 300, 4}, {60, 200, 9}, {33, 130, 11}} {
		gauss := newRFF(NewRNG(3, "rff-batch"), tc.in, tc.features, 0.5)
		orth := newOrthogonalRFF(NewRNG(3, "rff-batch"), tc.in, tc.features, 0.5)
		rng := NewRNG(4, "rff-batch-input")
		for _, p := range dotPaths(t) {
			for _, v := range []struct {
				m       *rff
				workers int
			}{{gauss, 1}, {gauss, 3}, {orth, 1}, {orth, 2}} {
				m, workers := v.m, v.workers
				name := "gaussian"
				if m.orth != nil {
					name = "orthogonal"
				}
				t.Run(fmt.Sprintf("in=%d/D=%d/nw=%d/%v/%s/workers=%d", tc.in, tc.features, tc.nw, p, name, workers), func(t *testing.T) {
					m.path = p
					b := m.getBatch(tc.nw)
					defer m.putBatch(b)
					for i := range b.a {
						b.a[i] = rng.Normal() * 0.1
					}
					outs := make([][]float32, tc.nw)
					for w := range outs {
						outs[w] = make([]float32, tc.features)
					}
					m.applyBatch(b, outs, workers)
					want := make([]float32, tc.features)
					for w := range outs {
						m.apply(b.a[w*tc.in:(w+1)*tc.in], want)
						for i := range want {
							if math.Float32bits(outs[w][i]) != math.Float32bits(want[i]) {
								t.Fatalf("window %d feature %d: %v, apply %v", w, i, outs[w][i], want[i])
							}
						}
					}
				})
			}
		}
	}
}

// batchTestSpecs covers every family and every variant that changes finalisation: the
// default spec (mmd, hdd js joint d=2, l2), the second stages (mmd rbf, l2 rff) in d=3,
// and hdd variants (marginal, hellinger, tv, iid λs, coefficients column, boundary none,
// odd grid, d=1 and joint d=3).
func batchTestSpecs(t *testing.T) map[string]*spec.Spec {
	t.Helper()
	specs := testSpecs(t)
	for name, doc := range map[string]string{
		"hdd-variants": `{"dim": 2, "seed": 5, "families": [
			{"name": "h_marg", "kind": "hdd", "divergence": "tv", "mode": "marginal", "grid": 33, "basis": 9, "features": 96, "sigma": 0.7, "coefficients": true},
			{"name": "h_hel", "kind": "hdd", "divergence": "hellinger", "grid": 15, "basis": 20, "lambdas": 3, "features": 130, "sigma": 0.4, "boundary": "none"},
			{"name": "h_iid", "kind": "hdd", "divergence": "js", "grid": 24, "basis": 30, "lambdas": 4, "lambda_sampling": "iid", "features": 258, "sigma": 0.5, "coefficients": true, "density_floor": 1e-9}]}`,
		"hdd-d1": `{"dim": 1, "seed": 6, "families": [
			{"name": "h1", "kind": "hdd", "divergence": "js", "grid": 40, "basis": 12, "features": 200, "sigma": 0.3}]}`,
		"hdd-d3": `{"dim": 3, "seed": 7, "families": [
			{"name": "h3", "kind": "hdd", "divergence": "js", "mode": "joint", "grid": 10, "basis": 20, "lambdas": 2, "features": 100, "sigma": 0.6}]}`,
		"orthogonal": `{"dim": 2, "seed": 8, "families": [
			{"name": "h_o", "kind": "hdd", "divergence": "js", "grid": 20, "basis": 15, "lambdas": 3, "features": 300, "sigma": 0.5, "projection": "orthogonal"},
			{"name": "m_o", "kind": "mmd", "features": 64, "bandwidth": 0.2, "rbf_sigma": 0.7, "rbf_features": 90, "projection": "orthogonal"},
			{"name": "l_o", "kind": "l2", "basis": 20, "sigma": 0.3, "features": 40, "projection": "orthogonal"}]}`,
	} {
		s, err := spec.ParseSpec([]byte(doc))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		specs[name] = s
	}
	return specs
}

// TestFinalizeBatchBitIdentical: FinalizeBatch returns, for each of many random windows
// (empty ones, a single point, up to a few thousand points, with clustered and uniform
// points), exactly the bits of Sketch.Finalize, for every family and spec variant, with
// batches larger than finalizeBatchMax, sketches of two embedders interleaved, on every
// numeric.RFFDot path, and spread over 1, 2 or 5 goroutines (FinalizeBatchParallel).
func TestFinalizeBatchBitIdentical(t *testing.T) {
	specs := batchTestSpecs(t)
	var es []*Embedder
	for _, name := range []string{"default", "stages", "hdd-variants", "hdd-d1", "hdd-d3", "orthogonal"} {
		es = append(es, mustNew(t, specs[name]))
	}
	rng := NewRNG(21, "finalize-batch")
	var sketches []*Sketch
	for i := 0; i < finalizeBatchMax+23; i++ {
		e := es[i%len(es)]
		if i%11 == 3 {
			e = es[0] // uneven group sizes
		}
		s := e.NewSketch()
		switch i % 9 {
		case 0: // empty
		case 1:
			s.Add(uniformPoints(rng, 1, e.Dim()))
		default:
			n := 1 + int(rng.Float64()*3000)
			u := uniformPoints(rng, n, e.Dim())
			if i%2 == 0 { // clustered: many cells at the density floor
				for j := range u {
					u[j] = 0.3 + 0.1*u[j]
				}
			}
			s.Add(u)
		}
		sketches = append(sketches, s)
	}
	for _, p := range dotPaths(t) {
		for _, e := range es {
			setRFFPath(e, p)
		}
		want := make([][][]float32, len(sketches))
		wantCalls := map[string]int{}
		for i, s := range sketches {
			want[i] = s.Finalize(func(fam string, _ time.Duration) { wantCalls[fam]++ })
		}
		for _, workers := range []int{1, 2, 5} {
			calls := map[string]int{}
			hook := func(fam string, _ time.Duration) { calls[fam]++ }
			var got [][][]float32
			if workers == 1 {
				got = FinalizeBatch(sketches, hook)
			} else {
				got = FinalizeBatchParallel(sketches, workers, hook)
			}
			if len(got) != len(sketches) {
				t.Fatalf("path %v, %d workers: %d outputs for %d sketches", p, workers, len(got), len(sketches))
			}
			for i, s := range sketches {
				if !equalVectors(got[i], want[i]) {
					t.Fatalf("path %v, %d workers: window %d (spec %s, %d points) differs from Finalize", p, workers, i, s.e.spec.ID(), s.Count())
				}
			}
			for fam, n := range wantCalls {
				if calls[fam] != n {
					t.Fatalf("path %v, %d workers: hook called %d times for %s, want %d", p, workers, calls[fam], fam, n)
				}
			}
		}
	}
	if out := FinalizeBatch(nil, nil); len(out) != 0 {
		t.Fatalf("FinalizeBatch(nil) = %d outputs", len(out))
	}
}

// TestProjectionOrthogonalWired: `projection: orthogonal` compiles every family's RFF
// stage to the structured map drawn from the stage's own stream (hdd: the family name,
// mmd: name/rbf, l2: name/rff), and the features are that map applied to the stage input.
func TestProjectionOrthogonalWired(t *testing.T) {
	e := mustNew(t, batchTestSpecs(t)["orthogonal"])
	u := uniformPoints(NewRNG(5, "orth-wired"), 300, 2)
	s := e.NewSketch()
	s.Add(u)
	got := s.Finalize(nil)
	streams := []string{"h_o", "m_o/rbf", "l_o/rff"}
	for i, f := range e.fams {
		var m *rff
		var in []float64
		switch f := f.(type) {
		case *hddFamily:
			m = f.rff
			in = make([]float64, f.coefLen)
			sc := f.newScratch()
			f.sketchCoefficients(in, s.parts[i].(*hddSketch).counts, s.n, nil, sc)
		case *mmdFamily:
			m = f.rbf
			in = make([]float64, f.features)
			s.parts[i].(*mmdSketch).meanEmbedding(in, float64(s.n))
		case *l2Family:
			m = f.rff
			in = make([]float64, f.basis)
			s.parts[i].(*l2Sketch).coefficients(in, float64(s.n))
		}
		if m.orth == nil || m.omega != nil {
			t.Fatalf("family %s: the RFF stage is not the orthogonal map", e.names[i])
		}
		fam := e.spec.Families[i]
		sigma := fam.Sigma
		if fam.Kind == spec.KindMMD {
			sigma = fam.RBFSigma
		}
		want := newOrthogonalRFF(NewRNG(8, streams[i]), m.in, m.out, sigma)
		out := make([]float32, m.out)
		want.apply(in, out)
		if !equalVectors([][]float32{out}, [][]float32{got[e.colsOf[i][0]]}) {
			t.Fatalf("family %s: features differ from the orthogonal map of stream %q", e.names[i], streams[i])
		}
	}
}

// TestRFFEmitPaths: emit on every path gives the bits of the scalar definition
// float32(√(2/D)·sincos(θ)) for lengths around the kernel's 8, arguments in every
// quadrant, ±0, near multiples of π/2, and blocks holding NaN, ±Inf or |θ| > 2⁴⁰ (which
// take the scalar path).
func TestRFFEmitPaths(t *testing.T) {
	rng := NewRNG(14, "rff-emit")
	for _, n := range []int{1, 7, 8, 9, 16, 100, 3500} {
		for special := 0; special < 4; special++ {
			theta := make([]float64, n)
			for i := range theta {
				switch u := rng.Float64(); {
				case u < 0.05:
					theta[i] = math.Copysign(0, -1)
				case u < 0.15:
					theta[i] = float64(int(rng.Float64()*40)-20) * math.Pi / 2
				default:
					theta[i] = rng.Normal() * 30
				}
			}
			switch special {
			case 1:
				theta[n/2] = math.NaN()
			case 2:
				theta[n-1] = math.Inf(-1)
			case 3:
				theta[0] = 3e12
			}
			m := &rff{scale: math.Sqrt(2 / float64(2*n))}
			want := make([]float32, 2*n)
			for i, th := range theta {
				s, c := numeric.Sincos(th)
				want[2*i], want[2*i+1] = float32(m.scale*s), float32(m.scale*c)
			}
			for _, p := range dotPaths(t) {
				m.path = p
				got := make([]float32, 2*n)
				m.emit(theta, got)
				for i := range got {
					if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
						t.Fatalf("n=%d special=%d path %v feature %d (θ = %v): %v, definition %v", n, special, p, i, theta[i/2], got[i], want[i])
					}
				}
			}
		}
	}
}
