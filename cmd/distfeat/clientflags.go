package main

import (
	"flag"

	"github.com/segmentio/kafka-go"

	"github.com/distfeat/distfeat/config"
)

// envPrefix is the prefix of every distfeat environment variable.
const envPrefix = config.EnvPrefix

// parseClientFlags parses a client command's flags, with the TLS/SASL variables mirrored as
// flags, and returns the dialer and transport they configure.
func parseClientFlags(fs *flag.FlagSet, args []string) (*kafka.Dialer, *kafka.Transport, error) {
	flags := config.AddFlags(fs, config.SecurityVariables())
	if err := parseArgs(fs, args); err != nil {
		return nil, nil, err
	}
	sec, err := config.SecurityFromEnv(flags.Over(config.Environ()))
	if err != nil {
		return nil, nil, err
	}
	return sec.KafkaClients()
}
