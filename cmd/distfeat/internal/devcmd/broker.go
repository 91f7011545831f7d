//go:build dev

package devcmd

import (
	"context"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net"
	"os"
	"strings"
	"syscall"

	"github.com/distfeat/distfeat/cmd/distfeat/internal/cli"
	"github.com/distfeat/distfeat/internal/testbroker"
	"github.com/distfeat/distfeat/service"
)

func runBroker(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("broker", "", "For development and tests only: a single in-process kfake broker, not a Kafka cluster.", stderr)
	addr := fs.String("addr", "127.0.0.1:9092", "listen `host:port`; loopback only unless --allow-remote")
	allowRemote := fs.Bool("allow-remote", false, "allow a non-loopback --addr (a development broker: in memory, and open to anyone without --user)")
	partitions := fs.Int("partitions", 8, "partitions per topic")
	topics := fs.String("topics", "points,features,points.dlq,features.predictions,models", "topics to create, comma-separated (`topic,...`): by default the worker's input, output, dead letters, predictions and a models topic")
	dataDir := fs.String("data-dir", "", "persist the broker's log in this `dir` and reload it on restart (empty: in memory)")
	logLevel := fs.String("log-level", "warn", "broker log level (`debug|info|warn|error`)")
	var auth brokerAuth
	fs.Var(userFlag{&auth.users, false}, "user", "require SASL and accept this user (`mechanism:name:password`, mechanism plain, scram-sha-256 or scram-sha-512; repeatable)")
	fs.Var(userFlag{&auth.users, true}, "superuser", "like --user, but the user bypasses ACLs (`mechanism:name:password`; repeatable)")
	fs.Var(grantFlag{&auth.grants}, "grant", "with --acls, allow a --user an operation (`user:operation:topic|group:name`, e.g. worker:read:topic:points; repeatable)")
	fs.BoolVar(&auth.acls, "acls", false, "check every request against ACLs: --user users may do only what --grant allows")
	fs.BoolVar(&auth.tls, "tls", false, "listen with TLS, with a certificate generated for --addr's host unless --tls-cert is given")
	fs.StringVar(&auth.certFile, "tls-cert", "", "PEM server certificate `file` (with --tls-key)")
	fs.StringVar(&auth.keyFile, "tls-key", "", "PEM server key `file` (with --tls-cert)")
	fs.StringVar(&auth.caOut, "tls-ca-out", "ca.pem", "with a generated certificate, write its CA (what clients trust: DISTFEAT_TLS_CA_FILE) to this `file`")
	if err := cli.ParseArgs(fs, args); err != nil {
		return err
	}
	if err := checkBrokerAddr(*addr, *allowRemote); err != nil {
		return err
	}
	if err := checkDataDir(*dataDir); err != nil {
		return err
	}
	log := service.NewLogger(stderr, *logLevel, "text")
	opts := testbroker.Options{
		Addr: *addr, Partitions: *partitions, Topics: strings.Split(*topics, ","),
		DataDir: *dataDir, Logger: log,
	}
	if err := auth.apply(&opts); err != nil {
		return err
	}
	b, err := testbroker.Start(ctx, opts)
	if err != nil {
		if *dataDir != "" {
			return fmt.Errorf("--addr %s, --data-dir %s: %w", *addr, *dataDir, err)
		}
		return fmt.Errorf("--addr %s: %w", *addr, err)
	}
	defer b.Close()
	fmt.Fprintf(stdout, "distfeat broker: Kafka protocol on %s (topics %s, %d partitions)%s; Ctrl-C to stop\n",
		strings.Join(b.Addrs(), ","), *topics, *partitions, auth.describe())
	log.Info("broker ready", slog.Any("addrs", b.Addrs()))
	<-ctx.Done()
	return nil
}

// checkBrokerAddr refuses a listen address beyond loopback (an empty or unspecified host such
// as :9092 or 0.0.0.0:9092 listens on every interface) unless allowRemote: the embedded broker
// is for development: in memory, and without --user open to anyone.
func checkBrokerAddr(addr string, allowRemote bool) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return cli.UsageError(fmt.Sprintf("--addr %q: %v", addr, err))
	}
	if allowRemote || host == "localhost" {
		return nil
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsLoopback() {
		return nil
	}
	where := "a non-loopback address"
	if ip := net.ParseIP(host); host == "" || (ip != nil && ip.IsUnspecified()) {
		where = "every interface"
	}
	return cli.UsageError(fmt.Sprintf("--addr %q listens on %s; the embedded broker is for development (in memory, no authentication without --user), so it serves loopback only (127.0.0.1:PORT) unless you pass --allow-remote", addr, where))
}

// checkDataDir checks --data-dir before the broker starts: it must be a directory the process
// can write (one that does not exist yet is created, with its parents), never a file or a
// device. The broker (kfake) writes its files inside it with its own temporary-file-and-rename
// and removes the *.tmp files an interrupted run left when it reloads.
func checkDataDir(dir string) error {
	if dir == "" {
		return nil
	}
	if fi, err := os.Stat(dir); err == nil && !fi.IsDir() {
		what := "a file"
		switch m := fi.Mode(); {
		case m&fs.ModeDevice != 0:
			what = "a device"
		case m&fs.ModeNamedPipe != 0:
			what = "a FIFO"
		case m&fs.ModeSocket != 0:
			what = "a socket"
		}
		return fmt.Errorf("--data-dir %s: is %s, not a directory", dir, what)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("--data-dir %s: %w", dir, err)
	}
	if err := syscall.Access(dir, 2|1 /* W_OK|X_OK */); err != nil {
		return fmt.Errorf("--data-dir %s: not writable: %w", dir, err)
	}
	return nil
}
