package testbroker

import (
	"context"
	"strings"
	"testing"
	"time"
)

// TestAuthOptionsRefused: a broker with users but no super user (its own clients could not
// log in), ACLs without users, an unknown mechanism or a user without a password does not
// start, and says why.
func TestAuthOptionsRefused(t *testing.T) {
	for _, tc := range []struct {
		opts Options
		says string
	}{
		{Options{Users: []User{{Mechanism: "PLAIN", Name: "u", Password: "p"}}}, "at least one super user"},
		{Options{ACLs: true}, "ACLs need SASL users"},
		{Options{Users: []User{{Mechanism: "GSSAPI", Name: "u", Password: "p", Super: true}}}, `mechanism "GSSAPI"`},
		{Options{Users: []User{{Mechanism: "scram-sha-256", Name: "u", Super: true}}}, "needs a name and a password"},
	} {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		b, err := Start(ctx, tc.opts)
		cancel()
		if err == nil {
			b.Close()
			t.Errorf("%+v: started", tc.opts)
			continue
		}
		if !strings.Contains(err.Error(), tc.says) {
			t.Errorf("%+v: %v, want it to say %q", tc.opts, err, tc.says)
		}
	}
}
