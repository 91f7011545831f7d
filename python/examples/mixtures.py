"""The mixture-count data of Sutherland et al. (AAAI 2016, §5; thesis §5.2): set i is a sample
from an equal-weight mixture of Y_i ~ Unif{1..10} 2-D Gaussians, mean ~ Unif[-5, 5]²,
covariance a·A·Aᵀ + B with a ~ Unif[1, 4], A(u, v) ~ Unif[-1, 1], B diagonal ~ Unif[0, 1]."""

import numpy as np


def mixture_sets(n_sets: int, points: int, seed: int):
    rng = np.random.default_rng(seed)
    y = rng.integers(1, 11, n_sets)
    sets = []
    for k in y:
        mu = rng.uniform(-5, 5, (k, 2))
        a = rng.uniform(1, 4, k)
        A = rng.uniform(-1, 1, (k, 2, 2))
        B = rng.uniform(0, 1, (k, 2))
        cov = a[:, None, None] * A @ A.transpose(0, 2, 1) + np.eye(2)[None] * B[:, :, None]
        comp = rng.integers(0, k, points)
        L = np.linalg.cholesky(cov)
        z = rng.standard_normal((points, 2))
        sets.append(mu[comp] + np.einsum("nij,nj->ni", L[comp], z))
    return sets, y.astype(float)
