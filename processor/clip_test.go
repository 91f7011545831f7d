package processor

import (
	"bufio"
	"encoding/json"
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/distfeat/distfeat/embedding"
	"github.com/distfeat/distfeat/schema"
	"github.com/distfeat/distfeat/spec"
	"github.com/distfeat/distfeat/window"
)

// TestClipTallyExampleSets (issue 32): examples/sets.jsonl, in its own units, through the
// built-in default spec's [0, 1]² bounds was clipped almost entirely without a word. The
// tally of what Decode clips agrees with a direct count of the points outside [0, 1]², is far
// above MaxClippedFraction (so `distfeat embed` fails and the worker warns) and names the
// sets; with examples/spec.json, the bounds calibrate proposes for the file, it is below.
func TestClipTallyExampleSets(t *testing.T) {
	type set struct {
		Set    string      `json:"set"`
		Points [][]float64 `json:"points"`
	}
	f, err := os.Open("../examples/sets.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var lines [][]byte
	var sets []set
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<24)
	for sc.Scan() {
		var s set
		if err := json.Unmarshal(sc.Bytes(), &s); err != nil {
			t.Fatal(err)
		}
		lines, sets = append(lines, append([]byte(nil), sc.Bytes()...)), append(sets, s)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	tally := func(sp *spec.Spec) *ClipTally {
		emb, err := embedding.New(sp)
		if err != nil {
			t.Fatal(err)
		}
		var ct ClipTally
		for _, l := range lines {
			d, err := Decode(emb, nil, l, schema.ContentTypeJSON, 0, schema.DecodeOptions{Dim: emb.Dim(), MaxPoints: 1 << 20}, nil)
			if err != nil {
				t.Fatal(err)
			}
			ct.Add(d.Batches[0].Set, d.Batches[0].N, d.Clipped)
		}
		return &ct
	}

	// The direct count: points with a coordinate outside [0, 1].
	var points, outside int64
	worst := map[string]int64{}
	for _, s := range sets {
		for _, p := range s.Points {
			points++
			for _, v := range p {
				if v < 0 || v > 1 {
					outside++
					worst[s.Set]++
					break
				}
			}
		}
	}
	ct := tally(spec.DefaultSpec())
	if ct.Points != points || ct.Clipped != outside {
		t.Fatalf("tally %d of %d points clipped, direct count %d of %d", ct.Clipped, ct.Points, outside, points)
	}
	err = ct.Check(MaxClippedFraction)
	var ce *ClipError
	if !errors.As(err, &ce) || ce.Fraction < 0.99 {
		t.Fatalf("default spec: Check = %v, want a ClipError above 99%%", err)
	}
	w := ct.Worst()
	if len(w) != clipWorst || w[0].Clipped != w[0].Points || worst[w[0].Set] != w[0].Clipped {
		t.Errorf("worst sets %+v; want %d sets, the first wholly clipped", w, clipWorst)
	}
	for _, want := range []string{"points (100%) were outside the spec's bounds", `"` + w[0].Set + `"`, "distfeat calibrate", "bounds", "more than the 1.0% accepted"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}

	calibrated, err := spec.LoadSpec("../examples/spec.json")
	if err != nil {
		t.Fatal(err)
	}
	if ct := tally(calibrated); ct.Check(MaxClippedFraction) != nil || ct.Points != points {
		t.Errorf("examples/spec.json: %s; want at most %g clipped", ct.Summary(), MaxClippedFraction)
	}
}

// TestClipTallyWorst: the tally keeps the clipWorst sets with the most clipped points, a set
// added again accumulating, in order.
func TestClipTallyWorst(t *testing.T) {
	var ct ClipTally
	for _, a := range []struct {
		set             string
		points, clipped int
	}{{"a", 10, 1}, {"b", 10, 0}, {"c", 10, 5}, {"d", 10, 2}, {"e", 10, 3}, {"a", 10, 9}, {"f", 10, 1}} {
		ct.Add(a.set, a.points, a.clipped)
	}
	got := ct.Worst()
	// a left the list when d and e came (1 clipped) and came back with 9 alone.
	want := []SetClip{{"a", 10, 9}, {"c", 10, 5}, {"e", 10, 3}}
	if len(got) != len(want) {
		t.Fatalf("worst %+v, want %+v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("worst %+v, want %+v", got, want)
		}
	}
	if ct.Points != 70 || ct.Clipped != 21 || ct.Check(0.3) != nil || ct.Check(0.29) == nil {
		t.Errorf("%d of %d clipped; Check(0.3) = %v", ct.Clipped, ct.Points, ct.Check(0.3))
	}
}

// clipSets is an Observer that records OnClippedSet.
type clipSets struct {
	NopObserver
	got []SetClip
}

func (c *clipSets) OnClippedSet(set string, points, clipped int) {
	c.got = append(c.got, SetClip{set, int64(points), int64(clipped)})
}

// TestClipObserver: the Processor tells a ClipObserver each batch with clipped points, by
// set, and nothing for a record without clipped points.
func TestClipObserver(t *testing.T) {
	e := newEnv(t, smallSpec)
	obs := &clipSets{}
	p, err := New(Config{AllowKeyless: true, Window: window.Config{Mode: "set", MaxOpen: 10}}, e.emb, e.out, obs, nil)
	if err != nil {
		t.Fatal(err)
	}
	processAll(t, p, numbered(0,
		jsonRec("a", `{"points": [[0.1, 0.2], [1.5, 0.2], [-3, 7]]}`),
		jsonRec("b", `{"points": [[0.1, 0.2]]}`),
		arrowRec("", encodeArrow(t,
			schema.Batch{Set: "c", Points: []float64{0.1, 0.2}, N: 1},
			schema.Batch{Set: "d", Points: []float64{0.1, 2, 0.5, 0.5}, N: 2})),
	), 1)
	want := []SetClip{{"a", 3, 2}, {"d", 2, 1}}
	if len(obs.got) != len(want) || obs.got[0] != want[0] || obs.got[1] != want[1] {
		t.Errorf("OnClippedSet calls %+v, want %+v", obs.got, want)
	}
}
