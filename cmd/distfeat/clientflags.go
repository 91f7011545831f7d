package main

import (
	"flag"

	"github.com/distfeat/distfeat/config"
	"github.com/distfeat/distfeat/kafkaio"
)

// envPrefix is the prefix of every distfeat environment variable.
const envPrefix = config.EnvPrefix

// parseClientFlags parses a client command's flags, with the TLS/SASL variables mirrored as
// flags, and returns how to reach the cluster (the caller sets its brokers).
func parseClientFlags(fs *flag.FlagSet, args []string) (kafkaio.Cluster, error) {
	flags := config.AddFlags(fs, config.SecurityVariables())
	if err := parseArgs(fs, args); err != nil {
		return kafkaio.Cluster{}, err
	}
	sec, err := config.SecurityFromEnv(flags.Over(config.Environ()))
	if err != nil {
		return kafkaio.Cluster{}, err
	}
	return kafkaio.NewCluster(sec)
}
