package testbroker

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/segmentio/kafka-go"
)

func topicPartitions(t *testing.T, brokers []string) map[string]int {
	t.Helper()
	cl := &kafka.Client{Addr: kafka.TCP(brokers...), Transport: newTransport(t), Timeout: 5 * time.Second}
	md, err := cl.Metadata(context.Background(), &kafka.MetadataRequest{})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]int{}
	for _, tp := range md.Topics {
		got[tp.Name] = len(tp.Partitions)
	}
	return got
}

func TestForTestEmbedded(t *testing.T) {
	t.Setenv(EnvBrokers, "") // make sure an outer setting does not leak in
	// An empty variable is an explicit but broken request for a real cluster: ForTest
	// must refuse it rather than silently fall back to the embedded broker.
	ft := &fakeT{name: t.Name()}
	func() {
		defer func() { recover() }()
		ForTest(ft, 2)
	}()
	if !ft.failed {
		t.Fatalf("ForTest with an empty %s did not fail", EnvBrokers)
	}

	var env Env
	os.Unsetenv(EnvBrokers) // restored by the t.Setenv above
	t.Run("inner", func(t *testing.T) {
		env = ForTest(t, 3)
		if env.Points != TopicPoints || env.Features != TopicFeatures || env.DLQ != TopicDLQ {
			t.Errorf("embedded topic names = %+v", env)
		}
		got := topicPartitions(t, env.Brokers)
		for _, name := range []string{env.Points, env.Features, env.DLQ} {
			if got[name] != 3 {
				t.Errorf("topic %s: %d partitions, want 3", name, got[name])
			}
		}
	})
	// Cleanup closed the broker: dialling it must now fail.
	d := &kafka.Dialer{Timeout: time.Second}
	if c, err := d.Dial("tcp", env.Brokers[0]); err == nil {
		c.Close()
		t.Errorf("broker %s still accepts connections after the test's cleanup", env.Brokers[0])
	}
}

// TestForTestRealCluster drives the DISTFEAT_TEST_BROKERS path against an embedded broker that
// has no topics, standing in for a real cluster: unique topics are created with the requested
// partitions and deleted at cleanup.
func TestForTestRealCluster(t *testing.T) {
	b := startBroker(t, Options{Topics: []string{}})
	t.Setenv(EnvBrokers, " "+b.Addrs()[0]+" ,")
	var first, second Env
	t.Run("a/b c", func(t *testing.T) {
		first = ForTest(t, 5)
		second = ForTest(t, 0)
		if first.Points == second.Points {
			t.Fatalf("two calls gave the same topic %s", first.Points)
		}
		for _, env := range []Env{first, second} {
			if len(env.Brokers) != 1 || env.Brokers[0] != b.Addrs()[0] {
				t.Errorf("Brokers = %q", env.Brokers)
			}
			for _, name := range []string{env.Points, env.Features, env.DLQ} {
				if !strings.HasPrefix(name, "distfeat-test-TestForTestRealCluster_a_b_c-") {
					t.Errorf("topic name %q does not carry the sanitised test name", name)
				}
			}
			if !strings.HasSuffix(env.Points, ".points") || !strings.HasSuffix(env.Features, ".features") || !strings.HasSuffix(env.DLQ, ".points.dlq") {
				t.Errorf("topic names %+v", env)
			}
		}
		got := topicPartitions(t, b.Addrs())
		for name, want := range map[string]int{first.Points: 5, first.Features: 5, first.DLQ: 5, second.Points: DefaultPartitions} {
			if got[name] != want {
				t.Errorf("topic %s: %d partitions, want %d", name, got[name], want)
			}
		}
	})
	if got := topicPartitions(t, b.Addrs()); len(got) != 0 {
		t.Errorf("topics left after cleanup: %v", got)
	}
}

func TestTopicSafe(t *testing.T) {
	tests := []struct{ in, want string }{
		{"TestX", "TestX"},
		{"TestX/sub case#1", "TestX_sub_case_1"},
		{"Ünïcode", "_n_code"},
		{strings.Repeat("a", 300), strings.Repeat("a", 80)},
	}
	for _, tc := range tests {
		if got := topicSafe(tc.in); got != tc.want {
			t.Errorf("topicSafe(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// fakeT records a Fatalf (and stops the caller with a panic, as t.Fatalf stops it with
// runtime.Goexit).
type fakeT struct {
	name     string
	failed   bool
	cleanups []func()
}

func (f *fakeT) Helper()               {}
func (f *fakeT) Name() string          { return f.name }
func (f *fakeT) Cleanup(fn func())     { f.cleanups = append(f.cleanups, fn) }
func (f *fakeT) Logf(string, ...any)   {}
func (f *fakeT) Fatalf(string, ...any) { f.failed = true; panic("fatal") }
