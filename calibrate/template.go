package calibrate

import (
	"fmt"
	"slices"
	"strings"

	"github.com/distfeat/distfeat/spec"
)

// NewestVersion is the spec version calibrate proposes without a base spec: the built-in
// default's, which is always the newest (orthogonal random Fourier stages, a smaller error for
// the same D; mmd's method auto).
const NewestVersion = spec.NewestVersion

// specTemplate returns the spec the calibration fills in: a copy of base restricted to the
// named families, or, without a base, the default spec's settings with families built from
// their names.
func specTemplate(base *spec.Spec, dim int, names []string) (*spec.Spec, error) {
	if dim < 1 {
		return nil, fmt.Errorf("calibrate: dim must be ≥ 1, got %d", dim)
	}
	if base == nil {
		if len(names) == 0 {
			names = []string{"mmd", "hdd_js", "l2"}
		}
		def := spec.DefaultSpec()
		s := &spec.Spec{Version: NewestVersion, Seed: def.Seed, Dim: dim, OutOfBounds: def.OutOfBounds}
		for _, n := range names {
			f, err := familyByName(n, dim)
			if err != nil {
				return nil, err
			}
			s.Families = append(s.Families, f)
		}
		return s, nil
	}
	if base.Dim != dim {
		return nil, fmt.Errorf("calibrate: the base spec has dim %d, the sets have dim %d", base.Dim, dim)
	}
	s := *base
	s.Bounds = spec.Bounds{Lo: slices.Clone(base.Bounds.Lo), Hi: slices.Clone(base.Bounds.Hi)}
	s.Families = nil
	for _, f := range base.Families {
		if len(names) == 0 || slices.Contains(names, f.Name) {
			s.Families = append(s.Families, f)
		}
	}
	for _, n := range names {
		if !slices.ContainsFunc(base.Families, func(f spec.Family) bool { return f.Name == n }) {
			return nil, fmt.Errorf("calibrate: --families %q: the base spec has no family of that name", n)
		}
	}
	if len(s.Families) == 0 {
		return nil, fmt.Errorf("calibrate: no family to calibrate")
	}
	return &s, nil
}

// familyByName builds a family from one of the names mmd, l2, hdd_js, hdd_hellinger,
// hdd_tv, with the default spec's settings (the tuned fields are overwritten later).
func familyByName(name string, dim int) (spec.Family, error) {
	switch {
	case name == "mmd":
		return spec.Family{Name: name, Kind: spec.KindMMD, Features: 1024, Bandwidth: 0.1}, nil
	case name == "l2":
		return spec.Family{Name: name, Kind: spec.KindL2, Basis: 100}, nil
	case strings.HasPrefix(name, "hdd_"):
		div := strings.TrimPrefix(name, "hdd_")
		if div != "js" && div != "hellinger" && div != "tv" {
			break
		}
		mode, basis := "joint", 100
		if dim > 3 {
			mode, basis = "marginal", 10
		}
		sigma := 0.5
		if div == "tv" {
			sigma = 1
		}
		return spec.Family{Name: name, Kind: spec.KindHDD, Divergence: div, Features: 4096, Sigma: sigma,
			Lambdas: 5, LambdaSampling: "stratified", Basis: basis, Grid: 64, KDEBandwidth: 0.02,
			Boundary: "reflect", DensityFloor: 1e-6, Mode: mode}, nil
	}
	return spec.Family{}, fmt.Errorf("calibrate: family %q: without --spec the families are mmd, l2, hdd_js, hdd_hellinger, hdd_tv", name)
}
