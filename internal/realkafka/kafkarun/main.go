// Command kafkarun starts a real Apache Kafka single node on loopback (internal/realkafka:
// the pinned release fetched with Maven on first use; PLAINTEXT, SASL_PLAINTEXT, SSL and
// SASL_SSL listeners, SCRAM and PLAIN users, ACLs), runs a command with the environment
// that points distfeat's tests at it, and stops the node by its PID when the command ends.
//
//	go run ./internal/realkafka/kafkarun -- go test -tags dev -run TestX ./consumer/
//	go run ./internal/realkafka/kafkarun -fetch        # only fetch the jars (CI's pre-fetch)
//	go run ./internal/realkafka/kafkarun -nodes 3 -- sh   # a three-node cluster, a shell
//	go run ./internal/realkafka/kafkarun -topics a,b -- CMD   # with topics a and b (one partition)
//
// Without Java or with a failed fetch it exits 3 with the reason (the Makefile then skips,
// or fails under CI=true).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/distfeat/distfeat/internal/realkafka"
)

func main() {
	os.Exit(run())
}

func run() int {
	fetchOnly := flag.Bool("fetch", false, "only fetch the Kafka jars into the cache and print their directory")
	nodes := flag.Int("nodes", 1, "number of KRaft nodes (the secured listeners only with 1)")
	keep := flag.String("dir", "", "directory for the nodes' configuration, data and logs (default: a temporary one, removed at exit)")
	topics := flag.String("topics", "", "comma-separated topics of one partition to create before running the command (scripts/kcat-ratio.sh -k)")
	flag.Parse()

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	t0 := time.Now()
	fctx, cancel := context.WithTimeout(ctx, 10*time.Minute)
	lib, err := realkafka.Fetch(fctx)
	cancel()
	if err != nil {
		fmt.Fprintf(os.Stderr, "kafkarun: %v\n", err)
		if errors.Is(err, realkafka.ErrUnavailable) {
			return 3
		}
		return 1
	}
	if *fetchOnly {
		fmt.Printf("kafkarun: Kafka %s in %s (%.1fs)\n", realkafka.Version, lib, time.Since(t0).Seconds())
		return 0
	}
	if flag.NArg() == 0 {
		fmt.Fprintln(os.Stderr, "kafkarun: no command (kafkarun -- CMD ARGS…)")
		return 2
	}
	dir := *keep
	if dir == "" {
		d, err := os.MkdirTemp("", "distfeat-kafka-")
		if err != nil {
			fmt.Fprintf(os.Stderr, "kafkarun: %v\n", err)
			return 1
		}
		defer os.RemoveAll(d)
		dir = d
	}
	t1 := time.Now()
	sctx, cancel := context.WithTimeout(ctx, 3*time.Minute)
	c, err := realkafka.Start(sctx, lib, realkafka.Options{Nodes: *nodes, Secure: *nodes == 1, Dir: dir})
	cancel()
	if err != nil {
		fmt.Fprintf(os.Stderr, "kafkarun: %v\n", err)
		return 1
	}
	defer c.Close()
	if *topics != "" {
		tctx, cancel := context.WithTimeout(ctx, time.Minute)
		err := c.CreateTopics(tctx, 1, strings.Split(*topics, ",")...)
		cancel()
		if err != nil {
			fmt.Fprintf(os.Stderr, "kafkarun: %v\n", err)
			return 1
		}
	}
	var rss int64
	for _, n := range c.Nodes {
		rss += n.RSS()
	}
	fmt.Fprintf(os.Stderr, "kafkarun: Kafka %s, %d node(s) ready in %.1fs (RSS %d MiB), bootstrap %v\n",
		realkafka.Version, len(c.Nodes), time.Since(t1).Seconds(), rss>>20, c.Bootstrap())

	cmd := exec.CommandContext(ctx, flag.Arg(0), flag.Args()[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	cmd.Env = append(os.Environ(), c.Env()...)
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
	cmd.WaitDelay = 30 * time.Second
	err = cmd.Run()
	var exit *exec.ExitError
	switch {
	case errors.As(err, &exit):
		return exit.ExitCode()
	case err != nil:
		fmt.Fprintf(os.Stderr, "kafkarun: %v\n", err)
		return 1
	}
	return 0
}
