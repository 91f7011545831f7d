package config

import (
	"crypto/tls"
	"crypto/x509"
	"os"
	"strings"
)

// Validate checks the TLS/SASL settings; errors name the variable.
func (c *Security) Validate() error {
	switch strings.ToLower(c.SASLMechanism) {
	case "", "plain", "scram-sha-256", "scram-sha-512":
	default:
		return configError("SASL_MECHANISM", "%q: want plain, scram-sha-256 or scram-sha-512", c.SASLMechanism)
	}
	if c.SASLMechanism != "" && c.SASLUsername == "" {
		return configError("SASL_USERNAME", "required with DISTFEAT_SASL_MECHANISM")
	}
	if (c.TLSCertFile == "") != (c.TLSKeyFile == "") {
		return configError("TLS_CERT_FILE", "DISTFEAT_TLS_CERT_FILE and DISTFEAT_TLS_KEY_FILE go together")
	}
	return nil
}

// ClientSecurity is what a Kafka client needs from the TLS/SASL settings: the TLS
// configuration (nil when TLS is off) and the SASL mechanism ("" when SASL is off, else
// "plain", "scram-sha-256" or "scram-sha-512"), user and password. The Kafka edge
// (kafkaio.Clients) builds its dialer and transport from it.
type ClientSecurity struct {
	TLS           *tls.Config
	SASLMechanism string
	SASLUsername  string
	SASLPassword  string
}

// ClientSecurity reads the TLS files and the password (SASL_PASSWORD_FILE's content, which
// wins over SASL_PASSWORD). Secrets are read here and never logged.
func (c *Security) ClientSecurity() (ClientSecurity, error) {
	tlsCfg, err := c.tlsConfig()
	if err != nil {
		return ClientSecurity{}, err
	}
	cs := ClientSecurity{TLS: tlsCfg}
	if c.SASLMechanism == "" {
		return cs, nil
	}
	password := c.SASLPassword
	if c.SASLPasswordFromFile != "" {
		password = strings.TrimRight(c.SASLPasswordFromFile, "\r\n")
	}
	cs.SASLMechanism, cs.SASLUsername, cs.SASLPassword = strings.ToLower(c.SASLMechanism), c.SASLUsername, password
	return cs, nil
}

// SASLMechanismError is the start-up error for SASL settings the Kafka client rejects when it
// builds the mechanism (SCRAM cannot prepare the user name or password): it names
// DISTFEAT_SASL_MECHANISM.
func SASLMechanismError(err error) error {
	return configError("SASL_MECHANISM", "%v", err)
}

// tlsConfig is nil when TLS is off.
func (c *Security) tlsConfig() (*tls.Config, error) {
	if !c.TLSEnabled && c.TLSCAFile == "" && c.TLSCertFile == "" {
		return nil, nil
	}
	tlsCfg := &tls.Config{MinVersion: tls.VersionTLS12, ServerName: c.TLSServerName, InsecureSkipVerify: c.TLSInsecureSkipVerify}
	if c.TLSCAFile != "" {
		pem, err := os.ReadFile(c.TLSCAFile)
		if err != nil {
			return nil, configError("TLS_CA_FILE", "%v", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, configError("TLS_CA_FILE", "%s holds no PEM certificate", c.TLSCAFile)
		}
		tlsCfg.RootCAs = pool
	}
	if c.TLSCertFile != "" {
		cert, err := tls.LoadX509KeyPair(c.TLSCertFile, c.TLSKeyFile)
		if err != nil {
			return nil, configError("TLS_CERT_FILE", "%v", err)
		}
		tlsCfg.Certificates = []tls.Certificate{cert}
	}
	return tlsCfg, nil
}
