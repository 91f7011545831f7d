package window

import "testing"

// TestPointsPerWindow: only count windows have a size in points known in advance.
func TestPointsPerWindow(t *testing.T) {
	for _, tc := range []struct {
		cfg  Config
		want int64
	}{
		{Config{Mode: ModeCount, Size: 250}, 250},
		{Config{Mode: ModeCount, Size: 250, Hop: 50}, 250},
		{Config{Mode: ModeTime, Size: 10000}, 0},
		{Config{Mode: ModeSession, Gap: 500}, 0},
		{Config{Mode: ModeSet}, 0},
		{Config{}, 0},
	} {
		if got := tc.cfg.PointsPerWindow(); got != tc.want {
			t.Errorf("%+v: PointsPerWindow %d, want %d", tc.cfg, got, tc.want)
		}
	}
}
