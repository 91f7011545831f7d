// Package cli holds what every distfeat command line shares: the flag sets with one usage
// format, the usage errors (exit code 2), the DISTFEAT_ defaults of flags, and the progress
// line on a terminal; cmd/distfeat and its development commands (internal/devcmd) use it.
package cli

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/distfeat/distfeat/config"
)

// ErrHelp reports that -h or --help printed the usage (exit code 0).
var ErrHelp = errors.New("help requested")

// ErrUsage reports a command-line mistake already explained on stderr (exit code 2).
var ErrUsage = errors.New("usage")

// UsageError is a command-line mistake (exit code 2) with a message for stderr.
type UsageError string

func (e UsageError) Error() string { return string(e) }

// Is makes errors.Is(err, ErrUsage) true, so the dispatcher maps it to exit code 2.
func (e UsageError) Is(target error) bool { return target == ErrUsage }

// NewFlagSet returns a command's flag set with distfeat's one usage format: a usage line, the
// command's one-line summary, an optional description, then the flags with typed
// placeholders (`host:port`, `json|arrow`, duration) and defaults. operands is the usage
// line's text after [flags] ("" for a command that takes none).
func NewFlagSet(name, summary, operands, description string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		line := "usage: distfeat " + name + " [flags]"
		if operands != "" {
			line += " " + operands
		}
		fmt.Fprintf(stderr, "%s\n\n%s\n\n", line, summary)
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

// ParseArgs parses args with fs and refuses positional arguments, which no command built on
// it takes: a stray argument (distfeat produce points.json) must not be silently ignored.
func ParseArgs(fs *flag.FlagSet, args []string) error {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return ErrHelp
		}
		return ErrUsage // the flag package has printed the problem and the usage
	}
	if fs.NArg() > 0 {
		return UsageError(fmt.Sprintf("unexpected argument %q: %s takes flags only (see distfeat %s -h)", fs.Arg(0), fs.Name(), fs.Name()))
	}
	return nil
}

// EnvOr returns DISTFEAT_<name> or def: a flag's default from the environment.
func EnvOr(name, def string) string {
	if v, ok := os.LookupEnv(config.EnvPrefix + name); ok {
		return v
	}
	return def
}
