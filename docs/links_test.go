// Package docs holds the reference documentation (Markdown); its test checks the links.
package docs

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"unicode"
)

// linkedFiles are the Markdown files whose relative links must resolve, relative to this
// directory.
var linkedFiles = []string{"../README.md", "*.md", "../deploy/README.md"}

// mdLink matches an inline Markdown link or image target: [text](target).
var mdLink = regexp.MustCompile(`\]\(([^)\s]+)\)`)

// TestRelativeLinksResolve: every relative link of the README and the docs names an existing
// file, and every #anchor one of the headings of the page it points to (GitHub's anchors),
// so moving a section cannot leave a dead link behind.
func TestRelativeLinksResolve(t *testing.T) {
	var files []string
	for _, pattern := range linkedFiles {
		m, err := filepath.Glob(pattern)
		if err != nil || len(m) == 0 {
			t.Fatalf("%s: no file (%v)", pattern, err)
		}
		files = append(files, m...)
	}
	checked := 0
	for _, file := range files {
		text, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		for _, target := range links(string(text)) {
			checked++
			if err := resolve(file, target); err != nil {
				t.Errorf("%s: link %q: %v", file, target, err)
			}
		}
	}
	if checked < 20 {
		t.Fatalf("only %d links found: the test is not reading the documentation", checked)
	}
}

// TestAnchors pins the anchor rule on headings whose anchors the docs use.
func TestAnchors(t *testing.T) {
	for _, tc := range []struct{ heading, want string }{
		{"Where distfeat departs from the original design", "where-distfeat-departs-from-the-original-design"},
		{"Reading `embed --format arrow` files (v1.2)", "reading-embed---format-arrow-files-v12"},
		{"Choosing parameters: `distfeat calibrate`", "choosing-parameters-distfeat-calibrate"},
		{"The Fuglede measures (a correction to the papers)", "the-fuglede-measures-a-correction-to-the-papers"},
		{"Random Fourier frequencies: `projection`, and spec `version: 2`", "random-fourier-frequencies-projection-and-spec-version-2"},
		{"Feature-path floating point: same bits on every architecture", "feature-path-floating-point-same-bits-on-every-architecture"},
	} {
		if got := anchor(tc.heading); got != tc.want {
			t.Errorf("anchor(%q) = %q, want %q", tc.heading, got, tc.want)
		}
	}
}

// links returns the link targets of a Markdown text outside code blocks and code spans.
func links(text string) []string {
	var out []string
	fenced := false
	for _, line := range strings.Split(text, "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			fenced = !fenced
			continue
		}
		if fenced {
			continue
		}
		for _, m := range mdLink.FindAllStringSubmatch(stripCodeSpans(line), -1) {
			target := m[1]
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			out = append(out, target)
		}
	}
	return out
}

// stripCodeSpans removes `code` spans from a line.
func stripCodeSpans(line string) string {
	parts := strings.Split(line, "`")
	var b strings.Builder
	for i, p := range parts {
		if i%2 == 0 {
			b.WriteString(p)
		}
	}
	return b.String()
}

// resolve checks that target, a link in file, names an existing file and heading.
func resolve(file, target string) error {
	path, frag, _ := strings.Cut(target, "#")
	dest := file
	if path != "" {
		dest = filepath.Join(filepath.Dir(file), path)
		if _, err := os.Stat(dest); err != nil {
			return fmt.Errorf("no such file: %w", err)
		}
	}
	if frag == "" {
		return nil
	}
	if !strings.HasSuffix(dest, ".md") {
		return fmt.Errorf("an anchor into %s, which is not Markdown", dest)
	}
	text, err := os.ReadFile(dest)
	if err != nil {
		return err
	}
	for _, a := range anchors(string(text)) {
		if a == frag {
			return nil
		}
	}
	return fmt.Errorf("%s has no heading with anchor #%s", dest, frag)
}

// anchors lists the heading anchors of a Markdown page as GitHub generates them, with
// -1, -2, … for repeated headings.
func anchors(text string) []string {
	var out []string
	seen := map[string]int{}
	fenced := false
	for _, line := range strings.Split(text, "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			fenced = !fenced
			continue
		}
		if fenced || !strings.HasPrefix(line, "#") {
			continue
		}
		h := strings.TrimSpace(strings.TrimLeft(line, "#"))
		a := anchor(h)
		if n := seen[a]; n > 0 {
			out = append(out, fmt.Sprintf("%s-%d", a, n))
		} else {
			out = append(out, a)
		}
		seen[a]++
	}
	return out
}

// anchor is GitHub's anchor of a heading: lower case, spaces to hyphens, and every
// character other than letters, digits, hyphens and underscores dropped.
func anchor(heading string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(heading) {
		switch {
		case r == ' ':
			b.WriteRune('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
			b.WriteRune(r)
		}
	}
	return b.String()
}
