package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"time"

	"github.com/distfeat/distfeat/cmd/distfeat/internal/cli"
)

// runHealthcheck probes a worker's /healthz (or /readyz with --ready) and exits 0 when it
// answers 200. The container image has no shell or curl, so this is its healthcheck.
func runHealthcheck(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("healthcheck", "", "Exits 0 when the worker answers 200; the image has no shell or curl.", stderr)
	addr := fs.String("addr", cli.EnvOr("METRICS_ADDR", ":9464"), "the worker's metrics address (DISTFEAT_METRICS_ADDR; `host:port`)")
	ready := fs.Bool("ready", false, "probe /readyz (member of a consumer-group generation) instead of /healthz")
	timeout := fs.Duration("timeout", 2*time.Second, "give up after this long")
	if err := cli.ParseArgs(fs, args); err != nil {
		return err
	}
	if *timeout <= 0 {
		return cli.UsageError(fmt.Sprintf("--timeout %s: must be positive", *timeout))
	}
	host, port, err := net.SplitHostPort(*addr)
	if err != nil {
		return fmt.Errorf("--addr %q: %w", *addr, err)
	}
	if host == "" || host == "0.0.0.0" || host == "::" {
		host = "127.0.0.1"
	}
	path := "/healthz"
	if *ready {
		path = "/readyz"
	}
	url := "http://" + net.JoinHostPort(host, port) + path
	ctx, cancel := context.WithTimeout(ctx, *timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	var op *net.OpError
	switch {
	case errors.As(err, &op) && op.Op == "dial":
		return fmt.Errorf("%s: TCP failure: nothing accepts connections there (is the worker running, and is --addr its DISTFEAT_METRICS_ADDR?): %w", url, err)
	case errors.Is(err, context.DeadlineExceeded):
		return fmt.Errorf("%s: no answer within --timeout %s (the worker is stuck or the address is filtered): %w", url, *timeout, err)
	case err != nil:
		return fmt.Errorf("%s: %w", url, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		return fmt.Errorf("%s: %s: %s", url, resp.Status, body)
	}
	fmt.Fprintf(stdout, "%s: ok\n", url)
	return nil
}
