package model_test

import (
	"fmt"
	"strconv"

	"github.com/distfeat/distfeat/model"
)

// Fit a ridge regression on feature rows (one per set) with numeric labels, write the model
// file, load it back and predict a new row with its 90% interval.
func ExampleFit() {
	var x [][]float32
	var y []string
	for i := 0; i < 100; i++ {
		a, b := float32(i%10)/10, float32(i%7)/7
		x = append(x, []float32{a, b})
		y = append(y, strconv.FormatFloat(float64(2*a-b)+0.01*float64(i%3-1), 'g', -1, 64))
	}
	m, err := model.Fit(x, y, model.Options{Kind: model.Regression})
	if err != nil {
		panic(err)
	}
	m.SpecID, m.Families, m.Columns = "0123456789abcdef", []string{"f"}, []model.Column{{Name: "f", Len: 2}}
	file, err := m.Marshal()
	if err != nil {
		panic(err)
	}
	loaded, err := model.Parse(file)
	if err != nil {
		panic(err)
	}
	p, err := loaded.Predict([]float32{0.5, 0.5}, 0.9)
	if err != nil {
		panic(err)
	}
	fmt.Printf("prediction %.2f, 90%% interval [%.2f, %.2f]\n", p.Value, p.Lo, p.Hi)
	// Output: prediction 0.50, 90% interval [0.49, 0.51]
}

// Fit a logistic classifier (binary: one weight row, the score of classes[1]) and read a
// new row's class probabilities.
func ExampleFit_logistic() {
	var x [][]float32
	var y []string
	for i := 0; i < 60; i++ {
		v := float32(i%20)/10 - 1 // −1 … 0.9
		x = append(x, []float32{v})
		label := "low"
		if v+0.3*float32(i%3-1) > 0 { // overlapping classes
			label = "high"
		}
		y = append(y, label)
	}
	m, err := model.Fit(x, y, model.Options{Kind: model.Classification, Classifier: model.LogisticClassifier})
	if err != nil {
		panic(err)
	}
	p, err := m.Predict([]float32{0.8}, 0)
	if err != nil {
		panic(err)
	}
	fmt.Printf("classes %v, %d weight row, link %s: %s, P = %.2f\n", m.Classes, len(m.Weights), m.Link, p.Class, p.Probabilities)
	// Output: classes [high low], 1 weight row, link logistic: high, P = [0.99 0.01]
}
