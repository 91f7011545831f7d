package processor_test

import (
	"fmt"

	"github.com/distfeat/distfeat/embedding"
	"github.com/distfeat/distfeat/processor"
	"github.com/distfeat/distfeat/schema"
	"github.com/distfeat/distfeat/spec"
	"github.com/distfeat/distfeat/window"
)

// A partition's records in, feature records and dead letters out, in order, and the
// position to commit once they are acknowledged.
func ExampleProcessor_Process() {
	sp, err := spec.ParseSpec([]byte(`{"version": 1, "seed": 1, "dim": 2,
		"bounds": {"lo": [0, 0], "hi": [1, 1]},
		"families": [{"name": "mmd", "kind": "mmd", "features": 8, "bandwidth": 0.2}]}`))
	if err != nil {
		panic(err)
	}
	emb, err := embedding.New(sp)
	if err != nil {
		panic(err)
	}
	p, err := processor.New(processor.Config{Window: window.Config{Mode: "set", MaxOpen: 100}},
		emb, schema.NewOutput(sp, emb.Columns()), nil, nil)
	if err != nil {
		panic(err)
	}
	if err := p.Restore("", 0); err != nil { // nothing committed yet
		panic(err)
	}
	rec := func(offset int64, key, value string) processor.Record {
		return processor.Record{Topic: "points", Offset: offset, Key: []byte(key), Value: []byte(value)}
	}
	res, err := p.Process(
		rec(0, "a", `{"points": [[0.1, 0.2], [0.3, 0.4]]}`),
		rec(1, "b", `{"points": [[0.1, 0.2, 0.3]]}`), // three coordinates: a dead letter
		rec(2, "a", `{"points": [[0.5, 0.6]], "end": true}`),
		rec(3, "c", `{"points": [[0.7, 0.8]]}`), // stays open
	)
	if err != nil {
		panic(err)
	}
	for _, m := range res.Messages {
		switch m.Kind {
		case processor.Feature:
			recs, _, _ := schema.DecodeFeatures(m.Value)
			fmt.Printf("feature %s window-id=%s n=%d\n", m.Key, header(m, schema.HeaderWindowID), recs[0].N)
		case processor.DeadLetter:
			fmt.Printf("dead letter %s error=%s offset=%s\n", m.Key, header(m, schema.HeaderError), header(m, schema.HeaderSourceOffset))
		}
	}
	cp := p.CommitPoint()
	fmt.Println("commit", cp.Offset, cp.Metadata)
	// Output:
	// dead letter b error=dim offset=1
	// feature a window-id=0 n=3
	// commit 3 v2;03ebf6d83027361a;4;window/v1;m=set;c=3;n=4
}

func header(m processor.Message, key string) string {
	for _, h := range m.Headers {
		if h.Key == key {
			return string(h.Value)
		}
	}
	return ""
}
