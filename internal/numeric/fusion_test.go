package numeric

import (
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"sort"
	"strings"
	"testing"
)

// fusionTargets are the architectures whose Go compiler may fuse x*y+z into one multiply-add
// (amd64 only from GOAMD64=v3 on): three different code generators, each compiled in a few
// seconds once the standard library is cached (s390x and riscv64 follow the same rule). The
// feature path must compile to the same instructions whether or not that fusion is allowed.
// featurePathPackages are the packages whose floating-point code reaches features, relative to
// this directory: the kernels (this package), the families (embedding), the spec (its
// defaults and checks), internal/quadrature (its Gauss–Legendre nodes feed the js λs),
// internal/nufft (mmd's nufft method), twosample (the two_sample kind's statistics) and
// sequential (its `ert` detector's threshold and statistic).
var featurePathPackages = []string{".", "../../embedding", "../../spec", "../quadrature", "../nufft", "../../twosample", "../../sequential"}

var fusionTargets = [][]string{
	{"GOARCH=arm64"},
	{"GOARCH=amd64", "GOAMD64=v3"},
	{"GOARCH=ppc64le"},
}

// fusedOp matches the fused multiply-add mnemonics of those architectures in `-S` output
// (FMADDD, FNMSUBD, VFMADD231SD, FMADD, …) together with the source position of the line.
var fusedOp = regexp.MustCompile(`\((\S+\.go:\d+)\)\s+(V?FN?M(?:ADD|SUB)\w*)\s`)

// fusedSites compiles the feature-path packages for env with extra gcflags and counts the fused
// multiply-add instructions per source position.
func fusedSites(t *testing.T, goBin string, env []string, gcflags string) map[string]int {
	t.Helper()
	cmd := exec.Command(goBin, append([]string{"build", "-gcflags=" + gcflags}, featurePathPackages...)...)
	cmd.Env = append(append(os.Environ(), "CGO_ENABLED=0"), env...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s go build -gcflags=%s: %v\n%s", strings.Join(env, " "), gcflags, err, out)
	}
	sites := map[string]int{}
	for _, m := range fusedOp.FindAllStringSubmatch(string(out), -1) {
		sites[m[1]]++
	}
	return sites
}

// TestNoImplicitFusion enforces the feature-path floating-point rule of docs/CONTRACTS.md:
// the Go specification lets a compiler fuse x*y+z into one correctly rounded operation
// unless an explicit float64(...) conversion sits between the product and the sum, and the
// gc compiler does so on arm64, ppc64le, s390x, riscv64 and amd64 with GOAMD64=v3, but not
// on amd64 v1 — so an implicitly fused expression is computed differently there. The test
// compiles those packages for those targets as is and with -d=fmahash=n (which turns off the
// implicit fusion only; math.FMA is always one instruction) and requires the same number of
// fused instructions at every source line: every multiply-add in them is then an
// explicit math.FMA.
func TestNoImplicitFusion(t *testing.T) {
	// `go test` puts its own GOROOT/bin first on the test's PATH.
	goBin, err := exec.LookPath("go")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("the go command is needed to compile this package for other architectures: %v", err)
		}
		t.Skipf("skipping: no go command to cross-compile with (%v)", err)
	}
	for _, env := range fusionTargets {
		t.Run(strings.Join(env, ","), func(t *testing.T) {
			fused := fusedSites(t, goBin, env, "-S")
			plain := fusedSites(t, goBin, env, "-S -d=fmahash=n")
			var bad []string
			for pos, n := range fused {
				if n != plain[pos] {
					bad = append(bad, fmt.Sprintf("%s: %d implicitly fused multiply-add(s)", pos, n-plain[pos]))
				}
			}
			sort.Strings(bad)
			if len(bad) > 0 {
				t.Errorf("%d source lines let the compiler fuse x*y+z (round the product with float64(...) "+
					"or write math.FMA; docs/CONTRACTS.md, feature-path floating point):\n%s",
					len(bad), strings.Join(bad, "\n"))
			}
			if len(plain) == 0 {
				t.Errorf("no fused instructions found at all: the -S output format changed and this test checks nothing")
			}
		})
	}
}
