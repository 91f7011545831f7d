package spec_test

import (
	"errors"
	"fmt"

	"github.com/distfeat/distfeat/spec"
)

// A spec is parsed strictly, its defaults are filled in, and its spec_id is the hash of the
// canonical JSON: writing a default explicitly does not change it.
func ExampleParseSpec() {
	short, err := spec.ParseSpec([]byte(`{"dim": 2, "families": [{"name": "m", "kind": "mmd", "bandwidth": 0.1}]}`))
	if err != nil {
		panic(err)
	}
	long, err := spec.ParseSpec([]byte(`{"version": 1, "seed": 42, "dim": 2,
		"families": [{"name": "m", "kind": "mmd", "bandwidth": 0.1, "features": 1024}]}`))
	if err != nil {
		panic(err)
	}
	fmt.Println(string(short.CanonicalJSON()))
	fmt.Println(short.ID(), short.ID() == long.ID())

	_, err = spec.ParseSpec([]byte(`{"dim": 2, "families": [{"name": "m", "kind": "mmd", "bandwidth": 0.1, "grid": 8}]}`))
	var se *spec.SpecError
	fmt.Println(errors.As(err, &se), se.Field)
	// Output:
	// {"bounds":{"hi":[1,1],"lo":[0,0]},"dim":2,"families":[{"bandwidth":0.1,"features":1024,"kind":"mmd","name":"m"}],"out_of_bounds":"clip","seed":42,"version":1}
	// 22ed165300147a81 true
	// true families[0].grid
}
