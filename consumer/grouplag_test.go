package consumer

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/segmentio/kafka-go"

	"github.com/distfeat/distfeat/internal/metrics"
	"github.com/distfeat/distfeat/window"
)

// TestGroupLagCoversEveryPartition: the group-lag poll exports, for every input partition,
// the broker's view of the group — high watermark minus the group's committed offset, or
// minus the log start when nothing is committed — whether or not this worker (here: not a
// member at all) owns it, and the partitions no member owns.
func TestGroupLagCoversEveryPartition(t *testing.T) {
	const parts = 4
	h := newHarness(t, parts, smallSpec)
	cfg := h.config("lag-group", window.Config{})
	// Records per partition: 3, 5, 7, 9 (explicit partitions).
	var msgs []kafka.Message
	for p := range parts {
		for i := range 3 + 2*p {
			msgs = append(msgs, kafka.Message{Partition: p, Key: []byte(fmt.Sprintf("k%d-%d", p, i)), Value: []byte(`{"points":[[0.1,0.2]],"end":true}`)})
		}
	}
	w := &kafka.Writer{Addr: kafka.TCP(h.env.Brokers...), Topic: h.env.Points, RequiredAcks: kafka.RequireAll, Transport: h.tr,
		BatchTimeout: time.Millisecond, Balancer: kafka.BalancerFunc(func(m kafka.Message, _ ...int) int { return m.Partition })}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	if err := w.WriteMessages(ctx, msgs...); err != nil {
		t.Fatal(err)
	}
	w.Close()
	// The group committed 2 on partition 1 and 9 on partition 3; nothing on 0 and 2.
	tr := &kafka.Transport{}
	t.Cleanup(tr.CloseIdleConnections)
	cl := &kafka.Client{Addr: kafka.TCP(h.env.Brokers...), Transport: tr, Timeout: 10 * time.Second}
	resp, err := cl.OffsetCommit(ctx, &kafka.OffsetCommitRequest{GroupID: cfg.Group, GenerationID: -1,
		Topics: map[string][]kafka.OffsetCommit{h.env.Points: {{Partition: 1, Offset: 2}, {Partition: 3, Offset: 9}}}})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range resp.Topics[h.env.Points] {
		if p.Error != nil {
			t.Fatalf("commit partition %d: %v", p.Partition, p.Error)
		}
	}

	m := metrics.New(prometheus.NewRegistry(), "test")
	wk, err := NewWorker(cfg, h.emb, h.out, m, testLogger(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	g := &groupLag{w: wk}
	if err := g.poll(ctx); err != nil {
		t.Fatalf("poll: %v", err)
	}
	for p, want := range map[int]float64{0: 3, 1: 5 - 2, 2: 7, 3: 0} {
		if got := testutil.ToFloat64(m.GroupLag.WithLabelValues(partitionLabel(p))); got != want {
			t.Errorf("group lag of partition %d = %v, want %v", p, got, want)
		}
	}
	if got := testutil.ToFloat64(m.GroupCommittedOffset.WithLabelValues("3")); got != 9 {
		t.Errorf("committed offset of partition 3 = %v, want 9", got)
	}

	// A member that owns every partition: none is unassigned any more, and its commits show.
	rw := h.start(cfg, nil)
	h.waitGroupMembers(cfg.Group, 1, 20*time.Second)
	deadline := time.Now().Add(20 * time.Second)
	for {
		if err := g.poll(ctx); err != nil {
			t.Fatalf("poll: %v", err)
		}
		lag := 0.0
		for p := range parts {
			lag += testutil.ToFloat64(m.GroupLag.WithLabelValues(partitionLabel(p)))
		}
		if lag == 0 && testutil.ToFloat64(m.GroupPartitionsUnassigned) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("group lag %v, unassigned %v: the member should have consumed and committed everything", lag, testutil.ToFloat64(m.GroupPartitionsUnassigned))
		}
		time.Sleep(100 * time.Millisecond)
	}
	rw.shutdown(t)
}
