package main

import (
	"context"
	"flag"
	"fmt"
	"time"

	"github.com/segmentio/kafka-go"

	"github.com/distfeat/distfeat/config"
	"github.com/distfeat/distfeat/internal/kafkaconn"
)

// envPrefix is the prefix of every distfeat environment variable.
const envPrefix = config.EnvPrefix

// parseClientFlags parses a client command's flags, with the TLS/SASL variables mirrored as
// flags, and returns how to reach the cluster (the caller sets its brokers).
func parseClientFlags(fs *flag.FlagSet, args []string) (clusterConn, error) {
	flags := config.AddFlags(fs, config.SecurityVariables())
	if err := parseArgs(fs, args); err != nil {
		return clusterConn{}, err
	}
	sec, err := config.SecurityFromEnv(flags.Over(config.Environ()))
	if err != nil {
		return clusterConn{}, err
	}
	dialer, transport, err := kafkaconn.Clients(sec)
	return clusterConn{dialer: dialer, transport: transport, user: sec.SASLUsername}, err
}

// explain names the cause of a failed request: the principal, operation and resource of an
// authorisation error, else the connection layer that fails (TCP, TLS, SASL), found by a
// probe (kafkaconn). Without a finding it returns err.
func (cc clusterConn) explain(ctx context.Context, err error, operation, resource string) error {
	if err == nil || ctx.Err() != nil {
		return err
	}
	if aerr := kafkaconn.Authorization(err, cc.user, operation, resource); aerr != nil {
		return aerr
	}
	dialer := cc.dialer
	if dialer == nil {
		dialer = &kafka.Dialer{}
	}
	pctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if perr := kafkaconn.Probe(pctx, kafkaconn.Target{Brokers: cc.brokers, Dialer: dialer, User: cc.user}); perr != nil {
		return fmt.Errorf("%w (the request failed with: %v)", perr, err)
	}
	return err
}
