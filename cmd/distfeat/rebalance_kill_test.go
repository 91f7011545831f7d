package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/segmentio/kafka-go"

	"github.com/distfeat/distfeat/internal/testbroker"
)

// TestMembersKilledDuringRebalance is issue 9 item 2's reproduction, repeated: worker A
// stays up; each round starts worker B and SIGKILLs it ~3 s later, starts worker C at once
// and SIGKILLs it 1–2.5 s later, with records produced throughout. The session timeout is 6 s,
// so C's JoinGroup waits for the dead B to expire and C dies while joining. Such a member
// used to keep its partitions forever on the embedded broker about half the time (kfake
// arms no session timer for it; the testbroker reaper now expires it), so the sets on them
// were never embedded. After each round the group must settle on A alone (within the test's
// deadline), and at the end every set must be delivered with all its points, duplicates
// byte-identical.
func TestMembersKilledDuringRebalance(t *testing.T) {
	const rounds = 3
	env := testbroker.ForTest(t, 8)
	specPath, _ := writeSpec(t)
	fr := readFeatures(t, env)
	const group = "rebalance-kill"
	const session = "DISTFEAT_SESSION_TIMEOUT=6s" // overrides startWorkerProc's 1500ms (the last value wins)
	startWorkerProc(t, env, specPath, group, session)
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Second)
	defer cancel()
	if err := testbroker.WaitGroupMembers(ctx, env.Brokers, group, 1); err != nil {
		t.Fatal(err)
	}

	sets := uniformSets(33, "rk", 160, 200)
	records := interleavedRecords(sets, 50) // 4 records per set, interleaved
	chunk := (len(records) + 2*rounds) / (2*rounds + 1)
	next := 0
	produce := func() {
		end := min(next+chunk, len(records))
		produceBatches(t, env, records[next:end])
		next = end
	}
	rng := rand.New(rand.NewPCG(9, 9))
	kill := func(p *workerProc, name string) {
		if err := p.cmd.Process.Kill(); err != nil {
			t.Fatalf("kill %s: %v", name, err)
		}
		_ = p.cmd.Wait()
	}
	for r := range rounds {
		b := startWorkerProc(t, env, specPath, group, session)
		produce()
		time.Sleep(3 * time.Second)
		kill(b, fmt.Sprintf("B%d", r))
		c := startWorkerProc(t, env, specPath, group, session)
		produce()
		// Kill C once it has joined (A, the not yet expired B and C are listed), while the
		// rebalance still waits for B.
		waitListed(ctx, t, env.Brokers, group, 3)
		time.Sleep(time.Duration(rng.IntN(500)) * time.Millisecond)
		kill(c, fmt.Sprintf("C%d", r))
		// Each round must end with the group back to A alone: a new member's join would
		// otherwise sweep a stuck C away in the next rebalance and hide the defect.
		if err := testbroker.WaitGroupMembers(ctx, env.Brokers, group, 1); err != nil {
			t.Fatalf("round %d: the group never settled on the surviving worker: %v", r, err)
		}
	}
	for next < len(records) {
		produce()
	}
	if err := testbroker.WaitGroupMembers(ctx, env.Brokers, group, 1); err != nil {
		t.Fatalf("the group never settled on the surviving worker: %v", err)
	}
	fr.waitWindows(t, len(sets), 60*time.Second)
	time.Sleep(300 * time.Millisecond) // late duplicates are compared too
	got, dups := fr.windows(t)
	t.Logf("%d rounds of kills: %d windows delivered, %d duplicate deliveries (all byte-identical)", rounds, len(got), dups)
	checkDelivered(t, nil, sets, got)
}

// waitListed waits until DescribeGroups lists at least n members of group, in any state.
func waitListed(ctx context.Context, t *testing.T, brokers []string, group string, n int) {
	t.Helper()
	tr := &kafka.Transport{}
	defer tr.CloseIdleConnections()
	cl := &kafka.Client{Addr: kafka.TCP(brokers...), Transport: tr, Timeout: 5 * time.Second}
	for {
		resp, err := cl.DescribeGroups(ctx, &kafka.DescribeGroupsRequest{GroupIDs: []string{group}})
		if err == nil && len(resp.Groups) == 1 && len(resp.Groups[0].Members) >= n {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("group %s never listed %d members: %v", group, n, ctx.Err())
		case <-time.After(20 * time.Millisecond):
		}
	}
}
