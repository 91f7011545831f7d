package calibrate

import (
	"context"
	"fmt"
	"math"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/distfeat/distfeat/examples/exampledata"
	"github.com/distfeat/distfeat/spec"
)

// TestMeasureMMDBandwidth (opt-in, CALIBRATE_MEASURE=1; CALIBRATE_NOACC=1 skips the
// accuracies) logs, per bandwidth of an extended grid, the cross-validated ridge accuracy of
// mmd features (D 1024) at that bandwidth and unlabelled criteria: ratio (mean MMD²_u / sd,
// the thesis' two-sample criterion), var (of the off-diagonal Gram entries), gramSNR,
// embSNR, m2SNR (signal-to-noise variants), same/diff (the ratio over same-class and
// different-class pairs), sigvar (var minus ¼·var(K_A − K_B)) and rule (calibrate's criterion).
func TestMeasureMMDBandwidth(t *testing.T) {
	if os.Getenv("CALIBRATE_MEASURE") == "" {
		t.Skip("a measurement tool: set CALIBRATE_MEASURE=1")
	}
	type scen struct {
		name        string
		calib, eval []Set
	}
	ex := func(seed uint64, per, pts int) []Set {
		var out []Set
		for _, s := range exampledata.Sets(seed, per, pts) {
			out = append(out, Set{ID: s.ID, Points: s.Points, Label: s.Class})
		}
		return out
	}
	digits := loadDigits(t)
	scens := []scen{
		{"examples 40 pts", ex(13, 16, 40), append(ex(11, 40, 40), ex(12, 40, 40)...)},
		{"examples 200 pts", ex(20, 12, 200), ex(11, 40, 200)},
		{"digits", digits[:900], digits[900:1400]},
	}
	for _, sc := range scens {
		var unlabelled []Set
		for _, s := range sc.calib {
			unlabelled = append(unlabelled, Set{ID: s.ID, Points: s.Points})
		}
		res, err := Calibrate(context.Background(), unlabelled, 2, nil, Options{Families: []string{"mmd"}})
		if err != nil {
			t.Fatal(err)
		}
		o := Options{}.withDefaults()
		smp, err := newSample(sc.calib, 2, res.Spec.Seed, o)
		if err != nil {
			t.Fatal(err)
		}
		b := res.Spec.Bounds
		smp.normalise(BoundsProposal{Lo: b.Lo, Hi: b.Hi})
		h0, _ := medianHeuristic(withinDistances(smp, res.Spec.Seed))
		var hs []float64
		for k := -10; k <= 4; k++ {
			hs = append(hs, round3(h0*math.Pow(2, float64(k)/2)))
		}
		grams, _ := mmkGrams(context.Background(), smp.sub, 2, hs, o)
		subA, subB := smp.subHalves()
		gA, _ := mmkGrams(context.Background(), subA, 2, hs, o)
		gB, _ := mmkGrams(context.Background(), subB, 2, hs, o)
		hv, _ := mmkGrams(context.Background(), append(slices.Clone(subA), subB...), 2, hs, o)
		var lines []string
		for k, h := range hs {
			c := mmdCriteria(grams[k], gA[k], gB[k], smp.sub, subA, subB, 2)
			sp := &spec.Spec{Version: 2, Seed: 42, Dim: 2, Bounds: res.Spec.Bounds, OutOfBounds: "clip",
				Families: []spec.Family{{Name: "mmd", Kind: "mmd", Bandwidth: h, Features: 1024}}}
			acc := math.NaN()
			if os.Getenv("CALIBRATE_NOACC") == "" {
				acc = specAccuracy(t, sp, "mmd", sc.eval)
			}
			c += classRatios(grams[k], gA[k], gB[k], smp.sub, subA, subB, 2, sc.calib, smp)
			c += fmt.Sprintf("  rule %.4g", variance(offDiagonal(grams[k], len(smp.sub)))-halvesNoise(halfPairs(hv[k], len(smp.sub), 0)))
			lines = append(lines, fmt.Sprintf("h %-7.4g k %3d  acc %.3f  %s", h, k-10, acc, c))
		}
		t.Logf("%s: calibrated (unlabelled) h %g, h0 %.4g\n%s", sc.name, res.Spec.Families[0].Bandwidth, h0, strings.Join(lines, "\n"))
	}
}

func mmdCriteria(K, KA, KB []float64, sub, subA, subB [][]float64, d int) string {
	S := len(sub)
	unb := func(G []float64, sets [][]float64, i int) float64 {
		m := float64(len(sets[i]) / d)
		return (m*G[i*S+i] - 1) / (m - 1)
	}
	ratio := mmdRatio(K, KA, KB, sub, subA, subB, d)
	off := offDiagonal(K, S)
	oldVar := variance(off)
	var diff []float64
	var m2, m2A, m2B []float64
	for i := 0; i < S; i++ {
		for j := i + 1; j < S; j++ {
			diff = append(diff, KA[i*S+j]-KB[i*S+j])
			m2 = append(m2, unb(K, sub, i)+unb(K, sub, j)-2*K[i*S+j])
			m2A = append(m2A, unb(KA, subA, i)+unb(KA, subA, j)-2*KA[i*S+j])
			m2B = append(m2B, unb(KB, subB, i)+unb(KB, subB, j)-2*KB[i*S+j])
		}
	}
	var md float64
	for _, v := range diff {
		md += v * v
	}
	noiseK := md / float64(len(diff)) / 4
	gramSNR := (oldVar - noiseK) / noiseK
	// embedding SNR: mean MMD²_u / (2 mean noise), noise_i = (1 − unb_i)/m
	var meanM2, noise float64
	for _, v := range m2 {
		meanM2 += v
	}
	meanM2 /= float64(len(m2))
	for i := 0; i < S; i++ {
		m := float64(len(sub[i]) / d)
		noise += (1 - unb(K, sub, i)) / m
	}
	noise /= float64(S)
	embSNR := meanM2 / (2 * noise)
	var nv float64
	for k := range m2A {
		nv += (m2A[k] - m2B[k]) * (m2A[k] - m2B[k])
	}
	nv /= float64(len(m2A)) * 4
	varM2 := variance(m2)
	m2SNR := (varM2 - nv) / nv
	return fmt.Sprintf("ratio %6.3f  var %.3g  gramSNR %7.3f  embSNR %7.3f  m2SNR %7.3f", ratio, oldVar, gramSNR, embSNR, m2SNR)
}

// classRatios: mean MMD²_u / sd (halves) over same-class and different-class pairs, and the
// signal variance of the off-diagonal Gram entries.
func classRatios(K, KA, KB []float64, sub, subA, subB [][]float64, d int, calib []Set, smp *sample) string {
	S := len(sub)
	lab := map[string]string{}
	for _, s := range calib {
		lab[s.ID] = s.Label
	}
	unb := func(G []float64, sets [][]float64, i int) float64 {
		m := float64(len(sets[i]) / d)
		return (m*G[i*S+i] - 1) / (m - 1)
	}
	var sum, dev [2]float64
	var n [2]int
	var diff []float64
	for i := 0; i < S; i++ {
		for j := i + 1; j < S; j++ {
			c := 0
			if lab[smp.ids[i]] != lab[smp.ids[j]] {
				c = 1
			}
			sum[c] += unb(K, sub, i) + unb(K, sub, j) - 2*K[i*S+j]
			a := unb(KA, subA, i) + unb(KA, subA, j) - 2*KA[i*S+j]
			b := unb(KB, subB, i) + unb(KB, subB, j) - 2*KB[i*S+j]
			dev[c] += (a - b) * (a - b)
			n[c]++
			diff = append(diff, KA[i*S+j]-KB[i*S+j])
		}
	}
	var md float64
	for _, v := range diff {
		md += v * v
	}
	sig := variance(offDiagonal(K, S)) - md/float64(len(diff))/4
	r := func(c int) float64 { return sum[c] / float64(n[c]) / math.Sqrt(dev[c]/float64(n[c])/4) }
	return fmt.Sprintf("  same %6.3f diff %6.3f  sigvar %.3g", r(0), r(1), sig)
}
