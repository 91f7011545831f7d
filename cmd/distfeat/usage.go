package main

import (
	"flag"
	"io"

	"github.com/distfeat/distfeat/cmd/distfeat/internal/cli"
)

// newFlagSet returns a command's flag set with distfeat's one usage format (cli.NewFlagSet)
// and the command's one-line summary from commands(). operands is the usage line's text
// after [flags] ("" for a command that takes none).
func newFlagSet(name, operands, description string, stderr io.Writer) *flag.FlagSet {
	return cli.NewFlagSet(name, commandSummary(name), operands, description, stderr)
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
