package outfile

import (
	"bytes"
	"context"
	"errors"
	"io"
	"io/fs"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/distfeat/distfeat/internal/testfs"
)

// write creates path, writes data and commits, failing the test on any error.
func write(t *testing.T, path string, data []byte) {
	t.Helper()
	if err := WriteFile(path, data); err != nil {
		t.Fatalf("WriteFile(%s): %v", path, err)
	}
}

// entries lists dir's names, so tests can see that no temporary file is left behind.
func entries(t *testing.T, dir string) []string {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range es {
		names = append(names, e.Name())
	}
	return names
}

func wantContent(t *testing.T, path, want string) {
	t.Helper()
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != want {
		t.Errorf("%s holds %q, want %q", path, got, want)
	}
}

func TestOutfileRegular(t *testing.T) {
	tests := []struct {
		name    string
		old     *fs.FileMode // nil: the file does not exist yet
		want    fs.FileMode
		content string
	}{
		{name: "new", want: 0o666 &^ umask()},
		{name: "0600 stays private", old: ptr(fs.FileMode(0o600)), want: 0o600},
		{name: "0640 kept", old: ptr(fs.FileMode(0o640)), want: 0o640},
		{name: "0755 kept", old: ptr(fs.FileMode(0o755)), want: 0o755},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "out.txt")
			if tt.old != nil {
				if err := os.WriteFile(path, []byte("old"), 0o600); err != nil {
					t.Fatal(err)
				}
				if err := os.Chmod(path, *tt.old); err != nil {
					t.Fatal(err)
				}
			}
			write(t, path, []byte("new content"))
			wantContent(t, path, "new content")
			fi, err := os.Lstat(path)
			if err != nil {
				t.Fatal(err)
			}
			if !fi.Mode().IsRegular() || fi.Mode().Perm() != tt.want {
				t.Errorf("mode %v, want regular %v", fi.Mode(), tt.want)
			}
			if names := entries(t, dir); len(names) != 1 {
				t.Errorf("directory holds %q, want only out.txt", names)
			}
		})
	}
}

func ptr[T any](v T) *T { return &v }

// TestOutfileOwnerKept: a replaced file keeps its owner and group (root may set them).
func TestOutfileOwnerKept(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("skipped: only root may give a file to another owner, so the test cannot set one up")
	}
	path := filepath.Join(t.TempDir(), "out")
	if err := os.WriteFile(path, []byte("old"), 0o640); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(path, 4321, 8765); err != nil {
		t.Fatal(err)
	}
	write(t, path, []byte("new"))
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	st := fi.Sys().(*syscall.Stat_t)
	if st.Uid != 4321 || st.Gid != 8765 || fi.Mode().Perm() != 0o640 {
		t.Errorf("owner %d:%d mode %v, want 4321:8765 0640", st.Uid, st.Gid, fi.Mode().Perm())
	}
}

// TestOutfileSymlink: through a symlink (also a chain, and one whose target does not exist
// yet) the target is replaced and the link stays a link.
func TestOutfileSymlink(t *testing.T) {
	tests := []struct {
		name     string
		existing bool
		chain    bool
	}{
		{name: "to file", existing: true},
		{name: "chain", existing: true, chain: true},
		{name: "dangling", existing: false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			sub := filepath.Join(dir, "real")
			if err := os.Mkdir(sub, 0o755); err != nil {
				t.Fatal(err)
			}
			target := filepath.Join(sub, "data.json")
			if tt.existing {
				if err := os.WriteFile(target, []byte("old"), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			link := filepath.Join(dir, "link")
			if err := os.Symlink("real/data.json", link); err != nil {
				t.Fatal(err)
			}
			path := link
			if tt.chain {
				path = filepath.Join(dir, "link2")
				if err := os.Symlink(link, path); err != nil {
					t.Fatal(err)
				}
			}
			write(t, path, []byte("new"))
			for _, l := range []string{link, path} {
				if fi, err := os.Lstat(l); err != nil || fi.Mode()&fs.ModeSymlink == 0 {
					t.Errorf("%s is no longer a symlink (%v, %v)", l, fi.Mode(), err)
				}
			}
			wantContent(t, target, "new")
			if fi, _ := os.Stat(target); tt.existing && fi.Mode().Perm() != 0o600 {
				t.Errorf("target mode %v, want 0600 kept", fi.Mode().Perm())
			}
			if names := entries(t, sub); len(names) != 1 {
				t.Errorf("target directory holds %q, want only data.json", names)
			}
			if names := entries(t, dir); len(names) != map[bool]int{false: 2, true: 3}[tt.chain] {
				t.Errorf("link directory holds %q", names)
			}
		})
	}
}

// TestOutfileDevNull: /dev/null is written through and stays the character device.
func TestOutfileDevNull(t *testing.T) {
	before, err := os.Stat("/dev/null")
	if err != nil || before.Mode()&fs.ModeCharDevice == 0 {
		t.Fatalf("/dev/null is not a character device before the test: %v %v", before.Mode(), err)
	}
	write(t, "/dev/null", bytes.Repeat([]byte("x"), 1<<16))
	// An aborted write leaves it alone too.
	f, err := Create("/dev/null")
	if err != nil {
		t.Fatal(err)
	}
	f.Write([]byte("x"))
	if err := f.Abort(); err != nil {
		t.Fatal(err)
	}
	after, err := os.Stat("/dev/null")
	if err != nil || after.Mode()&fs.ModeCharDevice == 0 || !os.SameFile(before, after) {
		t.Fatalf("/dev/null is now %v (%v), want the same character device", after.Mode(), err)
	}
	if names, _ := filepath.Glob("/dev/.null.tmp-*"); len(names) != 0 {
		t.Errorf("temporary files left in /dev: %q", names)
	}
}

// TestOutfileFIFO: a FIFO is written to its reader, not replaced.
func TestOutfileFIFO(t *testing.T) {
	path := filepath.Join(t.TempDir(), "pipe")
	if err := syscall.Mkfifo(path, 0o600); err != nil {
		t.Fatal(err)
	}
	want := bytes.Repeat([]byte("0123456789"), 100000) // larger than a pipe's buffer
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
	write(t, path, want)
	if b := <-got; !bytes.Equal(b, want) {
		t.Errorf("reader got %d bytes, want %d", len(b), len(want))
	}
	if fi, err := os.Lstat(path); err != nil || fi.Mode()&fs.ModeNamedPipe == 0 {
		t.Errorf("%s is now %v (%v), want a FIFO", path, fi.Mode(), err)
	}
}

// TestOutfileFIFONoReader: waiting for a FIFO's reader ends with the context, naming the
// path, and the FIFO stays.
func TestOutfileFIFONoReader(t *testing.T) {
	path := filepath.Join(t.TempDir(), "pipe")
	if err := syscall.Mkfifo(path, 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := CreateContext(ctx, path)
	if !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "reader") {
		t.Errorf("err %v, want context.Canceled naming %s", err, path)
	}
	if fi, err := os.Lstat(path); err != nil || fi.Mode()&fs.ModeNamedPipe == 0 {
		t.Errorf("%s is now %v (%v), want a FIFO", path, fi.Mode(), err)
	}
}

// TestOutfileSocket: a Unix socket is connected to and written, not replaced.
func TestOutfileSocket(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sock")
	l, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	got := make(chan []byte, 1)
	go func() {
		c, err := l.Accept()
		if err != nil {
			got <- []byte(err.Error())
			return
		}
		defer c.Close()
		b, _ := io.ReadAll(c)
		got <- b
	}()
	write(t, path, []byte("over the socket"))
	if b := <-got; string(b) != "over the socket" {
		t.Errorf("the listener got %q", b)
	}
	if fi, err := os.Lstat(path); err != nil || fi.Mode()&fs.ModeSocket == 0 {
		t.Errorf("%s is now %v (%v), want a socket", path, fi.Mode(), err)
	}
}

// TestOutfileProcessFD: /dev/fd/N, /proc/self/fd/N (and so /dev/stdout) write the open
// descriptor, which stays open for its owner.
func TestOutfileProcessFD(t *testing.T) {
	for _, prefix := range []string{"/dev/fd/", "/proc/self/fd/"} {
		t.Run(prefix, func(t *testing.T) {
			r, w, err := os.Pipe()
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			defer w.Close()
			write(t, prefix+strconv.Itoa(int(w.Fd())), []byte("via fd "))
			if _, err := w.Write([]byte("still open")); err != nil {
				t.Fatalf("the descriptor was closed by Commit: %v", err)
			}
			w.Close()
			b, _ := io.ReadAll(r)
			if string(b) != "via fd still open" {
				t.Errorf("read %q", b)
			}
			_, err = Create(prefix + strconv.Itoa(int(r.Fd())))
			if err == nil || !strings.Contains(err.Error(), "read-only") {
				t.Errorf("read end: err %v, want read-only error", err)
			}
		})
	}
	if fd, ok := processFD("/dev/stdout"); !ok || fd != 1 {
		t.Errorf("/dev/stdout → %d %v, want descriptor 1", fd, ok)
	}
}

// TestOutfileRefused: paths that cannot be written are refused by Create, naming the path,
// and nothing is left behind.
func TestOutfileRefused(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		name, path, want string
	}{
		{name: "directory", path: dir, want: "is a directory"},
		{name: "missing parent", path: filepath.Join(dir, "nope", "out"), want: "no such file or directory"},
		{name: "parent is a file", path: filepath.Join(dir, "file", "out"), want: "not a directory"},
		{name: "empty", path: "", want: "empty"},
		{name: "closed descriptor", path: "/dev/fd/987654", want: "not open"},
	}
	if err := os.WriteFile(filepath.Join(dir, "file"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, err := Create(tt.path)
			if err == nil {
				f.Abort()
				t.Fatalf("Create(%q) succeeded", tt.path)
			}
			if !strings.Contains(err.Error(), tt.path) || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %q, want it to name %q and say %q", err, tt.path, tt.want)
			}
		})
	}
	if names := entries(t, dir); len(names) != 1 {
		t.Errorf("directory holds %q, want only file", names)
	}
}

// TestOutfileReadOnlyDir: root ignores permission bits, so the directory is a read-only
// tmpfs mount (which refuses root too). A new file and a replacement are both refused by
// Create and the old content is kept. Without root, a 0555 directory serves.
func TestOutfileReadOnlyDir(t *testing.T) {
	var dir string
	if os.Geteuid() == 0 {
		dir = testfs.MountTmpfs(t, "size=64k", "the injected-error tests")
		if err := os.WriteFile(filepath.Join(dir, "old"), []byte("old"), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := syscall.Mount("", dir, "", syscall.MS_REMOUNT|syscall.MS_RDONLY, "size=64k"); err != nil {
			t.Skipf("skipped: cannot remount the tmpfs read-only: %v", err)
		}
	} else {
		dir = t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, "old"), []byte("old"), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(dir, 0o555); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { os.Chmod(dir, 0o755) })
	}
	for _, name := range []string{"new", "old"} {
		path := filepath.Join(dir, name)
		f, err := Create(path)
		if err == nil {
			f.Abort()
			t.Fatalf("Create(%s) in a read-only directory succeeded", path)
		}
		if !strings.Contains(err.Error(), path) {
			t.Errorf("error %q does not name %s", err, path)
		}
	}
	wantContent(t, filepath.Join(dir, "old"), "old")
	if names := entries(t, dir); len(names) != 1 {
		t.Errorf("directory holds %q, want only old", names)
	}
}

// TestOutfileDiskFull: a 64 KiB tmpfs fills up; the write error names the path, the old file
// keeps its content and no temporary file is left.
func TestOutfileDiskFull(t *testing.T) {
	dir := testfs.MountTmpfs(t, "size=64k", "the injected-error tests")
	path := filepath.Join(dir, "out")
	if err := os.WriteFile(path, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := Create(path)
	if err != nil {
		t.Fatal(err)
	}
	_, werr := f.Write(make([]byte, 1<<20))
	cerr := f.Commit()
	for _, err := range []error{werr, cerr} {
		if !errors.Is(err, syscall.ENOSPC) || !strings.Contains(err.Error(), path) {
			t.Errorf("error %v, want ENOSPC naming %s", err, path)
		}
	}
	wantContent(t, path, "old")
	if names := entries(t, dir); len(names) != 1 {
		t.Errorf("directory holds %q, want only out", names)
	}
}

// failAfter is a writer that fails once n bytes have gone to w.
type failAfter struct {
	w   writer
	n   int
	err error
}

func (f *failAfter) Write(p []byte) (int, error) {
	if len(p) > f.n {
		n, _ := f.w.Write(p[:f.n])
		f.n = 0
		return n, f.err
	}
	f.n -= len(p)
	return f.w.Write(p)
}

// TestOutfileInjectedWriteError runs without root: a write fails part-way (as on a full
// disk); Commit refuses, the old file is kept and the temporary file removed.
func TestOutfileInjectedWriteError(t *testing.T) {
	for _, existing := range []bool{true, false} {
		t.Run(map[bool]string{true: "replace", false: "new"}[existing], func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "out")
			if existing {
				if err := os.WriteFile(path, []byte("old"), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			f, err := Create(path)
			if err != nil {
				t.Fatal(err)
			}
			f.w = &failAfter{w: f.f, n: 10, err: &fs.PathError{Op: "write", Path: f.f.Name(), Err: syscall.ENOSPC}}
			if _, err := f.Write([]byte("0123456789abcdef")); !errors.Is(err, syscall.ENOSPC) {
				t.Fatalf("Write: %v, want ENOSPC", err)
			}
			err = f.Commit()
			if !errors.Is(err, syscall.ENOSPC) || !strings.Contains(err.Error(), path) || strings.Contains(err.Error(), tmpInfix) {
				t.Errorf("Commit: %v, want ENOSPC naming %s and not the temporary file", err, path)
			}
			if existing {
				wantContent(t, path, "old")
			} else if _, err := os.Stat(path); !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("%s exists after a failed write", path)
			}
			if names := entries(t, dir); len(names) != map[bool]int{true: 1, false: 0}[existing] {
				t.Errorf("directory holds %q", names)
			}
		})
	}
}

// TestOutfileAbort: Abort keeps the old file and removes the temporary one; Abort after
// Commit does nothing and a second Commit is an error.
func TestOutfileAbort(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "out")
	write(t, path, []byte("old"))
	f, err := Create(path)
	if err != nil {
		t.Fatal(err)
	}
	f.Write([]byte("partial"))
	if err := f.Abort(); err != nil {
		t.Fatal(err)
	}
	wantContent(t, path, "old")
	if names := entries(t, dir); len(names) != 1 {
		t.Errorf("directory holds %q after Abort", names)
	}
	f, err = Create(path)
	if err != nil {
		t.Fatal(err)
	}
	f.Write([]byte("new"))
	if err := f.Commit(); err != nil {
		t.Fatal(err)
	}
	if err := f.Abort(); err != nil {
		t.Errorf("Abort after Commit: %v", err)
	}
	if err := f.Commit(); err == nil {
		t.Error("second Commit succeeded")
	}
	wantContent(t, path, "new")
}

// TestOutfileStaleTemp: a temporary file of a process that is gone (SIGKILLed before Commit)
// is removed by the next Create of the same path; one of a live process is not.
func TestOutfileStaleTemp(t *testing.T) {
	dir := t.TempDir()
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	dead := cmd.Process.Pid
	if err := syscall.Kill(dead, 0); !errors.Is(err, syscall.ESRCH) {
		t.Skipf("skipped: pid %d was reused at once, so no dead pid to test with", dead)
	}
	stale := filepath.Join(dir, ".out.tmp-"+strconv.Itoa(dead)+"-123")
	live := filepath.Join(dir, ".out.tmp-1-456") // pid 1 always runs
	other := filepath.Join(dir, ".other.tmp-"+strconv.Itoa(dead)+"-789")
	for _, p := range []string{stale, live, other} {
		if err := os.WriteFile(p, []byte("partial"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write(t, filepath.Join(dir, "out"), []byte("x"))
	for p, want := range map[string]bool{stale: false, live: true, other: true} {
		if _, err := os.Stat(p); (err == nil) != want {
			t.Errorf("%s exists %v, want %v", filepath.Base(p), err == nil, want)
		}
	}
}
