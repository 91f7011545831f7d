package spec

// marginalKind: per-point features conditioned on the set's distribution (marginal
// transfer, Blanchard et al.): one random Fourier map of [Ψ(P)/σ_P, u/σ_X], Ψ(P) the window
// features of the mmd family set_family. A family of this kind adds no column to the window
// records; it is the per-point output (one row per point, docs/marginal-transfer.md).
var marginalKind = kindDef{
	name: KindMarginal,
	doc:  "per-point marginal transfer",
	fields: []use{
		{field: "features", role: roleDefault, def: fixed(defaultMarginalFeatures)},
		{field: "sigma_x", role: roleRequired},
		{field: "set_family", role: roleOption, def: fixed("")},
		{field: "sigma_p", role: roleOption, def: fixed(0.0)},
		{field: "pooling", role: roleOption, def: fixed(false)},
	},
	check:   checkMarginal,
	weights: marginalWeights,
	rules: []string{
		"`set_family` and `sigma_p` together, or `pooling: true` without them; `set_family` names an mmd family without `rbf_sigma`",
	},
}

// defaultMarginalFeatures is the default D of a marginal_transfer family.
const defaultMarginalFeatures = 1024

// marginalWeights: the frequency matrices D/2 × dim and, with a set part, D/2 × len Ψ.
func marginalWeights(s *Spec, f *Family) int64 {
	cols := int64(s.Dim)
	for j := range s.Families {
		if g := &s.Families[j]; !f.Pooling && g.Name == f.SetFamily {
			cols += int64(g.Features)
		}
	}
	return int64(f.Features/2) * cols
}

// checkMarginal: set_family and sigma_p, or pooling; the set family an mmd family without
// its rbf stage; the frequency matrices (D/2 × dim and D/2 × len Ψ) within the limit.
func checkMarginal(s *Spec, i int) error {
	f := &s.Families[i]
	if f.Pooling {
		if f.SetFamily != "" {
			return familyErr(i, "set_family", "not allowed with pooling: true (pooling has no set part)")
		}
		if f.SigmaP != 0 {
			return familyErr(i, "sigma_p", "not allowed with pooling: true (pooling is sigma_p = ∞)")
		}
		return stageSizeErr(i, "features", f.Features/2, s.Dim, "")
	}
	if f.SetFamily == "" {
		return familyErr(i, "set_family", "required unless pooling is true: the name of the mmd family whose window features are Ψ(P)")
	}
	if f.SigmaP == 0 {
		return familyErr(i, "sigma_p", "required unless pooling is true (or pooling: true for the constant set kernel)")
	}
	psi := -1
	for j := range s.Families {
		g := &s.Families[j]
		if g.Name != f.SetFamily {
			continue
		}
		switch {
		case g.Kind != KindMMD:
			return familyErr(i, "set_family", "%q is a %s family; Ψ(P) must be the mean embedding of an mmd family", g.Name, g.Kind)
		case g.RBFFeatures > 0:
			return familyErr(i, "set_family", "%q has the rbf stage; Ψ(P) must be the mean embedding of an mmd family without rbf_sigma/rbf_features", g.Name)
		}
		psi = g.Features
	}
	if psi < 0 {
		return familyErr(i, "set_family", "%q: no family of that name (want the name of an mmd family)", f.SetFamily)
	}
	return stageSizeErr(i, "features", f.Features/2, s.Dim+psi, "")
}
