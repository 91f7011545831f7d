package realkafka

import (
	"os"
	"strings"
)

// The environment that points tests at a running secured single node (Env, FromEnv). The
// PLAINTEXT bootstrap goes in testbroker.EnvBrokers (DISTFEAT_TEST_BROKERS).
const (
	EnvSASL    = "DISTFEAT_TEST_KAFKA_SASL"     // SASL_PLAINTEXT listener
	EnvSSL     = "DISTFEAT_TEST_KAFKA_SSL"      // SSL listener
	EnvSASLSSL = "DISTFEAT_TEST_KAFKA_SASL_SSL" // SASL_SSL listener
	EnvCAFile  = "DISTFEAT_TEST_KAFKA_CA_FILE"  // the CA of the SSL listeners' certificate
	EnvLib     = "DISTFEAT_TEST_KAFKA_LIB"      // Fetch's directory: tests may start their own nodes
	EnvBrokers = "DISTFEAT_TEST_BROKERS"        // the PLAINTEXT listeners (testbroker.EnvBrokers)
)

// Endpoints are the listeners of a secured single node, as a test finds them in its
// environment.
type Endpoints struct {
	Plaintext, SASL, SSL, SASLSSL string
	CAFile                        string
}

// Env is the environment (NAME=value) that points tests at c's first node and at the jars.
func (c *Cluster) Env() []string {
	n := c.Nodes[0]
	env := []string{EnvBrokers + "=" + strings.Join(c.Bootstrap(), ","), EnvLib + "=" + c.lib}
	if c.opts.Secure {
		env = append(env, EnvSASL+"="+n.SASL, EnvSSL+"="+n.SSL, EnvSASLSSL+"="+n.SASLSSL, EnvCAFile+"="+c.CAFile)
	}
	return env
}

// FromEnv is the secured single node the environment names, and false when it names none
// (the tests then use the embedded broker).
func FromEnv() (Endpoints, bool) {
	e := Endpoints{
		Plaintext: strings.Split(os.Getenv(EnvBrokers), ",")[0],
		SASL:      os.Getenv(EnvSASL), SSL: os.Getenv(EnvSSL), SASLSSL: os.Getenv(EnvSASLSSL), CAFile: os.Getenv(EnvCAFile),
	}
	return e, e.SASL != "" && e.SSL != "" && e.SASLSSL != "" && e.CAFile != ""
}
