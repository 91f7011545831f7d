//go:build dev

package devcmd

// Process control of the soak's `distfeat worker` children: start, stop, readiness, logs.

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/distfeat/distfeat/internal/testbroker"
)

// soakWorker is one `distfeat worker` child process.
type soakWorker struct {
	name string
	cmd  *exec.Cmd
	addr string // metrics listener
	logs *soakTail

	exited  chan struct{}
	exitErr error
	expect  bool // its exit was asked for (stop signal)

	// Sampled state; the last values survive the process.
	rss, hwm int64 // bytes
	metrics  map[string]float64
}

func (w *soakWorker) running() bool {
	select {
	case <-w.exited:
		return false
	default:
		return true
	}
}

// startSoakWorker starts `distfeat worker` slot as a child process with its metrics server on
// a free loopback port.
func startSoakWorker(o *soakOptions, brokers []string, slot int, exits chan<- *soakWorker, stderr io.Writer, logMu *sync.Mutex) (*soakWorker, error) {
	addr, err := freeLoopbackAddr()
	if err != nil {
		return nil, err
	}
	w := &soakWorker{name: fmt.Sprintf("w%d", slot), addr: addr, logs: &soakTail{max: 256 << 10}, exited: make(chan struct{})}
	cmd := exec.Command(o.workerBin, "worker")
	cmd.Env = append(os.Environ(),
		"DISTFEAT_BROKERS="+strings.Join(brokers, ","),
		"DISTFEAT_INPUT_TOPIC="+testbroker.TopicPoints, "DISTFEAT_OUTPUT_TOPIC="+testbroker.TopicFeatures,
		"DISTFEAT_DLQ_TOPIC="+testbroker.TopicDLQ, "DISTFEAT_GROUP="+soakGroup, "DISTFEAT_SPEC="+o.specPath,
		"DISTFEAT_WINDOW=set", "DISTFEAT_MAX_OPEN_WINDOWS="+strconv.Itoa(o.maxOpen),
		"DISTFEAT_IDLE_TIMEOUT="+o.idleTimeout.String(), "DISTFEAT_SESSION_TIMEOUT="+o.sessionTimeout.String(),
		"DISTFEAT_METRICS_ADDR="+addr, "DISTFEAT_LOG_LEVEL=info", "DISTFEAT_LOG_FORMAT=text",
	)
	cmd.Env = append(cmd.Env, o.workerEnv...) // later entries win
	var out io.Writer = w.logs
	if o.verbose {
		out = io.MultiWriter(w.logs, &soakPrefixWriter{prefix: w.name + " | ", w: stderr, mu: logMu})
	}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start worker %s (%s): %w", w.name, o.workerBin, err)
	}
	w.cmd = cmd
	go func() {
		w.exitErr = cmd.Wait()
		close(w.exited)
		select {
		case exits <- w:
		default:
		}
	}()
	return w, nil
}

// stopSoakWorker signals w and waits up to timeout for it to exit (then kills it). It returns
// the exit status: "0", an exit code, or the signal.
func stopSoakWorker(w *soakWorker, sig syscall.Signal, timeout time.Duration) string {
	if w.running() {
		w.expect = true
		_ = w.cmd.Process.Signal(sig)
		if timeout <= 0 {
			timeout = 10 * time.Second
		}
		select {
		case <-w.exited:
		case <-time.After(timeout):
			_ = w.cmd.Process.Kill()
			<-w.exited
			return fmt.Sprintf("no exit within %s (killed)", timeout)
		}
	}
	var ee *exec.ExitError
	switch {
	case w.exitErr == nil:
		return "0"
	case errors.As(w.exitErr, &ee):
		if st, ok := ee.Sys().(syscall.WaitStatus); ok && st.Signaled() {
			return "signal " + st.Signal().String()
		}
		return strconv.Itoa(ee.ExitCode())
	default:
		return w.exitErr.Error()
	}
}

// freeLoopbackAddr returns 127.0.0.1:<a port that was free a moment ago>.
func freeLoopbackAddr() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer ln.Close()
	return ln.Addr().String(), nil
}

// soakTail keeps the last max bytes written to it.
type soakTail struct {
	mu  sync.Mutex
	max int
	buf []byte
}

func (t *soakTail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if over := len(t.buf) - t.max; over > 0 {
		t.buf = append(t.buf[:0], t.buf[over:]...)
	}
	return len(p), nil
}

// lastLines returns the last n lines, indented.
func (t *soakTail) lastLines(n int) string {
	t.mu.Lock()
	defer t.mu.Unlock()
	lines := strings.Split(strings.TrimRight(string(t.buf), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return "      " + strings.Join(lines, "\n      ")
}

// soakPrefixWriter copies whole lines to w with a prefix (the -v worker logs).
type soakPrefixWriter struct {
	prefix string
	w      io.Writer
	mu     *sync.Mutex
	part   []byte
}

func (p *soakPrefixWriter) Write(b []byte) (int, error) {
	p.part = append(p.part, b...)
	for {
		i := bytes.IndexByte(p.part, '\n')
		if i < 0 {
			return len(b), nil
		}
		p.mu.Lock()
		fmt.Fprintf(p.w, "%s%s\n", p.prefix, p.part[:i])
		p.mu.Unlock()
		p.part = p.part[i+1:]
	}
}
