package main

import (
	"bytes"
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/segmentio/kafka-go"

	"github.com/distfeat/distfeat/internal/testbroker"
	"github.com/distfeat/distfeat/schema"
)

// xWindow is one delivered feature record of the test's set.
type xWindow struct {
	id    string
	n     int64
	value []byte
}

// windowsOf returns the feature records delivered for set, in delivery order.
func (fr *featureReader) windowsOf(t *testing.T, set string) []xWindow {
	t.Helper()
	fr.mu.Lock()
	defer fr.mu.Unlock()
	var out []xWindow
	for _, m := range fr.msgs {
		if string(m.Key) != set {
			continue
		}
		recs, _, err := schema.DecodeFeatures(m.Value)
		if err != nil || len(recs) != 1 {
			t.Fatalf("feature record of %s: %v", set, err)
		}
		out = append(out, xWindow{id: strconv.FormatUint(recs[0].Seq, 10), n: recs[0].N, value: m.Value})
	}
	return out
}

// committedOffset reads the group's committed offset of input partition 0 (-1: none).
func committedOffset(t *testing.T, env testbroker.Env, group string) int64 {
	t.Helper()
	tr := &kafka.Transport{}
	defer tr.CloseIdleConnections()
	client := &kafka.Client{Addr: kafka.TCP(env.Brokers...), Transport: tr, Timeout: 5 * time.Second}
	resp, err := client.OffsetFetch(context.Background(), &kafka.OffsetFetchRequest{GroupID: group, Topics: map[string][]int{env.Points: {0}}})
	if err != nil {
		return -1
	}
	for _, p := range resp.Topics[env.Points] {
		if p.Partition == 0 {
			return p.CommittedOffset
		}
	}
	return -1
}

// inputEnd reads the high watermark of input partition 0.
func inputEnd(t *testing.T, env testbroker.Env) int64 {
	t.Helper()
	tr := &kafka.Transport{}
	defer tr.CloseIdleConnections()
	client := &kafka.Client{Addr: kafka.TCP(env.Brokers...), Transport: tr, Timeout: 5 * time.Second}
	resp, err := client.ListOffsets(context.Background(), &kafka.ListOffsetsRequest{
		Topics: map[string][]kafka.OffsetRequest{env.Points: {kafka.LastOffsetOf(0)}}})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range resp.Topics[env.Points] {
		if p.Partition == 0 {
			return p.LastOffset
		}
	}
	t.Fatal("no high watermark for partition 0")
	return 0
}

// TestIdleCloseSurvivesKill is issue 13 item 4's reproduction with worker processes:
// IDLE_TIMEOUT=2s; three points for set x; the window closes idle and is published; two more
// points with end: true; SIGKILL 0.3 s later; restart. Before, the restarted worker replayed
// the five points and published x/0 again with n = 5 — the same window-id with other bytes,
// two points counted twice — because the idle close was a processing-time decision that the
// replay did not repeat. Now the idle close is a marker in the input partition, so the replay
// closes x/0 at the same position. Two cases:
//   - committed: the commit passed the marker before the second batch: x/0 is published
//     exactly once with n = 3, the later window with n = 2 (possibly twice, byte-identical:
//     it was not committed before the kill);
//   - uncommitted (COMMIT_INTERVAL=1h, the replay starts at offset 0, as when the kill comes
//     before the commit): x/0 is published again, byte-identical with n = 3 — never n = 5.
//
// In both, exactly two windows of x exist and no window-id ever carries different bytes.
func TestIdleCloseSurvivesKill(t *testing.T) {
	for _, tc := range []struct {
		name           string
		commitInterval string
		waitCommit     bool
	}{
		{"committed", "1s", true},
		{"uncommitted", "1h", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			idleCloseKill(t, tc.commitInterval, tc.waitCommit)
		})
	}
}

func idleCloseKill(t *testing.T, commitInterval string, waitCommit bool) {
	env := testbroker.ForTest(t, 1)
	specPath, _ := writeSpec(t)
	fr := readFeatures(t, env)
	const group = "idle-kill"
	extra := []string{"DISTFEAT_IDLE_TIMEOUT=2s", "DISTFEAT_COMMIT_INTERVAL=" + commitInterval}
	w := startWorkerProc(t, env, specPath, group, extra...)

	produceBatches(t, env, []schema.Batch{{Set: "x", Points: []float64{0.1, 0.2, 0.3, 0.4, 0.5, 0.6}, N: 3, EventTime: 1_700_000_000_000}})
	deadline := time.Now().Add(30 * time.Second)
	for len(fr.windowsOf(t, "x")) == 0 {
		if time.Now().After(deadline) {
			t.Fatalf("x was not closed idle within 30 s (IDLE_TIMEOUT=2s):\n%s", tailLines(w.log(), 20))
		}
		time.Sleep(50 * time.Millisecond)
	}
	first := fr.windowsOf(t, "x")
	if first[0].n != 3 || first[0].id != "0" {
		t.Fatalf("idle close published x/%s with n = %d, want x/0 with n = 3", first[0].id, first[0].n)
	}
	if waitCommit {
		// The commit reaches the input's end (past the close marker) within COMMIT_INTERVAL.
		end := inputEnd(t, env)
		for committedOffset(t, env, group) < end {
			if time.Now().After(deadline) {
				t.Fatalf("the commit did not reach the input's end %d:\n%s", end, tailLines(w.log(), 20))
			}
			time.Sleep(50 * time.Millisecond)
		}
	}

	produceBatches(t, env, []schema.Batch{{Set: "x", Points: []float64{0.7, 0.8, 0.9, 0.1}, N: 2, EventTime: 1_700_000_000_001, End: true}})
	time.Sleep(300 * time.Millisecond)
	if err := w.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = w.cmd.Wait()

	startWorkerProc(t, env, specPath, group, extra...)
	deadline = time.Now().Add(60 * time.Second)
	for {
		ids := map[string]bool{}
		for _, x := range fr.windowsOf(t, "x") {
			ids[x.id] = true
		}
		if len(ids) >= 2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the later window of x was not delivered within 60 s of the restart")
		}
		time.Sleep(50 * time.Millisecond)
	}
	// The restarted worker replays from the commit at once; 4 s more (two idle timeouts)
	// lets anything it would wrongly re-decide arrive too.
	time.Sleep(4 * time.Second)

	byID := map[string][]xWindow{}
	var order, summary []string
	for _, x := range fr.windowsOf(t, "x") {
		if _, ok := byID[x.id]; !ok {
			order = append(order, x.id)
		}
		byID[x.id] = append(byID[x.id], x)
	}
	for _, id := range order {
		summary = append(summary, "x/"+id+" n="+strconv.FormatInt(byID[id][0].n, 10)+" ×"+strconv.Itoa(len(byID[id])))
	}
	t.Logf("x windows delivered: %v", summary)
	if len(order) != 2 || order[0] != "0" {
		t.Fatalf("windows of x: %v, want x/0 and one later window", summary)
	}
	x0 := byID["0"]
	if x0[0].n != 3 || (waitCommit && len(x0) != 1) {
		t.Errorf("x/0 delivered %d times, first with n = %d; want n = 3 (once when committed before the kill)", len(x0), x0[0].n)
	}
	if later := byID[order[1]]; later[0].n != 2 {
		t.Errorf("the later window x/%s has n = %d, want 2", order[1], later[0].n)
	}
	for id, ws := range byID {
		for _, x := range ws[1:] {
			if !bytes.Equal(x.value, ws[0].value) {
				t.Errorf("x/%s delivered with different bytes (n = %d and %d)", id, ws[0].n, x.n)
			}
		}
	}
}
