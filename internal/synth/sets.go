package synth

import (
	"fmt"
	"math"

	"github.com/distfeat/distfeat/internal/numeric"
	"github.com/distfeat/distfeat/schema"
)

// Set is one synthetic sample set: its ID, its points and the mixture they were drawn from.
type Set struct {
	// ID is "set-" followed by the set's index, zero-padded to six digits (set-000042).
	ID string
	// Points are row-major, len(Points) = n·Dim, all in [0,1]^d.
	Points []float64
	// Mixture is the distribution the points were drawn from.
	Mixture *Mixture
}

// SetID is the ID of the i-th synthetic set.
func SetID(i int) string { return fmt.Sprintf("set-%06d", i) }

// Sets draws `sets` sets of `points` points each in [0,1]^d. Set i uses its own stream of
// the frozen RNG, numeric.NewRNG(seed, "synth/"+SetID(i)): first its mixture
// (RandomMixture), then its points (Mixture.Sample). So set i is the same whatever the
// number of sets, and any set can be regenerated alone with SetAt.
func Sets(seed uint64, sets, points, d int) []Set {
	out := make([]Set, sets)
	for i := range out {
		out[i] = SetAt(seed, i, points, d)
	}
	return out
}

// SetAt is the i-th set of Sets(seed, …, points, d).
func SetAt(seed uint64, i, points, d int) Set {
	id := SetID(i)
	rng := numeric.NewRNG(seed, "synth/"+id)
	m := RandomMixture(rng, d)
	return Set{ID: id, Points: m.Sample(rng, points), Mixture: m}
}

// ExactMMK is the biased empirical mean-map kernel between the samples x (n points) and y
// (m points) of dimension d, for the Gaussian base kernel of the given bandwidth:
//
//	(1/(n·m)) Σ_i Σ_j exp(−‖x_i − y_j‖² / (2·bandwidth²)).
//
// It is what the mmd family's z̄ᵀz̄′ estimates (docs/math.md). O(n·m·d) time, no allocation
// beyond the result, no shared state: safe to call from many goroutines at once. An empty
// sample gives NaN.
func ExactMMK(x, y []float64, d int, bandwidth float64) float64 {
	if d <= 0 || len(x)%d != 0 || len(y)%d != 0 {
		panic(fmt.Sprintf("synth: ExactMMK: sample lengths %d and %d are not multiples of dim %d", len(x), len(y), d))
	}
	n, m := len(x)/d, len(y)/d
	if n == 0 || m == 0 {
		return math.NaN()
	}
	c := -1 / (2 * bandwidth * bandwidth)
	var total float64
	for i := 0; i < n; i++ {
		xi := x[i*d : (i+1)*d]
		var row float64 // per-row partial sums keep the float64 rounding error ~1e-13
		for j := 0; j < m; j++ {
			yj := y[j*d : (j+1)*d]
			var s float64
			for k, v := range xi {
				t := v - yj[k]
				s += t * t
			}
			row += math.Exp(c * s)
		}
		total += row
	}
	return total / (float64(n) * float64(m))
}

// Batches draws sets as Sets does, each as one input batch with End=true and event time
// t0 + its index (what `distfeat produce --synthetic` publishes).
func Batches(seed uint64, sets, points, dim int, t0 int64) []schema.Batch {
	out := make([]schema.Batch, 0, sets)
	for i, s := range Sets(seed, sets, points, dim) {
		out = append(out, schema.Batch{Set: s.ID, Points: s.Points, N: len(s.Points) / dim, EventTime: t0 + int64(i), End: true})
	}
	return out
}
