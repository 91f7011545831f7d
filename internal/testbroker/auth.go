package testbroker

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"strings"
	"time"

	"github.com/segmentio/kafka-go"
	"github.com/segmentio/kafka-go/sasl"
	"github.com/segmentio/kafka-go/sasl/plain"
	"github.com/segmentio/kafka-go/sasl/scram"
	"github.com/twmb/franz-go/pkg/kfake"
)

// SASL mechanisms the broker accepts (User.Mechanism), named as Kafka names them.
const (
	MechanismPlain  = "PLAIN"
	MechanismSCRAM  = "SCRAM-SHA-256"
	MechanismSCRAM5 = "SCRAM-SHA-512"
)

// User is a SASL user of a broker that requires authentication (Options.Users).
type User struct {
	// Mechanism is PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512 (case-insensitive).
	Mechanism string
	Name      string
	Password  string
	// Super users bypass ACLs; the broker's own clients (start-up check, reaper) log in as
	// the first one, so a broker with users needs at least one.
	Super bool
	// ACLs are this user's permissions when Options.ACLs is set (Principal is ignored).
	ACLs []kfake.ACL
}

// authOpts are the kfake options for opts' TLS, users and ACLs, and the transport the
// broker's own clients use (the first super user, TLS without verification: loopback,
// its own certificate).
func authOpts(opts Options) ([]kfake.Opt, *kafka.Transport, error) {
	tr := &kafka.Transport{DialTimeout: time.Second}
	var kopts []kfake.Opt
	if opts.TLS != nil {
		kopts = append(kopts, kfake.TLS(opts.TLS))
		tr.TLS = opts.TLSClient
		if tr.TLS == nil {
			tr.TLS = &tls.Config{InsecureSkipVerify: true, MinVersion: tls.VersionTLS12} //nolint:gosec // the broker's own loopback client
		}
	}
	if opts.ACLs {
		kopts = append(kopts, kfake.EnableACLs())
	}
	if len(opts.Users) == 0 {
		if opts.ACLs {
			return nil, nil, fmt.Errorf("testbroker: ACLs need SASL users (Options.Users)")
		}
		return kopts, tr, nil
	}
	kopts = append(kopts, kfake.EnableSASL())
	for _, u := range opts.Users {
		m := strings.ToUpper(u.Mechanism)
		if m != MechanismPlain && m != MechanismSCRAM && m != MechanismSCRAM5 {
			return nil, nil, fmt.Errorf("testbroker: user %q: mechanism %q: want PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512", u.Name, u.Mechanism)
		}
		if u.Name == "" || u.Password == "" {
			return nil, nil, fmt.Errorf("testbroker: a SASL user needs a name and a password (%s user %q)", m, u.Name)
		}
		if u.Super {
			kopts = append(kopts, kfake.Superuser(m, u.Name, u.Password))
			if tr.SASL == nil {
				mech, err := Mechanism(m, u.Name, u.Password)
				if err != nil {
					return nil, nil, err
				}
				tr.SASL = mech
			}
			continue
		}
		kopts = append(kopts, kfake.User(m, u.Name, u.Password, u.ACLs...))
	}
	if tr.SASL == nil {
		return nil, nil, fmt.Errorf("testbroker: SASL users need at least one super user (the broker's own clients log in as it)")
	}
	return kopts, tr, nil
}

// Mechanism is kafka-go's SASL mechanism for a Kafka mechanism name (PLAIN, SCRAM-SHA-256,
// SCRAM-SHA-512).
func Mechanism(name, user, password string) (sasl.Mechanism, error) {
	switch strings.ToUpper(name) {
	case MechanismPlain:
		return plain.Mechanism{Username: user, Password: password}, nil
	case MechanismSCRAM:
		return scram.Mechanism(scram.SHA256, user, password)
	case MechanismSCRAM5:
		return scram.Mechanism(scram.SHA512, user, password)
	}
	return nil, fmt.Errorf("testbroker: SASL mechanism %q: want PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512", name)
}

// Certificate is a self-signed CA and a certificate it signed, for a TLS broker (and its
// clients, when the broker requires client certificates).
type Certificate struct {
	// Server is the listener's configuration (Options.TLS).
	Server *tls.Config
	// CAPEM is the CA certificate in PEM: what clients trust (DISTFEAT_TLS_CA_FILE).
	CAPEM []byte
	// CertPEM and KeyPEM are the server certificate and its key in PEM.
	CertPEM, KeyPEM []byte
}

// NewCertificate generates a CA and a certificate it signed, valid for hosts (names or IP
// addresses) for a day, as a server's and as a client's (mutual TLS).
func NewCertificate(hosts ...string) (*Certificate, error) {
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	now := time.Now()
	ca := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "distfeat development CA"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, ca, ca, &caKey.PublicKey, caKey)
	if err != nil {
		return nil, err
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	leaf := &x509.Certificate{
		SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: hosts[0]},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
	}
	for _, h := range hosts {
		if ip := net.ParseIP(h); ip != nil {
			leaf.IPAddresses = append(leaf.IPAddresses, ip)
		} else {
			leaf.DNSNames = append(leaf.DNSNames, h)
		}
	}
	caCert, err := x509.ParseCertificate(caDER)
	if err != nil {
		return nil, err
	}
	der, err := x509.CreateCertificate(rand.Reader, leaf, caCert, &key.PublicKey, caKey)
	if err != nil {
		return nil, err
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return nil, err
	}
	c := &Certificate{
		CAPEM:   pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER}),
		CertPEM: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		KeyPEM:  pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}),
	}
	pair, err := tls.X509KeyPair(c.CertPEM, c.KeyPEM)
	if err != nil {
		return nil, err
	}
	c.Server = &tls.Config{Certificates: []tls.Certificate{pair}, MinVersion: tls.VersionTLS12}
	return c, nil
}
