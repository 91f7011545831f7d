package spec

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/distfeat/distfeat/internal/numeric"
)

// The memory a family's fields imply, checked by validation before the embedding package
// allocates anything. A typo such as an hdd grid of 1000000 for 1000 passed the older
// per-field ranges and grew to 22.8 GB while the family compiled; each buffer below is now
// sized from the fields (the same arithmetic as the embedding package's allocations, which
// TestHDDMemoryModel checks) and refused above its limit, by the field that sizes it.

const (
	// maxSpecBufferBytes bounds each of an hdd family's compiled tables (the KDE operator,
	// the cosine projection tables), one open window's state and one finalisation's
	// workspace. Random Fourier matrices have their own bound, maxSpecStageWeights.
	maxSpecBufferBytes = 256 << 20
	// maxSpecKDEPairs bounds the kernel evaluations that build an hdd family's KDE operator,
	// grid × (grid + 2) (every output cell against every binning node): 2²⁴, about a second
	// of start-up on the reference machine (4.5 s measured at grid 8192).
	maxSpecKDEPairs = 1 << 24
	// maxSpecTotalWeights bounds the random Fourier weights of all of a spec's families
	// together (2 GiB of float64): each matrix is bounded by maxSpecStageWeights, and the
	// number of families by nothing else.
	maxSpecTotalWeights = 1 << 28
	// kdeCutoff is the embedding package's KDE kernel support, in bandwidths (embedding/kde.go).
	kdeCutoff = 5
	// kdeBuildFactor: the KDE operator's weights grow by append while it is built, so up to
	// three times its final size are live at once (the old and the new backing array).
	kdeBuildFactor = 3
)

// totalWeights checks the random Fourier weights of all of s's families together: each
// kind's own matrices (kindDef.weights) and its stage's when on.
func totalWeights(s *Spec) error {
	var total int64
	for i := range s.Families {
		f := &s.Families[i]
		k := kindOf(f.Kind)
		if k.weights != nil {
			total += k.weights(s, f)
		}
		if st := k.stage; st != nil {
			out := valueOf(findFamilyField(st.features).ref(f)).(int)
			if out > 0 {
				total += int64(out/2) * int64(st.inputs(s, f))
			}
		}
	}
	if total > maxSpecTotalWeights {
		return &SpecError{Field: "families", Msg: fmt.Sprintf("the families' random Fourier matrices would hold %d weights together, %s (limit %d, %s); lower features or drop families",
			total, bytesText(8*float64(total)), maxSpecTotalWeights, bytesText(8*maxSpecTotalWeights))}
	}
	return nil
}

// powInt is x^n by repeated products (n ≥ 0): math.Pow's last bit depends on the
// architecture, and this package is on the feature path (docs/CONTRACTS.md).
func powInt(x float64, n int) float64 {
	p := 1.0
	for range n {
		p *= x
	}
	return p
}

// hddMemory checks the buffers hdd family i of s would allocate: at compile time (the KDE
// operator and the projection tables), per open window (the binned counts) and per
// finalisation (the KDE, density and projection workspace). validateHDDGrid has bounded
// the grid's cells first, so the products below fit in float64 without overflow.
func hddMemory(s *Spec, i int) error {
	f := &s.Families[i]
	g := float64(f.Grid)
	gd, ngrids := s.Dim, 1
	if f.Mode == "marginal" {
		gd, ngrids = 1, s.Dim
	}
	cells := powInt(g, gd)
	pad := powInt(g+2, gd)
	basis := numeric.CosineIndices(gd, f.Basis)
	kmax := float64(numeric.MaxIndex(basis))
	taps := KDETaps(f.Grid, f.KDEBandwidth)
	op := float64(8 * g * taps)
	if gd == 2 { // the transposed 2-D KDE's lane table: a second copy of the weights
		op += float64(8 * g * (taps + 8))
	}
	type buffer struct {
		field, what string
		bytes       float64
		fix         string
	}
	countsFix := "lower grid, or use mode marginal"
	if f.Mode == "marginal" {
		countsFix = "lower grid (marginal mode keeps one grid per dimension)"
	}
	coefLen := float64(2 * f.Lambdas * len(basis) * ngrids)
	scratch := float64(8 * (float64(2*pad) + float64(float64(ngrids)*cells) + float64(5*cells) + coefLen))
	for j, n := range projSuffixes(basis) {
		if j > 0 {
			scratch += float64(2 * 8 * powInt(g, j) * float64(n))
		}
	}
	if gd == 2 {
		ld := float64((f.Grid+2+7)&^7) + float64(2*taps) + 16
		scratch += float64(8 * (float64((g+2)*ld) + float64(g*ld)))
	}
	for _, b := range []buffer{
		{"grid", "the KDE operator (grid × its kernel taps, built in up to 3× that)", kdeBuildFactor * op, "lower grid or kde_bandwidth"},
		{"basis", "the cosine projection tables ((largest cosine index + 1) × 1.5·grid)", 8 * (kmax + 1) * (g + math.Ceil(g/2)), "lower basis or grid"},
		{"grid", "one open window's binned counts", 8 * float64(ngrids) * pad, countsFix},
		{"grid", "one finalisation's workspace (KDE, densities, projection)", scratch, "lower grid or basis"},
	} {
		if b.bytes > maxSpecBufferBytes {
			return familyErr(i, b.field, "%s would need %s (limit %s); %s", b.what, bytesText(b.bytes), bytesText(maxSpecBufferBytes), b.fix)
		}
	}
	if pairs := g * (g + 2); pairs > maxSpecKDEPairs {
		return familyErr(i, "grid", "the KDE operator is built from grid × (grid+2) = %.0f kernel evaluations (limit %d, about a second of start-up); lower grid", pairs, maxSpecKDEPairs)
	}
	return nil
}

// KDETaps bounds the weights of one row of an hdd family's KDE operator on a grid of g
// cells with bandwidth h (normalised units): the binning nodes within kdeCutoff·h of the
// cell's centre (reflection folds images back into the same span), at most every node. The
// embedding package's operator stays within it (its tests check).
func KDETaps(g int, h float64) float64 {
	return math.Min(float64(g+2), 2*math.Ceil(kdeCutoff*h*float64(g))+3)
}

// projSuffixes counts, for each axis j of the basis' multi-indices, the distinct suffixes
// (α_j, …, α_{gd−1}): the outputs of the projection's step j.
func projSuffixes(basis [][]int) []int {
	if len(basis) == 0 {
		return nil
	}
	gd := len(basis[0])
	out := make([]int, gd)
	var key []byte
	for j := range out {
		seen := map[string]bool{}
		for _, a := range basis {
			key = key[:0]
			for _, v := range a[j:] {
				key = binary.AppendUvarint(key, uint64(v))
			}
			seen[string(key)] = true
		}
		out[j] = len(seen)
	}
	return out
}

// bytesText writes a byte count in the largest binary unit that keeps it ≥ 1.
func bytesText(b float64) string {
	units := []string{"bytes", "KiB", "MiB", "GiB", "TiB", "PiB"}
	u := 0
	for b >= 1024 && u < len(units)-1 {
		b /= 1024
		u++
	}
	if u == 0 {
		return fmt.Sprintf("%.0f bytes", b)
	}
	return fmt.Sprintf("%.1f %s", b, units[u])
}
