package twosample

import (
	"math"
	"math/rand/v2"
	"testing"
)

// BenchmarkWindowAdd is the family's cost per point (features and fixed-point sums) at the
// defaults for d = 2: 2d + 2·5·20 = 204 features.
func BenchmarkWindowAdd(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 1))
	rf := buildReference(b, r, meanShift.ref(r, 2000), Config{})
	x := meanShift.ref(r, 400)
	w := rf.FeatureMap().NewWindow()
	b.ResetTimer()
	for b.Loop() {
		w.Add(x)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*400), "ns/point")
}

// BenchmarkTest is the cost of one window's test (finalisation) at the defaults.
func BenchmarkTest(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 1))
	rf := buildReference(b, r, meanShift.ref(r, 2000), Config{})
	w := rf.FeatureMap().NewWindow()
	w.Add(meanShift.ref(r, 400))
	for b.Loop() {
		if _, err := rf.Test(w); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkTestBetweenWindows is one window's test against the between-windows null of 1000
// reference windows of 100 points (700 ranked: O(k) per window), beside BenchmarkTest's
// simulated null.
func BenchmarkTestBetweenWindows(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 1))
	wins := make([][]float64, 1000)
	for i := range wins {
		wins[i] = meanShift.ref(r, 100)
	}
	rf, _ := betweenReference(b, r, wins, false)
	w := rf.FeatureMap().NewWindow()
	w.Add(meanShift.ref(r, 100))
	for b.Loop() {
		if _, err := rf.Test(w); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkBuild is the start-up cost of a 2000-point reference: summary, whitenings and
// the simulated null.
func BenchmarkBuild(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 1))
	ref := meanShift.ref(r, 2000)
	med, _ := MedianBandwidth(ref, 2, 1000)
	fm, err := NewFeatureMap(Center(ref, 2, 1000), DyadicBandwidths(med, studyBands), studyFreqs, normals{r}, math.Sincos)
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		rb := fm.NewReferenceBuilder()
		rb.Add(ref)
		if _, err := rb.Build(Config{}, normals{r}); err != nil {
			b.Fatal(err)
		}
	}
}

// The speed ratio against the quadratic oracles on the same 400-point window and 2000-point
// reference: BenchmarkWindow400 (the streaming test: features of the window's points, then
// the test) against BenchmarkOracleMedian and BenchmarkOracleMMDAgg (100 permutations, and
// 100 + 100 for MMDAgg, as in TestPowerTable).
func BenchmarkWindow400(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 1))
	rf := buildReference(b, r, meanShift.ref(r, 2000), Config{})
	x := meanShift.alt(r, 400)
	w := rf.FeatureMap().NewWindow()
	for b.Loop() {
		w.Reset()
		w.Add(x)
		if _, err := rf.Test(w); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkOracleMedian(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 1))
	ref, x := meanShift.ref(r, 2000), meanShift.alt(r, 400)
	for b.Loop() {
		medianTest(r, x, ref, 2, 100)
	}
}

func BenchmarkOracleMMDAgg(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 1))
	ref, x := meanShift.ref(r, 2000), meanShift.alt(r, 400)
	for b.Loop() {
		aggTest(r, x, ref, 2, 100, 100, 0.05)
	}
}
