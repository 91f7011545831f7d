//go:build dev

package main

import (
	"context"
	"strings"
	"testing"
)

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
