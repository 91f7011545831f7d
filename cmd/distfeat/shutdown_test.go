package main

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/segmentio/kafka-go"

	"github.com/distfeat/distfeat/internal/testbroker"
)

// TestWorkerSIGTERMOutputBlocked: a worker process told to stop while its output topic
// refuses writes gives up after DISTFEAT_SHUTDOWN_TIMEOUT, as before, but exits non-zero and
// says how much was not committed, instead of exiting 0 as after a clean hand-over.
func TestWorkerSIGTERMOutputBlocked(t *testing.T) {
	if _, ok := os.LookupEnv(testbroker.EnvBrokers); ok {
		t.Skipf("%s is set: this test blocks produce requests inside the embedded broker", testbroker.EnvBrokers)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	b, err := testbroker.Start(ctx, testbroker.Options{Partitions: 2})
	cancel()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(b.Close)
	env := testbroker.Env{Brokers: b.Addrs(), Points: testbroker.TopicPoints, Features: testbroker.TopicFeatures, DLQ: testbroker.TopicDLQ}
	specPath, _ := writeSpec(t)
	fr := readFeatures(t, env)
	w := startWorkerProc(t, env, specPath, "term-blocked", "DISTFEAT_SHUTDOWN_TIMEOUT=1s")
	sets := uniformSets(31, "a", 4, 50)
	produceBatches(t, env, sets)
	fr.waitWindows(t, len(sets), 60*time.Second)

	var blocked atomic.Bool
	blocked.Store(true)
	b.FailProduce(env.Features, &blocked, int16(kafka.NotEnoughReplicas))
	produceBatches(t, env, uniformSets(32, "b", 6, 50))
	deadline := time.Now().Add(30 * time.Second)
	for !strings.Contains(w.log(), "output write failed, retrying") {
		if time.Now().After(deadline) {
			t.Fatal("the worker logged no failed output write within 30 s of blocking the output")
		}
		time.Sleep(50 * time.Millisecond)
	}

	start := time.Now()
	if err := w.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- w.cmd.Wait() }()
	select {
	case err = <-done:
	case <-time.After(20 * time.Second):
		_ = w.cmd.Process.Kill()
		t.Fatal("the worker did not exit within 20 s of SIGTERM with DISTFEAT_SHUTDOWN_TIMEOUT=1s")
	}
	blocked.Store(false)
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 1 {
		t.Fatalf("worker exit after SIGTERM with the output blocked: %v, want exit status 1", err)
	}
	logText := w.log()
	for _, want := range []string{"shutdown incomplete", "not committed within DISTFEAT_SHUTDOWN_TIMEOUT=1s", "unacknowledged"} {
		if !strings.Contains(logText, want) {
			t.Errorf("the worker's output lacks %q:\n%s", want, tailLines(logText, 15))
		}
	}
	t.Logf("exit status 1 %s after SIGTERM: %s", time.Since(start).Round(time.Millisecond), lastLineWith(logText, "distfeat worker:"))
}

// lastLineWith returns the last line of s containing sub.
func lastLineWith(s, sub string) string {
	lines := strings.Split(s, "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		if strings.Contains(lines[i], sub) {
			return lines[i]
		}
	}
	return ""
}

// log returns what the worker process has written to stderr so far.
func (p *workerProc) log() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.stderr.String()
}
