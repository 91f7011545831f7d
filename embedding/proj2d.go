package embedding

import "github.com/distfeat/distfeat/internal/numeric"

// The joint two-dimensional projection of the hdd coefficients (gd = 2, the default spec's
// shape), vectorised across grid rows. It computes exactly what project and project2
// compute, operation for operation; only the data layout and the order in which
// independent outputs are produced differ (project's first contraction sums each output
// with dot, project2's with dot2, and project2DT follows suit: numeric.DotLanes or numeric.ProjLanes):
//
//   - the first (innermost) contraction folds each grid row o with the mirror symmetry,
//     plus_c = x_{o,c} + x_{o,G−1−c} and minus_c = x_{o,c} − x_{o,G−1−c}, stored transposed
//     (c-major) so that one table value th[m][c] multiplies the same c of every row at once
//     (numeric.ProjLanes: lanes = rows, the two partial sums of dot2 per lane);
//   - its outputs are stored suffix-major; the second contraction takes, for each needed
//     column (suffix), every output that reads it as lanes of numeric.ProjLanes with the column's
//     values broadcast: per output, the two alternating partial sums of project over the
//     same products (t·x = x·t exactly).
//
// hddFamily.coefficients computes its functions directly in the transposed (column-major)
// layout for gd = 2, so that the fold above reads and writes contiguous lines.

// use2D reports whether project, project2 and hddFamily.coefficients take the
// vectorised gd = 2 layout: only with the AVX-512 kernels, where it pays; the other paths
// keep the row-major code (same bits, and the reference the path tests compare against).
func (p *projPlan) use2D() bool {
	return p.gd == 2 && p.path == numeric.PathAVX512 && numeric.PathSupported(numeric.PathAVX512)
}

// proj2DScratch is the workspace of project2DT: the folded lines (plus, minus) of the
// real and imaginary functions, c-major; the first contraction's outputs, suffix-major;
// the transposed inputs of project/project2; and the lanes of one second-axis group.
type proj2DScratch struct {
	fold   [2][2][]float64 // [function][plus, minus]: half × G
	mid    [2][]float64    // [function]: len(steps[1].m) × G
	tr     [2][]float64    // [function]: G × G, column-major copies of row-major inputs
	lanes  []float64       // the widest secGroup
	lanes2 []float64       // the same for the second function
}

// secGroup is the part of the second (outer-axis) contraction that reads one column of
// the first contraction's outputs: the outputs s whose suffix is src, as lanes of
// numeric.ProjLanes with the column broadcast and tab[c·lanes + l] = t[m_l][c] (lanes padded to
// a multiple of 8 with zero rows whose results are dropped).
type secGroup struct {
	src   int
	outs  []int // output index s of lane l
	lanes int
	tab   []float64
}

// newSecGroups builds project2DT's second-axis groups from steps[0].
func (p *projPlan) newSecGroups() []secGroup {
	st := &p.steps[0]
	var groups []secGroup
	bySrc := map[int]int{}
	for s, k := range st.src {
		gi, ok := bySrc[k]
		if !ok {
			gi = len(groups)
			bySrc[k] = gi
			groups = append(groups, secGroup{src: k})
		}
		groups[gi].outs = append(groups[gi].outs, s)
	}
	for i := range groups {
		grp := &groups[i]
		grp.lanes = (len(grp.outs) + 7) &^ 7
		grp.tab = make([]float64, p.g*grp.lanes)
		for l, s := range grp.outs {
			t := p.t[st.m[s]]
			for c := 0; c < p.g; c++ {
				grp.tab[c*grp.lanes+l] = t[c]
			}
		}
	}
	return groups
}

func (p *projPlan) newProj2DScratch() *proj2DScratch {
	s := &proj2DScratch{}
	for i := range s.fold {
		s.fold[i][0] = make([]float64, p.half*p.g)
		s.fold[i][1] = make([]float64, p.half*p.g)
		s.mid[i] = make([]float64, len(p.steps[1].m)*p.g)
		s.tr[i] = make([]float64, p.g*p.g)
	}
	w := 0
	for _, grp := range p.sec {
		w = max(w, grp.lanes)
	}
	s.lanes = make([]float64, w)
	s.lanes2 = make([]float64, w)
	return s
}

// transposeGrid writes the column-major copy of the G×G row-major grid src into dst:
// dst[c·G + o] = src[o·G + c].
func transposeGrid(dst, src []float64, g int) {
	src, dst = src[:g*g], dst[:g*g]
	for o := 0; o < g; o++ {
		row := src[o*g : (o+1)*g]
		for c, v := range row {
			dst[c*g+o] = v
		}
	}
}

// project2D is project (fi and dstI nil) or project2 for gd = 2, bit for bit, on
// row-major inputs.
func (p *projPlan) project2D(dstR, dstI, fr, fi []float64, sc *proj2DScratch) {
	transposeGrid(sc.tr[0], fr, p.g)
	if fi == nil {
		p.project2DT(dstR, nil, sc.tr[0], nil, sc)
		return
	}
	transposeGrid(sc.tr[1], fi, p.g)
	p.project2DT(dstR, dstI, sc.tr[0], sc.tr[1], sc)
}

// project2DT is project2D on column-major inputs frT[c·G + o] = f(row o, column c), the
// layout hddFamily.coefficients produces for gd = 2. frT and fiT may be sc.tr's arrays.
func (p *projPlan) project2DT(dstR, dstI, frT, fiT []float64, sc *proj2DScratch) {
	g := p.g
	fns := [2][]float64{frT, fiT}
	nf := 1
	if fiT != nil {
		nf = 2
	}
	st1 := &p.steps[1]
	for i := 0; i < nf; i++ {
		plus, minus := sc.fold[i][0], sc.fold[i][1]
		fn := fns[i][:g*g]
		if !numeric.FoldLinesSIMD(p.path, fn, g, plus, minus) {
			for c := 0; c < g/2; c++ {
				a, b := fn[c*g:(c+1)*g], fn[(g-1-c)*g:(g-c)*g]
				pl, mi := plus[c*g:(c+1)*g], minus[c*g:(c+1)*g]
				for o, x := range a {
					y := b[o]
					pl[o], mi[o] = x+y, x-y
				}
			}
		}
		if g%2 == 1 {
			h := p.half - 1
			copy(plus[h*g:(h+1)*g], fn[h*g:(h+1)*g])
			copy(minus[h*g:(h+1)*g], fn[h*g:(h+1)*g])
		}
		mid := sc.mid[i]
		for s, m := range st1.m {
			v := plus
			if m&1 == 1 {
				v = minus
			}
			if nf == 1 {
				// project's first contraction sums with dot (four partial sums), project2's
				// with dot2 (two).
				numeric.DotLanes(p.path, p.th[m], v, g, mid[s*g:(s+1)*g])
			} else {
				numeric.ProjLanes(p.path, p.th[m], v, g, mid[s*g:(s+1)*g])
			}
		}
	}
	dsts := [2][]float64{dstR, dstI}
	if nf == 2 {
		// Both functions at once where the kernel allows it (each output as numeric.ProjLanes).
		for gi := range p.sec {
			grp := &p.sec[gi]
			outR, outI := sc.lanes[:grp.lanes], sc.lanes2[:grp.lanes]
			thR, thI := sc.mid[0][grp.src*g:(grp.src+1)*g], sc.mid[1][grp.src*g:(grp.src+1)*g]
			k := numeric.ProjLanes2SIMD(p.path, thR, thI, grp.tab, grp.lanes, outR, outI)
			numeric.ProjLanes(p.path, thR, grp.tab[k:], grp.lanes, outR[k:])
			numeric.ProjLanes(p.path, thI, grp.tab[k:], grp.lanes, outI[k:])
			for l, s := range grp.outs {
				dstR[s], dstI[s] = outR[l], outI[l]
			}
		}
		return
	}
	for i := 0; i < nf; i++ {
		mid, dst := sc.mid[i], dsts[i]
		for gi := range p.sec {
			grp := &p.sec[gi]
			out := sc.lanes[:grp.lanes]
			numeric.ProjLanes(p.path, mid[grp.src*g:(grp.src+1)*g], grp.tab, grp.lanes, out)
			for l, s := range grp.outs {
				dst[s] = out[l]
			}
		}
	}
}
