//go:build !dev

package main

// devCommands is empty in the production build: broker, demo, bench and soak embed the kfake
// test broker and exist only with -tags dev (make build).
func devCommands() []command { return nil }
