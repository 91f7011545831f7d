package main

import (
	"context"
	"fmt"
	"io"

	"github.com/distfeat/distfeat/cmd/distfeat/internal/cli"
	"github.com/distfeat/distfeat/config"
	"github.com/distfeat/distfeat/internal/buildinfo"
	"github.com/distfeat/distfeat/service"
)

func runWorker(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("worker", "", "Every flag mirrors a DISTFEAT_ variable (--window-size for DISTFEAT_WINDOW_SIZE);\nflags win over the environment. Unknown DISTFEAT_ variables are start-up errors.", stderr)
	flags := config.AddFlags(fs, config.Variables())
	if err := cli.ParseArgs(fs, args); err != nil {
		return err
	}
	cfg, err := config.FromEnv(flags.Over(config.Environ()))
	if err != nil {
		return err
	}
	log := service.NewLogger(stderr, cfg.LogLevel, cfg.LogFormat)
	return service.Serve(ctx, cfg, log, nil)
}

func runVersion(_ context.Context, args []string, stdout, stderr io.Writer) error {
	if err := cli.ParseArgs(newFlagSet("version", "", "", stderr), args); err != nil {
		return err
	}
	fmt.Fprintln(stdout, "distfeat", buildinfo.String())
	return nil
}
