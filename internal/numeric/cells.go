package numeric

import "math"

// HDDLogSqrt sets sq[c] = √p and lnp[c] = ln p (Log) for p = dens[c] > 0, 0 for
// any other p (p = 0: p^{½+iλ} = 0 = √p·e^{i·0}), and returns the largest |lnp[c]|. With
// AVX-512 the cells go 8 at a time through Log's operations (cells_amd64.s); a
// block of 8 with a subnormal or infinite density, and the cells left over, go through
// hddLogSqrtGo (every path gives the same bits; TestHDDLogSqrtPaths).
func HDDLogSqrt(path Path, dens, sq, lnp []float64) float64 {
	maxAbs := 0.0
	for k := 0; k < len(dens); {
		done, m, ran := hddLogSqrtSIMD(path, dens[k:], sq[k:], lnp[k:])
		k += done
		maxAbs = max(maxAbs, m)
		e := len(dens)
		if ran {
			e = min(k+8, e) // the block the kernel stopped at, or the cells left over
		}
		maxAbs = max(maxAbs, hddLogSqrtGo(dens[k:e], sq[k:e], lnp[k:e]))
		k = e
	}
	return maxAbs
}

// hddLogSqrtGo is the portable HDDLogSqrt.
func hddLogSqrtGo(dens, sq, lnp []float64) float64 {
	sq, lnp = sq[:len(dens)], lnp[:len(dens)]
	maxAbs := 0.0
	for c, p := range dens {
		sq[c] = math.Sqrt(p)
		l := 0.0
		if p > 0 {
			l = Log(p)
		}
		lnp[c] = l
		maxAbs = max(maxAbs, math.Abs(l))
	}
	return maxAbs
}

// HDDCells computes g_λ's real and imaginary parts at the cells: for each c,
// (sin, cos) = sincos(lam·lnp[c]), re = sq[c]·cos − 1, im = sq[c]·sin,
// fr[c] = cr·re − ci·im and fi[c] = ci·re + cr·im, each operation rounded. With AVX-512 the
// cells go 8 at a time through the same operations (cells_amd64.s), which needs every
// |lam·lnp[c]| within the polynomial kernel's range (maxAbsL bounds |lnp|; the margin of
// 2 covers the rounding of the product); otherwise, and for the cells left over,
// HDDCellsGo.
func HDDCells(path Path, lam, cr, ci float64, sq, lnp, fr, fi []float64, maxAbsL float64) {
	k := 0
	if math.Abs(lam)*maxAbsL <= SincosMaxArg/2 {
		k = hddCellsSIMD(path, lam, cr, ci, sq, lnp, fr, fi)
	}
	HDDCellsGo(lam, cr, ci, sq[k:], lnp[k:], fr[k:], fi[k:])
}

// HDDCellsGo is the portable HDDCells. Runs of equal densities (cells at the floor,
// typically) reuse the last sin/cos (sincos(lam·0) = (0, 1) starts the run).
func HDDCellsGo(lam, cr, ci float64, sq, lnp, fr, fi []float64) {
	sq, fr, fi = sq[:len(lnp)], fr[:len(lnp)], fi[:len(lnp)]
	lastL, sn, cs := 0.0, 0.0, 1.0
	for c, l := range lnp {
		if l != lastL {
			sn, cs = Sincos(lam * l)
			lastL = l
		}
		s := sq[c]
		re, im := float64(s*cs)-1, float64(s*sn)
		fr[c] = float64(cr*re) - float64(ci*im)
		fi[c] = float64(ci*re) + float64(cr*im)
	}
}
