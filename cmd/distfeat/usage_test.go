package main

import (
	"context"
	"regexp"
	"strings"
	"testing"
)

// helpExempt lists commands whose flag parsing is not built on newFlagSet yet, with why.
var helpExempt = map[string]string{}

var (
	reUsageLine = regexp.MustCompile(`^usage: distfeat ([a-z]+) \[flags\]( .+)?$`)
	reFlagLine  = regexp.MustCompile(`^  -([a-z0-9-]+)(?: (\S+))?(?:\t.*)?$`) // a one-letter flag keeps its text on the line
)

// TestHelpFormat runs -h and --help for every command: exit 0, and one format — the usage
// line, the one-line summary, an optional description, then "flags:" with every flag typed
// (a placeholder naming the allowed values or the unit, never a bare "string" or "value").
func TestHelpFormat(t *testing.T) {
	for _, c := range commands() {
		if why, ok := helpExempt[c.name]; ok {
			t.Logf("%s: not checked: %s", c.name, why)
			continue
		}
		for _, h := range []string{"-h", "--help"} {
			t.Run(c.name+h, func(t *testing.T) {
				var out, errb strings.Builder
				if code := run(context.Background(), []string{c.name, h}, &out, &errb); code != 0 {
					t.Fatalf("exit %d, want 0; stderr:\n%s", code, errb.String())
				}
				checkHelp(t, c, errb.String())
			})
		}
	}
}

func checkHelp(t *testing.T, c command, text string) {
	t.Helper()
	lines := strings.Split(strings.TrimRight(text, "\n"), "\n")
	if len(lines) < 5 {
		t.Fatalf("help too short:\n%s", text)
	}
	if m := reUsageLine.FindStringSubmatch(lines[0]); m == nil || m[1] != c.name {
		t.Errorf("first line %q, want \"usage: distfeat %s [flags]...\"", lines[0], c.name)
	}
	if lines[1] != "" || lines[2] != c.summary || lines[3] != "" {
		t.Errorf("lines 2-4 %q, want blank, the summary %q, blank", lines[1:4], c.summary)
	}
	i := 4
	for i < len(lines) && !strings.HasPrefix(lines[i], "flags:") {
		i++
	}
	if i == len(lines) {
		t.Fatalf("no flags: section:\n%s", text)
	}
	if lines[i] == "flags: none" {
		return
	}
	flags := 0
	for _, l := range lines[i+1:] {
		if strings.HasPrefix(l, "    \t") {
			continue // description of the flag above
		}
		m := reFlagLine.FindStringSubmatch(l)
		if m == nil {
			t.Errorf("not a flag line: %q", l)
			continue
		}
		flags++
		if m[2] == "string" || m[2] == "value" {
			t.Errorf("-%s is shown as %q: name its allowed values or unit in backquotes", m[1], m[2])
		}
	}
	if flags == 0 {
		t.Errorf("flags: section lists no flag:\n%s", text)
	}
}

// TestDurationsShownAsDurations: duration flags say so and show their default as a duration.
func TestDurationsShownAsDurations(t *testing.T) {
	var out, errb strings.Builder
	run(context.Background(), []string{"worker", "-h"}, &out, &errb)
	if !strings.Contains(errb.String(), "  -window-gap duration\n") || !strings.Contains(errb.String(), "(default 30s)") {
		t.Errorf("worker -h does not show -window-gap as a duration with default 30s:\n%s", errb.String())
	}
	if !strings.Contains(errb.String(), "  -window set|count|time|session\n") {
		t.Errorf("worker -h does not list -window's values:\n%s", errb.String())
	}
}

// TestPositionalArgumentsRefused: a command given an operand it does not take exits 2 and
// names the operand, instead of ignoring it.
func TestPositionalArgumentsRefused(t *testing.T) {
	for _, c := range commands() {
		if _, ok := helpExempt[c.name]; ok {
			continue
		}
		t.Run(c.name, func(t *testing.T) {
			var out, errb strings.Builder
			code := run(context.Background(), []string{c.name, "stray.json"}, &out, &errb)
			if code != 2 || !strings.Contains(errb.String(), `unexpected argument "stray.json"`) {
				t.Errorf("exit %d, stderr %q; want 2 and the argument named", code, errb.String())
			}
		})
	}
}

// TestUnknownVariableRefused: a misspelt DISTFEAT_ variable stops any command at start-up,
// naming it and the closest known name.
func TestUnknownVariableRefused(t *testing.T) {
	t.Setenv("DISTFEAT_BROKER", "127.0.0.1:1")
	var out, errb strings.Builder
	code := run(context.Background(), []string{"version"}, &out, &errb)
	if code != 2 || !strings.Contains(errb.String(), "DISTFEAT_BROKER (did you mean DISTFEAT_BROKERS?)") {
		t.Errorf("exit %d, stderr %q; want 2 naming DISTFEAT_BROKER and suggesting DISTFEAT_BROKERS", code, errb.String())
	}
	errb.Reset()
	if code := run(context.Background(), []string{"worker", "-h"}, &out, &errb); code != 0 {
		t.Errorf("worker -h with a bad environment: exit %d, want 0 (help must stay readable)", code)
	}
}
