package embedding

import "testing"

// TestAdviseHuge: the advice leaves every value as it was, for slices too small to hold a
// huge page and for large ones at any alignment (sub-slices starting at odd offsets).
func TestAdviseHuge(t *testing.T) {
	big := make([]float64, 3<<20) // 24 MiB
	for i := range big {
		big[i] = float64(i)
	}
	for _, tc := range []struct {
		name string
		x    []float64
	}{
		{"empty", nil},
		{"small", big[:1000]},
		{"just below two huge pages", big[:(4<<20)/8-1]},
		{"large aligned as allocated", big},
		{"large at an odd offset", big[12345:]},
		{"large at an odd offset and length", big[777 : len(big)-4321]},
	} {
		t.Run(tc.name, func(t *testing.T) {
			first := 0.0 // the value (= index in big) x starts with
			if len(tc.x) > 0 {
				first = tc.x[0]
			}
			adviseHuge(tc.x)
			for i, v := range tc.x {
				if want := first + float64(i); v != want {
					t.Fatalf("x[%d] = %v after adviseHuge, want %v", i, v, want)
				}
			}
		})
	}
}
