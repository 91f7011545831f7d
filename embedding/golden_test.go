package embedding

import (
	"github.com/distfeat/distfeat/internal/numeric"

	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"testing"
)

var updateGolden = flag.Bool("update", false, "rewrite testdata/golden.json from the current code")

const goldenPath = "testdata/golden.json"

// golden is the content of testdata/golden.json: the first draws of the frozen RNG and
// SHA-256 checksums of the features of fixed inputs. A mismatch means every user's features
// would change.
type golden struct {
	Comment string `json:"comment"`
	RNG     struct {
		Seed    uint64   `json:"seed"`
		Stream  string   `json:"stream"`
		Uint64  []string `json:"uint64"`       // hex
		Float64 []string `json:"float64_bits"` // hex bit patterns
		Normal  []string `json:"normal_bits"`  // hex bit patterns
	} `json:"rng"`
	Input struct {
		Seed   uint64 `json:"seed"`
		Stream string `json:"stream"`
		Points int    `json:"points"`
	} `json:"input"`
	SpecIDs  map[string]string `json:"spec_ids"`
	Features map[string]string `json:"features"` // "<spec>/<column>" → SHA-256 of little-endian float32
}

const goldenComment = "Pinned by golden_test.go. A mismatch means the features of every deployed worker " +
	"would change for the same input. Regenerate only for an intended, announced change: " +
	"go test ./embedding -run Golden -update"

func goldenRNG() (u, f, n []string) {
	r := NewRNG(42, "mmd")
	for range 4 {
		u = append(u, fmt.Sprintf("%#016x", r.Uint64()))
	}
	r = NewRNG(42, "mmd")
	for range 4 {
		f = append(f, fmt.Sprintf("%#016x", math.Float64bits(r.Float64())))
	}
	r = NewRNG(42, "mmd")
	for range 5 { // odd: covers the cached second value of a Box–Muller pair and a new pair
		n = append(n, fmt.Sprintf("%#016x", math.Float64bits(r.Normal())))
	}
	return u, f, n
}

// vectorSum is the SHA-256 of a vector's little-endian float32 bytes.
func vectorSum(v []float32) string {
	h := sha256.New()
	var b [4]byte
	for _, x := range v {
		binary.LittleEndian.PutUint32(b[:], math.Float32bits(x))
		h.Write(b[:])
	}
	return hex.EncodeToString(h.Sum(nil))
}

// goldenFeatures computes the checksum of every column of every test spec on the fixed
// input, once per mmd kernel path in paths.
func goldenFeatures(t *testing.T, paths []numeric.MMDPath, points int) (ids map[string]string, sums map[numeric.MMDPath]map[string]string) {
	t.Helper()
	ids, sums = map[string]string{}, map[numeric.MMDPath]map[string]string{}
	for _, p := range paths {
		sums[p] = map[string]string{}
	}
	for name, sp := range testSpecs(t) {
		e := mustNew(t, sp) // a private copy: its kernel path is changed below
		ids[name] = sp.ID()
		u := uniformPoints(NewRNG(7, "golden-points"), points, e.Dim())
		for _, p := range paths {
			for _, f := range e.fams {
				if m, ok := f.(*mmdFamily); ok {
					m.path = p
				}
			}
			out := e.Embed(u)
			for i, c := range e.Columns() {
				sums[p][name+"/"+c.Name] = vectorSum(out[i])
			}
		}
	}
	return ids, sums
}

func TestGolden(t *testing.T) {
	const points = 1000
	if *updateGolden {
		var g golden
		g.Comment = goldenComment
		g.RNG.Seed, g.RNG.Stream = 42, "mmd"
		g.RNG.Uint64, g.RNG.Float64, g.RNG.Normal = goldenRNG()
		g.Input.Seed, g.Input.Stream, g.Input.Points = 7, "golden-points", points
		var all map[numeric.MMDPath]map[string]string
		g.SpecIDs, all = goldenFeatures(t, []numeric.MMDPath{numeric.MMDBestPath()}, points)
		g.Features = all[numeric.MMDBestPath()]
		b, err := json.MarshalIndent(g, "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(filepath.Dir(goldenPath), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(goldenPath, append(b, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("wrote %s", goldenPath)
		return
	}
	b, err := os.ReadFile(goldenPath)
	if err != nil {
		t.Fatalf("%v (create it with: go test ./embedding -run Golden -update)", err)
	}
	var g golden
	if err := json.Unmarshal(b, &g); err != nil {
		t.Fatalf("%s: %v", goldenPath, err)
	}
	const why = "this changes the features of EVERY user for the same input (models trained on " +
		"old features silently degrade; replays stop being byte-identical). If intended, bump the " +
		"spec version, announce it, and regenerate with: go test ./embedding -run Golden -update"

	u, f, n := goldenRNG()
	for _, c := range []struct {
		what      string
		got, want []string
	}{{"Uint64", u, g.RNG.Uint64}, {"Float64", f, g.RNG.Float64}, {"Normal", n, g.RNG.Normal}} {
		if fmt.Sprint(c.got) != fmt.Sprint(c.want) {
			t.Errorf("NewRNG(42, \"mmd\").%s draws changed:\n got %v\nwant %v\n%s", c.what, c.got, c.want, why)
		}
	}

	var paths []numeric.MMDPath
	for _, path := range []numeric.MMDPath{numeric.MMDPathAVX512, numeric.MMDPathAVX2, numeric.MMDPathPortable} {
		if numeric.MMDPathSupported(path) {
			paths = append(paths, path)
		} else {
			t.Logf("mmd kernel path %v is not supported here; golden checked on the others", path)
		}
	}
	ids, all := goldenFeatures(t, paths, g.Input.Points)
	for name, id := range g.SpecIDs {
		if ids[name] != id {
			t.Errorf("spec_id of the %q test sp changed: %s → %s (canonical JSON changed); %s", name, id, ids[name], why)
		}
	}
	for _, path := range paths {
		sums := all[path]
		for key, want := range g.Features {
			got, ok := sums[key]
			switch {
			case !ok:
				t.Errorf("column %s is no longer produced; %s", key, why)
			case got != want:
				t.Errorf("features of %s changed (mmd kernel path %v): sha256 %s, golden %s; %s", key, path, got, want, why)
			}
		}
		for key := range sums {
			if _, ok := g.Features[key]; !ok {
				t.Errorf("column %s is not in %s; regenerate it with -update", key, goldenPath)
			}
		}
	}
}
