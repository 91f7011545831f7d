#!/usr/bin/env python3
"""scikit-learn baseline for the mmd family: RBFSampler (random Fourier features) + mean.

Times what the paper's users would run per window: transform n points with
RBFSampler(n_components=D) and average the rows. Prints ns per point (best of
--repeat runs of --windows windows each), one line per (d, n). Run it on one
core, e.g.

    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 taskset -c 1 \
        python3 scripts/sklearn-rbf-baseline.py

Needs numpy and scikit-learn (Debian: apt-get install python3-sklearn).
"""
import argparse
import time

import numpy as np
from sklearn.kernel_approximation import RBFSampler


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--features", type=int, default=1024, help="D (n_components)")
    ap.add_argument("--bandwidth", type=float, default=0.1, help="σ: gamma = 1/(2σ²)")
    ap.add_argument("--dims", default="1,2,3")
    ap.add_argument("--sizes", default="100,500,2500,10000")
    ap.add_argument("--windows", type=int, default=20)
    ap.add_argument("--repeat", type=int, default=5)
    a = ap.parse_args()
    rng = np.random.default_rng(1)
    gamma = 1.0 / (2 * a.bandwidth**2)
    print(f"scikit-learn RBFSampler + mean, D = {a.features}, bandwidth {a.bandwidth}")
    for d in map(int, a.dims.split(",")):
        sampler = RBFSampler(gamma=gamma, n_components=a.features, random_state=0)
        sampler.fit(np.zeros((1, d)))
        for n in map(int, a.sizes.split(",")):
            windows = [rng.random((n, d)) for _ in range(a.windows)]
            best = float("inf")
            for _ in range(a.repeat):
                t0 = time.perf_counter()
                for x in windows:
                    sampler.transform(x).mean(axis=0)
                best = min(best, time.perf_counter() - t0)
            print(f"d={d} n={n}: {best / (a.windows * n) * 1e9:.1f} ns/point")


if __name__ == "__main__":
    main()
