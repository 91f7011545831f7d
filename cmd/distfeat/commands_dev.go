//go:build dev

package main

// devCommands are the development commands, built only with -tags dev (make build): they
// embed the kfake test broker, which the production image must not ship.
func devCommands() []command {
	return []command{
		{"broker", "serve an embedded Kafka-protocol broker on loopback (development)", runBroker},
		{"demo", "broker + two workers + synthetic sets, checked against exact kernels", runDemo},
		{"bench", "end-to-end throughput through the embedded broker", runBench},
		{"soak", "long run with worker processes, a mid-run rebalance, RSS timeline and window check", runSoak},
	}
}
