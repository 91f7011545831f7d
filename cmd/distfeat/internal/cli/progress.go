package cli

import (
	"fmt"
	"io"
	"os"
	"sync"
	"time"
)

// Progress prints a single self-updating status line to a terminal and nothing when the
// output is a pipe or a file, so long commands are informative interactively and quiet in
// scripts.
type Progress struct {
	w       io.Writer
	enabled bool
	label   string
	start   time.Time

	mu   sync.Mutex
	last time.Time
}

// NewProgress returns a reporter for w; it is silent unless w is a character device.
func NewProgress(w io.Writer, label string) *Progress {
	return &Progress{w: w, enabled: isTerminal(w), label: label, start: time.Now()}
}

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// Update redraws the line at most ten times a second.
func (p *Progress) Update(format string, args ...any) {
	if !p.enabled {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	now := time.Now()
	if now.Sub(p.last) < 100*time.Millisecond {
		return
	}
	p.last = now
	fmt.Fprintf(p.w, "\r\033[K%s: %s (%.1fs)", p.label, fmt.Sprintf(format, args...), now.Sub(p.start).Seconds())
}

// Done clears the line.
func (p *Progress) Done() {
	if !p.enabled {
		return
	}
	fmt.Fprint(p.w, "\r\033[K")
}
