package main

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"
)

// flagCase is one command line that must fail with exit code code and a stderr naming
// what is wrong (want).
type flagCase struct {
	args []string
	code int
	want string
}

// runFlagCases runs each case in process and checks its exit code and message; a panic
// fails the case (it used to be the answer to produce --sets -1).
func runFlagCases(t *testing.T, cases []flagCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			var out, errb bytes.Buffer
			code := func() (code int) {
				defer func() {
					if p := recover(); p != nil {
						t.Errorf("panic: %v", p)
						code = -1
					}
				}()
				return run(context.Background(), tc.args, &out, &errb)
			}()
			if code != tc.code || !strings.Contains(errb.String(), tc.want) {
				t.Errorf("exit %d, stderr %q; want exit %d and %q", code, errb.String(), tc.code, tc.want)
			}
			if strings.Contains(errb.String(), "goroutine ") {
				t.Errorf("stack trace on stderr: %s", errb.String())
			}
		})
	}
}

// TestFlagsEmbed: embed's flags, negative, zero, huge and of the wrong type.
func TestFlagsEmbed(t *testing.T) {
	in := writeFile(t, "in.jsonl", embedInput)
	runFlagCases(t, []flagCase{
		{[]string{"embed", "--in", in, "--workers", "-1"}, 2, "--workers -1: want 1 to 256"},
		{[]string{"embed", "--in", in, "--workers", "0"}, 2, "--workers 0: want 1 to 256"},
		{[]string{"embed", "--in", in, "--workers", "100000"}, 2, "--workers 100000: want 1 to 256"},
		{[]string{"embed", "--in", in, "--workers", "99999999999999999999"}, 2, "value out of range"},
		{[]string{"embed", "--in", in, "--workers", "two"}, 2, `invalid value "two" for flag -workers`},
		{[]string{"embed", "--in", in, "--skip-invalid=maybe"}, 2, "invalid boolean value"},
		{[]string{"embed", "--in", in, "--format", "csv"}, 1, `--format "csv": want jsonl or arrow`},
		{[]string{"embed", "--in", filepath.Join(t.TempDir(), "missing.jsonl")}, 1, "no such file"},
		{[]string{"embed", "--in", t.TempDir()}, 1, "is a directory"},
		{[]string{"embed", "--in", in, "--spec", filepath.Join(t.TempDir(), "none.json")}, 1, "none.json"},
	})
}

// TestFlagsProduce: produce's counts are checked before anything is drawn, read or sent
// (negative ones used to panic in the generator; a huge one would exhaust memory).
func TestFlagsProduce(t *testing.T) {
	gmm := func(extra ...string) []string {
		return append([]string{"produce", "--synthetic", "gmm", "--brokers", "127.0.0.1:1"}, extra...)
	}
	runFlagCases(t, []flagCase{
		{gmm("--sets", "-1"), 2, "--sets -1: must be at least 1"},
		{gmm("--sets", "0"), 2, "--sets 0: must be at least 1"},
		{gmm("--points", "-1"), 2, "--points -1: must be at least 1"},
		{gmm("--points", "0", "--out", "-"), 2, "--points 0: must be at least 1"},
		{gmm("--dim", "0"), 2, "--dim 0: must be at least 1"},
		{gmm("--dim", "-3", "--out", "-"), 2, "--dim -3: must be at least 1"},
		{gmm("--chunk", "0"), 2, "--chunk 0: must be at least 1"},
		{gmm("--chunk", "-500"), 2, "--chunk -500: must be at least 1"},
		{gmm("--sets", "1000000000"), 2, "coordinates: produce --synthetic holds them all in memory"},
		{gmm("--points", "9223372036854775807", "--out", "-"), 2, "coordinates"},
		{gmm("--sets", "99999999999999999999"), 2, "value out of range"},
		{gmm("--sets", "ten"), 2, `invalid value "ten" for flag -sets`},
		{gmm("--seed", "-1"), 2, `invalid value "-1" for flag -seed`},
		{[]string{"produce", "--in", "-", "--dim", "0", "--out", "-"}, 2, "--dim 0: must be at least 1"},
		{[]string{"produce", "--synthetic", "uniform", "--out", "-"}, 1, `--synthetic "uniform": only gmm`},
	})
}

// TestFlagsCalibrate: calibrate's numeric flags outside their range are errors naming the
// flag (they used to fall back to the defaults silently).
func TestFlagsCalibrate(t *testing.T) {
	out := filepath.Join(t.TempDir(), "spec.json")
	cal := func(extra ...string) []string {
		return append([]string{"calibrate", "--in", exampleSets, "--out", out}, extra...)
	}
	runFlagCases(t, []flagCase{
		{cal("--r2", "2"), 2, "--r2 2: want a target R² between 0 and 1"},
		{cal("--r2", "-5"), 2, "--r2 -5: want"},
		{cal("--r2", "0"), 2, "--r2 0: want"},
		{cal("--r2", "1"), 2, "--r2 1: want"},
		{cal("--r2", "NaN"), 2, "--r2 NaN: want"},
		{cal("--r2", "high"), 2, `invalid value "high" for flag -r2`},
		{cal("--error", "0"), 2, "--error 0: want an RMS kernel error between 0 and 1"},
		{cal("--error", "-0.1"), 2, "--error -0.1: want"},
		{cal("--error", "1e300"), 2, "--error 1e+300: want"},
		{cal("--sample-points", "-1"), 2, "--sample-points -1: want 2 or more"},
		{cal("--sample-points", "0"), 2, "--sample-points 0: want 2 or more"},
		{cal("--sample-points", "99999999999999999999"), 2, "value out of range"},
		{cal("--sample-sets", "1"), 2, "--sample-sets 1: want 2 or more"},
		{cal("--max-sets", "0"), 2, "--max-sets 0: want 1 or more"},
		{cal("--max-sets", "-4"), 2, "--max-sets -4: want 1 or more"},
		{cal("--dim", "-1"), 2, "--dim -1: want 0 (inferred) or more"},
		{cal("--topic-timeout", "0s"), 2, "--topic-timeout 0s: want a positive duration"},
		{cal("--topic-timeout", "soon"), 2, `invalid value "soon" for flag -topic-timeout`},
		{[]string{"calibrate", "--from-topic", "points", "--label", "digit", "--out", out}, 2, "--label FIELD needs --in FILE"},
		{cal("--two-sample", "--window", "0"), 2, "--window 0: want 2 or more"},
		{cal("--two-sample", "--alpha", "0"), 2, "--alpha 0: want a level between 0 and 1"},
		{cal("--two-sample", "--alpha", "1.5"), 2, "--alpha 1.5: want"},
	})
}

// TestFlagsTail: tail's limits are checked before it connects.
func TestFlagsTail(t *testing.T) {
	tail := func(extra ...string) []string {
		return append([]string{"tail", "--brokers", "127.0.0.1:1"}, extra...)
	}
	runFlagCases(t, []flagCase{
		{tail("--max", "-1"), 2, "--max -1: want 0 (no limit) or more"},
		{tail("--max", "99999999999999999999"), 2, "value out of range"},
		{tail("--max", "all"), 2, `invalid value "all" for flag -max`},
		{tail("--idle-exit", "-1s"), 2, "--idle-exit -1s: want 0 (never) or more"},
		{tail("--idle-exit", "5"), 2, `invalid value "5" for flag -idle-exit`},
		{tail("--timeout", "-2s"), 2, "--timeout -2s: want 0 (no limit) or more"},
		{tail("--from-beginning=sometimes"), 2, "invalid boolean value"},
	})
}

// TestFlagsSpec: spec refuses a missing file, wrong-type flags and a two_sample reference
// that is not a regular file (a device or FIFO used to hang spec and embed).
func TestFlagsSpec(t *testing.T) {
	urandom := writeFile(t, "spec.json", `{"dim": 2, "families": [{"name": "drift", "kind": "two_sample", "reference": "/dev/urandom"}]}`)
	in := writeFile(t, "in.jsonl", embedInput)
	runFlagCases(t, []flagCase{
		{[]string{"spec", "--spec", filepath.Join(t.TempDir(), "none.json")}, 1, "none.json"},
		{[]string{"spec", "--fields=perhaps"}, 2, "invalid boolean value"},
		{[]string{"spec", "--spec", urandom}, 1, "families[0].reference: /dev/urandom is not a regular file (a character device)"},
		{[]string{"embed", "--spec", urandom, "--in", in}, 1, "/dev/urandom is not a regular file"},
	})
}

// TestFlagsHealthcheck: a zero or negative --timeout is refused before any request (it
// used to report every worker as not answering).
func TestFlagsHealthcheck(t *testing.T) {
	runFlagCases(t, []flagCase{
		{[]string{"healthcheck", "--addr", "127.0.0.1:1", "--timeout", "0s"}, 2, "--timeout 0s: must be positive"},
		{[]string{"healthcheck", "--addr", "127.0.0.1:1", "--timeout", "-1s"}, 2, "--timeout -1s: must be positive"},
		{[]string{"healthcheck", "--timeout", "2"}, 2, `invalid value "2" for flag -timeout`},
		{[]string{"healthcheck", "--ready=often"}, 2, "invalid boolean value"},
		{[]string{"healthcheck", "--addr", "nowhere"}, 1, `--addr "nowhere"`},
	})
}

// TestFlagsWorker: the worker's flags (the DISTFEAT_ variables) are refused before it
// connects when negative, zero, huge or of the wrong type.
func TestFlagsWorker(t *testing.T) {
	worker := func(extra ...string) []string {
		return append([]string{"worker", "--brokers", "127.0.0.1:1", "--metrics-addr", "127.0.0.1:0"}, extra...)
	}
	var cases []flagCase
	for _, c := range []struct{ flag, value, want string }{
		{"--max-buffer-bytes", "-1", "DISTFEAT_MAX_BUFFER_BYTES: must be at least"},
		{"--max-buffer-bytes", "0", "DISTFEAT_MAX_BUFFER_BYTES: must be at least"},
		{"--max-buffer-bytes", "99999999999999999999999", "DISTFEAT_MAX_BUFFER_BYTES: cannot parse"},
		{"--max-message-bytes", "-5", "DISTFEAT_MAX_MESSAGE_BYTES: must be > 0"},
		{"--max-open-windows", "0", "DISTFEAT_MAX_OPEN_WINDOWS: must be > 0"},
		{"--max-open-windows", "many", "DISTFEAT_MAX_OPEN_WINDOWS: cannot parse"},
		{"--max-output-bytes", "0", "DISTFEAT_MAX_OUTPUT_BYTES: must be at least"},
		{"--commit-interval", "0s", "DISTFEAT_COMMIT_INTERVAL: must be > 0"},
		{"--commit-interval", "-1s", "DISTFEAT_COMMIT_INTERVAL: must be > 0"},
		{"--session-timeout", "0s", "DISTFEAT_SESSION_TIMEOUT: must be at least"},
		{"--shutdown-timeout", "-1s", "DISTFEAT_SHUTDOWN_TIMEOUT: must be > 0"},
		{"--idle-timeout", "-1s", "DISTFEAT_IDLE_TIMEOUT: must be ≥ 0"},
		{"--allowed-lateness", "-1s", "DISTFEAT_ALLOWED_LATENESS must be ≥ 0"},
		{"--log-level", "loud", "DISTFEAT_LOG_LEVEL"},
	} {
		cases = append(cases, flagCase{worker(c.flag, c.value), 1, c.want})
	}
	for _, c := range []struct{ mode, size, want string }{
		{"count", "-1", `DISTFEAT_WINDOW_SIZE: "-1": want a positive number of points`},
		{"count", "0", `DISTFEAT_WINDOW_SIZE: "0": want a positive number of points`},
		{"count", "99999999999999999999", "want a positive number of points"},
		{"time", "0s", "want a duration of at least 1ms"},
		{"time", "ten", "DISTFEAT_WINDOW_SIZE"},
	} {
		cases = append(cases, flagCase{worker("--window", c.mode, "--window-size", c.size), 1, c.want})
	}
	cases = append(cases,
		flagCase{worker("--window", "session", "--window-gap", "0s"), 1, "DISTFEAT_WINDOW_GAP must be > 0"},
		flagCase{worker("--window", "count", "--window-size", "10", "--window-hop", "-1"), 1, "DISTFEAT_WINDOW_HOP"},
		flagCase{worker("--window", "hourly"), 1, "DISTFEAT_WINDOW"},
		flagCase{worker("--allow-keyless=perhaps"), 1, "DISTFEAT_ALLOW_KEYLESS"},
		flagCase{worker("--allow-keyless", "perhaps"), 2, `unexpected argument "perhaps"`},
	)
	runFlagCases(t, cases)
}
