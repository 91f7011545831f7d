package spec

import "fmt"

// Defaults and limits of the two_sample kind (docs/drift.md).
const (
	defaultTwoSampleBands       = 5
	defaultTwoSampleFrequencies = 20
	defaultTwoSampleRidge       = 0.05
	defaultTwoSampleAlpha       = 0.05
	// defaultTwoSampleMomentWeight is the first aggregation's T_mom weight (0.5, 0.05, 0.45).
	defaultTwoSampleMomentWeight = 0.05
	// defaultTwoSampleCusumK is sequential.DefaultK (spec does not import the detector).
	defaultTwoSampleCusumK = 1.5
	// maxTwoSampleFeatures bounds D = 2·dim + 2·bands·frequencies: the reference summary
	// holds about 5·D² float64 (40 MiB at the limit).
	maxTwoSampleFeatures = 1024
)

// twoSampleKind: a streaming two-sample test of each window against a reference sample.
var twoSampleKind = kindDef{
	name: KindTwoSample,
	doc:  "two-sample test against a reference",
	fields: []use{
		{field: "reference", role: roleRequired},
		{field: "bandwidth", role: roleOption, def: defaultValue{of: func(int, *Family) any { return 0.0 },
			doc: "the median heuristic: the median distance between the reference's first 1000 points"}},
		{field: "bands", role: roleDefault, def: fixed(defaultTwoSampleBands)},
		{field: "frequencies", role: roleDefault, def: fixed(defaultTwoSampleFrequencies)},
		{field: "ridge", role: roleDefault, def: fixed(defaultTwoSampleRidge)},
		{field: "alpha", role: roleDefault, def: fixed(defaultTwoSampleAlpha)},
		{field: "moment_weight", role: roleOption, def: fixed(defaultTwoSampleMomentWeight)},
		{field: "ert", role: roleOption, def: defaultValue{of: func(int, *Family) any { return 0.0 },
			doc: "off: no sequential detection"}},
		{field: "cusum_k", role: roleOption, def: fixed(defaultTwoSampleCusumK)},
		{field: "between_windows", role: roleOption, def: fixed(false)},
	},
	check: func(s *Spec, i int) error {
		f := &s.Families[i]
		if d := 2*s.Dim + 2*f.Bands*f.Frequencies; d > maxTwoSampleFeatures {
			return familyErr(i, "frequencies", "2·dim + 2·bands·frequencies = %d features (limit %d); lower bands or frequencies", d, maxTwoSampleFeatures)
		}
		if f.CusumK != 0 && f.CusumK != defaultTwoSampleCusumK && f.ERT == 0 {
			return familyErr(i, "cusum_k", "applies to sequential detection only: set ert too")
		}
		if f.ReferenceDigest == "" {
			return familyErr(i, "reference", "%s", fmt.Sprintf("file %q not resolved (a Spec built in Go must call ResolveReferences)", f.Reference))
		}
		return nil
	},
	extraColumns: func(f *Family) []string { return []string{f.Name + "_seq"} },
	rules: []string{
		"2·dim + 2·bands·frequencies ≤ 1024; the reference must be an existing, non-empty regular file (not a device, FIFO or directory)",
		"cusum_k only with ert; ert adds the column <name>_seq (statistic, threshold, ert, alarm, run)",
		"between_windows: the reference needs at least 20 lines (windows), checked when the spec is compiled",
	},
}
