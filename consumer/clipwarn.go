package consumer

import (
	"context"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/distfeat/distfeat/processor"
	"github.com/distfeat/distfeat/window"
)

// clipWarnEvery is the least time between two clipping warnings of a worker.
const clipWarnEvery = time.Minute

// clipWarner makes clipping loud in the worker's log (points_clipped_total and points_total
// are the metrics, and deploy/ alerts on their ratio): when points were clamped into the
// spec's bounds, at most once per clipWarnEvery it logs the share of the points since its
// last report — WARN above processor.MaxClippedFraction, with the most clipped sets and the
// remedy, DEBUG below (a few outliers are what clipping is for). One per worker, shared by
// its partitions.
type clipWarner struct {
	log   *slog.Logger
	clock window.Clock

	points atomic.Int64 // points added to windows since the last report

	mu    sync.Mutex
	tally processor.ClipTally // clipped batches since the last report
	last  time.Time           // of the last report (zero: none yet)
}

func newClipWarner(log *slog.Logger, clock window.Clock) *clipWarner {
	return &clipWarner{log: log, clock: clock}
}

// added counts points added to windows (every batch, clipped or not).
func (c *clipWarner) added(n int) { c.points.Add(int64(n)) }

// clipped records a batch of set with clipped of its points clamped, and reports when the
// last report is clipWarnEvery old.
func (c *clipWarner) clipped(set string, points, clipped int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.tally.Add(set, points, clipped)
	now := c.clock.Now()
	if !c.last.IsZero() && now.Sub(c.last) < clipWarnEvery {
		return
	}
	since := "since start-up"
	if !c.last.IsZero() {
		since = "in the last " + now.Sub(c.last).Round(time.Second).String()
	}
	c.tally.Points = max(c.points.Swap(0), c.tally.Clipped)
	level, msg := slog.LevelDebug, "points clipped into the spec's bounds"
	if c.tally.Fraction() > processor.MaxClippedFraction {
		level, msg = slog.LevelWarn, "points outside the spec's bounds are being clipped: their features are meaningless"
	}
	c.log.Log(context.Background(), level, msg, "clipped", c.tally.Clipped, "points", c.tally.Points,
		"fraction", c.tally.Fraction(), "period", since, "summary", c.tally.Summary(), "remedy", processor.ClipRemedy)
	c.tally.Reset()
	c.last = now
}
