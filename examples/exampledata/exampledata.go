// Package exampledata generates the labelled example sets of examples/: 2-D point clouds of
// three classes that share their mean and covariance — a ring, a Gaussian blob and a
// uniform square — so that only a kernel at the right scale tells them apart (mean and
// covariance features cannot). Points are in their own units (centred near (50, 20), about
// ±5 wide), not in the unit square: choosing bounds is part of the job.
//
// All randomness is the frozen embedding.RNG (stream "examples/<set id>"), so a set is the
// same on every platform and Go release.
package exampledata

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"strconv"

	"github.com/distfeat/distfeat/embedding"
)

// Classes are the class names, also the prefix of every set ID ("ring-007").
var Classes = []string{"ring", "gauss", "square"}

// Geometry in units of the data (before the per-set scale factor).
const (
	centreX, centreY = 50.0, 20.0
	ringRadius       = 2.5
	ringWidth        = 0.3
	// blobSD and squareHalf match the ring's per-axis variance r²/2 (+ the width's).
	centreJitter = 0.5  // uniform ± per axis
	scaleJitter  = 0.15 // per-set scale factor uniform in 1 ± this
)

// Set is one labelled example set.
type Set struct {
	ID     string
	Class  string
	Points []float64 // row-major (x, y)
}

// ClassOf returns the class of a set ID (its prefix before the first '-').
func ClassOf(id string) string {
	for i := range id {
		if id[i] == '-' {
			return id[:i]
		}
	}
	return id
}

// Sets returns perClass sets of each class, interleaved (ring-000, gauss-000, square-000,
// ring-001, …), each of `points` points.
func Sets(seed uint64, perClass, points int) []Set {
	var out []Set
	for i := 0; i < perClass; i++ {
		for c, name := range Classes {
			id := fmt.Sprintf("%s-%03d", name, i)
			out = append(out, Set{ID: id, Class: name, Points: draw(embedding.NewRNG(seed, "examples/"+id), c, points)})
		}
	}
	return out
}

func draw(rng *embedding.RNG, class, n int) []float64 {
	cx := centreX + centreJitter*(2*rng.Float64()-1)
	cy := centreY + centreJitter*(2*rng.Float64()-1)
	s := 1 + scaleJitter*(2*rng.Float64()-1)
	axisVar := (ringRadius*ringRadius + ringWidth*ringWidth) / 2 // per-axis variance of the ring
	pts := make([]float64, 0, 2*n)
	for i := 0; i < n; i++ {
		var x, y float64
		switch class {
		case 0: // ring
			th := 2 * math.Pi * rng.Float64()
			r := ringRadius + ringWidth*rng.Normal()
			x, y = r*math.Cos(th), r*math.Sin(th)
		case 1: // Gaussian blob of the same covariance
			sd := math.Sqrt(axisVar)
			x, y = sd*rng.Normal(), sd*rng.Normal()
		default: // uniform square of the same covariance: var a²/3
			a := math.Sqrt(3 * axisVar)
			x, y = a*(2*rng.Float64()-1), a*(2*rng.Float64()-1)
		}
		pts = append(pts, cx+s*x, cy+s*y)
	}
	return pts
}

// WriteJSONL writes one input record per line, as `distfeat embed`, `produce --in` and
// `calibrate --in` read them: {"set":…,"points":[[x,y],…],"end":true}, coordinates with
// four decimals.
func WriteJSONL(w io.Writer, sets []Set) error {
	bw := bufio.NewWriter(w)
	for _, s := range sets {
		bw.WriteString(`{"set":` + strconv.Quote(s.ID) + `,"points":[`)
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
