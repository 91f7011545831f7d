package main

import (
	"bufio"
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

// TestLineReader: lines are numbered from 1 with "\n" and "\r\n" endings and a last line
// without one; a line over the limit is refused by number, read to its end, and the next
// line comes whole.
func TestLineReader(t *testing.T) {
	const limit = 10
	in := "a\r\n" + strings.Repeat("x", limit) + "\n" + strings.Repeat("y", limit+1) + "\n\nb\n" +
		strings.Repeat("z", 5*limit) + "\r\n" + strings.Repeat("w", limit) + "\r\nlast"
	type got struct {
		line string
		n    int
		long bool
	}
	want := []got{{"a", 1, false}, {strings.Repeat("x", limit), 2, false}, {"", 3, true}, {"", 4, false},
		{"b", 5, false}, {"", 6, true}, {strings.Repeat("w", limit), 7, false}, {"last", 8, false}}
	// A reader smaller than a line exercises lines read in several pieces.
	for _, size := range []int{16, 1 << 20} {
		lr := newLineReader(bufio.NewReaderSize(strings.NewReader(in), size), limit)
		var all []got
		for {
			line, n, err := lr.next()
			if err == io.EOF {
				break
			}
			var long errLineTooLong
			if err != nil && !errors.As(err, &long) {
				t.Fatal(err)
			}
			all = append(all, got{string(line), n, err != nil})
		}
		if len(all) != len(want) {
			t.Fatalf("buffer %d: %d lines %+v, want %d", size, len(all), all, len(want))
		}
		for i := range want {
			if all[i] != want[i] {
				t.Errorf("buffer %d: line %d: %+v, want %+v", size, i+1, all[i], want[i])
			}
		}
	}
	if msg := (errLineTooLong{maxLineBytes}).Error(); !strings.Contains(msg, "256 MiB") {
		t.Errorf("%q does not name the 256 MiB limit", msg)
	}
}

// TestEmbedLongLine: a line over the limit is refused by its number with the limit named;
// under --skip-invalid the lines after it are embedded (the whole input used to be lost to
// "bufio.Scanner: token too long", naming line 0).
func TestEmbedLongLine(t *testing.T) {
	_, emb := writeSpec(t)
	long := `{"set":"long","points":[` + strings.Repeat("[0.5,0.5],", 200) + "[0.5,0.5]]}"
	const limit = 1000
	in := `{"set":"a","points":[[0.1,0.2]]}` + "\n" + long + "\n" + `{"set":"b","points":[[0.3,0.4]]}` + "\n"
	for _, skip := range []bool{true, false} {
		var out bytes.Buffer
		sink, err := newFeatureSink(&out, "jsonl", emb.Spec(), emb)
		if err != nil {
			t.Fatal(err)
		}
		var refused []string
		st, err := embedLines(context.Background(), emb, strings.NewReader(in), sink, nil, embedRun{workers: 2, maxLine: limit, other: &otherFields{}},
			func(line int, err error) error {
				refused = append(refused, err.Error())
				if !skip {
					return err
				}
				return nil
			}, func(int) {})
		sink.Close()
		if len(refused) != 1 || !strings.Contains(refused[0], "longer than the limit of 1000 bytes") {
			t.Errorf("skip %v: refused %q, want the long line with the limit", skip, refused)
		}
		switch {
		case skip && (err != nil || st.sets != 2 || st.invalid != 1 || strings.Count(out.String(), "\n") != 2):
			t.Errorf("--skip-invalid: %v, %+v, output %q; want sets a and b", err, st, out.String())
		case !skip && err == nil:
			t.Error("without --skip-invalid the long line did not stop the run")
		}
	}
}

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
