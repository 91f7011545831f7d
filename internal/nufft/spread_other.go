//go:build !amd64 || purego

package nufft

// haveSIMD reports whether assembly kernels can run: none off amd64 (or with purego).
func haveSIMD() bool { return false }

// spreadSIMD does nothing off amd64: Spread's Go code gives the same bits.
func (p *Plan) spreadSIMD([]int64, []float64) bool { return false }

// rowUpdates is rowUpdatesGo off amd64.
func (p *Plan) rowUpdates(src, e, ar, ai []float64) { rowUpdatesGo(src, e, ar, ai) }

// dotColumns is dotColumnsGo off amd64.
func (p *Plan) dotColumns(xr, xi, br, bi []float64) { dotColumnsGo(xr, xi, p.e1t, p.m1p, br, bi) }

// interp2Raw is interp2Go (w = 8) or interp2Any off amd64.
func (p *Plan) interp2Raw(gr, gi, fr, fi []float64) {
	if p.w == 8 {
		interp2Go(gr, gi, p.m1p, p.start, p.wts, fr, fi)
		return
	}
	p.interp2Any(gr, gi, fr, fi)
}
