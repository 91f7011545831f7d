package main

import (
	"bufio"
	"io"
	"math"
	"strconv"

	"github.com/distfeat/distfeat/internal/numeric"
)

// mixtureSet is one labelled set: points of a 2-D Gaussian mixture and its number of
// components.
type mixtureSet struct {
	ID         string
	Components int
	Points     []float64 // row-major (x, y)
}

// mixtureSets draws n sets of the thesis's mixture-count task (Sutherland 2016, §5.2), each
// from its own stream of the frozen RNG (seed, prefix and index), so the sets do not depend
// on n or on each other:
//
//  1. the number of components Y ~ Unif{1, …, 10};
//  2. each component has mean μ ~ Unif[−5, 5]² and covariance Σ = a·A·Aᵀ + B with
//     a ~ Unif[1, 4], A(u, v) ~ Unif[−1, 1] and B diagonal with B(u, u) ~ Unif[0, 1];
//  3. the points are drawn from the equally weighted mixture (each point's component
//     uniformly at random).
func mixtureSets(seed uint64, prefix string, n, points int) []mixtureSet {
	out := make([]mixtureSet, n)
	for i := range out {
		id := prefix + "-" + strconv.Itoa(i)
		rng := numeric.NewRNG(seed, "examples/mixture-count/"+id)
		k := 1 + int(rng.Uint64()%10)
		type comp struct{ mx, my, l11, l21, l22 float64 }
		comps := make([]comp, k)
		for c := range comps {
			u := func(lo, hi float64) float64 { return lo + (hi-lo)*rng.Float64() }
			mx, my := u(-5, 5), u(-5, 5)
			a := u(1, 4)
			a11, a12, a21, a22 := u(-1, 1), u(-1, 1), u(-1, 1), u(-1, 1)
			b1, b2 := u(0, 1), u(0, 1)
			// Σ = a·A·Aᵀ + B and its Cholesky factor L (Σ = L·Lᵀ)
			s11 := a*(a11*a11+a12*a12) + b1
			s21 := a * (a21*a11 + a22*a12)
			s22 := a*(a21*a21+a22*a22) + b2
			l11 := math.Sqrt(s11)
			l21 := s21 / l11
			comps[c] = comp{mx, my, l11, l21, math.Sqrt(s22 - l21*l21)}
		}
		pts := make([]float64, 0, 2*points)
		for p := 0; p < points; p++ {
			c := comps[rng.Uint64()%uint64(k)]
			z1, z2 := rng.Normal(), rng.Normal()
			pts = append(pts, c.mx+c.l11*z1, c.my+c.l21*z1+c.l22*z2)
		}
		out[i] = mixtureSet{ID: id, Components: k, Points: pts}
	}
	return out
}

// writeJSONL writes the sets as `distfeat fit --label components` (labelled) and `embed`
// (not labelled) read them: {"set":…,"components":k,"points":[[x,y],…],"end":true},
// coordinates with four decimals.
func writeJSONL(w io.Writer, sets []mixtureSet, labelled bool) error {
	bw := bufio.NewWriter(w)
	for _, s := range sets {
		bw.WriteString(`{"set":` + strconv.Quote(s.ID))
		if labelled {
			bw.WriteString(`,"components":` + strconv.Itoa(s.Components))
		}
		bw.WriteString(`,"points":[`)
		for i := 0; i < len(s.Points); i += 2 {
			if i > 0 {
				bw.WriteByte(',')
			}
			bw.WriteString("[" + strconv.FormatFloat(s.Points[i], 'f', 4, 64) + "," + strconv.FormatFloat(s.Points[i+1], 'f', 4, 64) + "]")
		}
		bw.WriteString("],\"end\":true}\n")
	}
	return bw.Flush()
}
