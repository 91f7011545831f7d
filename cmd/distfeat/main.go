// Command distfeat is the distfeat binary: the streaming worker and its tools (README.md).
//
//	distfeat worker    the service (configured by DISTFEAT_* variables or mirrored flags)
//	distfeat produce   publish sets (synthetic mixtures or JSON lines), or write them to a file
//	distfeat embed     offline features from JSON lines (same code path as the worker)
//	distfeat tail      decode feature records to JSON lines
//	distfeat spec      print the resolved spec, spec_id and output schema
//	distfeat healthcheck  probe a worker's /healthz or /readyz (the image has no shell)
//	distfeat version   print the build version
//
// Built with -tags dev (make build), it also has the development commands, which embed the
// kfake test broker and so are left out of the production image (deploy/Dockerfile):
//
//	distfeat broker    embedded Kafka-protocol broker on loopback, for development and tests
//	distfeat demo      broker + workers + synthetic producer + a check against exact kernels
//	distfeat bench     end-to-end throughput through the embedded broker
//	distfeat soak      long run with worker processes, a rebalance and a memory timeline
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/distfeat/distfeat/cmd/distfeat/internal/cli"
	"github.com/distfeat/distfeat/config"
	"github.com/distfeat/distfeat/internal/startheap"
)

// command is one subcommand.
type command struct {
	name    string
	summary string
	run     func(ctx context.Context, args []string, stdout, stderr io.Writer) error
}

// commands are the production commands followed by the development ones (-tags dev).
func commands() []command {
	return append([]command{
		{"worker", "run the streaming worker (DISTFEAT_* environment)", runWorker},
		{"produce", "publish point sets to the input topic", runProduce},
		{"embed", "compute features offline from JSON lines", runEmbed},
		{"fit", "fit a model (ridge regression or classifier) on labelled sets' features", runFit},
		{"calibrate", "propose a spec from a sample of sets, with a self-check and an HTML report", runCalibrate},
		{"tail", "print a worker output topic (features, per-point, predictions) as JSON lines", runTail},
		{"spec", "print the resolved spec, spec_id and output schema", runSpec},
		{"healthcheck", "probe a worker's /healthz or /readyz (container healthcheck)", runHealthcheck},
		{"version", "print the version", runVersion},
	}, devCommands()...)
}

// isDevCommand reports whether name is a development command (present only with -tags dev).
func isDevCommand(name string) bool {
	switch name {
	case "broker", "demo", "bench", "soak":
		return true
	}
	return false
}

// startHeap is the heap the process grows to before its first garbage collection
// (internal/startheap): a spec's compile and the first records without four or five
// collections on a tiny heap; then the usual GOGC=100.
const startHeap = 64 << 20

func main() {
	startheap.Defer(startHeap)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	// The first SIGINT/SIGTERM cancels ctx, which every command watches (reads included:
	// openInput); a second one kills the process at once, whatever it is waiting for. A
	// tool that has not stopped signalGrace after the first (blocked in a system call
	// nothing can interrupt, such as opening a FIFO --spec without a writer) exits 1; the
	// worker and the development commands bound their own shutdown.
	context.AfterFunc(ctx, func() {
		stop()
		if len(os.Args) > 1 && !ownsShutdown(os.Args[1]) {
			time.AfterFunc(signalGrace, func() {
				fmt.Fprintf(os.Stderr, "distfeat %s: interrupted, and not stopped %s later: exiting\n", os.Args[1], signalGrace)
				os.Exit(1)
			})
		}
	})
	os.Exit(run(ctx, os.Args[1:], os.Stdout, os.Stderr))
}

// signalGrace is how long a tool has to stop after SIGINT/SIGTERM before it is ended.
const signalGrace = 10 * time.Second

// ownsShutdown reports whether the command bounds its own shutdown after a signal (the
// worker: DISTFEAT_SHUTDOWN_TIMEOUT; the development commands stop their children).
func ownsShutdown(name string) bool {
	return name == "worker" || isDevCommand(name)
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
			if err := config.CheckEnvironment(os.Environ()); err != nil && !isHelp(args[1:]) {
				fmt.Fprintf(stderr, "distfeat %s: %v\n", c.name, err)
				return 2
			}
			err := c.run(ctx, args[1:], stdout, stderr)
			switch {
			case err == nil, errors.Is(err, cli.ErrHelp):
				return 0
			case errors.Is(err, cli.ErrUsage):
				if err != cli.ErrUsage {
					fmt.Fprintf(stderr, "distfeat %s: %v\n", c.name, err)
				}
				return 2
			default:
				fmt.Fprintf(stderr, "distfeat %s: %v\n", c.name, err)
				return 1
			}
		}
	}
	if isDevCommand(args[0]) {
		fmt.Fprintf(stderr, "distfeat: %q is a development command, not in this production build; build with -tags dev (make build)\n", args[0])
		return 2
	}
	fmt.Fprintf(stderr, "distfeat: unknown command %q\n\n", args[0])
	usage(stderr)
	return 2
}

// isHelp reports whether args ask for a command's help (which works even with a bad
// environment, so the user can read what the variables are called).
func isHelp(args []string) bool {
	return len(args) > 0 && (args[0] == "-h" || args[0] == "-help" || args[0] == "--help")
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "usage: distfeat <command> [flags]\n\ncommands:")
	for _, c := range commands() {
		fmt.Fprintf(w, "  %-11s %s\n", c.name, c.summary)
	}
	fmt.Fprintln(w, "\nRun 'distfeat <command> -h' for a command's flags.")
}
