package numeric

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strings"
	"testing"
)

// exactMath are the math functions whose results are exact or correctly rounded by IEEE 754
// on every architecture (bit operations, comparisons, sqrt, fused multiply-add, scaling by
// powers of two), so the feature path may call them.
var exactMath = map[string]bool{
	"Abs": true, "Copysign": true, "Signbit": true, "IsNaN": true, "IsInf": true, "Inf": true, "NaN": true,
	"Float64bits": true, "Float64frombits": true, "Float32bits": true, "Float32frombits": true,
	"Sqrt": true, "FMA": true, "Ldexp": true, "Frexp": true, "Floor": true, "Ceil": true, "Trunc": true,
	"Min": true, "Max": true,
}

// inexactMathAllowed are the functions of the feature-path packages that may call the rest of the math
// library, and why that does not touch features.
var inexactMathAllowed = map[string]string{
	"kappa":               "κ(x, y), the divergences' definition, used only by tests as the oracle",
	"cdf":                 "the λ measure's CDF, used only by tests",
	"Sincos":              "math.Sincos beyond SincosMaxArg (2⁴⁰): only a bandwidth below ~1e-11 gets there (documented)",
	"sincosPortable":      "math.Sincos beyond 2²⁹, which no caller reaches (libm.go)",
	"Tan":                 "math.Tan beyond 2²⁹, which no caller reaches (libm.go)",
	"MMDAccumulateSincos": "the benchmark's reference with math.Sincos, not a kernel path",
	"GaussLegendre":       "quadrature.GaussLegendre with math.Cos, for internal/synth; embedding calls GaussLegendreCos with cosPortable",
}

// TestFeaturePathMathCalls enforces the library half of the feature-path floating-point rule
// (docs/CONTRACTS.md): math.Log, math.Exp, math.Sincos, math.Pow and the other elementary
// functions differ in their last bit between architectures (assembly on some, pure Go
// compiled with or without fused multiply-adds on others), so product code in the feature-path packages
// (featurePathPackages) calls only exactly rounded math functions and the portable ones of libm.go, except in the
// functions listed above.
func TestFeaturePathMathCalls(t *testing.T) {
	var files []string
	for _, dir := range featurePathPackages {
		matches, err := filepath.Glob(filepath.Join(dir, "*.go"))
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, matches...)
	}
	fset := token.NewFileSet()
	checked := 0
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		checked++
		for _, decl := range f.Decls {
			fn, ok := decl.(*ast.FuncDecl)
			if !ok || fn.Body == nil {
				continue
			}
			if _, ok := inexactMathAllowed[fn.Name.Name]; ok {
				continue
			}
			ast.Inspect(fn.Body, func(n ast.Node) bool {
				call, ok := n.(*ast.CallExpr)
				if !ok {
					return true
				}
				sel, ok := call.Fun.(*ast.SelectorExpr)
				if !ok {
					return true
				}
				if pkg, ok := sel.X.(*ast.Ident); ok && pkg.Name == "math" && !exactMath[sel.Sel.Name] {
					t.Errorf("%s: %s calls math.%s, whose last bit depends on the architecture; use the portable "+
						"functions of libm.go (docs/CONTRACTS.md, feature-path floating point)",
						fset.Position(call.Pos()), fn.Name.Name, sel.Sel.Name)
				}
				return true
			})
		}
	}
	if checked < 10 {
		t.Fatalf("only %d source files found: the test is not looking at the package", checked)
	}
}
