package deploy_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// promtool validates the Prometheus files: rule syntax, the configuration, and the alert unit
// tests in alerts_test.yml. Debian's `prometheus` package ships it (.ci/run installs it).
func promtool(t *testing.T) string {
	t.Helper()
	p, err := exec.LookPath("promtool")
	if err != nil {
		msg := "promtool not found on PATH (apt-get install prometheus ships it): " + err.Error()
		if os.Getenv("CI") == "true" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	return p
}

func runPromtool(t *testing.T, args ...string) {
	t.Helper()
	cmd := exec.Command(promtool(t), args...)
	cmd.Dir = "prometheus" // rule_files and test files name their neighbours relatively
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("promtool %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	t.Logf("promtool %s:\n%s", strings.Join(args, " "), out)
}

func TestPromtoolCheckRules(t *testing.T) {
	runPromtool(t, "check", "rules", filepath.Base(alertsFile))
}

func TestPromtoolCheckConfig(t *testing.T) {
	runPromtool(t, "check", "config", filepath.Base(promConfig))
}

func TestPromtoolTestRules(t *testing.T) {
	runPromtool(t, "test", "rules", filepath.Base(alertsTestFile))
}
