package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
)

// errHelp reports that -h or --help printed the usage (exit code 0).
var errHelp = errors.New("help requested")

// usageError is a command-line mistake (exit code 2) with a message for stderr.
type usageError string

func (e usageError) Error() string { return string(e) }

// Is makes errors.Is(err, errUsage) true, so run maps it to exit code 2.
func (e usageError) Is(target error) bool { return target == errUsage }

// newFlagSet returns a command's flag set with distfeat's one usage format: a usage line, the
// command's one-line summary (from commands()), an optional description, then the flags with
// typed placeholders (`host:port`, `json|arrow`, duration) and defaults. operands is the
// usage line's text after [flags] ("" for a command that takes none).
func newFlagSet(name, operands, description string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		line := "usage: distfeat " + name + " [flags]"
		if operands != "" {
			line += " " + operands
		}
		fmt.Fprintf(stderr, "%s\n\n%s\n\n", line, commandSummary(name))
		if description != "" {
			fmt.Fprintf(stderr, "%s\n\n", description)
		}
		n := 0
		fs.VisitAll(func(*flag.Flag) { n++ })
		if n == 0 {
			fmt.Fprintln(stderr, "flags: none")
			return
		}
		fmt.Fprintln(stderr, "flags:")
		fs.PrintDefaults()
	}
	return fs
}

// commandSummary is the one-line summary of the named command.
func commandSummary(name string) string {
	for _, c := range commands() {
		if c.name == name {
			return c.summary
		}
	}
	return ""
}

// parseArgs parses args with fs and refuses positional arguments, which no command built on
// it takes: a stray argument (distfeat produce points.json) must not be silently ignored.
func parseArgs(fs *flag.FlagSet, args []string) error {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return errHelp
		}
		return errUsage // the flag package has printed the problem and the usage
	}
	if fs.NArg() > 0 {
		return usageError(fmt.Sprintf("unexpected argument %q: %s takes flags only (see distfeat %s -h)", fs.Arg(0), fs.Name(), fs.Name()))
	}
	return nil
}
