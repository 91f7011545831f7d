package nufft

import "math"

// Work is the scratch space of Finalize; one per goroutine.
type Work struct {
	grid   []float64 // one dimension-0 slice of the grid, converted
	ar, ai []float64 // after the dimension-0 pass
	br, bi []float64 // after the dimension-1 pass (d ≥ 2)
	cr, ci []float64 // after the dimension-2 pass (d = 3)
	fr, fi []float64 // the targets' interpolated sums before their factors (d = 2)
}

// NewWork allocates the scratch space of Finalize.
func (p *Plan) NewWork() *Work {
	n := p.mcount[0]
	for j := 1; j < p.d; j++ {
		n *= p.nf[j]
	}
	wk := &Work{ar: make([]float64, n), ai: make([]float64, n), grid: make([]float64, p.cells/p.nf[0])}
	if p.d == 2 {
		m := p.mcount[0] * p.m1p
		wk.br, wk.bi = make([]float64, m), make([]float64, m)
		wk.fr, wk.fi = make([]float64, p.f), make([]float64, p.f)
	}
	if p.d == 3 {
		m := p.mcount[0] * p.mcount[1]
		m *= p.nf[2]
		wk.br, wk.bi = make([]float64, m), make([]float64, m)
	}
	if p.d == 3 {
		m := p.mcount[0] * p.mcount[1] * p.mcount[2]
		wk.cr, wk.ci = make([]float64, m), make([]float64, m)
	}
	return wk
}

// Finalize writes the sums S_r = Σ_k exp(i ω_r·u_k) of the points spread into grid:
// re[r] ≈ Σ_k cos ω_r·u_k and im[r] ≈ Σ_k sin ω_r·u_k (r < F). It does not change grid.
func (p *Plan) Finalize(grid []int64, re, im []float64, wk *Work) {
	if len(grid) != p.cells {
		panic("nufft: grid length does not match the plan")
	}
	re, im = re[:p.f], im[:p.f]
	if p.d == 2 {
		p.finalize2(grid, re, im, wk)
		return
	}
	// Dimension 0 (the flipped one): real grid → (mcount0 × rest) complex, as row updates.
	inner := p.cells / p.nf[0]
	nf0, m0 := p.nf[0], p.mcount[0]
	ar, ai := wk.ar[:m0*inner], wk.ai[:m0*inner]
	clear(ar)
	clear(ai)
	src := wk.grid[:inner]
	for l := 0; l < nf0; l++ {
		for i, v := range grid[l*inner : (l+1)*inner] {
			src[i] = float64(v)
		}
		for mi := 0; mi < m0; mi++ {
			er, ei := p.er[0][mi*nf0+l], p.ei[0][mi*nf0+l]
			dr, di := ar[mi*inner:(mi+1)*inner], ai[mi*inner:(mi+1)*inner]
			dr, di = dr[:len(src)], di[:len(src)]
			for i, x := range src {
				dr[i] = float64(er*x) + dr[i]
				di[i] = float64(ei*x) + di[i]
			}
		}
	}
	if p.d == 1 {
		p.interp1(ar, ai, re, im)
		return
	}
	// d = 3. Dimension 1: for each dim-0 output and dim-2 index, a complex DFT along dim 1.
	nf1, m1 := p.nf[1], p.mcount[1]
	rest := inner / nf1 // 1 for d = 2, nf2 for d = 3
	br, bi := wk.br[:m0*m1*rest], wk.bi[:m0*m1*rest]
	clear(br)
	clear(bi)
	for o := 0; o < m0; o++ {
		for l := 0; l < nf1; l++ {
			xr := ar[(o*nf1+l)*rest : (o*nf1+l+1)*rest]
			xi := ai[(o*nf1+l)*rest : (o*nf1+l+1)*rest]
			for mi := 0; mi < m1; mi++ {
				er, ei := p.er[1][mi*nf1+l], p.ei[1][mi*nf1+l]
				dr := br[(o*m1+mi)*rest : (o*m1+mi+1)*rest]
				di := bi[(o*m1+mi)*rest : (o*m1+mi+1)*rest]
				for i := range dr {
					dr[i] = (float64(er*xr[i]) + dr[i]) - float64(ei*xi[i])
					di[i] = (float64(er*xi[i]) + di[i]) + float64(ei*xr[i])
				}
			}
		}
	}
	// Dimension 2: dot products along the contiguous axis.
	nf2, m2 := p.nf[2], p.mcount[2]
	cr, ci := wk.cr[:m0*m1*m2], wk.ci[:m0*m1*m2]
	for o := 0; o < m0*m1; o++ {
		xr, xi := br[o*nf2:(o+1)*nf2], bi[o*nf2:(o+1)*nf2]
		for mi := 0; mi < m2; mi++ {
			er, ei := p.er[2][mi*nf2:(mi+1)*nf2], p.ei[2][mi*nf2:(mi+1)*nf2]
			sr, si := 0.0, 0.0
			for l := range er {
				sr = (float64(er[l]*xr[l]) + sr) - float64(ei[l]*xi[l])
				si = (float64(er[l]*xi[l]) + si) + float64(ei[l]*xr[l])
			}
			cr[o*m2+mi], ci[o*m2+mi] = sr, si
		}
	}
	p.interp3(cr, ci, re, im)
}

// finalize2 is Finalize for d = 2, in the layouts of the vector kernels (finalize_amd64.s):
// dimension 0 as row updates over the grid's rows (axpy over the contiguous dimension-1
// index), dimension 1 as dot products computed for four outputs at a time (each output's
// sum still runs over l in order, so the vector and scalar code agree bit for bit).
func (p *Plan) finalize2(grid []int64, re, im []float64, wk *Work) {
	nf0, nf1, m0, m1p := p.nf[0], p.nf[1], p.mcount[0], p.m1p
	ar, ai := wk.ar[:m0*nf1], wk.ai[:m0*nf1]
	clear(ar)
	clear(ai)
	src := wk.grid[:nf1]
	for l := 0; l < nf0; l++ {
		for i, v := range grid[l*nf1 : (l+1)*nf1] {
			src[i] = float64(v)
		}
		p.rowUpdates(src, p.e0t[l*2*m0:(l+1)*2*m0], ar, ai)
	}
	br, bi := wk.br[:m0*m1p], wk.bi[:m0*m1p]
	for o := 0; o < m0; o++ {
		p.dotColumns(ar[o*nf1:(o+1)*nf1], ai[o*nf1:(o+1)*nf1], br[o*m1p:(o+1)*m1p], bi[o*m1p:(o+1)*m1p])
	}
	p.interp2(br, bi, re, im, wk)
}

// rowUpdatesGo: for every output mi, ar[mi][:] += e[mi]·src and ai[mi][:] += e[m0+mi]·src
// (e = one row of e0t), each update one fused multiply-add.
func rowUpdatesGo(src, e, ar, ai []float64) {
	n, m0 := len(src), len(e)/2
	for mi := 0; mi < m0; mi++ {
		er, ei := e[mi], e[m0+mi]
		dr, di := ar[mi*n:(mi+1)*n], ai[mi*n:(mi+1)*n]
		dr, di = dr[:n], di[:n]
		for i, x := range src {
			dr[i] = math.FMA(er, x, dr[i])
			di[i] = math.FMA(ei, x, di[i])
		}
	}
}

// dotColumnsGo writes the complex dot products of (xr, xi) with every column mi < m1p of
// e1t: br[mi] = Σ_l Er·xr − Σ_l Ei·xi, bi[mi] = Σ_l Er·xi + Σ_l Ei·xr, each sum in l order
// by fused multiply-adds.
func dotColumnsGo(xr, xi, e1t []float64, m1p int, br, bi []float64) {
	for mi := 0; mi < m1p; mi++ {
		var rr, ii, ri, ir float64
		for l, x := range xr {
			er, ei := e1t[l*2*m1p+mi], e1t[l*2*m1p+m1p+mi]
			rr = math.FMA(er, x, rr)
			ii = math.FMA(ei, xi[l], ii)
			ri = math.FMA(er, xi[l], ri)
			ir = math.FMA(ei, x, ir)
		}
		br[mi], bi[mi] = rr-ii, ri+ir
	}
}

// emit applies target r's flip and output factor to the interpolated f.
func (p *Plan) emit(r int, fr, fi float64, re, im []float64) {
	if p.flip[r] {
		fi = -fi
	}
	re[r] = float64(p.fr[r]*fr) - float64(p.fi[r]*fi)
	im[r] = float64(p.fr[r]*fi) + float64(p.fi[r]*fr)
}

func (p *Plan) interp1(gr, gi, re, im []float64) {
	w := p.w
	for r := 0; r < p.f; r++ {
		s := int(p.start[r])
		wt := p.wts[r*w : (r+1)*w]
		sr, si := 0.0, 0.0
		for a, v := range wt {
			sr = float64(v*gr[s+a]) + sr
			si = float64(v*gi[s+a]) + si
		}
		p.emit(r, sr, si, re, im)
	}
}

func (p *Plan) interp2(gr, gi, re, im []float64, wk *Work) {
	fr, fi := wk.fr[:p.f], wk.fi[:p.f]
	p.interp2Raw(gr, gi, fr, fi)
	for r := range fr {
		p.emit(r, fr[r], fi[r], re, im)
	}
}

// interp2Go interpolates every target of a w = 8 plan from g (stride m1p): in lane b,
// acc[b] = Σ_a w0[a]·(w1[b]·g[s0+a][s1+b]) (the inner product rounded, the outer one fused
// into the sum, a in order), then
// f = (q0 + q2) + (q1 + q3) with q_b = acc[b] + acc[b+4]: the order of the vector kernel
// (finalize_amd64.s), which keeps one lane per b. Other widths go through interp2Any.
func interp2Go(gr, gi []float64, stride int, start []int32, wts []float64, fr, fi []float64) {
	for r := range fr {
		s0, s1 := int(start[2*r]), int(start[2*r+1])
		w0 := wts[16*r : 16*r+8]
		w1 := wts[16*r+8 : 16*r+16]
		var ar, ai [8]float64
		for a, va := range w0 {
			rr := gr[(s0+a)*stride+s1 : (s0+a)*stride+s1+8]
			ri := gi[(s0+a)*stride+s1 : (s0+a)*stride+s1+8]
			for b, vb := range w1 {
				ar[b] = math.FMA(va, float64(vb*rr[b]), ar[b])
				ai[b] = math.FMA(va, float64(vb*ri[b]), ai[b])
			}
		}
		fr[r] = ((ar[0] + ar[4]) + (ar[2] + ar[6])) + ((ar[1] + ar[5]) + (ar[3] + ar[7]))
		fi[r] = ((ai[0] + ai[4]) + (ai[2] + ai[6])) + ((ai[1] + ai[5]) + (ai[3] + ai[7]))
	}
}

// interp2Any is the interpolation for widths other than 8: rows summed in order.
func (p *Plan) interp2Any(gr, gi, fr, fi []float64) {
	w, m1 := p.w, p.m1p
	for r := range fr {
		s0, s1 := int(p.start[2*r]), int(p.start[2*r+1])
		w0 := p.wts[(2*r)*w : (2*r+1)*w]
		w1 := p.wts[(2*r+1)*w : (2*r+2)*w]
		sr, si := 0.0, 0.0
		for a, va := range w0 {
			rr := gr[(s0+a)*m1+s1 : (s0+a)*m1+s1+w]
			ri := gi[(s0+a)*m1+s1 : (s0+a)*m1+s1+w]
			tr, ti := 0.0, 0.0
			for b, vb := range w1 {
				tr = float64(vb*rr[b]) + tr
				ti = float64(vb*ri[b]) + ti
			}
			sr = float64(va*tr) + sr
			si = float64(va*ti) + si
		}
		fr[r], fi[r] = sr, si
	}
}

func (p *Plan) interp3(gr, gi, re, im []float64) {
	w, m1, m2 := p.w, p.mcount[1], p.mcount[2]
	for r := 0; r < p.f; r++ {
		s0, s1, s2 := int(p.start[3*r]), int(p.start[3*r+1]), int(p.start[3*r+2])
		w0 := p.wts[(3*r)*w : (3*r+1)*w]
		w1 := p.wts[(3*r+1)*w : (3*r+2)*w]
		w2 := p.wts[(3*r+2)*w : (3*r+3)*w]
		sr, si := 0.0, 0.0
		for a, va := range w0 {
			ur, ui := 0.0, 0.0
			for b, vb := range w1 {
				base := ((s0+a)*m1+s1+b)*m2 + s2
				rr, ri := gr[base:base+w], gi[base:base+w]
				tr, ti := 0.0, 0.0
				for c, vc := range w2 {
					tr = float64(vc*rr[c]) + tr
					ti = float64(vc*ri[c]) + ti
				}
				ur = float64(vb*tr) + ur
				ui = float64(vb*ti) + ui
			}
			sr = float64(va*ur) + sr
			si = float64(va*ui) + si
		}
		p.emit(r, sr, si, re, im)
	}
}
