package consumer

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/distfeat/distfeat/window"
)

// TestClipWarner: the worker's clipping warning (issue 32: 7203 of 7219 points clipped
// without a log line). The first clipped batch is reported at once; later ones at most once
// a minute, with the share of the points since the last report: WARN with the most clipped
// set and the remedy above processor.MaxClippedFraction, DEBUG below.
func TestClipWarner(t *testing.T) {
	var buf bytes.Buffer
	log := slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug}))
	clock := window.NewFakeClock(time.Unix(1_732_000_000, 0))
	c := newClipWarner(log, clock)
	lines := func() []string {
		s := strings.TrimSpace(buf.String())
		buf.Reset()
		if s == "" {
			return nil
		}
		return strings.Split(s, "\n")
	}
	type step struct {
		advance         time.Duration
		points, clipped int // one batch of set "s" (clipped > 0) or of other sets (0)
		want            string
	}
	for i, st := range []step{
		{0, 200, 199, `level=WARN`},         // the first report: at once
		{10 * time.Second, 200, 200, ``},    // within the minute: counted, not logged
		{10 * time.Second, 5000, 0, ``},     // unclipped points count in the share
		{time.Minute, 200, 1, `level=WARN`}, // 201 of 5400 points: 3.7% > 1%
		{30 * time.Second, 100000, 0, ``},
		{time.Second, 200, 2, ``},
		{time.Minute, 200, 1, `level=DEBUG`}, // 3 of 100400 points: below the threshold
	} {
		clock.Advance(st.advance)
		c.added(st.points)
		if st.clipped > 0 {
			c.clipped("s", st.points, st.clipped)
		}
		got := lines()
		switch {
		case st.want == "" && len(got) != 0:
			t.Errorf("step %d: logged %q, want nothing", i, got)
		case st.want != "" && (len(got) != 1 || !strings.Contains(got[0], st.want)):
			t.Errorf("step %d: logged %q, want one %s line", i, got, st.want)
		case i == 3:
			for _, w := range []string{"clipped=201", "points=5400", `period="in the last 1m20s"`, `\"s\" (201 of 400)`, "distfeat calibrate", "out_of_bounds"} {
				if !strings.Contains(got[0], w) {
					t.Errorf("warning %q lacks %q", got[0], w)
				}
			}
		}
	}
}
