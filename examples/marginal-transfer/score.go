package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"

	"github.com/distfeat/distfeat/internal/stats"
	"github.com/distfeat/distfeat/offline"
)

// ScoreCase prints the accuracy on a case's test domains of a per-point model's predictions,
// read from predictions (the JSON lines of distfeat embed --points --model on dir/test.jsonl
// as WriteCase wrote it): the mean over domains of each domain's accuracy on its points, as
// the table and distfeat fit's cross-validation count it, with its standard error over
// domains.
func ScoreCase(w io.Writer, name string, c Config, predictions string) error {
	data, err := Generate(name, c)
	if err != nil {
		return err
	}
	labels := map[string][]string{}
	for _, s := range data.Test {
		labels[s.ID] = s.Labels
	}
	classes, err := readClasses(predictions)
	if err != nil {
		return err
	}
	right := map[string]int{}
	for set, pts := range classes {
		y, ok := labels[set]
		for i, cl := range pts {
			if !ok || i < 0 || i >= int64(len(y)) {
				return fmt.Errorf("%s: set %q point %d is no point of the %s test domains", predictions, set, i, name)
			}
			if cl == y[i] {
				right[set]++
			}
		}
	}
	accs := make([]float64, len(data.Test))
	for i, s := range data.Test {
		accs[i] = float64(right[s.ID]) / float64(len(s.Labels))
	}
	mean, se := stats.MeanSE(accs)
	fmt.Fprintf(w, "%s: accuracy on %d unseen domains %.3f ± %.3f (mean over domains ± its standard error)\n", name, len(accs), mean, se)
	return nil
}

// readClasses reads the predicted class of every point from the JSON lines of embed --points
// --model: set → point index → class.
func readClasses(path string) (map[string]map[int64]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	out := map[string]map[int64]string{}
	lr := offline.NewLineReader(bufio.NewReader(f), offline.MaxLineBytes)
	for {
		line, n, err := lr.Next()
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return nil, err
		}
		var p struct {
			Set        string `json:"set"`
			Index      int64  `json:"index"`
			Prediction *struct {
				Class string `json:"class"`
			} `json:"prediction"`
		}
		if err := json.Unmarshal(line, &p); err != nil {
			return nil, fmt.Errorf("%s line %d: %w", path, n, err)
		}
		if p.Prediction == nil {
			return nil, fmt.Errorf("%s line %d: no prediction (embed --points --model)", path, n)
		}
		if out[p.Set] == nil {
			out[p.Set] = map[int64]string{}
		}
		out[p.Set][p.Index] = p.Prediction.Class
	}
}
