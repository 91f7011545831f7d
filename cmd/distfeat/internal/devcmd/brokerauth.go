//go:build dev

package devcmd

import (
	"crypto/rand"
	"crypto/tls"
	"encoding/hex"
	"fmt"
	"net"
	"os"
	"strings"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/distfeat/distfeat/cmd/distfeat/internal/cli"
	"github.com/distfeat/distfeat/internal/testbroker"
)

// brokerAuth is `distfeat broker`'s authentication: SASL users, ACLs and a TLS listener.
type brokerAuth struct {
	users             []testbroker.User
	grants            []string
	acls, tls         bool
	certFile, keyFile string
	caOut             string
}

// userFlag parses --user and --superuser (mechanism:name:password).
type userFlag struct {
	users *[]testbroker.User
	super bool
}

func (f userFlag) String() string { return "" }

func (f userFlag) Set(s string) error {
	parts := strings.SplitN(s, ":", 3)
	if len(parts) != 3 || parts[1] == "" || parts[2] == "" {
		return fmt.Errorf("%q: want mechanism:name:password", s)
	}
	mech := strings.ToUpper(parts[0])
	if _, err := testbroker.Mechanism(mech, parts[1], parts[2]); err != nil {
		return err
	}
	*f.users = append(*f.users, testbroker.User{Mechanism: mech, Name: parts[1], Password: parts[2], Super: f.super})
	return nil
}

// grantFlag collects --grant user:operation:type:name.
type grantFlag struct{ grants *[]string }

func (f grantFlag) String() string { return "" }

func (f grantFlag) Set(s string) error { *f.grants = append(*f.grants, s); return nil }

// apply sets opts' TLS, users and ACLs.
func (a *brokerAuth) apply(opts *testbroker.Options) error {
	if a.acls && len(a.users) == 0 {
		return cli.UsageError("--acls needs --user (and a --superuser for the broker's own clients)")
	}
	if len(a.grants) > 0 && !a.acls {
		return cli.UsageError("--grant needs --acls")
	}
	for _, g := range a.grants {
		if err := a.grant(g); err != nil {
			return cli.UsageError(fmt.Sprintf("--grant %q: %v", g, err))
		}
	}
	if len(a.users) > 0 && !hasSuper(a.users) {
		// The broker's own clients (start-up check, group reaper) need a super user.
		a.users = append(a.users, testbroker.User{Mechanism: testbroker.MechanismSCRAM, Name: "distfeat-broker", Password: randomPassword(), Super: true})
	}
	opts.Users, opts.ACLs = a.users, a.acls
	switch {
	case a.certFile != "" || a.keyFile != "":
		pair, err := tls.LoadX509KeyPair(a.certFile, a.keyFile)
		if err != nil {
			return fmt.Errorf("--tls-cert/--tls-key: %w", err)
		}
		opts.TLS = &tls.Config{Certificates: []tls.Certificate{pair}, MinVersion: tls.VersionTLS12}
	case a.tls:
		host, _, _ := net.SplitHostPort(opts.Addr)
		hosts := []string{"127.0.0.1", "localhost"}
		if host != "" && host != "127.0.0.1" && host != "localhost" {
			hosts = append([]string{host}, hosts...)
		}
		cert, err := testbroker.NewCertificate(hosts...)
		if err != nil {
			return err
		}
		if err := os.WriteFile(a.caOut, cert.CAPEM, 0o644); err != nil {
			return fmt.Errorf("--tls-ca-out: %w", err)
		}
		opts.TLS = cert.Server
	}
	return nil
}

// grant adds one --grant (user:operation:topic|group:name) to its user's ACLs.
func (a *brokerAuth) grant(g string) error {
	parts := strings.SplitN(g, ":", 4)
	if len(parts) != 4 {
		return fmt.Errorf("want user:operation:topic|group:name")
	}
	op, err := kmsg.ParseACLOperation(parts[1])
	if err != nil {
		return fmt.Errorf("operation %q: %w", parts[1], err)
	}
	var rt kmsg.ACLResourceType
	switch parts[2] {
	case "topic":
		rt = kmsg.ACLResourceTypeTopic
	case "group":
		rt = kmsg.ACLResourceTypeGroup
	default:
		return fmt.Errorf("resource type %q: want topic or group", parts[2])
	}
	for i := range a.users {
		if a.users[i].Name == parts[0] {
			a.users[i].ACLs = append(a.users[i].ACLs, kfake.ACL{Resource: rt, Name: parts[3], Pattern: kmsg.ACLResourcePatternTypeLiteral, Operation: op, Allow: true})
			return nil
		}
	}
	return fmt.Errorf("no --user %q", parts[0])
}

// describe is the start-up line's account of the broker's security.
func (a *brokerAuth) describe() string {
	var out []string
	if a.certFile != "" {
		out = append(out, "TLS with "+a.certFile)
	} else if a.tls {
		out = append(out, "TLS (generated certificate; clients trust "+a.caOut+")")
	}
	var names []string
	for _, u := range a.users {
		if u.Name != "distfeat-broker" {
			names = append(names, fmt.Sprintf("%s %s", u.Mechanism, u.Name))
		}
	}
	if len(names) > 0 {
		out = append(out, "SASL users "+strings.Join(names, ", "))
	}
	if a.acls {
		out = append(out, "ACLs on")
	}
	if len(out) == 0 {
		return ", no authentication"
	}
	return ", " + strings.Join(out, ", ")
}

// randomPassword is the password of the broker's own super user, which no one else needs.
func randomPassword() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

func hasSuper(users []testbroker.User) bool {
	for _, u := range users {
		if u.Super {
			return true
		}
	}
	return false
}
