//go:build dev

package main

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestOutputDevCommandsRefused: bench's profile files and soak's --timeline are opened
// through internal/outfile before any broker or worker starts, so a directory is an error
// naming the flag and the path at once (and nothing runs: the soak would take minutes).
func TestOutputDevCommandsRefused(t *testing.T) {
	dir := t.TempDir()
	for _, args := range [][]string{
		{"bench", "--cpuprofile", dir},
		{"bench", "--blockprofile", dir},
		{"soak", "--timeline", dir},
	} {
		code, _, stderr := runArgs(t, args...)
		if code != 1 || !strings.Contains(stderr, args[1]+": "+dir+": is a directory") {
			t.Errorf("%v: exit %d, stderr %q; want 1 naming %s %s", args, code, stderr, args[1], dir)
		}
	}
	if names, _ := os.ReadDir(dir); len(names) != 0 {
		t.Errorf("%s now holds %v", dir, names)
	}
}

// TestBrokerDataDirChecked: --data-dir must be a writable directory; a file, a device or a
// read-only mount is refused before the broker starts, naming the flag, and left as it was.
func TestBrokerDataDirChecked(t *testing.T) {
	file := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(file, []byte("keep"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct{ dir, want string }{
		{file, "is a file, not a directory"},
		{"/dev/null", "is a device, not a directory"},
	}
	if os.Geteuid() == 0 {
		ro := t.TempDir()
		if err := syscall.Mount("tmpfs", ro, "tmpfs", syscall.MS_RDONLY, "size=64k"); err == nil {
			t.Cleanup(func() { syscall.Unmount(ro, 0) })
			tests = append(tests, struct{ dir, want string }{ro, "not writable"})
		} else {
			t.Logf("read-only case not run: cannot mount a tmpfs: %v", err)
		}
	} else {
		t.Log("read-only case not run: root is needed to mount a read-only tmpfs")
	}
	for _, tt := range tests {
		code, out, stderr := runArgs(t, "broker", "--addr", "127.0.0.1:0", "--data-dir", tt.dir)
		if code != 1 || !strings.Contains(stderr, "--data-dir "+tt.dir+": "+tt.want) || out != "" {
			t.Errorf("--data-dir %s: exit %d, stdout %q, stderr %q; want 1 and %q", tt.dir, code, out, stderr, tt.want)
		}
	}
	if b, _ := os.ReadFile(file); string(b) != "keep" {
		t.Errorf("the file now holds %q", b)
	}
	if fi, err := os.Stat("/dev/null"); err != nil || fi.Mode()&fs.ModeCharDevice == 0 {
		t.Errorf("/dev/null is now %v", fi.Mode())
	}
}
