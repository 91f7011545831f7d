package offline

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/distfeat/distfeat/embedding"
	"github.com/distfeat/distfeat/spec"
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
		lr := NewLineReader(bufio.NewReaderSize(strings.NewReader(in), size), limit)
		var all []got
		for {
			line, n, err := lr.Next()
			if err == io.EOF {
				break
			}
			var long LineTooLongError
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
	if msg := (LineTooLongError{MaxLineBytes}).Error(); !strings.Contains(msg, "256 MiB") {
		t.Errorf("%q does not name the 256 MiB limit", msg)
	}
}

// TestEmbedLongLine: a line over the limit is refused by its number with the limit named;
// under --skip-invalid the lines after it are embedded (the whole input used to be lost to
// "bufio.Scanner: token too long", naming line 0).
func TestEmbedLongLine(t *testing.T) {
	emb, err := embedding.New(spec.DefaultSpec())
	if err != nil {
		t.Fatal(err)
	}
	long := `{"set":"long","points":[` + strings.Repeat("[0.5,0.5],", 200) + "[0.5,0.5]]}"
	const limit = 1000
	in := `{"set":"a","points":[[0.1,0.2]]}` + "\n" + long + "\n" + `{"set":"b","points":[[0.3,0.4]]}` + "\n"
	for _, skip := range []bool{true, false} {
		var out bytes.Buffer
		sink, err := NewSink(&out, FormatJSONL, emb.Spec(), emb)
		if err != nil {
			t.Fatal(err)
		}
		var refused []string
		st, err := EmbedLines(context.Background(), emb, strings.NewReader(in), sink, nil, LinesRun{Workers: 2, MaxLine: limit, Other: &OtherFields{}},
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
		case skip && (err != nil || st.Sets != 2 || st.Invalid != 1 || strings.Count(out.String(), "\n") != 2):
			t.Errorf("--skip-invalid: %v, %+v, output %q; want sets a and b", err, st, out.String())
		case !skip && err == nil:
			t.Error("without --skip-invalid the long line did not stop the run")
		}
	}
}

// TestLabelOf: a label is compared as a value: strings as they are, numbers in their
// shortest form (1, 1.0 and 1e0 are one class), booleans; null or absent is no label;
// objects and arrays are refused.
func TestLabelOf(t *testing.T) {
	for _, tc := range []struct {
		in, class string
		ok, err   bool
	}{
		{`{"set":"a","points":[[1]],"y":"cat"}`, "cat", true, false},
		{`{"set":"a","points":[[1]],"y":3}`, "3", true, false},
		{`{"y":1.0}`, "1", true, false},
		{`{"y":1e0}`, "1", true, false},
		{`{"y":-0.50}`, "-0.5", true, false},
		{`{"y":true}`, "true", true, false},
		{`{"y":null}`, "", false, false},
		{`{"set":"a","points":[[1]]}`, "", false, false},
		{`{"y":[1]}`, "", false, true},
		{`{"y":{"a":1}}`, "", false, true},
		{`{"set":`, "", false, true},
	} {
		class, ok, err := LabelOf([]byte(tc.in), "y")
		if (err != nil) != tc.err || ok != tc.ok || class != tc.class {
			t.Errorf("%s: %q %v %v; want %q %v error %v", tc.in, class, ok, err, tc.class, tc.ok, tc.err)
		}
	}
}
