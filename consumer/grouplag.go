package consumer

import (
	"context"
	"fmt"
	"time"

	"github.com/segmentio/kafka-go"
)

// groupLagInterval is how often the worker polls the group's lag.
const groupLagInterval = 5 * time.Second

// groupLag exports the consumer group's lag for every partition of the input topic — the
// broker's view (committed offset of the group against the high watermark), as
// kafka-lag-exporter and KEDA compute it — not only for the partitions this worker owns. A
// partition that no live member consumes (an orphaned assignment, a stalled member) thus
// shows growing lag and an unmoving committed offset, which the shipped alert rules catch.
type groupLag struct {
	w     *Worker
	last  map[int]bool // partitions exported in the previous poll
	every time.Duration
}

// startGroupLag polls until ctx ends; the returned function stops the poller and waits.
func (w *Worker) startGroupLag(ctx context.Context) (stop func()) {
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	g := &groupLag{w: w, every: groupLagInterval}
	go func() {
		defer close(done)
		g.run(ctx)
	}()
	return func() { cancel(); <-done }
}

func (g *groupLag) run(ctx context.Context) {
	t := time.NewTicker(g.every)
	defer t.Stop()
	for {
		if err := g.poll(ctx); err != nil && ctx.Err() == nil {
			g.w.metrics.GroupLagErrors.Inc()
			g.w.log.Debug("group lag poll failed", "err", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// poll reads the input topic's partitions and offsets and the group's commits and
// assignment, and sets the group gauges.
func (g *groupLag) poll(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	topic, cl := g.w.cfg.InputTopic, g.w.client
	md, err := cl.Metadata(ctx, &kafka.MetadataRequest{Topics: []string{topic}})
	if err != nil {
		return fmt.Errorf("metadata: %w", err)
	}
	var parts []int
	for _, t := range md.Topics {
		if t.Name == topic && t.Error == nil {
			for _, p := range t.Partitions {
				parts = append(parts, p.ID)
			}
		}
	}
	if len(parts) == 0 {
		return fmt.Errorf("topic %s has no partitions in the metadata", topic)
	}
	reqs := make([]kafka.OffsetRequest, 0, 2*len(parts))
	for _, p := range parts {
		reqs = append(reqs, kafka.FirstOffsetOf(p), kafka.LastOffsetOf(p))
	}
	lo, err := cl.ListOffsets(ctx, &kafka.ListOffsetsRequest{Topics: map[string][]kafka.OffsetRequest{topic: reqs}})
	if err != nil {
		return fmt.Errorf("list offsets: %w", err)
	}
	of, err := cl.OffsetFetch(ctx, &kafka.OffsetFetchRequest{GroupID: g.w.cfg.Group, Topics: map[string][]int{topic: parts}})
	if err == nil && of.Error != nil {
		err = of.Error
	}
	if err != nil {
		return fmt.Errorf("offset fetch: %w", err)
	}
	committed := map[int]int64{}
	for _, p := range of.Topics[topic] {
		if p.Error == nil {
			committed[p.Partition] = p.CommittedOffset
		}
	}
	seen := map[int]bool{}
	for _, p := range lo.Topics[topic] {
		c, ok := committed[p.Partition]
		if p.Error != nil || !ok {
			continue
		}
		lag := p.LastOffset - c
		if c < 0 { // nothing committed: the group starts at the log start
			lag = p.LastOffset - p.FirstOffset
		}
		label := partitionLabel(p.Partition)
		g.w.metrics.GroupLag.WithLabelValues(label).Set(float64(max(lag, 0)))
		g.w.metrics.GroupCommittedOffset.WithLabelValues(label).Set(float64(c))
		seen[p.Partition] = true
	}
	for p := range g.last {
		if !seen[p] { // the partition vanished from the answer: stop exporting a stale value
			g.w.metrics.GroupLag.DeleteLabelValues(partitionLabel(p))
			g.w.metrics.GroupCommittedOffset.DeleteLabelValues(partitionLabel(p))
		}
	}
	g.last = seen
	return g.unassigned(ctx, parts)
}

// unassigned sets the number of input partitions that no member of the Stable group owns.
func (g *groupLag) unassigned(ctx context.Context, parts []int) error {
	dg, err := g.w.client.DescribeGroups(ctx, &kafka.DescribeGroupsRequest{GroupIDs: []string{g.w.cfg.Group}})
	if err != nil {
		return fmt.Errorf("describe group: %w", err)
	}
	if len(dg.Groups) != 1 || dg.Groups[0].GroupState != "Stable" {
		return nil // rebalancing (or gone): assignments are in flux, keep the last value
	}
	owned := map[int]bool{}
	for _, m := range dg.Groups[0].Members {
		for _, t := range m.MemberAssignments.Topics {
			if t.Topic == g.w.cfg.InputTopic {
				for _, p := range t.Partitions {
					owned[p] = true
				}
			}
		}
	}
	n := 0
	for _, p := range parts {
		if !owned[p] {
			n++
		}
	}
	g.w.metrics.GroupPartitionsUnassigned.Set(float64(n))
	return nil
}
