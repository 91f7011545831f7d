// Command marginal-transfer shows, with numbers, when per-point features conditioned on the
// set's distribution (marginal transfer, docs/marginal-transfer.md) beat pooled per-point
// features on domains never seen in training, and that with σ's chosen by cross-validation
// over domains they cost nothing where the distribution carries no label information.
//
// Each case draws labelled domains (sets of points with a class per point), chooses σ_P,
// σ_X, D and the ridge penalty on the training domains with calibrate.MarginalTransfer
// (whole domains held out), fits a one-vs-rest ridge classifier on the per-point features
// of all training domains (each domain weighted equally), and reports the mean accuracy
// over the unseen test domains of
//
//   - pooling: the same point features with the constant set kernel (σ_P = ∞), at its
//     own best σ_X, λ and D;
//   - marginal transfer at the calibrated σ's (the best marginal-transfer candidate);
//   - the calibrated proposal (marginal transfer, or pooling when it does not win);
//   - marginal transfer with σ_P eight times below the median set distance: the set's part
//     swamps the point's.
//
// Cases (all synthetic and deterministic, from the frozen RNG):
//
//	rotated: two Gaussian classes at ±1.5 along an axis turned by a per-domain angle in
//	         (−90°, 90°), the whole domain shifted by a per-domain offset: the domain's
//	         marginal shows the axis and the offset, so the boundary can follow it.
//	noinfo:  the classes split at x₁ = 0 in every domain; domains differ only by a shift
//	         along x₂ and a spread of x₂, which changes the marginal but not the boundary.
//	digits:  (with -digits FILE, the 8×8 digits of scikit-learn's digits.csv.gz) the 1797
//	         images dealt to the domains (59 each for 30), with a per-domain gain and
//	         offset of the intensities.
//
// Usage: go run ./examples/marginal-transfer [-case all|rotated|noinfo|digits] [-digits FILE]
package main

import (
	"bufio"
	"compress/gzip"
	"context"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"

	"gonum.org/v1/gonum/mat"

	"github.com/distfeat/distfeat/calibrate"
	"github.com/distfeat/distfeat/embedding"
	"github.com/distfeat/distfeat/spec"
)

func main() {
	which := flag.String("case", "all", "case to run: all, rotated, noinfo or digits (digits needs -digits)")
	digits := flag.String("digits", "", "scikit-learn's digits.csv.gz (8×8 digits, 1797 images), for the digits case")
	train := flag.Int("train", 20, "training domains")
	test := flag.Int("test", 10, "unseen test domains")
	points := flag.Int("points", 200, "points per domain (synthetic cases)")
	verbose := flag.Bool("v", false, "print the calibration grid of each case")
	write := flag.String("write", "", "instead of the table: write the -case's domains to `dir`/train.jsonl and dir/test.jsonl (with a per-point label array \"y\"), for distfeat calibrate, fit and embed")
	seed := flag.Uint64("seed", 0, "data `seed` of the synthetic cases (0: the table's domains)")
	score := flag.String("score", "", "instead of the table: the accuracy on the -case's test domains of a per-point model's predictions, `file` of distfeat embed --points --model (JSON lines)")
	streamModel := flag.String("stream", "", "instead of the table: stream the -case's test domains through an embedded broker and a worker with this per-point model `file` (and -spec), and score the per-point topic's predictions")
	specPath := flag.String("spec", "", "the spec `file` the -stream model was fitted under")
	compare := flag.String("compare", "", "with -stream: embed --points --model's JSON lines `file` on the same domains, whose predictions the streamed ones must equal")
	flag.Parse()
	cfg := Config{Train: *train, Test: *test, Points: *points, Digits: *digits, Seed: *seed}
	if *streamModel != "" {
		if err := StreamCase(context.Background(), os.Stdout, *which, cfg, *specPath, *streamModel, *compare); err != nil {
			fmt.Fprintln(os.Stderr, "marginal-transfer:", err)
			os.Exit(1)
		}
		return
	}
	if *score != "" {
		if err := ScoreCase(os.Stdout, *which, cfg, *score); err != nil {
			fmt.Fprintln(os.Stderr, "marginal-transfer:", err)
			os.Exit(1)
		}
		return
	}
	if *write != "" {
		if err := WriteCase(*which, cfg, *write); err != nil {
			fmt.Fprintln(os.Stderr, "marginal-transfer:", err)
			os.Exit(1)
		}
		return
	}
	cases := []string{*which}
	if *which == "all" {
		cases = []string{"rotated", "noinfo"}
		if *digits != "" {
			cases = append(cases, "digits")
		}
	}
	var rows []Row
	for _, c := range cases {
		r, res, err := RunCase(context.Background(), c, Config{Train: *train, Test: *test, Points: *points, Digits: *digits})
		if err != nil {
			fmt.Fprintln(os.Stderr, "marginal-transfer:", err)
			os.Exit(1)
		}
		if *verbose {
			fmt.Printf("== %s\n%s\n", c, res.Summary())
		}
		rows = append(rows, r)
	}
	PrintTable(os.Stdout, rows)
}

// Config sizes a case.
type Config struct {
	Train, Test, Points int
	Digits              string // path of digits.csv.gz for the digits case
	Seed                uint64 // the synthetic cases' data seed (0: the table's domains)
}

// Row is one case's result: accuracies on the unseen domains.
type Row struct {
	Case                                    string
	Pooling, Marginal, Proposed, SmallSigma float64
	ProposedFamily                          spec.Family
	MarginalFamily                          spec.Family
	CVPooling, CVMarginal                   float64
}

// PrintTable writes the results as a Markdown table.
func PrintTable(w io.Writer, rows []Row) {
	fmt.Fprintln(w, "| case | pooling | marginal transfer (calibrated σ's) | calibrated proposal | σ_P = median/8 | proposal |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|")
	for _, r := range rows {
		p := "pooling"
		if !r.ProposedFamily.Pooling {
			p = fmt.Sprintf("σ_P %.3g", r.ProposedFamily.SigmaP)
		}
		fmt.Fprintf(w, "| %s | %.3f | %.3f | %.3f | %.3f | %s, σ_X %.3g, D %d |\n",
			r.Case, r.Pooling, r.Marginal, r.Proposed, r.SmallSigma, p, r.ProposedFamily.SigmaX, r.ProposedFamily.Features)
	}
}

// Data is a case's spec and domains.
type Data struct {
	Spec        *spec.Spec
	Train, Test []calibrate.LabelledSet
}

// Generate draws a case's domains.
func Generate(name string, c Config) (data Data, err error) {
	switch name {
	case "rotated":
		data = Synthetic(name, c.Seed, c.Train, c.Test, c.Points, rotatedDomain)
	case "noinfo":
		data = Synthetic(name, c.Seed, c.Train, c.Test, c.Points, noInfoDomain)
	case "digits":
		data, err = Digits(c.Digits, c.Train, c.Test)
	default:
		err = fmt.Errorf("unknown case %q (want rotated, noinfo or digits)", name)
	}
	return data, err
}

// WriteCase writes a case's training and test domains, with their labels as the array "y",
// to dir/train.jsonl and dir/test.jsonl, one set per line in distfeat's input format (embed
// and produce skip "y" and name it on stderr).
func WriteCase(name string, c Config, dir string) error {
	data, err := Generate(name, c)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	d := data.Spec.Dim
	for _, part := range []struct {
		file   string
		sets   []calibrate.LabelledSet
		labels bool
	}{{"train.jsonl", data.Train, true}, {"test.jsonl", data.Test, true}} {
		var b strings.Builder
		for _, s := range part.sets {
			fmt.Fprintf(&b, `{"set":%q,"points":[`, s.ID)
			for i := 0; i < len(s.Points)/d; i++ {
				if i > 0 {
					b.WriteByte(',')
				}
				b.WriteByte('[')
				for j, v := range s.Points[i*d : (i+1)*d] {
					if j > 0 {
						b.WriteByte(',')
					}
					b.WriteString(strconv.FormatFloat(v, 'g', -1, 64))
				}
				b.WriteByte(']')
			}
			b.WriteString("]")
			if part.labels {
				b.WriteString(`,"y":[`)
				for i, l := range s.Labels {
					if i > 0 {
						b.WriteByte(',')
					}
					fmt.Fprintf(&b, "%q", l)
				}
				b.WriteString("]")
			}
			b.WriteString(",\"end\":true}\n")
		}
		if err := os.WriteFile(dir+"/"+part.file, []byte(b.String()), 0o644); err != nil {
			return err
		}
	}
	return nil
}

// RunCase generates a case, calibrates on its training domains and scores on its test domains.
func RunCase(ctx context.Context, name string, c Config) (Row, *calibrate.MarginalResult, error) {
	data, err := Generate(name, c)
	if err != nil {
		return Row{}, nil, err
	}
	emb, err := embedding.New(data.Spec)
	if err != nil {
		return Row{}, nil, err
	}
	res, err := calibrate.MarginalTransfer(ctx, emb, data.Train, calibrate.MarginalOptions{})
	if err != nil {
		return Row{}, nil, err
	}
	row := Row{Case: name, ProposedFamily: res.Family, CVPooling: res.BestPooling.Accuracy, CVMarginal: res.BestMarginal.Accuracy}
	if res.BestMarginalPsi.Name != data.Spec.Families[0].Name { // Ψ at another bandwidth than the spec's mmd family
		sp := *data.Spec
		sp.Families = append(slices.Clone(sp.Families), res.BestMarginalPsi)
		if emb, err = embedding.New(&sp); err != nil {
			return Row{}, nil, err
		}
	}
	score := func(cand calibrate.MarginalCandidate, sigmaP float64) (float64, spec.Family, error) {
		ps := spec.Family{Name: "mt", Kind: spec.KindMarginal, SigmaX: cand.SigmaX, Features: res.Chosen.Features, Pooling: cand.Pooling}
		if !cand.Pooling {
			ps.SetFamily, ps.SigmaP = res.BestMarginalPsi.Name, sigmaP
		}
		acc, err := TestAccuracy(emb, ps, cand.Lambda, data.Train, data.Test)
		return acc, ps, err
	}
	if row.Pooling, _, err = score(res.BestPooling, 0); err != nil {
		return row, res, err
	}
	if row.Marginal, row.MarginalFamily, err = score(res.BestMarginal, res.BestMarginal.SigmaP); err != nil {
		return row, res, err
	}
	if row.Proposed, err = TestAccuracy(emb, res.Family, res.Lambda, data.Train, data.Test); err != nil {
		return row, res, err
	}
	if row.SmallSigma, _, err = score(res.BestMarginal, res.MedianPsi/8); err != nil {
		return row, res, err
	}
	return row, res, nil
}

// TestAccuracy fits the one-vs-rest ridge classifier (relative penalty lambda, each domain
// weighted equally) on the per-point features of the training domains and returns the mean
// over test domains of the accuracy on their points.
func TestAccuracy(emb *embedding.Embedder, ps spec.Family, lambda float64, train, test []calibrate.LabelledSet) (float64, error) {
	m, err := embedding.NewPointMap(emb, ps)
	if err != nil {
		return 0, err
	}
	classes := map[string]int{}
	var names []string
	for _, s := range train {
		for _, l := range s.Labels {
			if _, ok := classes[l]; !ok {
				classes[l] = len(names)
				names = append(names, l)
			}
		}
	}
	D, C := m.Len(), len(names)
	features := func(s calibrate.LabelledSet) (*mat.Dense, error) {
		u := make([]float64, len(s.Points))
		if _, err := emb.Normalize(u, s.Points); err != nil {
			return nil, err
		}
		n := len(s.Labels)
		f := make([]float32, n*D)
		m.Points(m.SetPart(emb.Embed(u), nil), u, f)
		z := mat.NewDense(n, D, nil)
		for i, v := range f {
			z.RawMatrix().Data[i] = float64(v)
		}
		return z, nil
	}
	g := mat.NewSymDense(D, nil)
	b := mat.NewDense(D, C, nil)
	for _, s := range train {
		z, err := features(s)
		if err != nil {
			return 0, err
		}
		y := mat.NewDense(len(s.Labels), C, nil)
		for i, l := range s.Labels {
			y.Set(i, classes[l], 1)
		}
		w := 1 / float64(len(s.Labels))
		var gi mat.SymDense
		gi.SymOuterK(w, z.T())
		g.AddSym(g, &gi)
		var bi mat.Dense
		bi.Mul(z.T(), y)
		bi.Scale(w, &bi)
		b.Add(b, &bi)
	}
	trace := 0.0
	for i := 0; i < D; i++ {
		trace += g.At(i, i)
	}
	for i := 0; i < D; i++ {
		g.SetSym(i, i, g.At(i, i)+lambda*trace/float64(D))
	}
	var chol mat.Cholesky
	if !chol.Factorize(g) {
		return 0, fmt.Errorf("ridge system not positive definite (λ %g)", lambda)
	}
	var wts mat.Dense
	if err := chol.SolveTo(&wts, b); err != nil {
		return 0, err
	}
	total := 0.0
	for _, s := range test {
		z, err := features(s)
		if err != nil {
			return 0, err
		}
		var pred mat.Dense
		pred.Mul(z, &wts)
		right := 0
		for i, l := range s.Labels {
			row := pred.RawRowView(i)
			k := 0
			for j := range row {
				if row[j] > row[k] {
					k = j
				}
			}
			if k < len(names) && names[k] == l {
				right++
			}
		}
		total += float64(right) / float64(len(s.Labels))
	}
	return total / float64(len(test)), nil
}

// domainFunc draws one domain's labelled points.
type domainFunc func(rng *embedding.RNG, points int) (x []float64, labels []string)

// Synthetic draws train+test domains of a 2-D case; domain k uses RNG stream
// "examples/marginal-transfer/<case>/<k>" (with a seed: "…/<case>/seed<seed>/<k>"), so training and test domains are independent.
// The spec: points in [−7, 7]², an mmd family (D = 256, bandwidth 0.05 in normalised units,
// 0.7 in the data's) for Ψ(P).
func Synthetic(name string, seed uint64, train, test, points int, dom domainFunc) Data {
	sp, err := spec.ParseSpec([]byte(`{"version": 1, "seed": 42, "dim": 2,
	  "bounds": {"lo": [-7, -7], "hi": [7, 7]},
	  "families": [{"name": "psi", "kind": "mmd", "features": 256, "bandwidth": 0.05}]}`))
	if err != nil {
		panic(err)
	}
	d := Data{Spec: sp}
	for k := 0; k < train+test; k++ {
		stream := fmt.Sprintf("examples/marginal-transfer/%s/%d", name, k)
		if seed != 0 {
			stream = fmt.Sprintf("examples/marginal-transfer/%s/seed%d/%d", name, seed, k)
		}
		rng := embedding.NewRNG(7, stream)
		x, y := dom(rng, points)
		s := calibrate.LabelledSet{ID: fmt.Sprintf("%s-%03d", name, k), Points: x, Labels: y}
		if k < train {
			d.Train = append(d.Train, s)
		} else {
			d.Test = append(d.Test, s)
		}
	}
	return d
}

// rotatedDomain: angle φ uniform in (−90°, 90°), offset c uniform in [−1.5, 1.5]²; class
// "+" at R(φ)(1.5, 0), "−" at R(φ)(−1.5, 0), each with standard deviations 0.6 along the
// class axis and 1.2 across it, in equal numbers.
func rotatedDomain(rng *embedding.RNG, points int) ([]float64, []string) {
	phi := (rng.Float64() - 0.5) * math.Pi
	cx, cy := 3*rng.Float64()-1.5, 3*rng.Float64()-1.5
	cos, sin := math.Cos(phi), math.Sin(phi)
	x := make([]float64, 0, 2*points)
	y := make([]string, 0, points)
	for i := 0; i < points; i++ {
		sign, label := 1.0, "+"
		if i%2 == 1 {
			sign, label = -1, "-"
		}
		a := sign*1.5 + 0.6*rng.Normal()
		b := 1.2 * rng.Normal()
		x = append(x, cx+cos*a-sin*b, cy+sin*a+cos*b)
		y = append(y, label)
	}
	return x, y
}

// noInfoDomain: class "+" around (1.2, c), "−" around (−1.2, c), standard deviation 0.8 in
// x₁ and s in x₂, with the shift c uniform in [−3, 3] and the spread s uniform in [0.3, 1.5]
// per domain: the marginal changes from domain to domain, the boundary x₁ = 0 does not.
func noInfoDomain(rng *embedding.RNG, points int) ([]float64, []string) {
	c := 6*rng.Float64() - 3
	s := 0.3 + 1.2*rng.Float64()
	x := make([]float64, 0, 2*points)
	y := make([]string, 0, points)
	for i := 0; i < points; i++ {
		sign, label := 1.0, "+"
		if i%2 == 1 {
			sign, label = -1, "-"
		}
		x = append(x, sign*1.2+0.8*rng.Normal(), c+s*rng.Normal())
		y = append(y, label)
	}
	return x, y
}

// Digits reads scikit-learn's digits.csv.gz (rows of 64 intensities 0–16 and the digit) and
// deals the images to train+test domains by a seeded shuffle (each image in one domain), with intensities x·g + o for a per-domain gain g uniform in [0.5, 1.5] and offset
// o uniform in [−4, 4]. The spec: bounds [−4, 28]^64, an mmd family (D = 256, bandwidth
// 0.25) for Ψ(P).
func Digits(path string, train, test int) (Data, error) {
	if path == "" {
		return Data{}, fmt.Errorf("the digits case needs -digits FILE (digits.csv.gz of scikit-learn)")
	}
	f, err := os.Open(path)
	if err != nil {
		return Data{}, err
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		return Data{}, fmt.Errorf("%s: %w", path, err)
	}
	var imgs [][]float64
	var labels []string
	sc := bufio.NewScanner(zr)
	for sc.Scan() {
		fields := strings.Split(strings.TrimSpace(sc.Text()), ",")
		if len(fields) != 65 {
			continue
		}
		v := make([]float64, 64)
		for i := range v {
			if v[i], err = strconv.ParseFloat(fields[i], 64); err != nil {
				return Data{}, fmt.Errorf("%s: %w", path, err)
			}
		}
		lab, err := strconv.ParseFloat(fields[64], 64)
		if err != nil {
			return Data{}, fmt.Errorf("%s: %w", path, err)
		}
		imgs, labels = append(imgs, v), append(labels, strconv.Itoa(int(lab)))
	}
	if err := sc.Err(); err != nil {
		return Data{}, fmt.Errorf("%s: %w", path, err)
	}
	per := len(imgs) / (train + test)
	if per < 20 {
		return Data{}, fmt.Errorf("%s: %d images, too few for %d domains", path, len(imgs), train+test)
	}
	lo, hi := make([]string, 64), make([]string, 64)
	for i := range lo {
		lo[i], hi[i] = "-4", "28"
	}
	sp, err := spec.ParseSpec([]byte(`{"version": 1, "seed": 42, "dim": 64,
	  "bounds": {"lo": [` + strings.Join(lo, ",") + `], "hi": [` + strings.Join(hi, ",") + `]},
	  "families": [{"name": "psi", "kind": "mmd", "features": 256, "bandwidth": 0.25}]}`))
	if err != nil {
		return Data{}, err
	}
	d := Data{Spec: sp}
	rng := embedding.NewRNG(7, "examples/marginal-transfer/digits")
	perm := make([]int, len(imgs))
	for i := range perm {
		perm[i] = i
	}
	for i := len(perm) - 1; i > 0; i-- {
		j := int(rng.Float64() * float64(i+1))
		perm[i], perm[j] = perm[j], perm[i]
	}
	for k := 0; k < train+test; k++ {
		g, o := 0.5+rng.Float64(), 8*rng.Float64()-4
		s := calibrate.LabelledSet{ID: fmt.Sprintf("digits-%03d", k)}
		for _, j := range perm[k*per : (k+1)*per] { // every image in one domain only
			for _, v := range imgs[j] {
				s.Points = append(s.Points, v*g+o)
			}
			s.Labels = append(s.Labels, labels[j])
		}
		if k < train {
			d.Train = append(d.Train, s)
		} else {
			d.Test = append(d.Test, s)
		}
	}
	return d, nil
}
