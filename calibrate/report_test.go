package calibrate

import (
	"bytes"
	"context"
	"image"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestReportInBrowser renders the HTML report in a real headless browser (Debian's
// chromium) and checks the screenshot is a picture, not a blank page: decoded, of the
// requested size, and with many distinct colours (heat maps and plots; a blank or
// broken-image page has a handful). Set CALIBRATE_SCREENSHOT to keep the PNG.
func TestReportInBrowser(t *testing.T) {
	chromium, err := exec.LookPath("chromium")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("chromium is not installed (CI=true: .ci/run installs it)")
		}
		t.Skip("chromium is not installed: the report is not rendered in a browser")
	}
	res, err := Calibrate(context.Background(), synthSets(1, 30, 1000), 2, nil, Options{})
	if err != nil {
		t.Fatal(err)
	}
	var html bytes.Buffer
	if err := res.WriteReport(&html); err != nil {
		t.Fatal(err)
	}
	page := html.String()
	for _, bad := range []string{"<script", "http://", "https://"} {
		if strings.Contains(page, bad) {
			t.Fatalf("report is not self-contained: contains %q", bad)
		}
	}
	dir := t.TempDir()
	htmlPath := filepath.Join(dir, "report.html")
	if err := os.WriteFile(htmlPath, html.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	shot := filepath.Join(dir, "shot.png")
	if p := os.Getenv("CALIBRATE_SCREENSHOT"); p != "" {
		shot = p
	}
	const w, h = 1300, 2600
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, chromium, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
		"--user-data-dir="+filepath.Join(dir, "profile"), "--window-size=1300,2600", "--screenshot="+shot, "file://"+htmlPath)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("chromium: %v\n%s", err, out)
	}
	f, err := os.Open(shot)
	if err != nil {
		t.Fatalf("no screenshot: %v\n%s", err, out)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatal(err)
	}
	if b := img.Bounds(); b.Dx() != w || b.Dy() != h {
		t.Fatalf("screenshot is %v, want %dx%d", b, w, h)
	}
	colours := distinctColours(img)
	// Text alone anti-aliases to a few dozen greys; the heat maps' palette and the plots'
	// colours give hundreds.
	if colours < 300 {
		t.Fatalf("screenshot has %d distinct colours: blank or the plots did not render", colours)
	}
	t.Logf("screenshot %s: %d distinct colours", shot, colours)
}

func distinctColours(img image.Image) int {
	seen := map[[4]uint32]bool{}
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			r, g, bl, a := img.At(x, y).RGBA()
			seen[[4]uint32{r, g, bl, a}] = true
		}
	}
	return len(seen)
}
