//go:build dev

package devcmd

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/distfeat/distfeat/internal/outfile"
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

// TestOutputSoakTimeline: the timeline CSV replaces an existing 0600 file keeping its mode.
func TestOutputSoakTimeline(t *testing.T) {
	path := filepath.Join(t.TempDir(), "timeline.csv")
	if err := os.WriteFile(path, []byte("old\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := outfile.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	r := &soakReport{samples: []soakSample{{t: 1500 * time.Millisecond, produced: 7, note: []string{"w0 killed"}}}}
	if err := r.writeCSV(f); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil || !strings.HasPrefix(string(b), "t_s,") || !strings.Contains(string(b), "1.500,7,") || !strings.Contains(string(b), `"w0 killed"`) {
		t.Errorf("timeline %q (%v)", b, err)
	}
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("mode %v (%v), want 0600 kept", fi.Mode().Perm(), err)
	}
}
