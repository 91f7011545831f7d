package spec

// mmdKind: the mean embedding of the points under a Gaussian kernel (random Fourier
// features), with an optional second stage, a Gaussian kernel on the mean embeddings.
var mmdKind = kindDef{
	name: KindMMD,
	doc:  "mean embedding",
	fields: []use{
		{field: "features", role: roleDefault, def: fixed(defaultMMDFeatures)},
		{field: "bandwidth", role: roleRequired},
		{field: "rbf_sigma", role: roleStage},
		{field: "rbf_features", role: roleStage},
		versionedProjection(true),
	},
	stage: &rffStage{sigma: "rbf_sigma", features: "rbf_features", optional: true,
		inputs: func(_ *Spec, f *Family) int { return f.Features }},
	// The frequencies of the first stage: D/2 × dim.
	check: func(s *Spec, i int) error {
		return stageSizeErr(i, "features", s.Families[i].Features/2, s.Dim, "")
	},
}
