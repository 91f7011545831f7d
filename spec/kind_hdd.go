package spec

import (
	"fmt"

	"github.com/distfeat/distfeat/internal/numeric"
)

// hddKind: the homogeneous density distance (docs/math.md): a KDE of each window's density
// on a grid, its cosine coefficients at M values λ of the divergence's Fuglede measure, and
// a random Fourier stage on them.
var hddKind = kindDef{
	name: KindHDD,
	doc:  "homogeneous density distance",
	fields: []use{
		{field: "divergence", role: roleRequired},
		{field: "features", role: roleDefault, def: fixed(defaultHDDFeatures)},
		{field: "sigma", role: roleRequired},
		{field: "lambdas", role: roleDefault, def: fixed(defaultHDDLambdas)},
		{field: "lambda_sampling", role: roleDefault, def: fixed("stratified")},
		{field: "basis", role: roleDefault, def: defaultValue{of: hddBasisDefault,
			doc: fmt.Sprintf("%d (joint mode), %d (marginal mode)", defaultHDDBasis, defaultHDDMarginalBasis)}},
		{field: "grid", role: roleDefault, def: fixed(defaultHDDGrid)},
		{field: "kde_bandwidth", role: roleDefault, def: fixed(defaultHDDKDEBW)},
		{field: "boundary", role: roleDefault, def: fixed("reflect")},
		{field: "density_floor", role: roleDefault, def: fixed(defaultHDDFloor)},
		{field: "mode", role: roleDefault, def: defaultValue{of: hddModeDefault, doc: `"joint" if dim ≤ 3, else "marginal"`}},
		versionedProjection(false),
		{field: "coefficients", role: roleDefault, def: fixed(false)},
	},
	stage: &rffStage{sigma: "sigma", features: "features",
		inputs: hddCoefLen, limitHint: "; lower features, basis or lambdas"},
	check:        validateHDDGrid,
	extraColumns: func(f *Family) []string { return []string{f.Name + "_coef"} },
	rules:        []string{fmt.Sprintf("the grid must resolve the basis (its largest cosine index < `grid`); in `joint` mode grid^dim ≤ %d cells.", maxSpecJointCells)},
}

// hddModeDefault: joint up to 3 dimensions, where grid^dim stays small.
func hddModeDefault(dim int, _ *Family) any {
	if dim <= 3 {
		return "joint"
	}
	return "marginal"
}

// hddBasisDefault depends on the mode. Marginal mode embeds each 1-D marginal: 100
// one-dimensional cosines would need frequencies a 64-cell grid cannot resolve, and d×100
// coefficients per λ blow up the RFF stage. 10 per dimension is what the paper used for its
// marginal embeddings.
func hddBasisDefault(dim int, f *Family) any {
	mode := f.Mode
	if mode == "" { // absent: mode's own default (defaults are applied in table order)
		mode = hddModeDefault(dim, f).(string)
	}
	if mode == "marginal" {
		return defaultHDDMarginalBasis
	}
	return defaultHDDBasis
}

// hddCoefLen is the length of an hdd family's coefficient vector A: 2M|V| per grid.
func hddCoefLen(s *Spec, f *Family) int {
	if f.Mode == "marginal" {
		return 2 * f.Lambdas * f.Basis * s.Dim
	}
	return 2 * f.Lambdas * f.Basis
}

// validateHDDGrid checks that hdd family i's grid has at most maxSpecJointCells cells and
// that its binning nodes fit, and that it resolves the cosine basis.
func validateHDDGrid(s *Spec, i int) error {
	f := &s.Families[i]
	gridDim := 1
	if f.Mode == "joint" {
		gridDim = s.Dim
		cells := 1
		for j := 0; j < s.Dim; j++ {
			if cells > maxSpecJointCells/f.Grid {
				return familyErr(i, "grid", "joint mode needs grid^dim = %d^%d cells (limit %d); lower grid or use mode marginal", f.Grid, s.Dim, maxSpecJointCells)
			}
			cells *= f.Grid
		}
	} else if f.Grid > maxSpecJointCells {
		return familyErr(i, "grid", "must be ≤ %d", maxSpecJointCells)
	}
	// The midpoint rule on G cells resolves cosines up to index G−1 only.
	if k := numeric.MaxIndex(numeric.CosineIndices(gridDim, f.Basis)); k >= f.Grid {
		return familyErr(i, "basis", "%d basis functions need cosine index %d, but a grid of %d cells resolves indices up to %d; lower basis or raise grid", f.Basis, k, f.Grid, f.Grid-1)
	}
	if _, err := numeric.CheckedPow(f.Grid+2, gridDim, 2*maxHDDCells); err != nil {
		return familyErr(i, "grid", "(grid+2)^%d binning nodes exceed the limit (%v)", gridDim, err)
	}
	return hddMemory(s, i)
}
