package spec

import (
	"strconv"
	"strings"
	"testing"
)

// TestSpecMemoryBounds: a family whose fields imply more memory than its limit is refused by
// validation, before anything is allocated, with an error that names the field, the memory
// it would need and the limit; sizes that fit (calibrate's largest grids among them) pass.
func TestSpecMemoryBounds(t *testing.T) {
	hdd := func(dim int, fields string) string {
		return `{"dim": ` + itoa(dim) + `, "families": [{"name": "h", "kind": "hdd", "divergence": "js", "sigma": 1` + fields + `}]}`
	}
	// n mmd families of 131072 × 512 frequencies each (0.5 GiB).
	mmds := func(n int) string {
		fams := make([]string, n)
		for i := range fams {
			fams[i] = `{"name": "m` + itoa(i) + `", "kind": "mmd", "bandwidth": 0.1, "features": 262144, "method": "direct"}`
		}
		return `{"dim": 512, "families": [` + strings.Join(fams, ", ") + `]}`
	}
	for _, tc := range []struct {
		name, doc string
		want      []string // substrings of the error; none: valid
	}{
		// Issue 32: grew to 22.8 GB before the kernel killed it.
		{"grid 1000000", hdd(1, `, "grid": 1000000`), []string{"families[0].grid:", "KDE operator", "would need 4.4 TiB", "limit 256.0 MiB"}},
		// Issue 32: 1 GB for one point (346 MB resident and 4.5 s measured here).
		{"grid 8192", hdd(1, `, "grid": 8192`), []string{"families[0].grid:", "would need 308.1 MiB", "limit 256.0 MiB"}},
		{"grid 8192 narrow kernel", hdd(1, `, "grid": 8192, "kde_bandwidth": 0.001`), []string{"families[0].grid:", "kernel evaluations", "limit 16777216"}},
		{"marginal counts", hdd(60000, `, "grid": 4000, "basis": 1, "lambdas": 1, "features": 2`), []string{"families[0].grid:", "one open window's binned counts would need 1.8 GiB", "marginal mode keeps one grid per dimension"}},
		{"wide 1-D kernel", hdd(1, `, "grid": 4000, "kde_bandwidth": 0.5`), []string{"families[0].grid:", "KDE operator", "would need 366.4 MiB"}},
		{"families together", mmds(5), []string{"families: the families' random Fourier matrices would hold 335544320 weights together, 2.5 GiB (limit 268435456, 2.0 GiB)"}},
		{"families together, within the limit", mmds(3), nil},
		{"default", hdd(2, ``), nil},
		{"calibrate's largest 1-D grid", hdd(1, `, "grid": 1024, "kde_bandwidth": 0.001`), nil},
		{"calibrate's largest joint 2-D grid", hdd(2, `, "grid": 128, "basis": 160, "kde_bandwidth": 0.0282`), nil},
		{"fine 1-D grid", hdd(1, `, "grid": 4000`), nil},
		{"2-D grid 1000", hdd(2, `, "grid": 1000`), nil},
		{"3-D grid 101", hdd(3, `, "grid": 101`), nil},
		{"3-D grid 101, largest basis", hdd(3, `, "grid": 101, "basis": 65536, "features": 2, "lambdas": 1`), nil},
		{"2-D grid 1024, wide kernel", hdd(2, `, "grid": 1024, "kde_bandwidth": 0.3`), nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseSpec([]byte(tc.doc))
			if tc.want == nil {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			if err == nil {
				t.Fatal("accepted")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
		})
	}
}

func itoa(n int) string { return strconv.Itoa(n) }
