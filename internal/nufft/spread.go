package nufft

import "math"

// Spread adds the points pts (n×d, row-major, coordinates in [0, 1]) to grid (GridLen
// cells). A coordinate outside [0, 1] is clamped into it (the grid only has room for the
// unit cube's kernels); a NaN panics. The cells get the same integers whatever the order
// or grouping of the points.
func (p *Plan) Spread(grid []int64, pts []float64) {
	d := p.d
	if len(grid) != p.cells {
		panic("nufft: grid length does not match the plan")
	}
	pts = pts[:len(pts)/d*d]
	for i, u := range pts {
		if !(u >= 0 && u <= 1) {
			pts = clampPoints(pts, i)
			break
		}
	}
	if p.spreadSIMD(grid, pts) {
		return
	}
	p.spreadGo(grid, pts)
}

// spreadGo is Spread's portable code (the reference the assembly kernels match bit for bit).
func (p *Plan) spreadGo(grid []int64, pts []float64) {
	d := p.d
	var k [3][maxWidth]float64
	var i0 [3]int
	for off := 0; off+d <= len(pts); off += d {
		for j := 0; j < d; j++ {
			u := pts[off+j]
			pos := float64(float64(u-0.5)*p.inv[j]) + float64(p.lhalf[j])
			var t float64
			i0[j], t = p.ker.position(pos)
			if p.w == 8 {
				values8(p.ker.coef, t, &k[j])
			} else {
				p.ker.values(t, k[j][:])
			}
		}
		switch d {
		case 1:
			spread1(grid[i0[0]:i0[0]+p.w], &k[0])
		case 2:
			if p.w == 8 {
				spread2w8(grid, p.nf[1], i0[0], i0[1], &k[0], &k[1])
			} else {
				spread2(grid, p.nf[1], i0[0], i0[1], p.w, &k[0], &k[1])
			}
		default:
			spread3(grid, p.nf[1], p.nf[2], i0, p.w, &k)
		}
	}
}

// maxWidth bounds the kernel widths (Widths).
const maxWidth = 10

// term rounds a·b (a pre-scaled by 2³², |a·b| ≤ 2³²) to the nearest integer: one fused
// multiply-add of the exact product into the low mantissa bits of 1.5·2⁵² (numeric.ToFixed's
// rule), the same on every architecture.
func term(a2p32, b float64) int64 {
	return int64(math.Float64bits(math.FMA(a2p32, b, fixedMagic)) - fixedMagicBits)
}

func spread1(cells []int64, k *[maxWidth]float64) {
	for a := range cells {
		cells[a] += term(fixedScale, k[a])
	}
}

func spread2(grid []int64, n1, i0, i1, w int, k0, k1 *[maxWidth]float64) {
	for a := 0; a < w; a++ {
		s := float64(k0[a] * fixedScale) // exact: a power of two
		row := grid[(i0+a)*n1+i1 : (i0+a)*n1+i1+w]
		for b := range row {
			row[b] += term(s, k1[b])
		}
	}
}

// spread2w8 is spread2 for w = 8, the row's eight cells unrolled.
func spread2w8(grid []int64, n1, i0, i1 int, k0, k1 *[maxWidth]float64) {
	b0, b1, b2, b3, b4, b5, b6, b7 := k1[0], k1[1], k1[2], k1[3], k1[4], k1[5], k1[6], k1[7]
	for a := 0; a < 8; a++ {
		s := float64(k0[a] * fixedScale)
		base := (i0+a)*n1 + i1
		row := grid[base : base+8 : base+8]
		row[0] += term(s, b0)
		row[1] += term(s, b1)
		row[2] += term(s, b2)
		row[3] += term(s, b3)
		row[4] += term(s, b4)
		row[5] += term(s, b5)
		row[6] += term(s, b6)
		row[7] += term(s, b7)
	}
}

func spread3(grid []int64, n1, n2 int, i0 [3]int, w int, k *[3][maxWidth]float64) {
	if w == 8 {
		for a := 0; a < 8; a++ {
			// The (a, b) rows of the cube are spread2w8's rows with k0[a] folded into k1.
			var kk [maxWidth]float64
			for b := 0; b < 8; b++ {
				kk[b] = float64(k[0][a] * k[1][b])
			}
			spread2w8(grid[(i0[0]+a)*n1*n2:(i0[0]+a+1)*n1*n2], n2, i0[1], i0[2], &kk, &k[2])
		}
		return
	}
	for a := 0; a < w; a++ {
		for b := 0; b < w; b++ {
			s := float64(float64(k[0][a]*k[1][b]) * fixedScale)
			row := grid[((i0[0]+a)*n1+i0[1]+b)*n2+i0[2] : ((i0[0]+a)*n1+i0[1]+b)*n2+i0[2]+w]
			for c := range row {
				row[c] += term(s, k[2][c])
			}
		}
	}
}

// Merge adds grid src into dst (the grids of two parts of one window).
func Merge(dst, src []int64) {
	for i, v := range src {
		dst[i] += v
	}
}

// clampPoints returns a copy of pts with every coordinate clamped into [0, 1], the first
// outside one at index from; it panics on a NaN.
func clampPoints(pts []float64, from int) []float64 {
	c := append([]float64(nil), pts...)
	for i := from; i < len(c); i++ {
		switch u := c[i]; {
		case u < 0:
			c[i] = 0
		case u > 1:
			c[i] = 1
		case u != u:
			panic("nufft: NaN point coordinate")
		}
	}
	return c
}
