package testbroker

import (
	"context"
	"fmt"
	"time"

	"github.com/segmentio/kafka-go"
)

// WaitGroupMembers waits until the consumer group is Stable with n members that all have
// partitions assigned, or ctx ends.
func WaitGroupMembers(ctx context.Context, brokers []string, group string, n int) error {
	client := &kafka.Client{Addr: kafka.TCP(brokers...), Timeout: 5 * time.Second}
	var last string
	for {
		resp, err := client.DescribeGroups(ctx, &kafka.DescribeGroupsRequest{GroupIDs: []string{group}})
		switch {
		case err != nil:
			last = err.Error()
		case len(resp.Groups) != 1:
			last = fmt.Sprintf("%d groups described", len(resp.Groups))
		default:
			g := resp.Groups[0]
			assigned := 0
			for _, m := range g.Members {
				for _, tp := range m.MemberAssignments.Topics {
					if len(tp.Partitions) > 0 {
						assigned++
						break
					}
				}
			}
			if g.GroupState == "Stable" && len(g.Members) == n && assigned == n {
				return nil
			}
			last = fmt.Sprintf("state %s, %d members, %d with partitions", g.GroupState, len(g.Members), assigned)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("group %s never had %d members with partitions (last: %s): %w", group, n, last, ctx.Err())
		case <-time.After(50 * time.Millisecond):
		}
	}
}
