package numeric

// dot2 is (Σ t·x, Σ t·y) over len(t), two partial sums each.
func Dot2(t, x, y []float64) (float64, float64) {
	x, y = x[:len(t)], y[:len(t)]
	var a0, a1, b0, b1 float64
	i := 0
	for ; i+2 <= len(t); i += 2 {
		tt := t[i : i+2 : i+2]
		xx := x[i : i+2 : i+2]
		yy := y[i : i+2 : i+2]
		a0 += float64(tt[0] * xx[0])
		b0 += float64(tt[0] * yy[0])
		a1 += float64(tt[1] * xx[1])
		b1 += float64(tt[1] * yy[1])
	}
	if i < len(t) {
		a0 += float64(t[i] * x[i])
		b0 += float64(t[i] * y[i])
	}
	return a0 + a1, b0 + b1
}

// ProjLanes sets out[k] = a0_k + a1_k for every lane k < len(out), where
// a0_k = Σ_{c even} th[c]·v[c·ld + k] and a1_k = Σ_{c odd} th[c]·v[c·ld + k], each product
// rounded before it is added, in increasing c from +0 — per lane, the order of dot2. The
// AVX-512 kernel does 32 lanes at a time with the same operations (every path gives the
// same bits; TestProjLanesPaths).
func ProjLanes(path Path, th, v []float64, ld int, out []float64) {
	if !lanesToCompute("ProjLanes", th, v, ld, out) {
		return
	}
	k0 := projLanesSIMD(path, th, v, ld, out)
	projLanesGo(th, v[k0:], ld, out[k0:])
}

// lanesToCompute checks the arguments of a lanes kernel (ProjLanes, DotLanes): it panics
// on inconsistent dimensions and reports false when there is nothing to compute (no lanes,
// or no terms: the lanes are then cleared).
func lanesToCompute(name string, th, v []float64, ld int, out []float64) bool {
	switch {
	case len(out) == 0:
		return false
	case len(th) == 0:
		clear(out)
		return false
	case ld < len(out) || len(v) < (len(th)-1)*ld+len(out):
		panic("numeric: " + name + ": inconsistent dimensions")
	}
	return true
}

// projLanesGo is the portable kernel of ProjLanes: groups of up to 32 lanes with their two
// partial sums on the stack, c in the outer loop so that rows of v are read contiguously
// (per lane, the same operations in the same order).
func projLanesGo(th, v []float64, ld int, out []float64) {
	h := len(th)
	var a0, a1 [32]float64
	for k0 := 0; k0 < len(out); k0 += 32 {
		nl := min(32, len(out)-k0)
		s0, s1 := a0[:nl], a1[:nl]
		clear(s0)
		clear(s1)
		c := 0
		for ; c+2 <= h; c += 2 {
			t0, t1 := th[c], th[c+1]
			r0 := v[c*ld+k0 : c*ld+k0+nl]
			r1 := v[(c+1)*ld+k0 : (c+1)*ld+k0+nl]
			r0, r1 = r0[:len(s0)], r1[:len(s0)]
			for l := range s0 {
				s0[l] += float64(t0 * r0[l])
				s1[l] += float64(t1 * r1[l])
			}
		}
		if c < h {
			t0 := th[c]
			r0 := v[c*ld+k0 : c*ld+k0+nl]
			for l := range s0 {
				s0[l] += float64(t0 * r0[l])
			}
		}
		o := out[k0 : k0+nl]
		for l := range o {
			o[l] = s0[l] + s1[l]
		}
	}
}

// DotLanes sets out[k] = dot(th, column k of v) for every lane k < len(out), column k
// being v[c·ld + k] for c < len(th): per lane, dot's four partial sums in its order
// (rff.go). The AVX-512 kernel (KDEDotLanes) does the lanes in groups of 8, Go the rest
// and every lane on the other paths (TestProject2DTPathsBitIdentical).
func DotLanes(path Path, th, v []float64, ld int, out []float64) {
	if !lanesToCompute("DotLanes", th, v, ld, out) {
		return
	}
	h := len(th)
	k0 := 0
	if KDELanesSupported(path) {
		k0 = len(out) &^ 7
		if k0 > 0 {
			KDEDotLanes(th, v, ld, out[:k0])
		}
	}
	n4 := h &^ 3
	for k := k0; k < len(out); k++ {
		var s0, s1, s2, s3 float64
		c := 0
		for ; c < n4; c += 4 {
			s0 += float64(th[c] * v[c*ld+k])
			s1 += float64(th[c+1] * v[(c+1)*ld+k])
			s2 += float64(th[c+2] * v[(c+2)*ld+k])
			s3 += float64(th[c+3] * v[(c+3)*ld+k])
		}
		for ; c < h; c++ {
			s0 += float64(th[c] * v[c*ld+k])
		}
		out[k] = (s0 + s1) + (s2 + s3)
	}
}
