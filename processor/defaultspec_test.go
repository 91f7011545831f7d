package processor

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/distfeat/distfeat/schema"
	"github.com/distfeat/distfeat/spec"
)

// TestRestoreFormerDefaultSpec is the upgrade of a group that ran on the built-in default
// spec when the default moved from version 1 to version 3: its commit metadata carries the
// former default's spec_id. A worker on the new default refuses the checkpoint with an error
// that says what changed and both ways forward; pinning the former default
// (examples/default-spec-v1.json) resumes the group exactly, replay suppression included;
// a reset starts fresh and emits the new spec_id. A checkpoint of the former default met by
// any other spec is the ordinary mismatch.
func TestRestoreFormerDefaultSpec(t *testing.T) {
	envV1 := newEnv(t, string(spec.DefaultSpecV1().CanonicalJSON()))
	envV3 := newEnv(t, string(spec.DefaultSpec().CanonicalJSON()))
	oldID, newID := envV1.emb.Spec().ID(), envV3.emb.Spec().ID()

	// The running group: window "a" closed and emitted, window "b" still open at the commit.
	log := numbered(0,
		jsonRec("b", `{"points": [[0.5, 0.5]]}`),
		jsonRec("a", `{"points": [[0.1, 0.2], [0.3, 0.4]], "end": true}`),
		jsonRec("b", `{"points": [[0.6, 0.7]], "end": true}`))
	before := mustFresh(t, envV1, Config{})
	processAll(t, before, log[:2], 1)
	cp := before.CommitPoint()
	if m, err := ParseMetadata(cp.Metadata); err != nil || m.SpecID != oldID {
		t.Fatalf("commit metadata %q: spec %q, %v; want %s", cp.Metadata, m.SpecID, err, oldID)
	}
	if cp.Offset != 0 {
		t.Fatalf("committed offset %d, want 0 (window b is open from offset 0)", cp.Offset)
	}

	t.Run("new default refuses with the ways forward", func(t *testing.T) {
		p := mustFresh(t, envV3, Config{})
		err := p.Restore(cp.Metadata, cp.Offset)
		if !errors.Is(err, ErrCheckpointMismatch) || !errors.Is(err, ErrDefaultSpecChanged) {
			t.Fatalf("Restore = %v, want ErrCheckpointMismatch and ErrDefaultSpecChanged", err)
		}
		t.Logf("refusal: %v", err)
		for _, want := range []string{oldID, newID, "spec version 1", "spec version 3", "orthogonal random features",
			"non-uniform FFT", "DISTFEAT_SPEC", "examples/default-spec-v1.json", "DISTFEAT_RESET_CHECKPOINTS=true",
			"DISTFEAT_GROUP", "docs/upgrading.md"} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("the refusal does not mention %q:\n%v", want, err)
			}
		}
		// Starting anyway (DISTFEAT_RESET_CHECKPOINTS) is a fresh start under the new spec:
		// window a is emitted again, now with the new spec_id.
		msgs := processAll(t, p, log[cp.Offset:], 1)
		got := envV3.windowsBySet(msgs)
		for _, set := range []string{"a", "b"} {
			if len(got[set]) != 1 || got[set][0].rec.SpecID != newID || headerOf(got[set][0].msg.Headers, schema.HeaderSpecID) != newID {
				t.Errorf("after a reset, set %s: %d windows, want one under spec_id %s", set, len(got[set]), newID)
			}
		}
	})

	t.Run("pinned former default resumes exactly", func(t *testing.T) {
		pinned, err := spec.LoadSpec(filepath.Join("..", "examples", "default-spec-v1.json"))
		if err != nil {
			t.Fatal(err)
		}
		if pinned.ID() != oldID {
			t.Fatalf("examples/default-spec-v1.json has spec_id %s, the former default %s", pinned.ID(), oldID)
		}
		pinEnv := newEnv(t, string(pinned.CanonicalJSON()))
		p := mustFresh(t, pinEnv, Config{})
		if err := p.Restore(cp.Metadata, cp.Offset); err != nil {
			t.Fatalf("Restore under the pinned former default: %v", err)
		}
		// Window a was emitted before the restart: suppressed; window b closes now, with the
		// bytes an uninterrupted run gives.
		msgs := processAll(t, p, log[cp.Offset:], 1)
		ref := processAll(t, mustFresh(t, envV1, Config{}), log, 1)
		if len(msgs) != 1 || len(ref) != 2 {
			t.Fatalf("pinned restart emitted %d messages (want 1: window b), reference run %d (want 2)", len(msgs), len(ref))
		}
		if d := sameMessages(msgs, ref[1:]); d != "" {
			t.Errorf("pinned restart differs from an uninterrupted run: %s", d)
		}
	})

	t.Run("another spec is the ordinary mismatch", func(t *testing.T) {
		other := newEnv(t, smallSpec)
		err := mustFresh(t, other, Config{}).Restore(cp.Metadata, cp.Offset)
		if !errors.Is(err, ErrCheckpointMismatch) || errors.Is(err, ErrDefaultSpecChanged) {
			t.Errorf("Restore under another spec = %v, want ErrCheckpointMismatch only", err)
		}
	})
}
