"""Speed from Python, side by side (a benchmark, not a test): the mmd features of 160 sets
of 2500 2-D points at D = 1024 on one core, including Python's call overhead — distfeat
(one call into Go for the whole batch) against scikit-learn's RBFSampler + a mean per set
(what users write by hand). Run: python python/bench/speed.py  (pin it to one core with
taskset -c 0; the script also limits BLAS and Go to one thread)."""

import os

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("MKL_NUM_THREADS", "1")
os.environ.setdefault("GOMAXPROCS", "1")

import argparse  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402
from sklearn.kernel_approximation import RBFSampler  # noqa: E402

import distfeat  # noqa: E402


def timed(f):
    t = time.perf_counter()
    f()
    return time.perf_counter() - t


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--sets", type=int, default=160)
    ap.add_argument("--points", type=int, default=2500)
    ap.add_argument("--features", type=int, default=1024)
    ap.add_argument("--bandwidth", type=float, default=0.1)
    ap.add_argument("--repeats", type=int, default=5)
    a = ap.parse_args()
    rng = np.random.default_rng(0)
    sets = [rng.random((a.points, 2)) for _ in range(a.sets)]
    spec = distfeat.Spec({"version": 3, "dim": 2, "seed": 1, "families": [
        {"name": "mmd", "kind": "mmd", "features": a.features, "bandwidth": a.bandwidth}]})
    gamma = 1 / (2 * a.bandwidth ** 2)
    rbf = RBFSampler(gamma=gamma, n_components=a.features, random_state=0).fit(sets[0])

    def sk():
        return np.stack([rbf.transform(s).mean(axis=0) for s in sets])

    def df():
        return spec.embed(sets, n_jobs=1)

    df(), sk()  # warm up (library load, draws compiled once per Spec)
    n = a.sets * a.points
    # Interleaved, so that both see the same machine load; the ratio of each pair is reported.
    pairs = [(timed(df), timed(sk)) for _ in range(a.repeats)]
    t_df = np.array([p[0] for p in pairs])
    t_sk = np.array([p[1] for p in pairs])
    ratios = t_sk / t_df
    print(f"{a.sets} sets x {a.points} points (2-D), mmd D={a.features}, one core, {a.repeats} interleaved runs:")
    print(f"  distfeat Spec.embed        best {t_df.min() * 1e3:9.1f} ms  median {np.median(t_df) * 1e3:9.1f} ms  "
          f"{n / t_df.min() / 1e6:7.2f} M points/s")
    print(f"  RBFSampler + mean per set  best {t_sk.min() * 1e3:9.1f} ms  median {np.median(t_sk) * 1e3:9.1f} ms  "
          f"{n / t_sk.min() / 1e6:7.2f} M points/s")
    print(f"  ratio: median of pairs {np.median(ratios):.1f}x (range {ratios.min():.1f}-{ratios.max():.1f}), "
          f"best over best {t_sk.min() / t_df.min():.1f}x")


if __name__ == "__main__":
    main()
