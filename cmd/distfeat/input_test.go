package main

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/distfeat/distfeat/schema"
)

// TestSetFileOtherFields: a set file's lines may carry fields that are not the record's
// (calibrate --label's class, ids): embed and produce skip them and name them on stderr;
// embed's features are those of the same file without them, and produce writes records
// without them (the topic's format stays strict).
func TestSetFileOtherFields(t *testing.T) {
	specPath, _ := writeSpec(t)
	plain := `{"set":"a","points":[[0.1,0.2],[0.3,0.4]]}` + "\n" + `{"set":"b","points":[[0.5,0.6]],"end":true}` + "\n"
	labelled := `{"digit":7,"set":"a","points":[[0.1,0.2],[0.3,0.4]],"id":{"source":"x"}}` + "\n" + `{"set":"b","digit":"seven","points":[[0.5,0.6]],"end":true}` + "\n"
	_, want, _ := runCLI(t, plain, "embed", "--spec", specPath)
	code, got, stderr := runCLI(t, labelled, "embed", "--spec", specPath)
	if code != 0 || got != want {
		t.Fatalf("embed: exit %d, stderr %q; output equal to the plain file's: %v", code, stderr, got == want)
	}
	if w := `embed: ignored fields "digit" (2 lines), "id" (1 lines)`; !strings.Contains(stderr, w) {
		t.Errorf("embed stderr %q lacks %q", stderr, w)
	}
	code, out, stderr := runCLI(t, labelled, "produce", "--out", "-")
	if code != 0 || !strings.Contains(stderr, `produce: ignored fields "digit" (2 lines), "id" (1 lines)`) {
		t.Fatalf("produce: exit %d, stderr %q", code, stderr)
	}
	for i, line := range strings.Split(strings.TrimSpace(out), "\n") {
		if _, err := schema.DecodeRecord(nil, []byte(line), schema.ContentTypeJSON, 0, schema.DecodeOptions{Dim: 2}); err != nil {
			t.Errorf("produce line %d %s: %v (want a strict input record)", i+1, line, err)
		}
	}
	// A line that is not JSON is still refused, with its number.
	if code, _, stderr := runCLI(t, plain+`{"set":"c","x":[1,}`+"\n", "embed", "--spec", specPath); code != 1 || !strings.Contains(stderr, "line 3") {
		t.Errorf("bad JSON in another field: exit %d, stderr %q", code, stderr)
	}
}

// TestInputCancel: a command reading a FIFO that never delivers stops when its context is
// cancelled (SIGINT/SIGTERM), whether it is waiting for a writer to open the FIFO or for
// data; it used to wait forever.
func TestInputCancel(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "in.fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	specPath, _ := writeSpec(t)
	embed := func() (int, string) {
		ctx, cancel := context.WithCancel(context.Background())
		var errb bytes.Buffer
		done := make(chan int)
		go func() { done <- run(ctx, []string{"embed", "--spec", specPath, "--in", fifo}, io.Discard, &errb) }()
		cancel()
		return <-done, errb.String()
	}
	// No writer: the open blocks.
	if code, stderr := embed(); code != 1 || !strings.Contains(stderr, "context canceled") {
		t.Errorf("no writer: exit %d, stderr %q; want 1 and the cancellation", code, stderr)
	}
	// A writer that sends nothing: the read blocks.
	w, err := os.OpenFile(fifo, os.O_RDWR, 0) // O_RDWR: opens at once, keeps a writer
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if code, stderr := embed(); code != 1 || !strings.Contains(stderr, "context canceled") {
		t.Errorf("silent writer: exit %d, stderr %q; want 1 and the cancellation", code, stderr)
	}
}

// TestSIGTERMStopsEmbed: the binary, reading a FIFO whose writer sends nothing, stops on one
// SIGTERM with exit code 1 and the cancellation named (it used to ignore SIGTERM).
func TestSIGTERMStopsEmbed(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "in.fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd := exec.Command(binPath, "embed", "--in", fifo)
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// Opening the write side returns once embed has opened the FIFO to read it: it is past
	// its signal set-up and waits for data.
	w, err := os.OpenFile(fifo, os.O_WRONLY, 0)
	if err != nil {
		cmd.Process.Kill()
		t.Fatal(err)
	}
	defer w.Close()
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	err = cmd.Wait()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 1 || !strings.Contains(stderr.String(), "context canceled") {
		t.Errorf("after SIGTERM: %v, stderr %q; want exit code 1 and the cancellation", err, stderr.String())
	}
}
