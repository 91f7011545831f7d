package window

import (
	"errors"
	"strings"
	"testing"
	"time"
)

func TestValidate(t *testing.T) {
	for _, tc := range []struct {
		cfg  Config
		want []string // substrings of the error; none → valid
	}{
		{Config{MaxOpen: 1}, nil},
		{Config{Mode: ModeSet, MaxOpen: 1, IdleTimeout: time.Minute}, nil},
		{Config{Mode: ModeCount, Size: 5, MaxOpen: 1}, nil},
		{Config{Mode: ModeCount, Size: 5, Hop: 2, MaxOpen: 3}, nil},
		{Config{Mode: ModeTime, Size: 10, Hop: 4, AllowedLateness: 5, MaxOpen: 3}, nil},
		{Config{Mode: ModeSession, Gap: 1, MaxOpen: 1}, nil},
		{Config{}, []string{"DISTFEAT_MAX_OPEN_WINDOWS must be > 0"}},
		{Config{Mode: "tumbling", MaxOpen: 1}, []string{`DISTFEAT_WINDOW: unknown mode "tumbling"`}},
		{Config{Mode: ModeCount, MaxOpen: 1}, []string{"DISTFEAT_WINDOW_SIZE must be > 0 for window=count"}},
		{Config{Mode: ModeTime, Size: -5, MaxOpen: 1}, []string{"DISTFEAT_WINDOW_SIZE must be > 0 for window=time"}},
		{Config{Mode: ModeCount, Size: 5, Hop: 6, MaxOpen: 1}, []string{"DISTFEAT_WINDOW_HOP (6) must be ≤ DISTFEAT_WINDOW_SIZE (5)"}},
		{Config{Mode: ModeTime, Size: 5, Hop: -1, MaxOpen: 1}, []string{"DISTFEAT_WINDOW_HOP must be > 0"}},
		{Config{Mode: ModeSession, MaxOpen: 1}, []string{"DISTFEAT_WINDOW_GAP must be > 0 for window=session"}},
		{Config{Mode: ModeTime, Size: 5, AllowedLateness: -1, MaxOpen: 1}, []string{"DISTFEAT_ALLOWED_LATENESS must be ≥ 0"}},
		{Config{IdleTimeout: -time.Second, MaxOpen: 1}, []string{"DISTFEAT_IDLE_TIMEOUT must be ≥ 0"}},
		{Config{Mode: ModeCount, Size: 10, Hop: 3, MaxOpen: 3}, []string{"DISTFEAT_MAX_OPEN_WINDOWS (3) must be ≥", "(4)"}},
		{Config{Mode: ModeCount, MaxOpen: 0}, []string{"DISTFEAT_WINDOW_SIZE must be > 0", "DISTFEAT_MAX_OPEN_WINDOWS must be > 0"}},
	} {
		err := tc.cfg.Validate()
		if len(tc.want) == 0 {
			if err != nil {
				t.Errorf("%+v: unexpected error %v", tc.cfg, err)
			}
			continue
		}
		if err == nil {
			t.Errorf("%+v: no error, want %q", tc.cfg, tc.want)
			continue
		}
		for _, s := range tc.want {
			if !strings.Contains(err.Error(), s) {
				t.Errorf("%+v: error %q lacks %q", tc.cfg, err, s)
			}
		}
		if _, err2 := NewManager(tc.cfg, newFake, nil); err2 == nil {
			t.Errorf("%+v: NewManager accepted an invalid config", tc.cfg)
		}
	}
	if _, err := NewManager[*fakeSketch](Config{MaxOpen: 1}, nil, nil); err == nil {
		t.Error("NewManager accepted a nil newSketch")
	}
}

func TestInvalidInput(t *testing.T) {
	for _, tc := range []struct {
		name string
		x    Input
	}{
		{"offset going back", in(4, 0, "a", 1, false, 1)},
		{"not whole points", Input{Offset: 9, Set: "a", Points: []float64{1, 2, 3}, Dim: 2}},
		{"no dimension", Input{Offset: 9, Set: "a", Points: []float64{1, 2}}},
		{"negative index", Input{Offset: 9, Index: -1, Set: "a"}},
		{"ordinals beyond 2^20", in(9, 1<<20-1, "a", 1, false, 1, 2)},
	} {
		m, _ := newTestManager(t, Config{MaxOpen: 10})
		if _, err := m.Add(in(5, 0, "a", 1, false, 1)); err != nil {
			t.Fatal(err)
		}
		if _, err := m.Add(tc.x); !errors.Is(err, ErrInvalidInput) {
			t.Errorf("%s: error %v, want ErrInvalidInput", tc.name, err)
		}
		if m.Open() != 1 {
			t.Errorf("%s: the invalid input changed the state", tc.name)
		}
	}
	m, _ := newTestManager(t, Config{MaxOpen: 10})
	if _, err := m.Add(in(5, 1<<20-2, "a", 1, false, 1, 2)); err != nil {
		t.Errorf("last ordinal 2^20-1: %v", err)
	}
}

func TestRestoreErrors(t *testing.T) {
	timeCfg := Config{Mode: ModeTime, Size: 10, MaxOpen: 10}
	tm, _ := newTestManager(t, timeCfg)
	if cp := tm.Checkpoint(); cp != "" {
		t.Fatalf("fresh Checkpoint() = %q, want empty", cp)
	}
	if _, err := tm.Add(in(0, 0, "a", 5, false, 1)); err != nil {
		t.Fatal(err)
	}
	tm.SafeOffset(1)
	cp := tm.Checkpoint()
	if err := tm.Restore(cp, 1); !errors.Is(err, ErrBadCheckpoint) {
		t.Errorf("Restore after Add: %v", err)
	}
	for _, tc := range []struct {
		cfg Config
		cp  string
	}{
		{timeCfg, "garbage"},
		{timeCfg, "window/v1;m=time;c=x;n=1;me=-;cme=-"},
		{timeCfg, "window/v1;m=time;c=0;n=1;me=?;cme=-"},
		{timeCfg, "window/v1;m=time;c=0;n=1;me"},
		{Config{Mode: ModeSession, Gap: 5, MaxOpen: 10}, cp},
		{Config{Mode: ModeSet, MaxOpen: 10}, cp},
		// Same mode, other window parameters: the checkpoint describes other windows.
		{Config{Mode: ModeTime, Size: 20, MaxOpen: 10}, cp},
		{Config{Mode: ModeTime, Size: 10, Hop: 5, MaxOpen: 10}, cp},
		{Config{Mode: ModeTime, Size: 10, AllowedLateness: 3, MaxOpen: 10}, cp},
		{Config{Mode: ModeCount, Size: 4, MaxOpen: 10}, "window/v1;m=count;c=0;n=1;w=size:5,hop:5"},
		{Config{Mode: ModeSession, Gap: 5, MaxOpen: 10}, "window/v1;m=session;c=0;n=1;w=gap:6,late:0;me=-;cme=-"},
	} {
		m, _ := newTestManager(t, tc.cfg)
		if err := m.Restore(tc.cp, -1); !errors.Is(err, ErrBadCheckpoint) {
			t.Errorf("Restore(%q) in %s: %v, want ErrBadCheckpoint", tc.cp, tc.cfg.Mode, err)
		}
		// The Manager stays fresh and usable.
		if _, err := m.Add(in(0, 0, "a", 5, false, 1)); err != nil || m.Open() < 1 {
			t.Errorf("Add after a failed Restore(%q) in %s: %v, %d open", tc.cp, tc.cfg.Mode, err, m.Open())
		}
	}
	m, _ := newTestManager(t, timeCfg)
	if err := m.Restore(cp, -1); err != nil {
		t.Fatal(err)
	}
	if got := m.Checkpoint(); got != cp {
		t.Errorf("Checkpoint() right after Restore = %q, want %q", got, cp)
	}
	if err := m.Restore(cp, -1); !errors.Is(err, ErrBadCheckpoint) {
		t.Errorf("second Restore: %v", err)
	}
	m2, _ := newTestManager(t, timeCfg)
	if err := m2.Restore("", 7); err != nil {
		t.Errorf(`Restore(""): %v`, err)
	}
	// What does not shape the windows may change; checkpoints of earlier releases, without
	// the parameters, are trusted.
	for _, tc := range []struct {
		cfg Config
		cp  string
	}{
		{Config{Mode: ModeTime, Size: 10, MaxOpen: 99, IdleTimeout: time.Minute}, cp},
		{Config{Mode: ModeTime, Size: 10, Hop: 10, MaxOpen: 10}, cp},
		{timeCfg, "window/v1;m=time;c=0;n=1;me=-;cme=-"},
		{Config{Mode: ModeCount, Size: 5, MaxOpen: 10}, "window/v1;m=count;c=0;n=1"},
	} {
		m, _ := newTestManager(t, tc.cfg)
		if err := m.Restore(tc.cp, -1); err != nil {
			t.Errorf("Restore(%q) with %+v: %v", tc.cp, tc.cfg, err)
		}
	}
}

func TestCheckpointSize(t *testing.T) {
	for _, mode := range []Mode{ModeSet, ModeCount, ModeTime, ModeSession} {
		cfg := Config{Mode: mode, Size: 10, Gap: 10, AllowedLateness: 1 << 40, MaxOpen: 10}
		m, _ := newTestManager(t, cfg)
		if _, err := m.Add(in(1<<62, 0, "a", -1<<62, false, 1)); err != nil {
			t.Fatal(err)
		}
		m.SafeOffset(1<<63 - 1)
		if cp := m.Checkpoint(); len(cp) > 512 || cp == "" {
			t.Errorf("%s: checkpoint %q (%d bytes)", mode, cp, len(cp))
		}
	}
}

func TestFakeClock(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	c := NewFakeClock(t0)
	if !c.Now().Equal(t0) {
		t.Fatal("NewFakeClock does not start at its argument")
	}
	if got := c.Advance(time.Minute); !got.Equal(t0.Add(time.Minute)) || !c.Now().Equal(got) {
		t.Fatalf("Advance: %v", got)
	}
	c.Set(t0)
	if !c.Now().Equal(t0) {
		t.Fatal("Set")
	}
	var _ Clock = SystemClock{}
	if d := time.Since(SystemClock{}.Now()); d < 0 || d > time.Minute {
		t.Fatalf("SystemClock is %v off", d)
	}
}
