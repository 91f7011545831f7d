package processor

import (
	"math"
	"strings"
	"testing"

	"github.com/distfeat/distfeat/schema"
)

// TestMaxFeatureBytes: MaxFeatureBytes bounds every feature record the Processor emits (the
// consumer refuses a spec at start-up when this bound is over its output limit), and is
// tight: a window of the longest set ID comes within a few dozen bytes of it (only the
// window-id's digits and the integers' values differ).
func TestMaxFeatureBytes(t *testing.T) {
	for _, spec := range []string{smallSpec, mmdSpec} {
		e := newEnv(t, spec)
		bound, err := MaxFeatureBytes(e.emb, e.out)
		if err != nil {
			t.Fatal(err)
		}
		p, _ := e.newProc(Config{}, nil)
		set := strings.Repeat("k", maxSetBytes)
		rec := jsonRec(set, `{"set":"`+set+`","points":[[0.1,0.2],[0.3,0.4]],"end":true}`)
		msgs := processAll(t, p, numbered(0, rec), 1)
		feats, _ := split(msgs)
		if len(feats) != 1 {
			t.Fatalf("%d feature records, want 1", len(feats))
		}
		got := messageSize(feats[0].Key, feats[0].Value, feats[0].Headers)
		// 64 bytes of slack: the window-id header (up to 20 digits) and Arrow's padding of
		// the integer columns are the only parts that can be shorter than the bound's;
		// besides, the bound has room for the headers of a partial window.
		partial := messageSize(nil, nil, rejectedHeaders(rejectCount{records: math.MaxInt64, points: math.MaxInt64})) - messageSize(nil, nil, nil)
		if got > bound || got < bound-64-partial {
			t.Errorf("spec %.40s…: a %d-byte feature record against the bound %d", spec, got, bound)
		}
		if _, _, err := schema.DecodeFeatures(feats[0].Value); err != nil {
			t.Fatal(err)
		}
	}
}
