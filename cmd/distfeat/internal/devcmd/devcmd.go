//go:build dev

// Package devcmd holds distfeat's development commands — broker, demo, bench and soak —
// built only with -tags dev (make build): they embed the kfake test broker, which the
// production image must not ship. cmd/distfeat registers them from its dev-tagged
// commands_dev.go; with the test brokers they are the only code outside kafkaio and
// consumer that imports kafka-go.
package devcmd

import (
	"context"
	"flag"
	"io"

	"github.com/distfeat/distfeat/cmd/distfeat/internal/cli"
	"github.com/distfeat/distfeat/internal/testbroker"
	"github.com/distfeat/distfeat/kafkaio"
	"github.com/distfeat/distfeat/schema"
)

// Command is one development command.
type Command struct {
	Name    string
	Summary string
	Run     func(ctx context.Context, args []string, stdout, stderr io.Writer) error
}

// Commands are the development commands, in the order of distfeat's usage.
func Commands() []Command {
	return []Command{
		{"broker", "serve an embedded Kafka-protocol broker on loopback (development)", runBroker},
		{"demo", "broker + two workers + synthetic sets, checked against exact kernels", runDemo},
		{"bench", "end-to-end throughput through the embedded broker", runBench},
		{"soak", "long run with worker processes, a mid-run rebalance, RSS timeline and window check", runSoak},
	}
}

// newFlagSet is cli.NewFlagSet with the command's summary from Commands.
func newFlagSet(name, operands, description string, stderr io.Writer) *flag.FlagSet {
	summary := ""
	for _, c := range Commands() {
		if c.Name == name {
			summary = c.Summary
		}
	}
	return cli.NewFlagSet(name, summary, operands, description, stderr)
}

// publish writes batches to the embedded broker's points topic in records of at most chunk
// points (kafkaio.Publish), as `distfeat produce` does.
func publish(ctx context.Context, brokers []string, format string, dim, chunk int, batches []schema.Batch, prog *cli.Progress) (records, points int, err error) {
	records, points, err = kafkaio.Publish(ctx, kafkaio.PlainCluster(brokers), testbroker.TopicPoints, format, dim, chunk, batches,
		func(sets, points int) { prog.Update("%d/%d sets, %d points", sets, len(batches), points) })
	prog.Done()
	return records, points, err
}
