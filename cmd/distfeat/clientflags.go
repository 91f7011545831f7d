package main

import (
	"flag"

	"github.com/distfeat/distfeat/cmd/distfeat/internal/cli"
	"github.com/distfeat/distfeat/config"
	"github.com/distfeat/distfeat/kafkaio"
)

// parseClientFlags parses a client command's flags, with the TLS/SASL variables mirrored as
// flags, and returns how to reach the cluster (the caller sets its brokers).
func parseClientFlags(fs *flag.FlagSet, args []string) (kafkaio.Cluster, error) {
	flags := config.AddFlags(fs, config.SecurityVariables())
	if err := cli.ParseArgs(fs, args); err != nil {
		return kafkaio.Cluster{}, err
	}
	sec, err := config.SecurityFromEnv(flags.Over(config.Environ()))
	if err != nil {
		return kafkaio.Cluster{}, err
	}
	return kafkaio.NewCluster(sec)
}
