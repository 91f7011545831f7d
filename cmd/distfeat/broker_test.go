//go:build dev

package main

import (
	"context"
	"strings"
	"testing"
)

// TestBrokerAddrLoopbackOnly: the embedded broker listens on loopback only unless
// --allow-remote is given.
func TestBrokerAddrLoopbackOnly(t *testing.T) {
	for _, tc := range []struct {
		addr   string
		remote bool
		ok     bool
	}{
		{"127.0.0.1:9092", false, true},
		{"127.0.0.2:0", false, true},
		{"[::1]:9092", false, true},
		{"localhost:9092", false, true},
		{"0.0.0.0:9092", false, false},
		{":9092", false, false},
		{"[::]:9092", false, false},
		{"192.0.2.10:9092", false, false},
		{"broker.example:9092", false, false},
		{"0.0.0.0:9092", true, true},
		{":9092", true, true},
		{"no-port", false, false},
	} {
		err := checkBrokerAddr(tc.addr, tc.remote)
		if (err == nil) != tc.ok {
			t.Errorf("checkBrokerAddr(%q, allowRemote=%v) = %v, want ok=%v", tc.addr, tc.remote, err, tc.ok)
		}
	}
}

// TestBrokerRefusesAllInterfaces: `distfeat broker --addr 0.0.0.0:P` and `--addr :P` exit 2
// before listening, naming --allow-remote.
func TestBrokerRefusesAllInterfaces(t *testing.T) {
	for _, addr := range []string{"0.0.0.0:0", ":0"} {
		var out, errb strings.Builder
		code := run(context.Background(), []string{"broker", "--addr", addr}, &out, &errb)
		if code != 2 || !strings.Contains(errb.String(), "--allow-remote") || !strings.Contains(errb.String(), "every interface") {
			t.Errorf("broker --addr %s: exit %d, stderr %q; want 2 and a refusal naming --allow-remote", addr, code, errb.String())
		}
		if out.Len() != 0 {
			t.Errorf("broker --addr %s printed %q: it started", addr, out.String())
		}
	}
}
