package kafkaio

// Connection failures named by layer: why a client cannot talk to the brokers (TCP, TLS,
// SASL authentication, authorisation). kafka-go reports most of these as a bare
// "unexpected EOF" (a broker answers a rejected password, or a plain client on its TLS
// port, by closing the connection), so Probe dials once more step by step — TCP connect,
// TLS handshake, SASL exchange, one request — and returns an *Error naming the layer that
// failed, what to check, and whether retrying can help. Clients builds the clients' dialer
// and transport from the configuration's TLS/SASL settings.

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strings"
	"syscall"
	"time"

	"github.com/segmentio/kafka-go"
	"github.com/segmentio/kafka-go/sasl"
	"github.com/segmentio/kafka-go/sasl/plain"
	"github.com/segmentio/kafka-go/sasl/scram"

	"github.com/distfeat/distfeat/config"
)

// FetchMaxWait is the kafka.ReaderConfig.MaxWait of the worker's and calibrate's readers.
// kafka-go uses MaxWait also as the read deadline for a fetch response's first bytes (the
// broker is asked to wait MaxWait less an RTT allowance of min(1 s, MaxWait/4)), and drops a
// fetch that misses it to send the same fetch again: a broker slower than that allowance to
// assemble a response (a loaded broker, a large fetch, a long round trip) would be asked the
// same question forever and the partition would never advance. Two seconds leave a full
// second; with MinBytes 1 the broker answers as soon as data is there, so the wait only
// lengthens a fetch that finds nothing (to one second, about Kafka's own fetch.max.wait.ms)
// and how long closing an idle reader takes.
const FetchMaxWait = 2 * time.Second

// Layer is where a connection failed.
type Layer string

// The layers, from the bottom.
const (
	LayerTCP           Layer = "TCP"
	LayerTLS           Layer = "TLS"
	LayerSASL          Layer = "SASL authentication"
	LayerAuthorization Layer = "authorisation"
)

// Error is a connection failure at one layer.
type Error struct {
	Layer Layer
	// Broker is the address dialled ("" for an authorisation failure of the cluster).
	Broker string
	// Reason says what failed, for the operator.
	Reason string
	// Check names the settings to check.
	Check string
	// Err is the underlying error.
	Err error
}

func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString(string(e.Layer))
	b.WriteString(" failure")
	if e.Broker != "" {
		b.WriteString(" at broker " + e.Broker)
	}
	b.WriteString(": " + e.Reason)
	if e.Check != "" {
		b.WriteString(" (check " + e.Check + ")")
	}
	if e.Err != nil {
		b.WriteString(": " + e.Err.Error())
	}
	return b.String()
}

func (e *Error) Unwrap() error { return e.Err }

// Retriable reports whether waiting can mend the failure without a restart: a broker that
// is down may come up, an ACL may be granted. TLS and SASL failures are configuration
// mistakes (as in Kafka's own clients, where authentication errors are not retriable).
func (e *Error) Retriable() bool { return e.Layer == LayerTCP || e.Layer == LayerAuthorization }

// Fatal reports whether err is a connection failure that retrying cannot mend (see
// Error.Retriable).
func Fatal(err error) bool {
	var e *Error
	return errors.As(err, &e) && !e.Retriable()
}

// Target is what a client dials: its brokers and its dialer's TLS and SASL settings.
type Target struct {
	Brokers []string
	Dialer  *kafka.Dialer
	// User is the SASL user (named in authentication and authorisation errors).
	User string
}

// Probe dials each broker in turn until one completes the TCP connect, the TLS handshake
// (when configured), the SASL exchange (when configured) and a metadata request; it returns
// nil then, else the failure of the broker that got furthest. ctx bounds it, and each broker
// gets at most 10 s.
func Probe(ctx context.Context, t Target) error {
	var worst *Error
	for _, addr := range t.Brokers {
		err := t.probe(ctx, addr)
		if err == nil {
			return nil
		}
		if worst == nil || depth(err.Layer) > depth(worst.Layer) {
			worst = err
		}
	}
	if worst == nil {
		return nil
	}
	return worst
}

func depth(l Layer) int {
	return map[Layer]int{LayerTCP: 0, LayerTLS: 1, LayerSASL: 2, LayerAuthorization: 3}[l]
}

const tlsVars = "DISTFEAT_TLS_ENABLED, DISTFEAT_TLS_CA_FILE, DISTFEAT_TLS_SERVER_NAME"

func (t Target) probe(ctx context.Context, addr string) *Error {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	conn, err := (&net.Dialer{}).DialContext(ctx, "tcp", addr)
	if err != nil {
		return &Error{LayerTCP, addr, "cannot connect", "DISTFEAT_BROKERS, that the broker is running and reachable from here", err}
	}
	defer conn.Close()
	if dl, ok := ctx.Deadline(); ok {
		_ = conn.SetDeadline(dl)
	}
	var nc net.Conn = conn
	if t.Dialer.TLS != nil {
		// A plain listener reads the ClientHello as the start of a huge request and waits
		// for the rest: bound the handshake well inside the probe's time.
		hctx, hcancel := context.WithTimeout(ctx, 5*time.Second)
		tc := tls.Client(conn, withServerName(t.Dialer.TLS, addr))
		err := tc.HandshakeContext(hctx)
		hcancel()
		if err != nil {
			return t.tlsError(ctx, addr, err)
		}
		nc = tc
	}
	mech := t.Dialer.SASLMechanism
	// A TLS 1.3 server refuses a client certificate (or its absence) after the client's
	// side of the handshake is done: at the first read.
	plainToTLS := func(err error) *Error {
		if t.Dialer.TLS != nil && isTLSAlert(err) {
			return refused(addr, err)
		}
		if t.Dialer.TLS == nil && isClosed(err) && speaksTLS(ctx, addr) {
			return &Error{LayerTLS, addr, "the listener expects TLS and this client speaks plain TCP", "DISTFEAT_TLS_ENABLED=true and DISTFEAT_TLS_CA_FILE, or the broker's plain port in DISTFEAT_BROKERS", err}
		}
		return nil
	}
	d := &kafka.Dialer{SASLMechanism: mech, DialFunc: func(context.Context, string, string) (net.Conn, error) { return nc, nil }}
	kc, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		if e := plainToTLS(err); e != nil {
			return e
		}
		return t.saslError(addr, err)
	}
	if _, err := kc.ApiVersions(); err != nil {
		if e := plainToTLS(err); e != nil {
			return e
		}
		return &Error{LayerTCP, addr, "the broker closed the connection before answering", "DISTFEAT_BROKERS names a Kafka listener", err}
	}
	if _, err := kc.Brokers(); err != nil {
		if mech == nil && isClosed(err) {
			return &Error{LayerSASL, addr, "the broker closed the connection on an unauthenticated request: it requires SASL authentication", "DISTFEAT_SASL_MECHANISM, DISTFEAT_SASL_USERNAME, DISTFEAT_SASL_PASSWORD(_FILE)", err}
		}
		if errors.Is(err, kafka.ClusterAuthorizationFailed) {
			return &Error{LayerAuthorization, addr, fmt.Sprintf("principal User:%s may not describe the cluster", t.User), "the broker's ACLs", err}
		}
		return &Error{LayerTCP, addr, "metadata request failed", "that the broker is healthy", err}
	}
	return nil
}

// tlsError names a failed handshake: certificate, server name, a plain listener.
func (t Target) tlsError(ctx context.Context, addr string, err error) *Error {
	var (
		unknown  x509.UnknownAuthorityError
		hostname x509.HostnameError
		invalid  x509.CertificateInvalidError
	)
	switch {
	case errors.As(err, &unknown):
		return &Error{LayerTLS, addr, "the broker's certificate is signed by an authority this client does not trust", "DISTFEAT_TLS_CA_FILE", err}
	case errors.As(err, &hostname):
		return &Error{LayerTLS, addr, fmt.Sprintf("the broker's certificate is not valid for the name %q", hostname.Host), "DISTFEAT_TLS_SERVER_NAME and the host in DISTFEAT_BROKERS", err}
	case errors.As(err, &invalid):
		return &Error{LayerTLS, addr, "the broker's certificate is invalid", "the broker's certificate and DISTFEAT_TLS_CA_FILE", err}
	case isTLSAlert(err):
		return refused(addr, err)
	case (isClosed(err) || errors.Is(err, context.DeadlineExceeded) || errors.Is(err, os.ErrDeadlineExceeded)) && speaksPlainKafka(ctx, addr):
		return &Error{LayerTLS, addr, "the listener speaks plain TCP and this client expects TLS", "DISTFEAT_TLS_ENABLED (unset it) or the broker's TLS port in DISTFEAT_BROKERS", err}
	}
	return &Error{LayerTLS, addr, "the TLS handshake failed", tlsVars, err}
}

// refused is a handshake the broker ended with an alert: typically a client certificate it
// requires and did not get, or does not accept.
func refused(addr string, err error) *Error {
	return &Error{LayerTLS, addr, "the broker refused the TLS handshake", "DISTFEAT_TLS_CERT_FILE and DISTFEAT_TLS_KEY_FILE (a client certificate the broker accepts)", err}
}

// isTLSAlert reports whether err is a TLS alert the peer sent.
func isTLSAlert(err error) bool {
	var op *net.OpError
	return errors.As(err, &op) && op.Op == "remote error"
}

// saslError names a failed SASL exchange; everything below it worked.
func (t Target) saslError(addr string, err error) *Error {
	name := t.Dialer.SASLMechanism.Name()
	check := "DISTFEAT_SASL_USERNAME, DISTFEAT_SASL_PASSWORD (or DISTFEAT_SASL_PASSWORD_FILE) and DISTFEAT_SASL_MECHANISM"
	reason := fmt.Sprintf("the broker rejected user %q with mechanism %s", t.User, name)
	switch {
	case errors.Is(err, kafka.UnsupportedSASLMechanism):
		reason, check = fmt.Sprintf("the broker does not enable mechanism %s", name), "DISTFEAT_SASL_MECHANISM"
	case errors.Is(err, kafka.SASLAuthenticationFailed), isClosed(err):
		// A broker that rejects a credential may just close the connection.
	default:
		reason = fmt.Sprintf("the SASL exchange for user %q with mechanism %s failed", t.User, name)
		check = "DISTFEAT_SASL_MECHANISM and the broker's enabled mechanisms"
	}
	return &Error{LayerSASL, addr, reason, check, err}
}

// speaksTLS reports whether addr completes a TLS handshake (certificate not verified: this
// only tells a TLS listener from a plain one).
func speaksTLS(ctx context.Context, addr string) bool {
	conn, err := (&tls.Dialer{Config: &tls.Config{InsecureSkipVerify: true, MinVersion: tls.VersionTLS12}}).DialContext(ctx, "tcp", addr) //nolint:gosec // detection only
	if err != nil {
		return false
	}
	_ = conn.Close()
	return true
}

// speaksPlainKafka reports whether addr answers an ApiVersions request in plain TCP.
func speaksPlainKafka(ctx context.Context, addr string) bool {
	kc, err := (&kafka.Dialer{}).DialContext(ctx, "tcp", addr)
	if err != nil {
		return false
	}
	defer kc.Close()
	if dl, ok := ctx.Deadline(); ok {
		_ = kc.SetDeadline(dl)
	}
	_, err = kc.ApiVersions()
	return err == nil
}

// isClosed reports whether err is the peer closing or resetting the connection.
func isClosed(err error) bool {
	return errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE)
}

func withServerName(c *tls.Config, addr string) *tls.Config {
	if c.ServerName != "" {
		return c
	}
	c = c.Clone()
	c.ServerName, _, _ = net.SplitHostPort(addr)
	return c
}

// Authorization returns err as an authorisation failure naming the principal, the operation
// and the resource when it is a Kafka authorisation error (or a batch's write errors that
// include one), else nil.
func Authorization(err error, user, operation, resource string) *Error {
	cause := err
	var werrs kafka.WriteErrors
	if errors.As(err, &werrs) {
		for _, e := range werrs {
			if e != nil {
				cause = fmt.Errorf("%d of %d records: %w", werrs.Count(), len(werrs), e)
				break
			}
		}
	}
	for _, code := range []kafka.Error{kafka.TopicAuthorizationFailed, kafka.GroupAuthorizationFailed, kafka.ClusterAuthorizationFailed, kafka.TransactionalIDAuthorizationFailed} {
		if errors.Is(cause, code) {
			principal := "User:" + user
			if user == "" {
				principal = "User:ANONYMOUS"
			}
			return &Error{Layer: LayerAuthorization, Reason: fmt.Sprintf("principal %s may not %s %s", principal, operation, resource),
				Check: "the ACLs granted to " + principal, Err: cause}
		}
	}
	return nil
}

// Clients builds the dialer (consumer group, readers) and the transport (writers, offset
// client) with sec's TLS and SASL settings.
func Clients(sec *config.Security) (*kafka.Dialer, *kafka.Transport, error) {
	cs, err := sec.ClientSecurity()
	if err != nil {
		return nil, nil, err
	}
	var mech sasl.Mechanism
	switch cs.SASLMechanism {
	case "plain":
		mech = plain.Mechanism{Username: cs.SASLUsername, Password: cs.SASLPassword}
	case "scram-sha-256", "scram-sha-512":
		algo := scram.SHA256
		if cs.SASLMechanism == "scram-sha-512" {
			algo = scram.SHA512
		}
		m, err := scram.Mechanism(algo, cs.SASLUsername, cs.SASLPassword)
		if err != nil {
			return nil, nil, config.SASLMechanismError(err)
		}
		mech = m
	}
	dialer := &kafka.Dialer{Timeout: 10 * time.Second, DualStack: true, TLS: cs.TLS, SASLMechanism: mech}
	transport := &kafka.Transport{TLS: cs.TLS, SASL: mech, DialTimeout: 10 * time.Second}
	return dialer, transport, nil
}
