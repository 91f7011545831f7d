// Package numeric holds the numeric kernels of the feature path, each with the rule that
// makes its results the same bits on every machine:
//
//   - the elementary functions (libm.go, sincos.go: Log, Exp, Tan, Sincos, SincosFlat,
//     CosPi, SincosFixed; Go's algorithms with every product rounded explicitly) and the
//     Gauss–Legendre nodes built on them (GaussLegendre);
//   - the fixed-point rounding of sketch terms (fixed.go: ToFixed, FromFixed);
//   - the SIMD kernels of the families — random Fourier products (dot.go: RFFDot,
//     RFFDotBatch), the Walsh–Hadamard transform (fwht.go), the mmd accumulation
//     (mmd_kernel.go), the l2 products (l2.go), the hdd cells and projection lanes
//     (cells.go, lanes.go) and the KDE lanes — each assembly file (*_amd64.s, with its
//     declarations in *_amd64.go) beside its portable Go twin, which performs the same
//     operations in the same order (*_other.go is the build without assembly: purego or
//     not amd64);
//   - the deterministic seeded RNG (rng.go) and the cosine multi-index enumeration
//     (basis.go).
//
// The tests here hold the rule: TestNoImplicitFusion and TestFeaturePathMathCalls check
// every package on the feature path, TestDeterministicMath the functions against committed
// checksums, and the Test…BitIdentical tests every kernel path against its twin (run under
// purego, GOAMD64=v3 and arm64 by `make test-arch`). Each kernel's tests sit beside it
// (dot_test.go, cells_test.go, lanes_test.go, kde_test.go, l2_test.go, fwht_test.go, …),
// and bench_test.go times every SIMD kernel against its portable twin (`make bench`).
package numeric
