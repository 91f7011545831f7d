// Package twosample is a streaming kernel two-sample test: it says, per window of points,
// whether the window's distribution has drifted from a reference sample, in linear time
// per point and fixed memory per window, with the same bits on every machine.
//
// # Features
//
// Every point u ∈ [0,1]^d is mapped to D = 2d + 2·K·F bounded features:
//
//   - the moment block x_1…x_d, x_1²…x_d², x = u − c for a centre c (the reference's pilot
//     mean): the features of the polynomial kernel (1 + xᵀy)² restricted to its diagonal
//     terms, sensitive to the mean and the per-coordinate spread;
//   - random Fourier features cos ω·u, sin ω·u for F frequencies ω ~ N(0, σ_k⁻² I) at each
//     of K bandwidths σ_k (Rahimi and Recht): their inner products average the Gaussian
//     kernels exp(−|u−v|²/(2σ_k²)).
//
// A window's state (Window) is the point count and the fixed-point sums of the D features:
// adding a point costs O(D) and two windows merge exactly (integer addition), so a window
// finalises to the same bits however its points were split across records, workers or
// merged halves.
//
// # Reference
//
// The reference sample is summarised once (ReferenceBuilder), in O(D²) memory whatever its
// size. Its points are split by position: points 0, 1, 2 of every 10 form part A (30%),
// the others part B (70%). Part A gives the whitening (the feature covariance), part B the
// centre the window is compared with and the covariance of the null simulation. Using
// disjoint parts matters: a whitening estimated from the same points as the centre is
// correlated with it (the features are skewed), and directions of tiny estimated variance
// are noisy and heavy-tailed; both made the type-I error of a Hotelling statistic with the
// whole reference 2–3× its nominal level at 400-point windows in our simulations.
//
// # Statistics
//
// With δ = mean of the window's features − mean of part B's, n the window's points and m_B
// part B's, g = δ/√(1/n + 1/m_B) is, under H0 (window and reference from one distribution),
// approximately N(0, Σ) whatever n (central limit theorem; Σ the feature covariance). Three
// quadratic forms of g are computed, each a Hotelling-type statistic with its own
// whitening from part A:
//
//   - T_mean = g_uᵀ Σ_A,uu⁻¹ g_u on the d mean features (a shift of the mean: d degrees of
//     freedom, the most powerful test of a Gaussian mean shift);
//   - T_mom on the 2d moment features (a change of mean or spread);
//   - T_rff on all D features with ridge regularisation: gᵀ S⁻¹ (C_A + λI)⁻¹ S⁻¹ g, C_A the
//     correlation matrix of part A, S the diagonal of standard deviations, λ the ridge
//     (default 0.05). The ridge bounds the weight of any direction by 1/λ, so directions
//     whose variance is tiny or badly estimated (there are many: D features of
//     d-dimensional points are far from independent) cannot dominate; directions of large
//     variance, such as the blob-membership noise of a mixture, are whitened away. It
//     never inverts the window's covariance, so windows with fewer points than features
//     are fine.
//
// # Null distribution and p-values
//
// Under H0 the statistics are quadratic forms of g, which is approximately Gaussian for
// large windows but skewed for small ones (the features are bounded and skewed). At start
// the reference simulates the null once, at several window sizes:
//
//   - the large-window limit: NullDraws vectors g ~ N(0, Σ_B) (Σ_B from part B, independent
//     of part A's whitening) drawn with the frozen random number generator;
//   - windows of 400, 200, 100 and 50 points: NullDraws bootstrap windows each, resampled
//     from part B's first 4096 points (blocks of 50 points drawn with replacement, then
//     windows of blocks), whose g carries the features' real skewness and kurtosis.
//
// The statistics of each simulated draw make that size's null. A window of n points is
// compared with the nulls around n/s² (s = (1/n)/(1/n + 1/m_B), the window's share of g's
// variance: the rest, from part B's mean, is nearly Gaussian) and its p-values are
// interpolated linearly in 1/n between them. Against one null, a statistic's p-value is
// p_k = (1 + #{null T_k ≥ T_k})/(NullDraws + 1), and the test's p-value is that of the
// weighted minimum min_k p_k/w_k against the same simulated draws (the aggregation of
// MMDAgg, Schrab et al. 2023, with a null simulated from the reference in place of
// permutations). Each simulated covariance is an estimate, which widens the simulated
// statistics by about their degrees of freedom over the estimate's points; the window's
// statistic is stretched about the null mean by the same factor (Wishart moments).
//
// # Between windows
//
// The null above is that of windows drawn from the reference's pooled points. A stream that
// wanders from window to window (a sensor's mean drifting slowly, say) and whose reference
// wanders the same way breaks it: each window sits at its own mean, so most windows differ
// from the pooled reference by more than that null allows. With Config.BetweenWindows the
// reference comes in windows (ReferenceBuilder.ByWindows, EndWindow: the stream's own past
// windows, in order) and is split by whole windows, 3 of every 10 to part A (the whitening)
// and the rest to part B. Each of part B's k windows is tested as a new window would be,
// against part B without its own points, and a new window's p-value is its full conformal
// rank among them: exactly valid when the new window is exchangeable with them, at a
// resolution of 1/(k+1). Nothing is simulated. The reference also measures the persistence
// of evidence that such a stream shows from window to window (Between), which a sequential
// detector has to allow for.
//
// # Determinism
//
// The random frequencies and null draws come from a caller-supplied normal source (the
// project's frozen RNG), sines and cosines from a caller-supplied function (the project's
// portable kernel) or, for a window's sums, an optional caller-supplied bulk kernel
// (WithFixedSincos: distfeat's SIMD kernel) that must give the same integers, and all
// linear algebra here is plain loops with every product rounded by an explicit float64
// conversion (no fused multiply-add, which would change last bits between
// architectures), so a Reference and every window's result are the same bits
// everywhere.
package twosample
