// Package testfs holds file-system fixtures shared by tests of several packages.
package testfs

import (
	"os"
	"syscall"
	"testing"
)

// MountTmpfs mounts a tmpfs with opts (e.g. "size=64k") on a new directory, unmounted when the
// test ends. Tests use it to make failures root cannot bypass (a full or read-only file
// system). Without root, or where mounting is refused, it skips the test, saying why and
// which tests (covered) check the same logic without a mount.
func MountTmpfs(t *testing.T, opts, covered string) string {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skipf("skipped: mounting a tmpfs needs root (%s cover the logic)", covered)
	}
	dir := t.TempDir()
	if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, opts); err != nil {
		t.Skipf("skipped: cannot mount a tmpfs (%v); %s cover the logic", err, covered)
	}
	t.Cleanup(func() {
		if err := syscall.Unmount(dir, 0); err != nil {
			t.Errorf("unmount %s: %v", dir, err)
		}
	})
	return dir
}
