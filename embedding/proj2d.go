package embedding

// The joint two-dimensional projection of the hdd coefficients (gd = 2, the default spec's
// shape), vectorised across grid rows. It computes exactly what project and project2
// compute, operation for operation; only the data layout and the order in which
// independent outputs are produced differ:
//
//   - the first (innermost) contraction folds each grid row o with the mirror symmetry,
//     plus_c = x_{o,c} + x_{o,G−1−c} and minus_c = x_{o,c} − x_{o,G−1−c}, stored transposed
//     (c-major) so that one table value th[m][c] multiplies the same c of every row at once
//     (projLanes: lanes = rows, the two partial sums of dot2 per lane);
//   - its outputs are stored suffix-major, so the second contraction reads each needed
//     column contiguously, with the two alternating partial sums of project.

// projLanes sets out[k] = a0_k + a1_k for every lane k < len(out), where
// a0_k = Σ_{c even} th[c]·v[c·ld + k] and a1_k = Σ_{c odd} th[c]·v[c·ld + k], each product
// rounded before it is added, in increasing c from +0 — per lane, the order of dot2. The
// AVX-512 kernel does 32 lanes at a time with the same operations (every path gives the
// same bits; TestProjLanesPaths).
func projLanes(path dotPath, th, v []float64, ld int, out []float64) {
	h := len(th)
	if len(out) == 0 {
		return
	}
	if h == 0 {
		clear(out)
		return
	}
	if ld < len(out) || len(v) < (h-1)*ld+len(out) {
		panic("embedding: projLanes: inconsistent dimensions")
	}
	k0 := projLanesSIMD(path, th, v, ld, out)
	projLanesGo(th, v[k0:], ld, out[k0:])
}

// projLanesGo is the portable kernel of projLanes.
func projLanesGo(th, v []float64, ld int, out []float64) {
	h := len(th)
	for k := range out {
		var a0, a1 float64
		c := 0
		for ; c+2 <= h; c += 2 {
			a0 += float64(th[c] * v[c*ld+k])
			a1 += float64(th[c+1] * v[(c+1)*ld+k])
		}
		if c < h {
			a0 += float64(th[c] * v[c*ld+k])
		}
		out[k] = a0 + a1
	}
}

// proj2DScratch is the workspace of project2D: the folded lines (plus, minus) of the real
// and imaginary functions, c-major, and the first contraction's outputs, suffix-major.
type proj2DScratch struct {
	fold [2][2][]float64 // [function][plus, minus]: half × G
	mid  [2][]float64    // [function]: len(steps[1].m) × G
}

func (p *projPlan) newProj2DScratch() *proj2DScratch {
	s := &proj2DScratch{}
	for i := range s.fold {
		s.fold[i][0] = make([]float64, p.half*p.g)
		s.fold[i][1] = make([]float64, p.half*p.g)
		s.mid[i] = make([]float64, len(p.steps[1].m)*p.g)
	}
	return s
}

// project2D is project (fi and dstI nil) or project2 for gd = 2, bit for bit.
func (p *projPlan) project2D(dstR, dstI, fr, fi []float64, sc *proj2DScratch) {
	g := p.g
	fns := [2][]float64{fr, fi}
	nf := 1
	if fi != nil {
		nf = 2
	}
	st1 := &p.steps[1]
	for i := 0; i < nf; i++ {
		plus, minus := sc.fold[i][0], sc.fold[i][1]
		fn := fns[i][:g*g]
		for o := 0; o < g; o++ {
			line := fn[o*g : (o+1)*g]
			for c := 0; c < g/2; c++ {
				a, b := line[c], line[g-1-c]
				plus[c*g+o], minus[c*g+o] = a+b, a-b
			}
			if g%2 == 1 {
				h := p.half - 1
				plus[h*g+o], minus[h*g+o] = line[h], line[h]
			}
		}
		mid := sc.mid[i]
		for s, m := range st1.m {
			v := plus
			if m&1 == 1 {
				v = minus
			}
			projLanes(p.path, p.th[m], v, g, mid[s*g:(s+1)*g])
		}
	}
	st0 := &p.steps[0]
	if nf == 1 {
		mid := sc.mid[0]
		for s, m := range st0.m {
			dstR[s] = contractLine(p.t[m], mid[st0.src[s]*g:(st0.src[s]+1)*g])
		}
		return
	}
	midR, midI := sc.mid[0], sc.mid[1]
	for s, m := range st0.m {
		k := st0.src[s]
		dstR[s], dstI[s] = contractLine2(p.t[m], midR[k*g:(k+1)*g], midI[k*g:(k+1)*g])
	}
}

// contractLine is Σ_c t[c]·x[c] with project's two alternating partial sums (even c, odd c;
// a last odd c goes to the first), each product rounded before it is added.
func contractLine(t, x []float64) float64 {
	x = x[:len(t)]
	var a0, a1 float64
	c := 0
	for ; c+2 <= len(t); c += 2 {
		a0 += float64(t[c] * x[c])
		a1 += float64(t[c+1] * x[c+1])
	}
	if c < len(t) {
		a0 += float64(t[c] * x[c])
	}
	return a0 + a1
}

// contractLine2 is contractLine of x and of y with shared table loads.
func contractLine2(t, x, y []float64) (float64, float64) {
	x, y = x[:len(t)], y[:len(t)]
	var a0, a1, b0, b1 float64
	c := 0
	for ; c+2 <= len(t); c += 2 {
		a0 += float64(t[c] * x[c])
		b0 += float64(t[c] * y[c])
		a1 += float64(t[c+1] * x[c+1])
		b1 += float64(t[c+1] * y[c+1])
	}
	if c < len(t) {
		a0 += float64(t[c] * x[c])
		b0 += float64(t[c] * y[c])
	}
	return a0 + a1, b0 + b1
}
