package deploy_test

// Facts read from the Go source of the project, never from a hand-kept list: the environment
// variables of the worker configuration (caarlos0/env struct tags), the Prometheus metrics the
// code defines, and the string literals of the CLI (subcommands, flags, HTTP paths). The
// manifest tests in deploy_test.go check the deployment files against these.

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
)

const (
	repoRoot  = ".."
	envPrefix = "DISTFEAT_"
)

// configDirs hold the worker configuration struct (`env:"NAME"` tags). cmd/distfeat is where
// DESIGN puts it; internal/config is accepted too, should it move there.
var configDirs = []string{"cmd/distfeat", "internal/config"}

// envVar is one variable of the worker configuration.
type envVar struct {
	Name       string // without the DISTFEAT_ prefix
	Default    string // envDefault tag
	HasDefault bool
	Field      string // Go struct field, for messages
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

	for _, dir := range configDirs {
		srcs, err := goSources(filepath.Join(root, dir))
		if err != nil {
			return nil, err
		}
		vars, err := parseEnvTags(srcs)
		if err != nil {
			return nil, err
		}
		for k, v := range vars {
			f.Env[k] = v
		}
	}
	if len(f.Env) == 0 {
		problems = append(problems, fmt.Sprintf("no `env:\"NAME\"` struct tags in %s/*.go: the worker "+
			"configuration (cmd/distfeat/config.go, caarlos0/env tags) must exist before the manifests "+
			"can be checked against it", strings.Join(configDirs, "/*.go or ")))
	}

	msrcs, err := goSources(filepath.Join(root, "internal", "metrics"))
	if err != nil {
		return nil, err
	}
	f.Metrics, err = parseMetricDefs(msrcs)
	if err != nil {
		return nil, err
	}
	if len(f.Metrics) == 0 {
		problems = append(problems, "no metric definitions (`Name: \"...\"` in prometheus *Opts, or "+
			"prometheus.NewDesc) in internal/metrics/*.go: the metrics package must exist before the "+
			"alerts and the dashboard can be checked against it")
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

// ---- environment variables -----------------------------------------------------------------------

// parseEnvTags returns the variables declared by `env:"NAME"` struct tags in the given sources
// (file name → source), following nested structs and their `envPrefix` tags the way
// caarlos0/env does. Names are returned without the DISTFEAT_ prefix, whether the tags spell
// it or the code passes it as env.Options.Prefix.
func parseEnvTags(srcs map[string]string) (map[string]envVar, error) {
	fset := token.NewFileSet()
	named := map[string]*ast.StructType{}
	var all []*ast.StructType
	for name, src := range srcs {
		file, err := parser.ParseFile(fset, name, src, 0)
		if err != nil {
			return nil, err
		}
		ast.Inspect(file, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.TypeSpec:
				if st, ok := n.Type.(*ast.StructType); ok {
					named[n.Name.Name] = st
				}
			case *ast.StructType:
				all = append(all, n)
			}
			return true
		})
	}
	// A struct reached through a field of another struct is expanded from there, with the
	// field's prefix; only the others are roots.
	child := map[*ast.StructType]bool{}
	for _, st := range all {
		for _, fld := range st.Fields.List {
			if c := fieldStruct(fld.Type, named); c != nil {
				child[c] = true
			}
		}
	}
	out := map[string]envVar{}
	var expand func(st *ast.StructType, prefix string, seen map[*ast.StructType]bool)
	expand = func(st *ast.StructType, prefix string, seen map[*ast.StructType]bool) {
		if seen[st] {
			return
		}
		seen[st] = true
		defer delete(seen, st)
		for _, fld := range st.Fields.List {
			var tag reflect.StructTag
			if fld.Tag != nil {
				s, err := strconv.Unquote(fld.Tag.Value)
				if err == nil {
					tag = reflect.StructTag(s)
				}
			}
			fieldName := "(embedded)"
			if len(fld.Names) > 0 {
				fieldName = fld.Names[0].Name
			}
			if env, ok := tag.Lookup("env"); ok {
				if name := strings.TrimSpace(strings.Split(env, ",")[0]); name != "" {
					full := strings.TrimPrefix(prefix+name, envPrefix)
					def, has := tag.Lookup("envDefault")
					out[full] = envVar{Name: full, Default: def, HasDefault: has, Field: fieldName}
					continue
				}
			}
			if c := fieldStruct(fld.Type, named); c != nil {
				expand(c, prefix+tag.Get("envPrefix"), seen)
			}
		}
	}
	for _, st := range all {
		if !child[st] {
			expand(st, "", map[*ast.StructType]bool{})
		}
	}
	return out, nil
}

func fieldStruct(expr ast.Expr, named map[string]*ast.StructType) *ast.StructType {
	switch e := expr.(type) {
	case *ast.StarExpr:
		return fieldStruct(e.X, named)
	case *ast.Ident:
		return named[e.Name]
	case *ast.StructType:
		return e
	}
	return nil
}

// ---- metrics -------------------------------------------------------------------------------------

// parseMetricDefs returns the metrics defined in the given sources: composite literals of
// prometheus *Opts types with a Name (plus Namespace and Subsystem), and prometheus.NewDesc
// calls. Labels come from the []string literal passed next to the opts (New*Vec) or to NewDesc.
func parseMetricDefs(srcs map[string]string) (map[string]metricDef, error) {
	fset := token.NewFileSet()
	files := map[string]*ast.File{}
	consts := map[string]string{}
	for name, src := range srcs {
		file, err := parser.ParseFile(fset, name, src, 0)
		if err != nil {
			return nil, err
		}
		files[name] = file
		for _, decl := range file.Decls {
			gd, ok := decl.(*ast.GenDecl)
			if !ok || (gd.Tok != token.CONST && gd.Tok != token.VAR) {
				continue
			}
			for _, spec := range gd.Specs {
				vs := spec.(*ast.ValueSpec)
				for i, n := range vs.Names {
					if i < len(vs.Values) {
						if s, ok := evalString(vs.Values[i], consts); ok {
							consts[n.Name] = s
						}
					}
				}
			}
		}
	}
	out := map[string]metricDef{}
	add := func(d metricDef) {
		if old, ok := out[d.Name]; ok && old.LabelsKnown && !d.LabelsKnown {
			return
		}
		out[d.Name] = d
	}
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, fn := range names {
		withLabels := map[*ast.CompositeLit]bool{}
		ast.Inspect(files[fn], func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok {
				return true
			}
			if sel, ok := call.Fun.(*ast.SelectorExpr); ok && sel.Sel.Name == "NewDesc" && len(call.Args) >= 3 {
				if name, ok := evalString(call.Args[0], consts); ok {
					labels, known := stringSlice(call.Args[2], consts)
					add(metricDef{Name: name, Labels: labels, LabelsKnown: known})
				}
				return true
			}
			if len(call.Args) == 0 {
				return true
			}
			lit := optsLiteral(call.Args[0])
			if lit == nil {
				return true
			}
			d, ok := optsDef(lit, consts)
			if !ok {
				return true
			}
			withLabels[lit] = true
			if len(call.Args) >= 2 {
				d.Labels, d.LabelsKnown = stringSlice(call.Args[1], consts)
			} else {
				d.LabelsKnown = true // New{Counter,Gauge,Histogram,Summary}(opts): no labels
			}
			add(d)
			return true
		})
		// Opts literals not passed directly to a constructor (assigned to a variable first):
		// the name is known, the labels are not.
		ast.Inspect(files[fn], func(n ast.Node) bool {
			lit, ok := n.(*ast.CompositeLit)
			if !ok || withLabels[lit] {
				return true
			}
			if d, ok := optsDef(lit, consts); ok {
				add(d)
			}
			return true
		})
	}
	return out, nil
}

func optsLiteral(e ast.Expr) *ast.CompositeLit {
	if u, ok := e.(*ast.UnaryExpr); ok && u.Op == token.AND {
		e = u.X
	}
	lit, _ := e.(*ast.CompositeLit)
	return lit
}

func optsDef(lit *ast.CompositeLit, consts map[string]string) (metricDef, bool) {
	typeName := ""
	switch t := lit.Type.(type) {
	case *ast.SelectorExpr:
		typeName = t.Sel.Name
	case *ast.Ident:
		typeName = t.Name
	}
	if !strings.HasSuffix(typeName, "Opts") {
		return metricDef{}, false
	}
	var ns, sub, name string
	for _, el := range lit.Elts {
		kv, ok := el.(*ast.KeyValueExpr)
		if !ok {
			continue
		}
		key, ok := kv.Key.(*ast.Ident)
		if !ok {
			continue
		}
		s, ok := evalString(kv.Value, consts)
		if !ok {
			continue
		}
		switch key.Name {
		case "Namespace":
			ns = s
		case "Subsystem":
			sub = s
		case "Name":
			name = s
		}
	}
	if name == "" {
		return metricDef{}, false
	}
	var parts []string
	for _, p := range []string{ns, sub, name} {
		if p != "" {
			parts = append(parts, p)
		}
	}
	kind := ""
	for _, k := range []string{"Counter", "Gauge", "Histogram", "Summary"} {
		if strings.Contains(typeName, k) {
			kind = strings.ToLower(k)
		}
	}
	return metricDef{Name: strings.Join(parts, "_"), Kind: kind}, true
}

// evalString evaluates a constant string expression: literals, known constants, +, and
// prometheus.BuildFQName.
func evalString(e ast.Expr, consts map[string]string) (string, bool) {
	switch e := e.(type) {
	case *ast.BasicLit:
		if e.Kind == token.STRING {
			s, err := strconv.Unquote(e.Value)
			return s, err == nil
		}
	case *ast.Ident:
		s, ok := consts[e.Name]
		return s, ok
	case *ast.ParenExpr:
		return evalString(e.X, consts)
	case *ast.BinaryExpr:
		if e.Op == token.ADD {
			a, ok1 := evalString(e.X, consts)
			b, ok2 := evalString(e.Y, consts)
			return a + b, ok1 && ok2
		}
	case *ast.CallExpr:
		if sel, ok := e.Fun.(*ast.SelectorExpr); ok && sel.Sel.Name == "BuildFQName" && len(e.Args) == 3 {
			var parts []string
			for _, a := range e.Args {
				s, ok := evalString(a, consts)
				if !ok {
					return "", false
				}
				if s != "" {
					parts = append(parts, s)
				}
			}
			return strings.Join(parts, "_"), true
		}
	}
	return "", false
}

func stringSlice(e ast.Expr, consts map[string]string) ([]string, bool) {
	if id, ok := e.(*ast.Ident); ok && id.Name == "nil" {
		return nil, true
	}
	lit, ok := e.(*ast.CompositeLit)
	if !ok {
		return nil, false
	}
	out := []string{}
	for _, el := range lit.Elts {
		s, ok := evalString(el, consts)
		if !ok {
			return nil, false
		}
		out = append(out, s)
	}
	return out, true
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

func TestParseEnvTags(t *testing.T) {
	src := `package main

import "github.com/caarlos0/env/v10"

type tlsConfig struct {
	Enabled bool   ` + "`env:\"ENABLED\"`" + `
	CAFile  string ` + "`env:\"CA_FILE\"`" + `
}

type config struct {
	Brokers     []string  ` + "`env:\"BROKERS\" envSeparator:\",\" envDefault:\"127.0.0.1:9092\"`" + `
	MetricsAddr string    ` + "`env:\"METRICS_ADDR\" envDefault:\":9464\"`" + `
	Password    string    ` + "`env:\"SASL_PASSWORD,file\"`" + `
	Full        string    ` + "`env:\"DISTFEAT_FULL_NAME\"`" + `
	TLS         tlsConfig ` + "`envPrefix:\"TLS_\"`" + `
	ignored     int
}

func load() (config, error) {
	var cfg config
	return cfg, env.ParseWithOptions(&cfg, env.Options{Prefix: "DISTFEAT_"})
}
`
	got, err := parseEnvTags(map[string]string{"config.go": src})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]envVar{
		"BROKERS":       {Name: "BROKERS", Default: "127.0.0.1:9092", HasDefault: true, Field: "Brokers"},
		"METRICS_ADDR":  {Name: "METRICS_ADDR", Default: ":9464", HasDefault: true, Field: "MetricsAddr"},
		"SASL_PASSWORD": {Name: "SASL_PASSWORD", Field: "Password"},
		"FULL_NAME":     {Name: "FULL_NAME", Field: "Full"},
		"TLS_ENABLED":   {Name: "TLS_ENABLED", Field: "Enabled"},
		"TLS_CA_FILE":   {Name: "TLS_CA_FILE", Field: "CAFile"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("parseEnvTags:\n got  %v\n want %v", got, want)
	}
}

func TestParseMetricDefs(t *testing.T) {
	src := `package metrics

import "github.com/prometheus/client_golang/prometheus"

const namespace = "distfeat"

func New(reg prometheus.Registerer) *Metrics {
	m := &Metrics{
		Points: prometheus.NewCounter(prometheus.CounterOpts{Namespace: namespace, Name: "points_total", Help: "h"}),
		Invalid: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "distfeat_records_invalid_total", Help: "h"}, []string{"reason"}),
		Finalize: prometheus.NewHistogramVec(prometheus.HistogramOpts{Namespace: namespace, Name: "finalize_seconds"}, []string{"family"}),
		Lag: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: prometheus.BuildFQName(namespace, "", "consumer_lag")}, partitionLabels),
	}
	opts := prometheus.SummaryOpts{Name: "distfeat_latency_seconds"}
	_ = opts
	_ = prometheus.NewDesc("distfeat_build_info", "h", []string{"version", "goversion"}, nil)
	return m
}
`
	got, err := parseMetricDefs(map[string]string{"metrics.go": src})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]metricDef{
		"distfeat_points_total":          {Name: "distfeat_points_total", Kind: "counter", LabelsKnown: true},
		"distfeat_records_invalid_total": {Name: "distfeat_records_invalid_total", Kind: "counter", Labels: []string{"reason"}, LabelsKnown: true},
		"distfeat_finalize_seconds":      {Name: "distfeat_finalize_seconds", Kind: "histogram", Labels: []string{"family"}, LabelsKnown: true},
		"distfeat_consumer_lag":          {Name: "distfeat_consumer_lag", Kind: "gauge"},
		"distfeat_latency_seconds":       {Name: "distfeat_latency_seconds", Kind: "summary"},
		"distfeat_build_info":            {Name: "distfeat_build_info", Labels: []string{"version", "goversion"}, LabelsKnown: true},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("parseMetricDefs:\n got  %+v\n want %+v", got, want)
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
