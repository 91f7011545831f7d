package spec

import "fmt"

// MaxNUFFTDim is the largest dim the mmd nufft method supports.
const MaxNUFFTDim = 3

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
		{field: "method", role: roleOption, def: versioned3(MethodDirect, MethodAuto)},
	},
	stage: &rffStage{sigma: "rbf_sigma", features: "rbf_features", optional: true,
		inputs: func(_ *Spec, f *Family) int { return f.Features }},
	// The frequencies of the first stage: D/2 × dim.
	check: func(s *Spec, i int) error {
		if s.Families[i].Method == MethodNUFFT && s.Dim > MaxNUFFTDim {
			return &SpecError{Field: fmt.Sprintf("families[%d].method", i),
				Msg: fmt.Sprintf("nufft needs dim ≤ %d, not %d (use direct or auto)", MaxNUFFTDim, s.Dim)}
		}
		return stageSizeErr(i, "features", s.Families[i].Features/2, s.Dim, "")
	},
	rules: []string{"`method: nufft` needs `dim` ≤ 3 (`auto` falls back to direct above)."},
	// The first stage's frequencies: D/2 × dim.
	weights: func(s *Spec, f *Family) int64 { return int64(f.Features/2) * int64(s.Dim) },
}
