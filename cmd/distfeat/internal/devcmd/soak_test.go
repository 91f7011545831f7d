//go:build dev

package devcmd

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/distfeat/distfeat/embedding"
	"github.com/distfeat/distfeat/spec"
)

// TestSoakCommand runs `distfeat soak` small, through the same code path as the full-size
// runs of issue #4 (items 4 and 5): worker child processes, a mid-run SIGKILL and
// replacement, per-second RSS/metrics sampling, and the check of the emitted windows.
func TestSoakCommand(t *testing.T) {
	specPath, emb := writeSpec(t)
	binPath := buildDistfeat(t)
	// No wall-clock budget for the work: a run gives up after a minute in which nothing moved
	// (--stall), and --timeout is only a far ceiling, so a slow or loaded machine takes
	// longer instead of failing.
	common := []string{"--worker-bin", binPath, "--spec", specPath, "--session-timeout", "1500ms",
		"--settle", "500ms", "--stall", "1m", "--timeout", "15m"}
	run := func(t *testing.T, args ...string) (*soakReport, string, error) {
		t.Helper()
		var out, errOut bytes.Buffer
		rep, err := soakMain(context.Background(), append(append([]string{}, common...), args...), &out, &errOut)
		t.Logf("distfeat soak %s\n%s%s", strings.Join(args, " "), out.String(), errOut.String())
		if rep == nil {
			t.Fatalf("no report: %v", err)
		}
		return rep, out.String(), err
	}

	t.Run("sets with a worker killed mid-run", func(t *testing.T) {
		// 200k points; --lead keeps production close to the workers so that the kill at
		// 40% lands while windows of both workers are open.
		rep, out, err := run(t, "--sets", "80", "--points", "2500", "--interleave", "4", "--lead", "20000", "--kill-at", "0.4")
		if err != nil {
			t.Fatal(err)
		}
		if rep.rebalance == "" || len(rep.workers) != 3 {
			t.Errorf("want w0 killed and a replacement started: rebalance %q, %d workers", rep.rebalance, len(rep.workers))
		}
		if rep.windows != 80 {
			t.Errorf("%d distinct windows, want 80", rep.windows)
		}
		for _, w := range rep.workers {
			if w.hwm <= 0 {
				t.Errorf("worker %s: no RSS sampled", w.name)
			}
		}
		if !strings.Contains(out, "timeline") || !strings.Contains(out, "result           PASS") {
			t.Errorf("report lacks the timeline or the result line")
		}
	})

	t.Run("many keys under a small open-window bound", func(t *testing.T) {
		// 2000 keys over 8 partitions (≈250 each) with at most 100 open per partition: the
		// first records of most keys are evicted before their second records arrive. (`make
		// soak` runs the full size: 100 000 keys.)
		rep, _, err := run(t, "--keys", "2000", "--max-open-windows", "100")
		if err != nil {
			t.Fatal(err)
		}
		if rep.emitted["evicted"] <= 0 || rep.windowsPerKey[2] == 0 {
			t.Errorf("evicted=%v, %d keys split: the bound never applied", rep.emitted["evicted"], rep.windowsPerKey[2])
		}
		if want := int64(emb.NewSketch().SizeBytes()); rep.sketchBytes != int(want) {
			t.Errorf("bound uses %d B per sketch, the spec's sketch is %d B", rep.sketchBytes, want)
		}
		for _, w := range rep.workers {
			if w.hwm <= 0 || w.hwm > rep.bound {
				t.Errorf("worker %s peak RSS %d, bound %d", w.name, w.hwm, rep.bound)
			}
		}
	})

	t.Run("the eviction check can fail", func(t *testing.T) {
		// Fewer keys than the bound: nothing is evicted, so item 4's check must fail
		// (while every point is still emitted exactly once).
		start := time.Now()
		rep, _, err := run(t, "--keys", "400", "--max-open-windows", "1000")
		if err == nil || rep.ok() {
			t.Fatalf("soak passed although nothing was evicted")
		}
		if len(rep.failures) != 1 || !strings.Contains(rep.failures[0], `reason="evicted"} is 0`) {
			t.Errorf("failures %q, want only the eviction check", rep.failures)
		}
		t.Logf("negative case took %s", time.Since(start).Round(time.Millisecond))
	})
}

// testSpec is small so that many windows finalise quickly; it still has every family.
const testSpec = `{"version":1,"seed":11,"dim":2,"bounds":{"lo":[0,0],"hi":[1,1]},
 "families":[{"name":"mmd","kind":"mmd","features":128,"bandwidth":0.1},
             {"name":"hdd_js","kind":"hdd","divergence":"js","features":128,"sigma":0.5,"grid":16,"basis":16,"lambdas":3},
             {"name":"l2","kind":"l2","basis":16}]}`

// writeSpec writes testSpec to a file and returns its path and embedder.
func writeSpec(t *testing.T) (string, *embedding.Embedder) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "spec.json")
	if err := os.WriteFile(path, []byte(testSpec), 0o644); err != nil {
		t.Fatal(err)
	}
	sp, err := spec.ParseSpec([]byte(testSpec))
	if err != nil {
		t.Fatal(err)
	}
	emb, err := embedding.New(sp)
	if err != nil {
		t.Fatal(err)
	}
	return path, emb
}

// buildDistfeat builds the production distfeat binary (no dev tag, as deploy/Dockerfile
// builds it: the soak runs the worker as shipped) and returns its path.
func buildDistfeat(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "distfeat")
	build := exec.Command("go", "build", "-tags=", "-o", bin, "../..")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building distfeat: %v\n%s", err, out)
	}
	return bin
}
