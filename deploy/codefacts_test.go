package deploy_test

// Facts read from the project, never from a hand-kept list: the environment variables of the
// worker configuration (config.Variables), the Prometheus metrics the code registers
// (metrics.New on a fresh registry, read back through Describe and Gather), and the string
// literals of the CLI (subcommands, flags, HTTP paths). The manifest tests in deploy_test.go
// check the deployment files against these.

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/distfeat/distfeat/config"
	"github.com/distfeat/distfeat/internal/metrics"
)

const (
	repoRoot  = ".."
	envPrefix = "DISTFEAT_"
)

// envVar is one variable of the worker configuration.
type envVar struct {
	Name       string // without the DISTFEAT_ prefix
	Default    string
	HasDefault bool
	Flag       string // the mirrored flag, for messages
}

// metricDef is one metric defined in internal/metrics.
type metricDef struct {
	Name   string
	Kind   string   // counter, gauge, histogram, summary or "" (unknown, e.g. prometheus.NewDesc)
	Labels []string // variable labels; nil with LabelsKnown false when not statically known
	// LabelsKnown reports whether Labels is the complete, statically known label set.
	LabelsKnown bool
}

// codeFacts is everything the manifest tests need from the code.
type codeFacts struct {
	Env     map[string]envVar    // by name without prefix
	Metrics map[string]metricDef // by full name
	// CLIStrings are the string literals of cmd/distfeat: subcommand and flag names.
	CLIStrings map[string]bool
	// AllStrings are the string literals of every non-test Go file outside deploy/.
	AllStrings map[string]bool
	// BuildInfoVars are the package-level variables of internal/buildinfo.
	BuildInfoVars map[string]bool
	// GoDirective is go.mod's `go` line, e.g. "1.26.8".
	GoDirective string
}

var (
	factsOnce sync.Once
	facts     *codeFacts
	factsErr  error
)

// loadFacts parses the code once per test binary. It fails the calling test with a message that
// says what is missing when the code the manifests depend on does not exist yet.
func loadFacts(t *testing.T) *codeFacts {
	t.Helper()
	factsOnce.Do(func() { facts, factsErr = readFacts(repoRoot) })
	if factsErr != nil {
		t.Fatalf("reading facts from the Go source: %v", factsErr)
	}
	return facts
}

func readFacts(root string) (*codeFacts, error) {
	f := &codeFacts{
		Env:           map[string]envVar{},
		Metrics:       map[string]metricDef{},
		CLIStrings:    map[string]bool{},
		AllStrings:    map[string]bool{},
		BuildInfoVars: map[string]bool{},
	}
	var problems []string

	for _, v := range config.Variables() {
		f.Env[v.Name] = envVar{Name: v.Name, Default: v.Default, HasDefault: v.HasDefault(), Flag: v.Flag()}
	}
	if len(f.Env) == 0 {
		problems = append(problems, "config.Variables() is empty: the worker configuration must exist "+
			"before the manifests can be checked against it")
	}

	var err error
	if f.Metrics, err = registeredMetrics(); err != nil {
		return nil, err
	}
	if len(f.Metrics) == 0 {
		problems = append(problems, "metrics.New registers no collector: the metrics package must exist "+
			"before the alerts and the dashboard can be checked against it")
	}

	csrcs, err := goSources(filepath.Join(root, "cmd", "distfeat"))
	if err != nil {
		return nil, err
	}
	if len(csrcs) == 0 {
		problems = append(problems, "no Go files in cmd/distfeat: the distfeat command must exist")
	}
	for name, src := range csrcs {
		if err := stringLiterals(name, src, f.CLIStrings); err != nil {
			return nil, err
		}
	}

	err = filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			switch d.Name() {
			case "deploy", "testdata", "vendor", ".git":
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return stringLiterals(path, string(src), f.AllStrings)
	})
	if err != nil {
		return nil, err
	}

	bsrcs, err := goSources(filepath.Join(root, "internal", "buildinfo"))
	if err != nil {
		return nil, err
	}
	for name, src := range bsrcs {
		file, err := parser.ParseFile(token.NewFileSet(), name, src, 0)
		if err != nil {
			return nil, err
		}
		for _, decl := range file.Decls {
			if gd, ok := decl.(*ast.GenDecl); ok && gd.Tok == token.VAR {
				for _, spec := range gd.Specs {
					for _, n := range spec.(*ast.ValueSpec).Names {
						f.BuildInfoVars[n.Name] = true
					}
				}
			}
		}
	}

	gomod, err := os.ReadFile(filepath.Join(root, "go.mod"))
	if err != nil {
		return nil, err
	}
	if m := regexp.MustCompile(`(?m)^go\s+(\S+)\s*$`).FindSubmatch(gomod); m != nil {
		f.GoDirective = string(m[1])
	}

	if len(problems) > 0 {
		return nil, fmt.Errorf("the code this test reads does not exist yet:\n  - %s", strings.Join(problems, "\n  - "))
	}
	return f, nil
}

// goSources returns the non-test Go files of dir (none if dir does not exist).
func goSources(dir string) (map[string]string, error) {
	entries, err := os.ReadDir(dir)
	if os.IsNotExist(err) {
		return map[string]string{}, nil
	}
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	for _, e := range entries {
		n := e.Name()
		if e.IsDir() || !strings.HasSuffix(n, ".go") || strings.HasSuffix(n, "_test.go") {
			continue
		}
		b, err := os.ReadFile(filepath.Join(dir, n))
		if err != nil {
			return nil, err
		}
		out[filepath.Join(dir, n)] = string(b)
	}
	return out, nil
}

func stringLiterals(name, src string, into map[string]bool) error {
	file, err := parser.ParseFile(token.NewFileSet(), name, src, 0)
	if err != nil {
		return err
	}
	ast.Inspect(file, func(n ast.Node) bool {
		if bl, ok := n.(*ast.BasicLit); ok && bl.Kind == token.STRING {
			if s, err := strconv.Unquote(bl.Value); err == nil {
				into[s] = true
			}
		}
		return true
	})
	return nil
}

// ---- metrics -------------------------------------------------------------------------------------

// recorder is a Registerer that keeps the collectors registered through it.
type recorder struct {
	prometheus.Registerer
	collectors []prometheus.Collector
}

func (r *recorder) Register(c prometheus.Collector) error {
	r.collectors = append(r.collectors, c)
	return r.Registerer.Register(c)
}

func (r *recorder) MustRegister(cs ...prometheus.Collector) {
	for _, c := range cs {
		if err := r.Register(c); err != nil {
			panic(err)
		}
	}
}

// registeredMetrics returns every metric metrics.New registers: names and label names from the
// collectors' descriptors, kinds from Gather (or, for a vector with no series yet, from its Go
// type).
func registeredMetrics() (map[string]metricDef, error) {
	reg := prometheus.NewRegistry()
	rec := &recorder{Registerer: reg}
	metrics.New(rec, "test")
	gathered, err := reg.Gather()
	if err != nil {
		return nil, err
	}
	kinds := map[string]string{}
	for _, mf := range gathered {
		kinds[mf.GetName()] = strings.ToLower(mf.GetType().String())
	}
	out := map[string]metricDef{}
	for _, c := range rec.collectors {
		descs := make(chan *prometheus.Desc, 16)
		go func() { c.Describe(descs); close(descs) }()
		for d := range descs {
			name, labels, err := parseDesc(d.String())
			if err != nil {
				return nil, err
			}
			kind, ok := kinds[name]
			if !ok {
				kind = vecKind(c)
			}
			if kind == "untyped" || kind == "gauge_histogram" {
				kind = ""
			}
			out[name] = metricDef{Name: name, Kind: kind, Labels: labels, LabelsKnown: true}
		}
	}
	return out, nil
}

// vecKind is the kind of a vector collector, known from its type even before it has series.
func vecKind(c prometheus.Collector) string {
	switch c.(type) {
	case *prometheus.CounterVec:
		return "counter"
	case *prometheus.GaugeVec:
		return "gauge"
	case *prometheus.HistogramVec:
		return "histogram"
	case *prometheus.SummaryVec:
		return "summary"
	}
	return ""
}

var reDesc = regexp.MustCompile(`^Desc\{fqName: ("(?:[^"\\]|\\.)*"), .*constLabels: \{([^}]*)\}, variableLabels: \{([^}]*)\}\}$`)

// parseDesc reads the metric name and label names (constant and variable) from
// prometheus.Desc.String(), the only public view of a descriptor.
func parseDesc(s string) (string, []string, error) {
	m := reDesc.FindStringSubmatch(s)
	if m == nil {
		return "", nil, fmt.Errorf("unexpected prometheus.Desc format %q", s)
	}
	name, err := strconv.Unquote(m[1])
	if err != nil {
		return "", nil, err
	}
	var labels []string
	for _, lp := range strings.Split(m[2], ",") {
		if n, _, ok := strings.Cut(lp, "="); ok {
			labels = append(labels, n)
		}
	}
	for _, l := range strings.Split(m[3], ",") {
		if l = strings.TrimSuffix(strings.TrimPrefix(l, "c("), ")"); l != "" {
			labels = append(labels, l)
		}
	}
	return name, labels, nil
}

// ---- PromQL --------------------------------------------------------------------------------------

var (
	reMetricRef = regexp.MustCompile(`\b(distfeat_[a-zA-Z0-9_]+)\b`)
	reSelector  = regexp.MustCompile(`\b(distfeat_[a-zA-Z0-9_]+)\s*\{([^}]*)\}`)
	reMatcher   = regexp.MustCompile(`([a-zA-Z_][a-zA-Z0-9_]*)\s*(=~|!~|!=|=)`)
	reGrouping  = regexp.MustCompile(`\b(by|without|on|ignoring|group_left|group_right)\s*\(([^)]*)\)`)
	reQuoted    = regexp.MustCompile(`"(?:[^"\\]|\\.)*"`)
)

// targetLabels are attached by Prometheus service discovery, not by the code.
var targetLabels = []string{"instance", "job", "namespace", "pod", "container", "service", "endpoint", "node"}

// checkPromQL returns problems with the distfeat metrics an expression uses: unknown metrics,
// histogram suffixes on non-histograms, and label names the metric does not have.
func checkPromQL(expr string, metrics map[string]metricDef) []string {
	var problems []string
	// Label values may contain anything; drop them before looking for names.
	bare := reQuoted.ReplaceAllString(expr, `""`)
	var used []metricDef
	bucket := false
	for _, m := range reMetricRef.FindAllStringSubmatch(bare, -1) {
		d, suffix, ok := resolveMetric(m[1], metrics)
		if !ok {
			problems = append(problems, fmt.Sprintf("metric %s is not defined in internal/metrics (defined: %s)", m[1], metricNames(metrics)))
			continue
		}
		if suffix == "_bucket" {
			bucket = true
		}
		used = append(used, d)
	}
	for _, m := range reSelector.FindAllStringSubmatch(bare, -1) {
		d, suffix, ok := resolveMetric(m[1], metrics)
		if !ok || !d.LabelsKnown {
			continue
		}
		for _, mm := range reMatcher.FindAllStringSubmatch(m[2], -1) {
			l := mm[1]
			if l == "__name__" || slices.Contains(d.Labels, l) || slices.Contains(targetLabels, l) || (l == "le" && suffix == "_bucket") {
				continue
			}
			problems = append(problems, fmt.Sprintf("%s has no label %q (labels in code: %v)", m[1], l, d.Labels))
		}
	}
	allKnown := len(used) > 0
	labels := map[string]bool{}
	for _, d := range used {
		allKnown = allKnown && d.LabelsKnown
		for _, l := range d.Labels {
			labels[l] = true
		}
	}
	if allKnown {
		for _, m := range reGrouping.FindAllStringSubmatch(bare, -1) {
			for _, l := range strings.Split(m[2], ",") {
				l = strings.TrimSpace(l)
				if l == "" || labels[l] || slices.Contains(targetLabels, l) || (l == "le" && bucket) {
					continue
				}
				problems = append(problems, fmt.Sprintf("%q names label %q, which none of its metrics has", strings.TrimSpace(m[0]), l))
			}
		}
	}
	return problems
}

// resolveMetric maps a series name to its definition, accepting the _bucket/_sum/_count series
// of histograms and summaries.
func resolveMetric(name string, metrics map[string]metricDef) (metricDef, string, bool) {
	if d, ok := metrics[name]; ok {
		return d, "", true
	}
	for _, suffix := range []string{"_bucket", "_sum", "_count"} {
		base, ok := strings.CutSuffix(name, suffix)
		if !ok {
			continue
		}
		d, ok := metrics[base]
		if !ok {
			continue
		}
		switch {
		case d.Kind == "histogram", d.Kind == "":
			return d, suffix, true
		case d.Kind == "summary" && suffix != "_bucket":
			return d, suffix, true
		}
	}
	return metricDef{}, "", false
}

func metricNames(metrics map[string]metricDef) string {
	var names []string
	for n := range metrics {
		names = append(names, n)
	}
	sort.Strings(names)
	return strings.Join(names, ", ")
}

// ---- self-tests of the parsers (they run without the project code) -------------------------------

func TestParseDesc(t *testing.T) {
	c := prometheus.NewCounterVec(prometheus.CounterOpts{Name: "distfeat_x_total", Help: "h \"q\"", ConstLabels: prometheus.Labels{"k": "v"}}, []string{"reason", "family"})
	descs := make(chan *prometheus.Desc, 1)
	c.Describe(descs)
	name, labels, err := parseDesc((<-descs).String())
	if err != nil || name != "distfeat_x_total" || !reflect.DeepEqual(labels, []string{"k", "reason", "family"}) {
		t.Errorf("parseDesc: %q %v %v", name, labels, err)
	}
	g := prometheus.NewGauge(prometheus.GaugeOpts{Name: "distfeat_y", Help: "h"})
	g.Describe(descs)
	if name, labels, err := parseDesc((<-descs).String()); err != nil || name != "distfeat_y" || len(labels) != 0 {
		t.Errorf("parseDesc: %q %v %v", name, labels, err)
	}
}

// TestRegisteredMetrics: the facts come from the real collectors, with kinds and labels.
func TestRegisteredMetrics(t *testing.T) {
	m, err := registeredMetrics()
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]metricDef{
		"distfeat_records_invalid_total": {Name: "distfeat_records_invalid_total", Kind: "counter", Labels: []string{"reason"}, LabelsKnown: true},
		"distfeat_window_points":         {Name: "distfeat_window_points", Kind: "histogram", LabelsKnown: true},
		"distfeat_build_info":            {Name: "distfeat_build_info", Kind: "gauge", Labels: []string{"version", "goversion"}, LabelsKnown: true},
	} {
		if got := m[name]; !reflect.DeepEqual(got, want) {
			t.Errorf("%s: got %+v, want %+v", name, got, want)
		}
	}
}

func TestCheckPromQL(t *testing.T) {
	metrics := map[string]metricDef{
		"distfeat_points_total":          {Name: "distfeat_points_total", Kind: "counter", LabelsKnown: true},
		"distfeat_records_invalid_total": {Name: "distfeat_records_invalid_total", Kind: "counter", Labels: []string{"reason"}, LabelsKnown: true},
		"distfeat_finalize_seconds":      {Name: "distfeat_finalize_seconds", Kind: "histogram", Labels: []string{"family"}, LabelsKnown: true},
		"distfeat_windows_open":          {Name: "distfeat_windows_open", Kind: "gauge", LabelsKnown: true},
		"distfeat_consumer_lag":          {Name: "distfeat_consumer_lag", Kind: "gauge"}, // labels unknown
	}
	tests := []struct {
		expr     string
		problems int
	}{
		{`sum(rate(distfeat_points_total{instance=~"$instance"}[5m]))`, 0},
		{`sum by (reason) (rate(distfeat_records_invalid_total{reason="late"}[5m]))`, 0},
		{`histogram_quantile(0.95, sum by (le, family) (rate(distfeat_finalize_seconds_bucket[5m])))`, 0},
		{`sum(rate(distfeat_finalize_seconds_sum[5m])) / sum(rate(distfeat_finalize_seconds_count[5m]))`, 0},
		{`max by (partition) (distfeat_consumer_lag)`, 0}, // unknown labels: not judged
		{`rate(distfeat_points_totals[5m])`, 1},           // typo
		{`distfeat_windows_open_bucket`, 1},               // not a histogram
		{`sum by (reason) (rate(distfeat_points_total[5m]))`, 1},
		{`rate(distfeat_records_invalid_total{cause="decode"}[5m])`, 1},
		{`rate(distfeat_records_invalid_total{reason="distfeat_not_a_metric"}[5m])`, 0}, // label values are ignored
	}
	for _, tt := range tests {
		if got := checkPromQL(tt.expr, metrics); len(got) != tt.problems {
			t.Errorf("checkPromQL(%q) = %q, want %d problem(s)", tt.expr, got, tt.problems)
		}
	}
}
