package numeric

// fwht is the unnormalised in-place Walsh–Hadamard transform of y (len a power of two) by
// the butterfly order documented on sorf. The first two stages are fused into radix-4
// steps on each group of 4, which performs the same butterflies on the same values; with
// AVX-512 the stages h ≥ 8 run 8 butterflies at a time (fwhtWideAVX512).
func FWHT(path Path, y []float64) {
	n := len(y)
	if n == 1 {
		return
	}
	if n == 2 {
		y[0], y[1] = y[0]+y[1], y[0]-y[1]
		return
	}
	for i := 0; i+4 <= n; i += 4 {
		v := y[i : i+4 : i+4]
		a0, a1 := v[0]+v[1], v[0]-v[1]
		a2, a3 := v[2]+v[3], v[2]-v[3]
		v[0], v[2] = a0+a2, a0-a2
		v[1], v[3] = a1+a3, a1-a3
	}
	h := 4
	if n >= 16 {
		fwhtStage(y, 4)
		if fwhtWideSIMD(path, y) {
			return
		}
		h = 8
	}
	for ; h < n; h <<= 1 {
		fwhtStage(y, h)
	}
}

// fwhtStage is one stage of fwht: the butterflies (y_j, y_{j+h}) for every block of 2h.
func fwhtStage(y []float64, h int) {
	for i := 0; i < len(y); i += 2 * h {
		lo := y[i : i+h : i+h]
		hi := y[i+h : i+2*h : i+2*h]
		for j := range lo {
			x, z := lo[j], hi[j]
			lo[j], hi[j] = x+z, x-z
		}
	}
}
