package main

import (
	"bytes"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/distfeat/distfeat/internal/testfs"
)

// These tests check how the commands that write a file (embed --out, produce --out,
// calibrate --out/--report) treat what is already at the path; internal/outfile has the
// helper's own tests.

// embedToPath runs embed on embedInput (--skip-invalid: two sets) with --out path.
func embedToPath(t *testing.T, path string) (code int, stderr string) {
	t.Helper()
	specPath, _ := writeSpec(t)
	code, _, stderr = runCLI(t, embedInput, "embed", "--spec", specPath, "--skip-invalid", "--out", path)
	return code, stderr
}

// TestEmbedOutDevNull: embed --out /dev/null (run as root here, the case that used to
// replace the null device with a regular file) writes through it; /dev/null stays the same
// character device and no temporary file appears in /dev.
func TestEmbedOutDevNull(t *testing.T) {
	before, err := os.Stat("/dev/null")
	if err != nil || before.Mode()&fs.ModeCharDevice == 0 {
		t.Fatalf("/dev/null is not a character device before the test: %v %v", before.Mode(), err)
	}
	for _, args := range [][]string{
		{"embed", "--out", "/dev/null"},
		{"produce", "--synthetic", "gmm", "--sets", "2", "--points", "10", "--out", "/dev/null"},
	} {
		var code int
		var stderr string
		if args[0] == "embed" {
			code, stderr = embedToPath(t, "/dev/null")
		} else {
			code, _, stderr = runArgs(t, args...)
		}
		if code != 0 {
			t.Fatalf("%v: exit %d: %s", args, code, stderr)
		}
		after, err := os.Stat("/dev/null")
		if err != nil || after.Mode()&fs.ModeCharDevice == 0 || !os.SameFile(before, after) {
			t.Fatalf("%v: /dev/null is now %v (%v), want the same character device", args, after.Mode(), err)
		}
	}
	if names, _ := filepath.Glob("/dev/.null.tmp*"); len(names) != 0 {
		t.Errorf("temporary files left in /dev: %q", names)
	}
}

// TestEmbedOutExisting: what is at --out decides how it is written: a FIFO is written to its
// reader and stays a FIFO; a symlink stays a link and its target gets the output; a 0600
// file keeps its mode; /dev/fd/N writes the open descriptor.
func TestEmbedOutExisting(t *testing.T) {
	// want is embed's output to a plain new file, which every case must deliver.
	wantPath := filepath.Join(t.TempDir(), "want.jsonl")
	if code, stderr := embedToPath(t, wantPath); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	want, err := os.ReadFile(wantPath)
	if err != nil || strings.Count(string(want), "\n") != 2 {
		t.Fatalf("reference output: %v, %q", err, want)
	}

	t.Run("fifo", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "pipe")
		if err := syscall.Mkfifo(path, 0o600); err != nil {
			t.Fatal(err)
		}
		got := make(chan []byte, 1)
		go func() {
			r, err := os.Open(path)
			if err != nil {
				got <- []byte(err.Error())
				return
			}
			defer r.Close()
			b, _ := io.ReadAll(r)
			got <- b
		}()
		if code, stderr := embedToPath(t, path); code != 0 {
			t.Fatalf("exit %d: %s", code, stderr)
		}
		if b := <-got; !bytes.Equal(b, want) {
			t.Errorf("the reader got %q, want %q", b, want)
		}
		if fi, err := os.Lstat(path); err != nil || fi.Mode()&fs.ModeNamedPipe == 0 {
			t.Errorf("%s is now %v (%v), want a FIFO", path, fi.Mode(), err)
		}
	})

	t.Run("symlink", func(t *testing.T) {
		dir := t.TempDir()
		target := filepath.Join(dir, "target.jsonl")
		if err := os.WriteFile(target, []byte("old\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		link := filepath.Join(dir, "link.jsonl")
		if err := os.Symlink("target.jsonl", link); err != nil {
			t.Fatal(err)
		}
		if code, stderr := embedToPath(t, link); code != 0 {
			t.Fatalf("exit %d: %s", code, stderr)
		}
		if fi, err := os.Lstat(link); err != nil || fi.Mode()&fs.ModeSymlink == 0 {
			t.Errorf("%s is no longer a symlink: %v %v", link, fi.Mode(), err)
		}
		if b, _ := os.ReadFile(target); !bytes.Equal(b, want) {
			t.Errorf("the target holds %q, want the output", b)
		}
	})

	t.Run("0600", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "private.jsonl")
		if err := os.WriteFile(path, []byte("old\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		if code, stderr := embedToPath(t, path); code != 0 {
			t.Fatalf("exit %d: %s", code, stderr)
		}
		fi, err := os.Stat(path)
		if err != nil || fi.Mode().Perm() != 0o600 {
			t.Errorf("mode %v (%v), want 0600 kept", fi.Mode().Perm(), err)
		}
		if b, _ := os.ReadFile(path); !bytes.Equal(b, want) {
			t.Errorf("the file holds %q, want the output", b)
		}
	})

	t.Run("descriptor", func(t *testing.T) {
		r, w, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		got := make(chan []byte, 1)
		go func() { b, _ := io.ReadAll(r); got <- b }()
		code, stderr := embedToPath(t, "/dev/fd/"+strconv.Itoa(int(w.Fd())))
		w.Close()
		if code != 0 {
			t.Fatalf("exit %d: %s", code, stderr)
		}
		if b := <-got; !bytes.Equal(b, want) {
			t.Errorf("the pipe got %q, want the output", b)
		}
	})
}

// TestOutputRefusedBeforeWork: a directory (or a missing directory) as --out or --report
// is an error naming the flag and the path, given before the input is even opened (the
// input here does not exist, and that is not what is reported); nothing is created.
func TestOutputRefusedBeforeWork(t *testing.T) {
	dir := t.TempDir()
	missingIn := filepath.Join(dir, "no-such-input.jsonl")
	inDir := filepath.Join(dir, "nodir", "out")
	tests := []struct {
		name string
		args []string
		flag string
		path string
	}{
		{"embed directory", []string{"embed", "--in", missingIn, "--out", dir}, "--out", dir},
		{"embed missing dir", []string{"embed", "--in", missingIn, "--out", inDir}, "--out", inDir},
		{"produce directory", []string{"produce", "--in", missingIn, "--out", dir}, "--out", dir},
		{"calibrate directory", []string{"calibrate", "--in", missingIn, "--out", dir}, "--out", dir},
		{"calibrate report", []string{"calibrate", "--in", missingIn, "--out", "-", "--report", dir}, "--report", dir},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, _, stderr := runArgs(t, tt.args...)
			if code != 1 || !strings.Contains(stderr, tt.flag+": "+tt.path+":") || strings.Contains(stderr, "no-such-input") {
				t.Errorf("exit %d, stderr %q; want 1 and an error naming %s %s (not the input)", code, stderr, tt.flag, tt.path)
			}
			if names, _ := os.ReadDir(dir); len(names) != 0 {
				t.Errorf("%s now holds %v", dir, names)
			}
		})
	}
	if code, _, stderr := runArgs(t, "calibrate", "--in", missingIn, "--out", filepath.Join(dir, "x"), "--report", filepath.Join(dir, "x")); code != 2 || !strings.Contains(stderr, "same file") {
		t.Errorf("--out and --report the same file: exit %d, %q", code, stderr)
	}
}

// TestEmbedOutReadOnlyDir: root ignores permission bits, so the read-only directory is a
// tmpfs remounted read-only (which refuses root too): embed fails naming the path and the
// existing file keeps its content.
func TestEmbedOutReadOnlyDir(t *testing.T) {
	dir := testfs.MountTmpfs(t, "size=64k", "internal/outfile's injected-error tests")
	path := filepath.Join(dir, "out.jsonl")
	if err := os.WriteFile(path, []byte("old\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mount("", dir, "", syscall.MS_REMOUNT|syscall.MS_RDONLY, "size=64k"); err != nil {
		t.Skipf("skipped: cannot remount the tmpfs read-only: %v", err)
	}
	for _, p := range []string{path, filepath.Join(dir, "new.jsonl")} {
		code, stderr := embedToPath(t, p)
		if code != 1 || !strings.Contains(stderr, "--out: "+p) || !strings.Contains(stderr, "read-only file system") {
			t.Errorf("%s: exit %d, stderr %q; want 1 naming the path", p, code, stderr)
		}
	}
	if b, _ := os.ReadFile(path); string(b) != "old\n" {
		t.Errorf("the file now holds %q", b)
	}
}

// TestEmbedOutDiskFull: embed's output outgrows a 64 KiB tmpfs: exit 1 with an error naming
// the path, the old file keeps its content, and no temporary file is left. (The injected
// write error in internal/outfile covers this without root.)
func TestEmbedOutDiskFull(t *testing.T) {
	dir := testfs.MountTmpfs(t, "size=64k", "internal/outfile's injected-error tests")
	path := filepath.Join(dir, "out.jsonl")
	if err := os.WriteFile(path, []byte("old\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var in strings.Builder
	for i := range 2000 { // each feature line is hundreds of bytes: far more than 64 KiB
		fmt.Fprintf(&in, `{"set":"s%d","points":[[0.1,0.2],[0.3,0.4]]}`+"\n", i)
	}
	specPath, _ := writeSpec(t)
	code, _, stderr := runCLI(t, in.String(), "embed", "--spec", specPath, "--out", path)
	if code != 1 || !strings.Contains(stderr, path) || !strings.Contains(stderr, "no space left on device") {
		t.Errorf("exit %d, stderr %q; want 1 and ENOSPC naming %s", code, stderr, path)
	}
	if b, _ := os.ReadFile(path); string(b) != "old\n" {
		t.Errorf("the file now holds %d bytes, want the old content", len(b))
	}
	if names, _ := os.ReadDir(dir); len(names) != 1 {
		t.Errorf("%s holds %v, want only out.jsonl", dir, names)
	}
}

// TestCalibrateOutExisting: calibrate keeps a 0600 spec file private and writes the report
// through a symlink to its target.
func TestCalibrateOutExisting(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "spec.json")
	if err := os.WriteFile(out, []byte("{}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	target := filepath.Join(dir, "report-target.html")
	link := filepath.Join(dir, "report.html")
	if err := os.Symlink("report-target.html", link); err != nil {
		t.Fatal(err)
	}
	if code, _, stderr := runArgs(t, "calibrate", "--in", exampleSets, "--out", out, "--report", link); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	got, _ := os.ReadFile(out)
	want, err := os.ReadFile(exampleSpec)
	if err != nil || !bytes.Equal(got, want) {
		t.Errorf("spec file differs from %s (%v)", exampleSpec, err)
	}
	if fi, err := os.Stat(out); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("spec mode %v (%v), want 0600 kept", fi.Mode().Perm(), err)
	}
	if fi, err := os.Lstat(link); err != nil || fi.Mode()&fs.ModeSymlink == 0 {
		t.Errorf("%s is no longer a symlink", link)
	}
	if html, err := os.ReadFile(target); err != nil || !bytes.Contains(html, []byte("<html")) {
		t.Errorf("report target: %v, %d bytes", err, len(html))
	}
}
