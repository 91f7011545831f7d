package consumer

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/distfeat/distfeat/internal/testbroker"
	"github.com/distfeat/distfeat/processor"
	"github.com/distfeat/distfeat/spec"
	"github.com/distfeat/distfeat/window"
)

// otherSpec differs from smallSpec only in its seed: another spec_id, the same shapes.
const otherSpec = `{"version":1,"seed":8,"dim":2,"bounds":{"lo":[0,0],"hi":[1,1]},
 "families":[{"name":"mmd","kind":"mmd","features":64,"bandwidth":0.2},
             {"name":"hdd_js","kind":"hdd","divergence":"js","features":64,"sigma":0.5,"grid":16,"basis":10,"lambdas":3},
             {"name":"l2","kind":"l2","basis":10}]}`

// TestCheckpointMismatchFailsStart: a worker joining a group whose committed checkpoints were
// written under another window mode, other window parameters in the same mode, or another
// spec does not start (Run returns an error naming DISTFEAT_WINDOW / DISTFEAT_SPEC and the
// reset variable) instead of replaying with wrong suppression; with ResetCheckpoints it
// starts and delivers what follows the commit. A group that ran on the former built-in
// default spec, restarted on the new default, gets the upgrade's own message (what changed,
// pin examples/default-spec-v1.json or reset) instead of the generic one.
func TestCheckpointMismatchFailsStart(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name        string
		firstSpec   string // "" is smallSpec
		spec        string
		first       window.Config // the configuration that committed
		wc          window.Config // the one that restarts
		want, never []string      // in the error; not in it
	}{
		{"window-mode", "", smallSpec, window.Config{}, window.Config{Mode: "time", Size: 1000, MaxOpen: 100}, nil, nil},
		{"window-size", "", smallSpec, window.Config{Mode: "count", Size: 4, MaxOpen: 100}, window.Config{Mode: "count", Size: 6, MaxOpen: 100}, nil, nil},
		{"spec", "", otherSpec, window.Config{}, window.Config{}, nil, nil},
		{"former-default", string(spec.DefaultSpecV1().CanonicalJSON()), string(spec.DefaultSpec().CanonicalJSON()), window.Config{}, window.Config{},
			[]string{processor.ErrDefaultSpecChanged.Error(), "examples/default-spec-v1.json", "DISTFEAT_GROUP"}, []string{"DISTFEAT_WINDOW"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			env := testbroker.ForTest(t, 1)
			firstSpec := tc.firstSpec
			if firstSpec == "" {
				firstSpec = smallSpec
			}
			h := newHarnessEnv(t, env, firstSpec)
			group := "mismatch-" + tc.name
			features := h.collect(h.env.Features)
			rw := h.start(h.config(group, tc.first), nil)
			first := randomSets(81, "a", 2, 10, 1)
			h.produce("json", 100, first...)
			if tc.first.Mode == "" {
				h.checkAllWindows(t, features, 30*time.Second, first)
			}
			ends := h.topicEnds(h.env.Points)
			waitUntil(t, 10*time.Second, "the commit", func() bool { return h.committed(group)[0] == ends[0] })
			rw.shutdown(t)

			h2 := newHarnessEnv(t, env, tc.spec)
			cfg := h2.config(group, tc.wc)
			rw2 := h2.start(cfg, nil)
			select {
			case err := <-rw2.done:
				rw2.done <- nil
				if !errors.Is(err, processor.ErrCheckpointMismatch) {
					t.Fatalf("Run = %v, want ErrCheckpointMismatch", err)
				}
				want, never := tc.want, tc.never
				if want == nil {
					want = []string{"DISTFEAT_WINDOW"}
				}
				for _, w := range append(want, "DISTFEAT_SPEC", "DISTFEAT_RESET_CHECKPOINTS=true") {
					if !strings.Contains(err.Error(), w) {
						t.Errorf("error %q does not name %s", err, w)
					}
				}
				for _, w := range never {
					if strings.Contains(err.Error(), w) {
						t.Errorf("error %q names %s", err, w)
					}
				}
			case <-time.After(30 * time.Second):
				t.Fatal("Run did not fail within 30 s on a checkpoint of another configuration")
			}
			if c := h.committed(group)[0]; c != ends[0] {
				t.Errorf("the refused start moved the commit from %d to %d", ends[0], c)
			}

			cfg.ResetCheckpoints = true
			h2.start(cfg, nil)
			waitUntil(t, 30*time.Second, "a commit in the new configuration", func() bool {
				m, err := processor.ParseMetadata(h.commits(group)[0].Metadata)
				return err == nil && m.SpecID == h2.emb.Spec().ID() && strings.Contains(m.Window, "m="+string(cfg.Window.Mode))
			})
		})
	}
}
