// Command mixture-count is the thesis's mixture-count task (Sutherland 2016, §5.2) with
// distfeat's features: predict the number of components (1–10) of a 2-D Gaussian mixture
// from a sample of 200 of its points, by ridge regression on the features of spec.json
// (docs/fitting.md). It draws -train training and -test held-out sets, fits with the model
// package (λ by 5-fold cross-validation over sets, 20% of the training sets held out for the
// split-conformal intervals), and prints the held-out RMSE against the constant predictor
// (the training mean) and the coverage of the 90% intervals.
//
// With -write DIR it instead writes DIR/train.jsonl (label field "components") for
// `distfeat fit --label components` and DIR/test.jsonl (no label) for `distfeat embed
// --model`; -score FILE then reads embed's JSON-lines predictions for test.jsonl and prints
// the same figures against the held-out sets' true counts (drawn again from the seed).
// -stream MODEL streams the held-out sets through a worker with the model (an embedded
// broker, DISTFEAT_MODEL) and scores its predictions topic; -compare FILE (embed --model
// --format arrow's output for test.jsonl) then checks they are the same bits.
//
// Usage: go run ./examples/mixture-count [-train 4000] [-test 1000] [-seed 1] [-write DIR | -score FILE | -stream MODEL [-compare FILE]]
package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"strconv"

	"github.com/distfeat/distfeat/embedding"
	"github.com/distfeat/distfeat/model"
	"github.com/distfeat/distfeat/processor"
	"github.com/distfeat/distfeat/spec"
	"github.com/distfeat/distfeat/window"
)

func main() {
	train := flag.Int("train", 4000, "training `sets`")
	test := flag.Int("test", 1000, "held-out `sets`")
	points := flag.Int("points", 200, "`points` per set")
	seed := flag.Uint64("seed", 1, "data `seed`")
	specPath := flag.String("spec", filepath.Join("examples", "mixture-count", "spec.json"), "feature spec `file`")
	write := flag.String("write", "", "write train.jsonl and test.jsonl to `dir` instead of fitting")
	score := flag.String("score", "", "score embed --model's JSON-lines predictions `file` for the test sets instead of fitting")
	streamModel := flag.String("stream", "", "stream the test sets through a worker with this model `file` (embedded broker) and score its predictions topic instead of fitting")
	compare := flag.String("compare", "", "with -stream: embed --model --format arrow's output `file` for the test sets, which the streamed predictions must equal bit for bit")
	flag.Parse()
	var err error
	if *streamModel != "" {
		err = runStream(*specPath, *streamModel, *compare, mixtureSets(*seed, "test", *test, *points))
	} else if *score != "" {
		err = scoreFile(*score, mixtureSets(*seed, "test", *test, *points))
	} else {
		err = run(*specPath, *train, *test, *points, *seed, *write)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "mixture-count:", err)
		os.Exit(1)
	}
}

func run(specPath string, nTrain, nTest, points int, seed uint64, write string) error {
	trainSets := mixtureSets(seed, "train", nTrain, points)
	testSets := mixtureSets(seed, "test", nTest, points)
	if write != "" {
		for _, out := range []struct {
			name     string
			sets     []mixtureSet
			labelled bool
		}{{"train.jsonl", trainSets, true}, {"test.jsonl", testSets, false}} {
			f, err := os.Create(filepath.Join(write, out.name))
			if err != nil {
				return err
			}
			if err := writeJSONL(f, out.sets, out.labelled); err != nil {
				f.Close()
				return err
			}
			if err := f.Close(); err != nil {
				return err
			}
		}
		return nil
	}
	sp, err := spec.LoadSpec(specPath)
	if err != nil {
		return err
	}
	r, err := evaluate(sp, trainSets, testSets)
	if err != nil {
		return err
	}
	fmt.Printf("train %d sets, test %d sets, %d points each, seed %d\n", nTrain, nTest, points, seed)
	fmt.Printf("model %s: width %d, λ=%.4g, cross-validated RMSE %.3f\n", r.Model.ModelVersion, r.Model.Width, r.Model.Lambda, r.CVRMSE)
	fmt.Printf("held-out RMSE %.3f (constant predictor %.3f)\n", r.RMSE, r.ConstRMSE)
	fmt.Printf("90%% interval coverage %.3f (half-width %.3f)\n", r.Coverage90, r.HalfWidth90)
	return nil
}

// scoreFile prints the RMSE and the interval coverage of embed --model's predictions for
// the test sets (JSON lines: set, prediction.value, prediction.interval).
func scoreFile(path string, testSets []mixtureSet) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	truth := map[string]float64{}
	for _, s := range testSets {
		truth[s.ID] = float64(s.Components)
	}
	var se, n, in float64
	for _, line := range bytes.Split(bytes.TrimSpace(b), []byte("\n")) {
		var rec struct {
			Set        string `json:"set"`
			Prediction struct {
				Value    float64    `json:"value"`
				Interval [2]float64 `json:"interval"`
			} `json:"prediction"`
		}
		if err := json.Unmarshal(line, &rec); err != nil {
			return err
		}
		y, ok := truth[rec.Set]
		if !ok {
			return fmt.Errorf("set %q is not one of the -test sets of this seed", rec.Set)
		}
		d := rec.Prediction.Value - y
		se, n = se+d*d, n+1
		if y >= rec.Prediction.Interval[0] && y <= rec.Prediction.Interval[1] {
			in++
		}
	}
	fmt.Printf("%d sets: RMSE %.3f, interval coverage %.3f\n", int(n), math.Sqrt(se/n), in/n)
	return nil
}

// result is what evaluate measures on the held-out sets.
type result struct {
	Model                   *model.Model
	CVRMSE                  float64
	RMSE, ConstRMSE         float64
	Coverage90, HalfWidth90 float64
}

// evaluate fits a regression model on the training sets' features and measures it on the
// test sets.
func evaluate(sp *spec.Spec, trainSets, testSets []mixtureSet) (result, error) {
	emb, err := embedding.New(sp)
	if err != nil {
		return result{}, err
	}
	x, y, err := features(emb, trainSets)
	if err != nil {
		return result{}, err
	}
	m, err := model.Fit(x, y, model.Options{Kind: model.Regression})
	if err != nil {
		return result{}, err
	}
	m.SpecID, m.Label, m.Families = sp.ID(), "components", nil
	for _, c := range emb.Columns() {
		m.Columns = append(m.Columns, model.Column{Name: c.Name, Len: c.Len})
		m.Families = append(m.Families, c.Family)
	}
	if _, err := m.Marshal(); err != nil { // sets model_version
		return result{}, err
	}
	mean := 0.0
	for _, s := range trainSets {
		mean += float64(s.Components) / float64(len(trainSets))
	}
	xt, _, err := features(emb, testSets)
	if err != nil {
		return result{}, err
	}
	q, err := m.Quantile(0.9)
	if err != nil {
		return result{}, err
	}
	r := result{Model: m, HalfWidth90: q}
	for l, lam := range m.CV.Lambdas {
		if lam == m.Lambda {
			r.CVRMSE = m.CV.Scores[l]
		}
	}
	in := 0
	for i, s := range testSets {
		p, err := m.Predict(xt[i], 0.9)
		if err != nil {
			return result{}, err
		}
		truth := float64(s.Components)
		r.RMSE += (p.Value - truth) * (p.Value - truth)
		r.ConstRMSE += (mean - truth) * (mean - truth)
		if truth >= p.Lo && truth <= p.Hi {
			in++
		}
	}
	n := float64(len(testSets))
	r.RMSE, r.ConstRMSE, r.Coverage90 = math.Sqrt(r.RMSE/n), math.Sqrt(r.ConstRMSE/n), float64(in)/n
	return r, nil
}

// features embeds the sets as `distfeat embed` does (normalise, one sketch per set,
// processor.Finalize in batches) and returns one row per set (all columns, in order) and
// its label.
func features(emb *embedding.Embedder, sets []mixtureSet) ([][]float32, []string, error) {
	rows := make([][]float32, 0, len(sets))
	labels := make([]string, 0, len(sets))
	const batch = 16
	for at := 0; at < len(sets); at += batch {
		part := sets[at:min(at+batch, len(sets))]
		closed := make([]window.Closed[*embedding.Sketch], len(part))
		for k, s := range part {
			u := make([]float64, len(s.Points))
			if _, err := emb.Normalize(u, s.Points); err != nil {
				return nil, nil, fmt.Errorf("set %s: %w", s.ID, err)
			}
			sk := emb.NewSketch()
			sk.Add(u)
			closed[k] = window.Closed[*embedding.Sketch]{Set: s.ID, N: sk.Count(), Sketch: sk}
			labels = append(labels, strconv.Itoa(s.Components))
		}
		for _, rec := range processor.Finalize(emb.Spec().ID(), closed, runtime.GOMAXPROCS(0), nil) {
			var row []float32
			for _, v := range rec.Vectors {
				row = append(row, v...)
			}
			rows = append(rows, row)
		}
	}
	return rows, labels, nil
}
