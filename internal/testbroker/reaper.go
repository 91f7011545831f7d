package testbroker

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/segmentio/kafka-go"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// reaper enforces classic consumer-group session timeouts that kfake can miss.
//
// kfake (re)arms a member's session timer in (*group).reply only when a JoinGroup or
// SyncGroup response is handed to the member's connection. When the member died while
// waiting in JoinGroup (a worker SIGKILLed mid-rebalance), that hand-off fails about half the
// time, the member has no timer, and the only other guard — the pending-sync timer — is
// stopped by completeLeaderSync as soon as the leader syncs. The dead member then owns its
// partitions in a Stable group forever (issue 9 item 2; TestDeadJoinedMemberIsExpired). No
// newer kfake exists in the module proxy (the pinned pseudo-version is @latest).
//
// The reaper observes (without handling) every JoinGroup, SyncGroup, Heartbeat and
// OffsetCommit, remembering when each member last spoke and each group's session timeout;
// every sweep it describes the groups it knows, and in a Stable group removes, with a
// LeaveGroup on the member's behalf, any member silent for longer than the session timeout.
// A Stable group's live members heartbeat well within it, so only dead members are removed;
// groups that are rebalancing are left to kfake's own join and sync deadlines.
type reaper struct {
	client  *kafka.Client
	tr      *kafka.Transport
	log     *slog.Logger
	mu      sync.Mutex
	seen    map[string]map[string]time.Time // group → member → last request
	timeout map[string]time.Duration        // group → largest session timeout joined with
	stop    context.CancelFunc
	done    chan struct{}
}

// reapEvery is the sweep period.
const reapEvery = 100 * time.Millisecond

// startReaper installs the observers on c and starts sweeping; stop it with close.
func startReaper(c *kfake.Cluster, addrs []string, tr *kafka.Transport, log *slog.Logger) *reaper {
	r := &reaper{
		client:  &kafka.Client{Addr: kafka.TCP(addrs...), Transport: tr, Timeout: 2 * time.Second},
		tr:      tr,
		log:     log,
		seen:    make(map[string]map[string]time.Time),
		timeout: make(map[string]time.Duration),
		done:    make(chan struct{}),
	}
	observe := func(req kmsg.Request) (kmsg.Response, error, bool) {
		r.observe(req)
		return nil, nil, false // observe only: kfake handles the request
	}
	for _, k := range []kmsg.Key{kmsg.JoinGroup, kmsg.SyncGroup, kmsg.Heartbeat, kmsg.OffsetCommit} {
		c.ControlKey(k.Int16(), observe)
	}
	ctx, cancel := context.WithCancel(context.Background())
	r.stop = cancel
	go r.run(ctx)
	return r
}

// observe records that a member spoke.
func (r *reaper) observe(req kmsg.Request) {
	var group, member string
	switch q := req.(type) {
	case *kmsg.JoinGroupRequest:
		group, member = q.Group, q.MemberID
		r.mu.Lock()
		r.timeout[group] = max(r.timeout[group], time.Duration(q.SessionTimeoutMillis)*time.Millisecond)
		r.mu.Unlock()
	case *kmsg.SyncGroupRequest:
		group, member = q.Group, q.MemberID
	case *kmsg.HeartbeatRequest:
		group, member = q.Group, q.MemberID
	case *kmsg.OffsetCommitRequest:
		group, member = q.Group, q.MemberID
	}
	if group == "" || member == "" {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.seen[group] == nil {
		r.seen[group] = make(map[string]time.Time)
	}
	r.seen[group][member] = time.Now()
}

func (r *reaper) run(ctx context.Context) {
	defer close(r.done)
	t := time.NewTicker(reapEvery)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			r.sweep(ctx)
		}
	}
}

// sweep expires the silent members of every known Stable group.
func (r *reaper) sweep(ctx context.Context) {
	r.mu.Lock()
	groups := make([]string, 0, len(r.timeout))
	for g := range r.timeout {
		groups = append(groups, g)
	}
	r.mu.Unlock()
	if len(groups) == 0 {
		return
	}
	desc, err := r.client.DescribeGroups(ctx, &kafka.DescribeGroupsRequest{GroupIDs: groups})
	if err != nil {
		return // the broker is closing, or busy: next sweep
	}
	now := time.Now()
	for _, g := range desc.Groups {
		for _, id := range r.silent(g, now) {
			_, err := r.client.LeaveGroup(ctx, &kafka.LeaveGroupRequest{GroupID: g.GroupID, Members: []kafka.LeaveGroupRequestMember{{ID: id}}})
			if r.log != nil {
				r.log.Warn("testbroker: removed a group member that stopped heartbeating (kfake armed no session timer for it)",
					"group", g.GroupID, "member", id, "err", err)
			}
		}
	}
}

// silent updates what is known of group g's members and returns those silent for longer
// than the session timeout (none unless g is Stable).
func (r *reaper) silent(g kafka.DescribeGroupsResponseGroup, now time.Time) []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	seen := r.seen[g.GroupID]
	if seen == nil {
		seen = make(map[string]time.Time)
		r.seen[g.GroupID] = seen
	}
	listed := make(map[string]bool, len(g.Members))
	var out []string
	for _, m := range g.Members {
		listed[m.MemberID] = true
		last, ok := seen[m.MemberID]
		if !ok {
			seen[m.MemberID] = now // first seen in a description: its session starts now
			continue
		}
		if g.GroupState == "Stable" && now.Sub(last) > r.timeout[g.GroupID] {
			out = append(out, m.MemberID)
			delete(seen, m.MemberID)
		}
	}
	for id := range seen {
		if !listed[id] {
			delete(seen, id)
		}
	}
	return out
}

// close stops the sweeps.
func (r *reaper) close() {
	r.stop()
	<-r.done
	r.tr.CloseIdleConnections()
}
