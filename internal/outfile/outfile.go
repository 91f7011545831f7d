// Package outfile writes a command's output file without clobbering what is not the
// command's to replace.
//
// Create decides, before any output is written, how the path is written:
//
//   - A regular file, or a path that does not exist yet: the output goes to a temporary file
//     in the same directory, named .<name>.tmp-<pid>-<random>, which Commit syncs and renames
//     over the path (so a reader sees the old file or the whole new one, never a part) and
//     Abort removes. An existing file keeps its permission bits and, where the process may
//     set them, its owner and group; a new file gets 0666 less the umask, as a shell
//     redirection would. Being replaced, a file with several hard links stops sharing its
//     content with the other names.
//   - A symlink: the file it finally points to is written as above; the link stays a link.
//   - A character device (/dev/null, a terminal) or a FIFO: written directly, never replaced;
//     a Unix socket: connected to and written. Output already sent cannot be taken back, so
//     Abort only closes it.
//   - /dev/stdout, /dev/stderr, /dev/fd/N and /proc/self/fd/N: the process's own open
//     descriptor N is written (a duplicate of it), whatever it is open on, at its current
//     offset, so `cmd --out /dev/stdout >>log` appends as the shell set it up.
//   - A directory, a missing parent directory, a path the process may not write, or a
//     directory in which no temporary file can be made: Create returns an error naming the
//     path, before the caller does any work.
//
// A temporary file left behind by a process killed with SIGKILL is recognisable by its name;
// Create removes those of the same path whose process id is no longer running.
package outfile

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// maxSymlinks bounds the symlink chain Create follows (Linux's own limit is 40).
const maxSymlinks = 40

// tmpInfix separates the target's name from the process id in a temporary file's name.
const tmpInfix = ".tmp-"

// File is an output file being written. Write to it, then Commit or Abort it; Abort after
// Commit does nothing, so `defer f.Abort()` is safe.
type File struct {
	path   string   // as the caller gave it, for errors
	target string   // the file that is replaced (the symlink's final target); "" when direct
	f      *os.File // the temporary file; nil when direct
	direct io.Closer
	w      writer // f or direct, or a test's stand-in
	done   bool
	err    error // first write error, returned again by Commit
	// mode, uid and gid are the replaced file's; keep is false for a new file.
	keep     bool
	mode     fs.FileMode
	uid, gid int
}

// writer is the part of *os.File that File writes through.
type writer interface {
	Write(p []byte) (int, error)
}

// fifoPoll is how often CreateContext retries opening a FIFO that has no reader yet.
const fifoPoll = 20 * time.Millisecond

// Create opens path for output as the package comment describes; see CreateContext.
func Create(path string) (*File, error) {
	return CreateContext(context.Background(), path)
}

// CreateContext opens path for output as the package comment describes. Opening a FIFO
// waits for a reader, as a shell redirection does, until ctx ends; a Unix socket is
// connected to.
func CreateContext(ctx context.Context, path string) (*File, error) {
	if path == "" {
		return nil, errors.New("output path is empty")
	}
	if fd, ok := processFD(path); ok {
		return openFD(path, fd)
	}
	fi, err := os.Stat(path) // follows symlinks
	switch {
	case err == nil && fi.IsDir():
		return nil, fmt.Errorf("%s: is a directory, not a file to write", path)
	case err == nil && !fi.Mode().IsRegular():
		return openDirect(ctx, path, fi.Mode())
	case err != nil && !errors.Is(err, fs.ErrNotExist):
		return nil, fmt.Errorf("%s: %w", path, unwrapPath(err))
	}
	target, err := resolve(path)
	if err != nil {
		return nil, err
	}
	out := &File{path: path, target: target}
	if fi != nil {
		if err := syscall.Access(target, 2 /* W_OK */); err != nil {
			return nil, fmt.Errorf("%s: not writable: %w", path, err)
		}
		out.keep, out.mode = true, fi.Mode()&(fs.ModePerm|fs.ModeSetuid|fs.ModeSetgid|fs.ModeSticky)
		if st, ok := fi.Sys().(*syscall.Stat_t); ok {
			out.uid, out.gid = int(st.Uid), int(st.Gid)
		}
	}
	dir, base := filepath.Dir(target), filepath.Base(target)
	if di, err := os.Stat(dir); err != nil {
		return nil, fmt.Errorf("%s: directory %s: %w", path, dir, unwrapPath(err))
	} else if !di.IsDir() {
		return nil, fmt.Errorf("%s: %s is not a directory", path, dir)
	}
	removeStale(dir, base)
	f, err := os.CreateTemp(dir, tmpPrefix(base)+strconv.Itoa(os.Getpid())+"-*")
	if err != nil {
		return nil, fmt.Errorf("%s: cannot create a file in %s (the output is written beside the path and renamed over it): %w", path, dir, unwrapPath(err))
	}
	out.f, out.w = f, f
	return out, nil
}

// WriteFile writes data to path through Create and Commit.
func WriteFile(path string, data []byte) error {
	f, err := Create(path)
	if err != nil {
		return err
	}
	defer f.Abort()
	if _, err := f.Write(data); err != nil {
		return err
	}
	return f.Commit()
}

// Name returns the path Create was given.
func (o *File) Name() string { return o.path }

// Write writes p; the first error is kept and Commit returns it.
func (o *File) Write(p []byte) (int, error) {
	if o.err != nil {
		return 0, o.err
	}
	if o.done {
		return 0, fmt.Errorf("writing %s: %w", o.path, fs.ErrClosed)
	}
	n, err := o.w.Write(p)
	if err != nil {
		o.err = fmt.Errorf("writing %s: %w", o.path, unwrapPath(err))
		return n, o.err
	}
	return n, nil
}

// Commit finishes the output: a replaced file is synced, given the old file's mode and
// owner (or 0666 less the umask), and renamed over the target; a direct output is closed.
// After a failed Write, or any failure here, the target is left as it was and the
// temporary file removed.
func (o *File) Commit() error {
	if o.done {
		return fmt.Errorf("committing %s: %w", o.path, fs.ErrClosed)
	}
	if o.err != nil {
		_ = o.Abort()
		return o.err
	}
	if o.target == "" {
		o.done = true
		if err := o.direct.Close(); err != nil {
			return fmt.Errorf("closing %s: %w", o.path, unwrapPath(err))
		}
		return nil
	}
	if err := o.finish(); err != nil {
		_ = o.Abort()
		return fmt.Errorf("writing %s: %w", o.path, unwrapPath(err))
	}
	o.done = true
	if err := os.Rename(o.f.Name(), o.target); err != nil {
		_ = os.Remove(o.f.Name())
		return fmt.Errorf("replacing %s: %w", o.path, unwrapLink(err))
	}
	if d, err := os.Open(filepath.Dir(o.target)); err == nil {
		_ = d.Sync() // make the rename durable; some file systems cannot sync a directory
		_ = d.Close()
	}
	return nil
}

// finish sets the temporary file's owner and mode, syncs and closes it.
func (o *File) finish() error {
	mode := 0o666 &^ umask()
	if o.keep {
		// Owner first: chown clears the set-id bits the chmod then restores. A process that
		// may not give the file away (not root) leaves it its own, as cp does.
		if err := o.f.Chown(o.uid, o.gid); err != nil && !errors.Is(err, syscall.EPERM) {
			return err
		}
		mode = o.mode
	}
	if err := o.f.Chmod(mode); err != nil {
		return err
	}
	if err := o.f.Sync(); err != nil {
		return err
	}
	return o.f.Close()
}

// Abort discards the output: the temporary file is removed and the target left as it was.
// Bytes already written to a device or FIFO stay written. Abort after Commit, or on a nil
// *File, does nothing.
func (o *File) Abort() error {
	if o == nil || o.done {
		return nil
	}
	o.done = true
	if o.target == "" {
		return o.direct.Close()
	}
	err := o.f.Close()
	if errors.Is(err, fs.ErrClosed) {
		err = nil // finish closed it
	}
	if rerr := os.Remove(o.f.Name()); rerr != nil && !errors.Is(rerr, fs.ErrNotExist) {
		err = errors.Join(err, rerr)
	}
	return err
}

// processFD reports whether path names one of the process's own descriptors.
func processFD(path string) (int, bool) {
	switch path {
	case "/dev/stdin":
		return 0, true
	case "/dev/stdout":
		return 1, true
	case "/dev/stderr":
		return 2, true
	}
	for _, prefix := range []string{"/dev/fd/", "/proc/self/fd/"} {
		if rest, ok := strings.CutPrefix(path, prefix); ok {
			if n, err := strconv.Atoi(rest); err == nil && n >= 0 && strconv.Itoa(n) == rest {
				return n, true
			}
		}
	}
	return 0, false
}

// openFD returns a File writing a duplicate of the process's descriptor fd.
func openFD(path string, fd int) (*File, error) {
	flags, err := fcntl(fd, syscall.F_GETFL, 0)
	if err != nil {
		return nil, fmt.Errorf("%s: descriptor %d is not open: %w", path, fd, err)
	}
	if flags&syscall.O_ACCMODE == syscall.O_RDONLY {
		return nil, fmt.Errorf("%s: descriptor %d is open read-only", path, fd)
	}
	dup, err := fcntl(fd, syscall.F_DUPFD_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	f := os.NewFile(uintptr(dup), path)
	return &File{path: path, direct: f, w: f}, nil
}

// openDirect opens a device or FIFO for writing, or connects to a Unix socket.
func openDirect(ctx context.Context, path string, mode fs.FileMode) (*File, error) {
	if mode&fs.ModeSocket != 0 {
		var d net.Dialer
		c, err := d.DialContext(ctx, "unix", path)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		return &File{path: path, direct: c, w: c}, nil
	}
	flags := os.O_WRONLY
	if mode&fs.ModeNamedPipe != 0 {
		// Non-blocking, so waiting for a reader can end with ctx; Go's poller then makes
		// the writes wait for the reader as usual.
		flags |= syscall.O_NONBLOCK
	}
	for {
		f, err := os.OpenFile(path, flags, 0)
		if err == nil {
			return &File{path: path, direct: f, w: f}, nil
		}
		if mode&fs.ModeNamedPipe == 0 || !errors.Is(err, syscall.ENXIO) { // ENXIO: no reader yet
			return nil, fmt.Errorf("%s: %w", path, unwrapPath(err))
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("%s: waiting for a reader of the FIFO: %w", path, ctx.Err())
		case <-time.After(fifoPoll):
		}
	}
}

func fcntl(fd, cmd, arg int) (int, error) {
	r, _, errno := syscall.Syscall(syscall.SYS_FCNTL, uintptr(fd), uintptr(cmd), uintptr(arg))
	if errno != 0 {
		return 0, errno
	}
	return int(r), nil
}

// resolve follows path's symlinks to the file they finally name (which need not exist yet).
func resolve(path string) (string, error) {
	p := path
	for range maxSymlinks {
		fi, err := os.Lstat(p)
		if errors.Is(err, fs.ErrNotExist) || (err == nil && fi.Mode()&fs.ModeSymlink == 0) {
			return p, nil
		}
		if err != nil {
			return "", fmt.Errorf("%s: %w", path, unwrapPath(err))
		}
		link, err := os.Readlink(p)
		if err != nil {
			return "", fmt.Errorf("%s: %w", path, unwrapPath(err))
		}
		if !filepath.IsAbs(link) {
			link = filepath.Join(filepath.Dir(p), link)
		}
		p = link
	}
	return "", fmt.Errorf("%s: more than %d symlinks", path, maxSymlinks)
}

// tmpPrefix is the start of the temporary files' names for target name base.
func tmpPrefix(base string) string { return "." + base + tmpInfix }

// removeStale removes dir's temporary files for base whose process is gone (SIGKILLed
// before it could commit or abort). Errors are ignored: a stale file costs only space.
func removeStale(dir, base string) {
	matches, _ := filepath.Glob(filepath.Join(dir, globEscape(tmpPrefix(base))+"*"))
	for _, m := range matches {
		rest := strings.TrimPrefix(filepath.Base(m), tmpPrefix(base))
		pidText, _, ok := strings.Cut(rest, "-")
		pid, err := strconv.Atoi(pidText)
		if !ok || err != nil || pid <= 0 || pid == os.Getpid() {
			continue
		}
		if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
			_ = os.Remove(m)
		}
	}
}

// globEscape escapes filepath.Match's metacharacters in s.
func globEscape(s string) string {
	var b strings.Builder
	for _, r := range s {
		if strings.ContainsRune(`*?[\`, r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}

// umask returns the process's file mode creation mask, read from /proc/self/status (reading
// it with umask(2) would briefly change it for every goroutine); 022 when unknown.
func umask() fs.FileMode {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return 0o022
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "Umask:"); ok {
			if m, err := strconv.ParseUint(strings.TrimSpace(v), 8, 32); err == nil {
				return fs.FileMode(m) & fs.ModePerm
			}
		}
	}
	return 0o022
}

// unwrapPath drops an *fs.PathError's operation and (temporary) path, keeping its cause, so
// errors name the user's path, not the temporary file.
func unwrapPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// unwrapLink does the same for a rename's *os.LinkError.
func unwrapLink(err error) error {
	var le *os.LinkError
	if errors.As(err, &le) {
		return le.Err
	}
	return err
}
