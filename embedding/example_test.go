package embedding_test

import (
	"fmt"

	"github.com/distfeat/distfeat/embedding"
	"github.com/distfeat/distfeat/spec"
)

// New compiles a spec once; Embed turns one window of points (normalised into the unit
// cube) into one vector per output column.
func ExampleNew() {
	sp, err := spec.ParseSpec([]byte(`{"dim": 2, "bounds": {"lo": [0, 0], "hi": [10, 10]},
		"families": [{"name": "m", "kind": "mmd", "bandwidth": 0.2, "features": 8},
		             {"name": "l", "kind": "l2", "basis": 3}]}`))
	if err != nil {
		panic(err)
	}
	emb, err := embedding.New(sp)
	if err != nil {
		panic(err)
	}
	raw := []float64{1, 2, 3, 4, 5, 6, 12, 8} // four points; the last is clipped to the bounds
	u := make([]float64, len(raw))
	clipped, err := emb.Normalize(u, raw)
	if err != nil {
		panic(err)
	}
	features := emb.Embed(u)
	for i, c := range emb.Columns() {
		fmt.Printf("%s: %.4f\n", c.Name, features[i])
	}
	fmt.Println("clipped:", clipped)
	// Output:
	// m: [0.1259 -0.0634 -0.1053 0.1800 -0.2092 0.4274 -0.0625 -0.1097]
	// l: [1.0000 0.0000 0.1905]
	// clipped: 1
}

// A Sketch accumulates a window's points in any split; merged sketches finalise to the
// same bits as one sketch fed every point.
func ExampleSketch() {
	emb, err := embedding.New(spec.DefaultSpec())
	if err != nil {
		panic(err)
	}
	u := []float64{0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8}
	whole := emb.NewSketch()
	whole.Add(u)

	a, b := emb.NewSketch(), emb.NewSketch()
	a.Add(u[:4]) // the first two points
	b.Add(u[4:]) // the last two
	if err := a.Merge(b); err != nil {
		panic(err)
	}
	x, y := whole.Finalize(nil), a.Finalize(nil)
	same := true
	for i := range x {
		for j := range x[i] {
			same = same && x[i][j] == y[i][j]
		}
	}
	fmt.Println(a.Count(), len(x), len(x[0]), len(x[1]), len(x[2]), same)
	// Output:
	// 4 3 1024 4096 100 true
}
