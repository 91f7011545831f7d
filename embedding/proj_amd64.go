//go:build amd64 && !purego

package embedding

import "golang.org/x/sys/cpu"

// projLanesAVX512 is the AVX-512F kernel of projLanes for 32 lanes (proj_amd64.s).
// Preconditions (checked by projLanes): h ≥ 1, rows 0..h−1 of v hold 32 values at
// v + c·ldv bytes, out holds 32.
//
//go:noescape
func projLanesAVX512(th *float64, h int, v *float64, ldv int, out *float64)

// projLanes8AVX512 is projLanesAVX512 for 8 lanes (same preconditions with 8 for 32).
//
//go:noescape
func projLanes8AVX512(th *float64, h int, v *float64, ldv int, out *float64)

// projLanesSIMD runs projLanes on groups of 32, then 8, lanes with AVX-512 when the path
// and CPU allow it, and returns how many lanes it did (a multiple of 8).
func projLanesSIMD(path dotPath, th, v []float64, ld int, out []float64) int {
	if path != dotPathAVX512 || !cpu.X86.HasAVX512F || len(th) == 0 {
		return 0
	}
	k := 0
	for ; k+32 <= len(out); k += 32 {
		projLanesAVX512(&th[0], len(th), &v[k], 8*ld, &out[k])
	}
	for ; k+8 <= len(out); k += 8 {
		projLanes8AVX512(&th[0], len(th), &v[k], 8*ld, &out[k])
	}
	return k
}
