//go:build dev

package main

import "github.com/distfeat/distfeat/cmd/distfeat/internal/devcmd"

// devCommands are the development commands (internal/devcmd), built only with -tags dev
// (make build): they embed the kfake test broker, which the production image must not ship.
func devCommands() []command {
	var cmds []command
	for _, c := range devcmd.Commands() {
		cmds = append(cmds, command{name: c.Name, summary: c.Summary, run: c.Run})
	}
	return cmds
}
