package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"

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
	f, err := os.Open(predictions)
	if err != nil {
		return err
	}
	defer f.Close()
	right := map[string]int{}
	lr := offline.NewLineReader(bufio.NewReader(f), offline.MaxLineBytes)
	for {
		line, n, err := lr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return err
		}
		var p struct {
			Set        string `json:"set"`
			Index      int    `json:"index"`
			Prediction *struct {
				Class string `json:"class"`
			} `json:"prediction"`
		}
		if err := json.Unmarshal(line, &p); err != nil {
			return fmt.Errorf("%s line %d: %w", predictions, n, err)
		}
		y, ok := labels[p.Set]
		if !ok || p.Index < 0 || p.Index >= len(y) || p.Prediction == nil {
			return fmt.Errorf("%s line %d: set %q point %d is no point of the %s test domains, or has no prediction (embed --points --model)", predictions, n, p.Set, p.Index, name)
		}
		if p.Prediction.Class == y[p.Index] {
			right[p.Set]++
		}
	}
	accs := make([]float64, len(data.Test))
	for i, s := range data.Test {
		accs[i] = float64(right[s.ID]) / float64(len(s.Labels))
	}
	mean, se := meanSE(accs)
	fmt.Fprintf(w, "%s: accuracy on %d unseen domains %.3f ± %.3f (mean over domains ± its standard error)\n", name, len(accs), mean, se)
	return nil
}

// meanSE is the mean of x and its standard error.
func meanSE(x []float64) (mean, se float64) {
	for _, v := range x {
		mean += v
	}
	mean /= float64(len(x))
	if len(x) < 2 {
		return mean, 0
	}
	ss := 0.0
	for _, v := range x {
		ss += (v - mean) * (v - mean)
	}
	return mean, math.Sqrt(ss / float64(len(x)-1) / float64(len(x)))
}
