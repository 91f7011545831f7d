package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/sys/cpu"

	"github.com/distfeat/distfeat/embedding"
)

// Cross-architecture determinism: `distfeat embed` must write the same bytes for the same
// spec and points on every build — amd64 with AVX-512, AVX2 or the portable kernels
// (-tags purego), GOAMD64=v1 or v3 (where the compiler may fuse x*y+z), and arm64 (run
// under qemu-user here). The expected SHA-256 of every output is committed in
// testdata/arch/golden.json, so a build that disagrees fails even when it is the only one
// that runs. `make test-arch` runs these tests plus the embedding golden tests under qemu.

var updateArch = flag.Bool("update-arch", false, "rewrite "+archGoldenPath+" from this build's embed output")

const archGoldenPath = "testdata/arch/golden.json"

// archCase is one spec of the cross-architecture check and the shape of its input.
type archCase struct {
	name   string
	spec   string // "" is the built-in default
	dim    int
	lo, hi float64 // input coordinates are drawn around [lo, hi] (a few points outside it)
	input  string  // the input's RNG stream name; "" is name
}

// archCases covers every feature family and option that has its own arithmetic: the default
// spec (version 3: mmd through the NUFFT, hdd js joint with orthogonal features, l2); the
// former default (default_v1: its version-1 spec, explicit, whose bytes running groups keep);
// the three divergences at the paper's D = 7000 (js, hellinger
// and tv, iid and stratified λs, no-reflection boundary); and a 5-d spec with mmd's second
// stage, hdd tv in marginal mode with coefficients, and l2 with its RFF stage, on bounds
// other than the unit cube.
var archCases = []archCase{
	{name: "default", dim: 2, lo: 0, hi: 1},
	{name: "default_v1", input: "default", dim: 2, lo: 0, hi: 1, spec: `{"version":1,"seed":42,"dim":2,"bounds":{"lo":[0,0],"hi":[1,1]},"out_of_bounds":"clip","families":[
 {"name":"mmd","kind":"mmd","features":1024,"bandwidth":0.1},
 {"name":"hdd_js","kind":"hdd","divergence":"js","features":4096,"sigma":0.5,"lambdas":5,"lambda_sampling":"stratified","basis":100,"grid":64,"kde_bandwidth":0.02,"boundary":"reflect","density_floor":1e-6,"mode":"joint","coefficients":false},
 {"name":"l2","kind":"l2","basis":100}]}`},
	{name: "hdd3", dim: 2, lo: 0, hi: 1, spec: `{"version":1,"seed":5,"dim":2,"bounds":{"lo":[0,0],"hi":[1,1]},"families":[
 {"name":"js","kind":"hdd","divergence":"js","features":7000,"sigma":0.5},
 {"name":"hel","kind":"hdd","divergence":"hellinger","features":7000,"sigma":0.5,"lambdas":3},
 {"name":"tv","kind":"hdd","divergence":"tv","features":7000,"sigma":1,"lambdas":7,"lambda_sampling":"iid","boundary":"none","grid":48,"basis":60}]}`},
	{name: "stages5d", dim: 5, lo: -2, hi: 3, spec: `{"version":1,"seed":77,"dim":5,
 "bounds":{"lo":[-2,-2,-2,-2,-2],"hi":[3,3,3,3,3]},"out_of_bounds":"clip","families":[
 {"name":"mmd_rbf","kind":"mmd","features":512,"bandwidth":0.3,"rbf_sigma":0.8,"rbf_features":384},
 {"name":"hdd_tv","kind":"hdd","divergence":"tv","mode":"marginal","features":1024,"sigma":1,"lambdas":8,"grid":32,"basis":20,"coefficients":true},
 {"name":"l2_rff","kind":"l2","basis":60,"sigma":0.4,"features":256}]}`},
}

// archFormats are the embed output formats compared byte for byte.
var archFormats = []string{"jsonl", "arrow"}

// archSetSizes are the window sizes of every case's input (a single point, a small set,
// larger sets); chosen so that qemu runs them in seconds.
var archSetSizes = []int{1, 9, 120, 700, 1500, 400, 2500, 60}

// archInput writes the case's input: one JSON line per set, points in clusters around
// random centres, drawn from the frozen RNG with exactly rounded operations only (uniform
// draws, sums, products by constants), so the file is the same on every machine. About 1%
// of coordinates fall outside [lo, hi] and are clipped by the spec.
func archInput(c archCase) []byte {
	stream := c.input
	if stream == "" {
		stream = c.name
	}
	rng := embedding.NewRNG(2026, "arch/"+stream)
	var b bytes.Buffer
	width := c.hi - c.lo
	for si, n := range archSetSizes {
		centre := make([]float64, c.dim)
		for j := range centre {
			centre[j] = c.lo + float64(width*rng.Float64())
		}
		spread := float64(0.05+float64(0.2*rng.Float64())) * width
		fmt.Fprintf(&b, `{"set":"s%d","points":[`, si)
		for i := 0; i < n; i++ {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteByte('[')
			for j := 0; j < c.dim; j++ {
				if j > 0 {
					b.WriteByte(',')
				}
				// Sum of three uniforms: a bell-shaped offset in [−1.5, 1.5]·spread.
				off := float64(rng.Float64()+rng.Float64()) + rng.Float64() - 1.5
				v := centre[j] + float64(off*spread)
				b.WriteString(strconv.FormatFloat(v, 'g', -1, 64))
			}
			b.WriteByte(']')
		}
		b.WriteString("]}\n")
	}
	return b.Bytes()
}

// archFixture is a case's spec and input on disk.
type archFixture struct {
	archCase
	specPath, inPath string
}

func writeArchFixtures(t *testing.T) []archFixture {
	t.Helper()
	dir := t.TempDir()
	var out []archFixture
	for _, c := range archCases {
		f := archFixture{archCase: c, inPath: filepath.Join(dir, c.name+".jsonl")}
		if err := os.WriteFile(f.inPath, archInput(c), 0o644); err != nil {
			t.Fatal(err)
		}
		if c.spec != "" {
			f.specPath = filepath.Join(dir, c.name+".spec.json")
			if err := os.WriteFile(f.specPath, []byte(c.spec), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		out = append(out, f)
	}
	return out
}

// embedArgs is the embed command line for a fixture. The fixtures clip on purpose (about 2%
// of their points, above embed's default --max-clipped), to pin the clipping arithmetic.
func (f archFixture) embedArgs(format string, workers int) []string {
	args := []string{"embed", "--in", f.inPath, "--format", format, "--workers", strconv.Itoa(workers), "--max-clipped", "1"}
	if f.specPath != "" {
		args = append(args, "--spec", f.specPath)
	}
	return args
}

func sha256Hex(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// loadArchGolden reads the committed checksums ("<case>/<format>" → SHA-256 of the output).
func loadArchGolden(t *testing.T) map[string]string {
	t.Helper()
	b, err := os.ReadFile(archGoldenPath)
	if err != nil {
		t.Fatalf("%v (create it with: go test ./cmd/distfeat -run TestEmbedGoldenBytes -update-arch)", err)
	}
	var g struct {
		Sums map[string]string `json:"sha256"`
	}
	if err := json.Unmarshal(b, &g); err != nil {
		t.Fatalf("%s: %v", archGoldenPath, err)
	}
	if len(g.Sums) != len(archCases)*len(archFormats) {
		t.Fatalf("%s holds %d checksums, want %d (regenerate with -update-arch)", archGoldenPath, len(g.Sums), len(archCases)*len(archFormats))
	}
	return g.Sums
}

const archWhy = "the same spec and points must give the same bytes on every architecture and build " +
	"(docs/guarantees.md; docs/CONTRACTS.md, feature-path floating point)"

// TestEmbedGoldenBytes runs embed in process (this test binary's architecture and build
// flags) with one and with three finalisation workers and compares the output bytes with
// the committed checksums.
func TestEmbedGoldenBytes(t *testing.T) {
	fixtures := writeArchFixtures(t)
	got := map[string]string{}
	for _, f := range fixtures {
		for _, format := range archFormats {
			key := f.name + "/" + format
			for _, workers := range []int{1, 3} {
				var out, errb bytes.Buffer
				if code := run(context.Background(), f.embedArgs(format, workers), &out, &errb); code != 0 {
					t.Fatalf("%s: embed exited %d: %s", key, code, errb.String())
				}
				sum := sha256Hex(out.Bytes())
				if prev, ok := got[key]; ok && prev != sum {
					t.Errorf("%s: the output depends on the number of workers (%s vs %s)", key, prev, sum)
				}
				got[key] = sum
			}
		}
	}
	if *updateArch {
		b, err := json.MarshalIndent(map[string]any{
			"comment": "SHA-256 of `distfeat embed` output for the inputs and specs of cmd/distfeat/arch_test.go; " +
				"every architecture and build must reproduce them. Regenerate only for an intended, announced change: " +
				"go test ./cmd/distfeat -run TestEmbedGoldenBytes -update-arch",
			"sha256": got,
		}, "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(filepath.Dir(archGoldenPath), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(archGoldenPath, append(b, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("wrote %s", archGoldenPath)
		return
	}
	want := loadArchGolden(t)
	for _, key := range sortedKeys(want) {
		if got[key] != want[key] {
			t.Errorf("%s on %s/%s: sha256 %s, golden %s; %s", key, runtime.GOOS, runtime.GOARCH, got[key], want[key], archWhy)
		}
	}
}

// archBuild is one way of building the binary for the comparison.
type archBuild struct {
	name string
	env  []string // added to the go build environment
	tags string
	exec string // emulator to run the binary with ("" runs it directly)
}

// TestEmbedCrossArch builds distfeat for arm64 and runs embed under qemu-aarch64-static, and
// on amd64 also builds it with the portable kernels (-tags purego) and with GOAMD64=v3 (the
// compiler then fuses multiply-adds it may fuse); every output must equal both the host
// build's bytes and the committed checksums. qemu-user is required under CI (.ci/run
// installs qemu-user-static) and skipped with the reason elsewhere. It runs only when
// DISTFEAT_TEST_ARCH is set (by `make test-arch`), not in every `go test ./...`.
func TestEmbedCrossArch(t *testing.T) {
	if os.Getenv("DISTFEAT_TEST_ARCH") == "" {
		t.Skip("skipping: builds distfeat three more times (minutes); `make test-arch` runs it with DISTFEAT_TEST_ARCH=1")
	}
	var builds []archBuild
	if runtime.GOARCH == "amd64" {
		builds = append(builds, archBuild{name: "amd64-purego", env: []string{"GOARCH=amd64", "GOAMD64=v1"}, tags: "purego"})
		if cpu.X86.HasAVX2 && cpu.X86.HasFMA && cpu.X86.HasBMI1 && cpu.X86.HasBMI2 {
			builds = append(builds, archBuild{name: "amd64-v3", env: []string{"GOARCH=amd64", "GOAMD64=v3"}})
		} else {
			t.Logf("this CPU cannot run GOAMD64=v3 binaries; that build is not compared here")
		}
	}
	if runtime.GOARCH != "arm64" {
		qemu := requireTool(t, "qemu-aarch64-static", "qemu-user-static")
		builds = append(builds, archBuild{name: "arm64", env: []string{"GOARCH=arm64"}, exec: qemu})
	}
	fixtures := writeArchFixtures(t)
	want := loadArchGolden(t)
	host := map[string][]byte{}
	for _, f := range fixtures {
		for _, format := range archFormats {
			out, err := exec.Command(binPath, f.embedArgs(format, 2)...).Output()
			if err != nil {
				t.Fatalf("host embed %s/%s: %v", f.name, format, exitDetail(err))
			}
			host[f.name+"/"+format] = out
		}
	}
	dir := t.TempDir()
	for _, b := range builds {
		t.Run(b.name, func(t *testing.T) {
			bin := filepath.Join(dir, "distfeat-"+b.name)
			args := []string{"build", "-o", bin}
			if b.tags != "" {
				args = append(args, "-tags", b.tags)
			}
			build := exec.Command("go", append(args, ".")...)
			build.Env = append(append(os.Environ(), "CGO_ENABLED=0"), b.env...)
			if out, err := build.CombinedOutput(); err != nil {
				t.Fatalf("go build (%s): %v\n%s", strings.Join(b.env, " "), err, out)
			}
			for _, f := range fixtures {
				for _, format := range archFormats {
					key := f.name + "/" + format
					cmdArgs := f.embedArgs(format, 2)
					name := bin
					if b.exec != "" {
						name, cmdArgs = b.exec, append([]string{bin}, cmdArgs...)
					}
					out, err := exec.Command(name, cmdArgs...).Output()
					if err != nil {
						t.Fatalf("%s: embed: %v", key, exitDetail(err))
					}
					if !bytes.Equal(out, host[key]) {
						t.Errorf("%s: %s output differs from the %s host build at byte %d of %d; %s",
							key, b.name, runtime.GOARCH, firstDiff(out, host[key]), len(out), archWhy)
					}
					if sum := sha256Hex(out); sum != want[key] {
						t.Errorf("%s: %s output sha256 %s, golden %s; %s", key, b.name, sum, want[key], archWhy)
					}
				}
			}
		})
	}
}

// exitDetail adds a failed command's stderr to its error.
func exitDetail(err error) string {
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return fmt.Sprintf("%v: %s", err, ee.Stderr)
	}
	return err.Error()
}

func firstDiff(a, b []byte) int {
	n := min(len(a), len(b))
	for i := 0; i < n; i++ {
		if a[i] != b[i] {
			return i
		}
	}
	return n
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
