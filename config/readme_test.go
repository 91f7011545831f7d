package config_test

import (
	"flag"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/distfeat/distfeat/config"
)

var update = flag.Bool("update", false, "rewrite the README's configuration table from config.Variables")

const (
	readmePath  = "../docs/configuration.md"
	tableBegin  = "<!-- configuration table: generated from config.Variables by `go test ./config -run TestREADMETable -update` -->\n"
	tableFinish = "<!-- end of configuration table -->\n"
)

// markdownTable renders every variable as one row: name, default, allowed values or unit,
// meaning.
func markdownTable() string {
	var b strings.Builder
	b.WriteString("| variable (`DISTFEAT_` + …) | default | values | meaning |\n|---|---|---|---|\n")
	for _, v := range config.Variables() {
		def := "—"
		if v.HasDefault() {
			def = "`" + v.Default + "`"
		}
		fmt.Fprintf(&b, "| `%s` | %s | `%s` | %s |\n", v.Name, def, pipes(v.Values), pipes(v.Doc))
	}
	return b.String()
}

// TestREADMETable: the README's configuration table is exactly the one config.Variables
// describes, so names, defaults and meanings cannot drift from the code.
func TestREADMETable(t *testing.T) {
	b, err := os.ReadFile(readmePath)
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	i, j := strings.Index(s, tableBegin), strings.Index(s, tableFinish)
	if i < 0 || j < i {
		t.Fatalf("%s: no %q … %q block", readmePath, strings.TrimSpace(tableBegin), strings.TrimSpace(tableFinish))
	}
	want := markdownTable()
	got := s[i+len(tableBegin) : j]
	if got == want {
		return
	}
	if *update {
		if err := os.WriteFile(readmePath, []byte(s[:i+len(tableBegin)]+want+s[j:]), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	t.Errorf("the README's configuration table differs from config.Variables; run go test ./config -run TestREADMETable -update\ngot:\n%s\nwant:\n%s", got, want)
}

// pipes escapes | for a GitHub table cell (also inside code spans).
func pipes(s string) string { return strings.ReplaceAll(s, "|", `\|`) }
