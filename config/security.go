package config

import (
	"crypto/tls"
	"crypto/x509"
	"os"
	"strings"
	"time"

	"github.com/segmentio/kafka-go"
	"github.com/segmentio/kafka-go/sasl"
	"github.com/segmentio/kafka-go/sasl/plain"
	"github.com/segmentio/kafka-go/sasl/scram"
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

// kafkaSecurity builds the TLS configuration and SASL mechanism. Secrets are read here and
// never logged.
func (c *Security) kafkaSecurity() (*tls.Config, sasl.Mechanism, error) {
	tlsCfg, err := c.tlsConfig()
	if err != nil {
		return nil, nil, err
	}
	if c.SASLMechanism == "" {
		return tlsCfg, nil, nil
	}
	password := c.SASLPassword
	if c.SASLPasswordFromFile != "" {
		password = strings.TrimRight(c.SASLPasswordFromFile, "\r\n")
	}
	var mech sasl.Mechanism
	switch strings.ToLower(c.SASLMechanism) {
	case "plain":
		mech = plain.Mechanism{Username: c.SASLUsername, Password: password}
	case "scram-sha-256", "scram-sha-512":
		algo := scram.SHA256
		if strings.HasSuffix(strings.ToLower(c.SASLMechanism), "512") {
			algo = scram.SHA512
		}
		m, err := scram.Mechanism(algo, c.SASLUsername, password)
		if err != nil {
			return nil, nil, configError("SASL_MECHANISM", "%v", err)
		}
		mech = m
	}
	return tlsCfg, mech, nil
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

// KafkaClients builds the dialer (consumer group, readers) and transport (writer, offset
// client) with the same security settings.
func (c *Security) KafkaClients() (*kafka.Dialer, *kafka.Transport, error) {
	tlsCfg, mech, err := c.kafkaSecurity()
	if err != nil {
		return nil, nil, err
	}
	dialer := &kafka.Dialer{Timeout: 10 * time.Second, DualStack: true, TLS: tlsCfg, SASLMechanism: mech}
	transport := &kafka.Transport{TLS: tlsCfg, SASL: mech, DialTimeout: 10 * time.Second}
	return dialer, transport, nil
}
