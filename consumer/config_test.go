package consumer

import (
	"reflect"
	"testing"
	"time"

	"github.com/distfeat/distfeat/config"
	"github.com/distfeat/distfeat/embedding"
	"github.com/distfeat/distfeat/schema"
	"github.com/distfeat/distfeat/spec"
	"github.com/distfeat/distfeat/window"
)

// TestConfigDefaults: a Config built in code with only the brokers and the windows set runs
// with the values the worker gets from the documented variable defaults (config.FromEnv of
// an empty environment), the group's heartbeat and rebalance timeout follow the session
// timeout as DISTFEAT_SESSION_TIMEOUT's documentation says, and values set stay set.
func TestConfigDefaults(t *testing.T) {
	sp, err := spec.ParseSpec([]byte(smallSpec))
	if err != nil {
		t.Fatal(err)
	}
	emb, err := embedding.New(sp)
	if err != nil {
		t.Fatal(err)
	}
	documented, err := config.FromEnv(map[string]string{})
	if err != nil {
		t.Fatal(err)
	}
	brokers := []string{"127.0.0.1:1"}
	wc := window.Config{Mode: window.ModeSet, MaxOpen: 10}
	newCfg := func(cfg Config) Config {
		t.Helper()
		w, err := NewWorker(cfg, emb, schema.NewOutput(sp, emb.Columns()), metricsForTest(), nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		return w.cfg
	}

	got := newCfg(Config{Topics: config.Topics{Brokers: brokers}, Window: wc})
	wantTopics := documented.Topics
	wantTopics.Brokers = brokers
	if !reflect.DeepEqual(got.Topics, wantTopics) {
		t.Errorf("topics %+v, documented %+v", got.Topics, wantTopics)
	}
	wantDelivery := documented.Delivery
	wantDelivery.MaxPointsPerRecord = config.DefaultMaxPointsPerRecord // no variable
	if got.Delivery != wantDelivery {
		t.Errorf("delivery %+v, documented %+v", got.Delivery, wantDelivery)
	}
	if got.ShutdownTimeout != documented.ShutdownTimeout {
		t.Errorf("shutdown timeout %v, documented %v", got.ShutdownTimeout, documented.ShutdownTimeout)
	}
	if got.HeartbeatInterval != got.SessionTimeout/10 || got.RebalanceTimeout != got.SessionTimeout {
		t.Errorf("heartbeat %v, rebalance %v for session %v: want a tenth of it and it", got.HeartbeatInterval, got.RebalanceTimeout, got.SessionTimeout)
	}

	set := Config{Topics: config.Topics{Brokers: brokers, InputTopic: "in", OutputTopic: "out", DLQTopic: "dlq", Group: "g"},
		Delivery: config.Delivery{Limits: config.Limits{MaxMessageBytes: 1000, MaxOutputBytes: 1 << 20, MaxPointsPerRecord: 7},
			MaxBufferBytes: 2 << 20, SessionTimeout: 3 * time.Second, CommitInterval: time.Minute},
		ShutdownTimeout: time.Second, Window: wc}
	got = newCfg(set)
	if !reflect.DeepEqual(got.Topics, set.Topics) || got.Delivery != set.Delivery || got.ShutdownTimeout != set.ShutdownTimeout {
		t.Errorf("set values changed: %+v %+v %v, want %+v %+v %v", got.Topics, got.Delivery, got.ShutdownTimeout, set.Topics, set.Delivery, set.ShutdownTimeout)
	}
	if got.HeartbeatInterval != 300*time.Millisecond || got.RebalanceTimeout != 3*time.Second {
		t.Errorf("heartbeat %v, rebalance %v for a 3s session: want 300ms and 3s", got.HeartbeatInterval, got.RebalanceTimeout)
	}
}
