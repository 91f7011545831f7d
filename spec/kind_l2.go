package spec

// l2Kind: the cosine projection of the density (an L² embedding), with an optional random
// Fourier stage.
var l2Kind = kindDef{
	name: KindL2,
	doc:  "cosine projection",
	fields: []use{
		{field: "features", role: roleStage},
		{field: "sigma", role: roleStage},
		{field: "basis", role: roleDefault, def: fixed(defaultL2Basis)},
		versionedProjection(true),
	},
	stage: &rffStage{sigma: "sigma", features: "features", optional: true,
		inputs: func(_ *Spec, f *Family) int { return f.Basis }},
	// The cosine multi-indices: basis × dim.
	check: func(s *Spec, i int) error {
		f := &s.Families[i]
		if int64(f.Basis)*int64(s.Dim) > maxSpecStageWeights {
			return familyErr(i, "basis", "the cosine basis table would hold %d×%d indices (limit %d); lower basis", f.Basis, s.Dim, maxSpecStageWeights)
		}
		return nil
	},
}
