// Command distfeat is the distfeat binary: the streaming worker and its tools (DESIGN §7).
//
//	distfeat worker    the service (configured by DISTFEAT_* variables or mirrored flags)
//	distfeat broker    embedded Kafka-protocol broker on loopback, for development and tests
//	distfeat demo      broker + workers + synthetic producer + a check against exact kernels
//	distfeat produce   publish sets (synthetic mixtures or JSON lines)
//	distfeat embed     offline features from JSON lines (same code path as the worker)
//	distfeat tail      decode feature records to JSON lines
//	distfeat spec      print the resolved spec, spec_id and output schema
//	distfeat bench     end-to-end throughput through the embedded broker
//	distfeat healthcheck  probe a worker's /healthz or /readyz (the image has no shell)
//	distfeat version   print the build version
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
)

// command is one subcommand.
type command struct {
	name    string
	summary string
	run     func(ctx context.Context, args []string, stdout, stderr io.Writer) error
}

func commands() []command {
	return []command{
		{"worker", "run the streaming worker (DISTFEAT_* environment)", runWorker},
		{"broker", "serve an embedded Kafka-protocol broker on loopback", runBroker},
		{"demo", "broker + two workers + synthetic sets, checked against exact kernels", runDemo},
		{"produce", "publish point sets to the input topic", runProduce},
		{"embed", "compute features offline from JSON lines", runEmbed},
		{"calibrate", "propose a spec from a sample of sets, with a self-check and an HTML report", runCalibrate},
		{"tail", "print feature records as JSON lines", runTail},
		{"spec", "print the resolved spec, spec_id and output schema", runSpec},
		{"bench", "end-to-end throughput through the embedded broker", runBench},
		{"soak", "long run with worker processes, a mid-run rebalance, RSS timeline and window check", runSoak},
		{"healthcheck", "probe a worker's /healthz or /readyz (container healthcheck)", runHealthcheck},
		{"version", "print the version", runVersion},
	}
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	os.Exit(run(ctx, os.Args[1:], os.Stdout, os.Stderr))
}

// run dispatches to a subcommand and returns the process exit code.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		usage(stderr)
		if len(args) == 0 {
			return 2
		}
		return 0
	}
	for _, c := range commands() {
		if c.name == args[0] {
			err := c.run(ctx, args[1:], stdout, stderr)
			switch {
			case err == nil:
				return 0
			case errors.Is(err, errUsage):
				return 2
			default:
				fmt.Fprintf(stderr, "distfeat %s: %v\n", c.name, err)
				return 1
			}
		}
	}
	fmt.Fprintf(stderr, "distfeat: unknown command %q\n\n", args[0])
	usage(stderr)
	return 2
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "usage: distfeat <command> [flags]\n\ncommands:")
	for _, c := range commands() {
		fmt.Fprintf(w, "  %-8s %s\n", c.name, c.summary)
	}
	fmt.Fprintln(w, "\nRun 'distfeat <command> -h' for a command's flags.")
}
