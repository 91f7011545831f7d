"""Detection delay side by side: distfeat's sequential two_sample detector (`ert`) and
alibi-detect's MMDDriftOnline, on the same generated streams (docs/drift.md, Detection delay).

Not a product dependency and not in any test suite. alibi-detect lives in its own virtualenv
under bin/ (ignored by git; about 6 GB: PyTorch with its CUDA libraries, run on the CPU):

    python3 -m venv bin/alibi-venv
    bin/alibi-venv/bin/pip install "alibi-detect[torch]"
    make build
    bin/alibi-venv/bin/python python/bench/drift_alibi.py --streams 36 --ert 5000 --after 6000

(about 10 minutes of CPU and 9 GB of memory: alibi-detect's set-up. `--skip-alibi` runs the
distfeat side alone, with any Python 3 that has numpy.)

The three problems of docs/drift.md's delay table (mean shift 0.15σ, variance ×1.12² on one
axis, blobs ε = 6 vs 1; the Go study's generators, mapped to [0, 1]²), windows of 100 points,
the change at window 20 (point 2000). Every stream is written once as JSON lines (one window
per line, one set per stream) and read by both detectors:

- distfeat: `distfeat embed` with a two_sample family whose `ert` is ERT/100 windows: its
  `<name>_seq` column says at which window it alarms; the naive per-window test at
  α = 1/(ERT in windows) is read from the same output's p-values;
- alibi-detect: MMDDriftOnline (PyTorch backend, CPU, one thread) with `ert` = ERT points
  (its ERT counts points: one step per point, a sliding window of `--alibi-window` points),
  fed the same points in the same order, one point at a time, its state reset per stream.

Both use the same 2000-point reference per data family (Gaussian: the mean-shift and
variance problems; blobs). alibi-detect's documentation asks for a reference about ten times
the ERT and bootstraps at least ten times the ERT; its quantile code refuses fewer
bootstraps than the ERT itself at every one of its W threshold steps, each of which drops the
two or so bootstraps that crossed, so `--bootstraps` defaults to ERT + 3·W (about the least it
accepts).

Delay: points from the change to the alarm; streams that alarm before the change are left out
(counted as "early"); a stream with no alarm by its end counts its post-change length (a
lower bound, counted as "not found"). Set-up: CPU and wall seconds from the reference to a
detector ready for its first point (distfeat: `embed` of one window, its whole process;
alibi-detect: the MMDDriftOnline constructor). Memory: peak RSS of the process (alibi-detect:
of a child process that imports it, builds the detector and runs the streams; the RSS after
the imports alone is reported beside it).
"""

import argparse
import json
import math
import os
import resource
import subprocess
import sys
import tempfile
import time

import numpy as np

WINDOW = 100
CHANGE_WINDOW = 20
REF_POINTS = 2000


def gaussian(shift, sx):
    def g(rng, n):
        x = 0.5 + (shift + sx * rng.standard_normal(n)) / 12
        y = 0.5 + rng.standard_normal(n) / 12
        return np.clip(np.stack([x, y], 1), 0, 1)

    return g


def blobs(eps):
    rho = (eps - 1) / (eps + 1)
    c = math.sqrt(1 - rho * rho)

    def g(rng, n):
        cx = (rng.integers(0, 3, n) - 1) * 10.0
        cy = (rng.integers(0, 3, n) - 1) * 10.0
        a, b = rng.standard_normal(n), rng.standard_normal(n)
        return np.clip(np.stack([0.5 + (cx + a) / 32, 0.5 + (cy + rho * a + c * b) / 32], 1), 0, 1)

    return g


FAMILIES = {
    "gaussian": (gaussian(0, 1), [("mean shift 0.15σ", gaussian(0.15, 1)),
                                  ("variance ×1.12² (one axis)", gaussian(0, 1.12))]),
    "blobs": (blobs(1), [("blobs ε = 6 vs 1", blobs(6))]),
}


def write_sets(path, sets):
    """sets: list of (set id, list of windows (n×2 arrays)); one line per window, windows of
    all sets interleaved as a stream would carry them."""
    with open(path, "w") as f:
        for w in range(max(len(ws) for _, ws in sets)):
            for name, ws in sets:
                if w < len(ws):
                    f.write(json.dumps({"set": name, "t": 1000 * w,
                                        "points": [[float(f"{v:.6f}") for v in p] for p in ws[w]]}) + "\n")


def read_sets(path):
    out = {}
    with open(path) as f:
        for line in f:
            r = json.loads(line)
            out.setdefault(r["set"], []).append(np.asarray(r["points"], dtype=np.float32))
    return out


def child_rusage(cmd):
    """Runs cmd, returning (stdout, cpu seconds, wall seconds, peak RSS MiB) measured by wait4."""
    t0 = time.time()
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    # Read the pipes before reaping, so a large output cannot block the child.
    out = p.stdout.read()
    err = p.stderr.read()
    _, status, ru = os.wait4(p.pid, 0)
    wall = time.time() - t0
    p.returncode = os.waitstatus_to_exitcode(status)
    if p.returncode:
        sys.exit(f"{' '.join(cmd)}: exit {p.returncode}: {err.decode()[-2000:]}")
    return out, ru.ru_utime + ru.ru_stime, wall, ru.ru_maxrss / 1024


def distfeat_run(args, fam_dir, ert_windows, stream_path):
    spec = {"version": 3, "dim": 2, "bounds": {"lo": [0, 0], "hi": [1, 1]},
            "families": [{"name": "drift", "kind": "two_sample", "reference": "reference.jsonl",
                          "ert": ert_windows}]}
    spec_path = os.path.join(fam_dir, "spec.json")
    with open(spec_path, "w") as f:
        json.dump(spec, f)
    out, cpu, wall, rss = child_rusage([args.distfeat, "embed", "--workers", "1", "--spec", spec_path,
                                        "--in", stream_path])
    first_seq, first_naive, count = {}, {}, {}
    for line in out.decode().splitlines():  # in input order: a set's windows in turn
        r = json.loads(line)
        s = r["set"]
        seq = count.get(s, 0)  # each line is a whole set for embed: count its windows
        count[s] = seq + 1
        if r["features"]["drift_seq"][3] == 1 and s not in first_seq:
            first_seq[s] = seq
        if r["features"]["drift"][2] <= 1.0 / ert_windows and s not in first_naive:
            first_naive[s] = seq
    return first_seq, first_naive, cpu, wall, rss


def alibi_child(args):
    """Child mode: builds MMDDriftOnline on the family's reference, runs every stream file given,
    prints one JSON object."""
    rss_start = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    import torch
    torch.set_num_threads(1)
    from alibi_detect.cd import MMDDriftOnline

    rss_import = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    ref = np.concatenate([w for ws in read_sets(args.reference).values() for w in ws])
    torch.manual_seed(args.seed)
    c0, w0 = time.process_time(), time.time()
    cd = MMDDriftOnline(ref, ert=args.ert, window_size=args.alibi_window, backend="pytorch",
                        n_bootstraps=args.bootstraps, device="cpu", verbose=False)
    setup_cpu, setup_wall = time.process_time() - c0, time.time() - w0
    rss_setup = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    result = {"setup_cpu": setup_cpu, "setup_wall": setup_wall, "rss_start": rss_start,
              "rss_import": rss_import, "rss_setup": rss_setup, "streams": {}}
    c0 = time.process_time()
    points = 0
    for path in args.streams:
        alarms = {}
        for name, windows in read_sets(path).items():
            cd.reset_state()
            x = np.concatenate(windows)
            alarms[name] = None
            for t in range(len(x)):
                points += 1
                if cd.predict(x[t], return_test_stat=False)["data"]["is_drift"]:
                    alarms[name] = t + 1  # points consumed when it alarmed
                    break
        result["streams"][path] = alarms
    result["stream_cpu"] = time.process_time() - c0
    result["stream_points"] = points
    result["rss_peak"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps(result))


def summarise(delays, early, censored):
    n = len(delays)
    if n == 0:
        s = "no stream after the change"
    else:
        mean = sum(delays) / n
        se = math.sqrt(sum((d - mean) ** 2 for d in delays) / (n - 1) / n) if n > 1 else float("nan")
        s = f"{mean:,.0f} ± {se:,.0f}".replace(",", " ")
    notes = []
    if censored:
        notes.append(f"{censored} not found")
    if early:
        notes.append(f"{early} early")
    return s + (f" ({', '.join(notes)})" if notes else "")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--streams", type=int, default=10, help="streams per problem")
    ap.add_argument("--ert", type=int, default=10000, help="ERT in points (a multiple of 100)")
    ap.add_argument("--after", type=int, default=10000, help="points after the change per stream (censoring)")
    ap.add_argument("--bootstraps", type=int, default=0, help="alibi-detect's n_bootstraps (0: ERT + 3 × its window)")
    ap.add_argument("--alibi-window", type=int, default=WINDOW)
    ap.add_argument("--seed", type=int, default=20)
    ap.add_argument("--distfeat", default="bin/distfeat")
    ap.add_argument("--dir", default="", help="where the streams are written (default: a temporary directory)")
    ap.add_argument("--skip-alibi", action="store_true")
    # child mode
    ap.add_argument("--alibi-child", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--reference", help=argparse.SUPPRESS)
    ap.add_argument("--stream-files", dest="streams_files", nargs="*", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.bootstraps == 0:
        args.bootstraps = args.ert + 3 * args.alibi_window
    if args.alibi_child:
        args.streams = args.streams_files
        alibi_child(args)
        return
    if args.ert % WINDOW:
        sys.exit("--ert must be a multiple of the window size (100)")
    ert_windows = args.ert // WINDOW
    change = CHANGE_WINDOW * WINDOW
    post_windows = -(-args.after // WINDOW)
    root = args.dir or tempfile.mkdtemp(prefix="drift-alibi-")
    os.makedirs(root, exist_ok=True)
    rng = np.random.default_rng(args.seed)
    rows, setups = [], []
    for fam, (ref_gen, problems) in FAMILIES.items():
        fam_dir = os.path.join(root, fam)
        os.makedirs(fam_dir, exist_ok=True)
        ref = ref_gen(rng, REF_POINTS)
        write_sets(os.path.join(fam_dir, "reference.jsonl"),
                   [("reference", [ref[i:i + WINDOW] for i in range(0, REF_POINTS, WINDOW)])])
        stream_paths = []
        for pi, (pname, alt) in enumerate(problems):
            sets = []
            for s in range(args.streams):
                ws = [ref_gen(rng, WINDOW) for _ in range(CHANGE_WINDOW)] + [alt(rng, WINDOW) for _ in range(post_windows)]
                sets.append((f"stream-{s:03d}", ws))
            path = os.path.join(fam_dir, f"stream{pi}.jsonl")
            write_sets(path, sets)
            stream_paths.append((pname, path, [n for n, _ in sets]))
        # distfeat set-up: embed of one window (the first line), whole process.
        one = os.path.join(fam_dir, "one.jsonl")
        with open(stream_paths[0][1]) as f, open(one, "w") as g:
            g.write(f.readline())
        _, _, cpu, wall, rss = distfeat_run(args, fam_dir, ert_windows, one)
        setups.append((fam, "distfeat", cpu, wall, rss, None))
        ali = None
        if not args.skip_alibi:
            out, cpu, wall, rss = child_rusage(
                [sys.executable, "-W", "ignore", __file__, "--alibi-child", "--ert", str(args.ert),
                 "--bootstraps", str(args.bootstraps), "--alibi-window", str(args.alibi_window),
                 "--seed", str(args.seed), "--reference", os.path.join(fam_dir, "reference.jsonl"),
                 "--stream-files", *[p for _, p, _ in stream_paths]])
            ali = json.loads(out)
            with open(os.path.join(fam_dir, "alibi.json"), "w") as f:  # the raw results, kept
                json.dump(ali, f)
            setups.append((fam, "alibi", ali["setup_cpu"], ali["setup_wall"], rss, ali))
        for pname, path, names in stream_paths:
            first_seq, first_naive, cpu, wall, rss = distfeat_run(args, fam_dir, ert_windows, path)
            cols = []
            # window indices → points after the change at the window's end
            for first in (first_naive, first_seq):
                d, early, cens = [], 0, 0
                for n in names:
                    w = first.get(n)
                    if w is None:
                        d.append(post_windows * WINDOW)
                        cens += 1
                    elif w < CHANGE_WINDOW:
                        early += 1
                    else:
                        d.append((w - CHANGE_WINDOW + 1) * WINDOW)
                cols.append(summarise(d, early, cens))
            if ali is not None:
                d, early, cens = [], 0, 0
                for n in names:
                    t = ali["streams"][path][n]
                    if t is None:
                        d.append(post_windows * WINDOW)
                        cens += 1
                    elif t <= change:
                        early += 1
                    else:
                        d.append(t - change)
                cols.append(summarise(d, early, cens))
            rows.append((pname, cols, cpu))
    print(f"ERT {args.ert} points = {ert_windows} windows of {WINDOW}; change at point {change}; "
          f"{args.streams} streams per problem, {post_windows * WINDOW} points after the change; "
          f"alibi-detect window {args.alibi_window}, n_bootstraps {args.bootstraps}; streams in {root}\n")
    print("| problem | naive p ≤ 1/ERT | distfeat CUSUM K = 1.5 | alibi-detect MMDDriftOnline |")
    print("|---|---|---|---|")
    for pname, cols, _ in rows:
        print(f"| {pname} | " + " | ".join(cols + ([] if len(cols) == 3 else ["not run"])) + " |")
    print("\n| reference | detector | set-up CPU s | set-up wall s | peak RSS MiB |")
    print("|---|---|---|---|---|")
    for fam, det, cpu, wall, rss, ali in setups:
        extra = ""
        if ali:
            extra = (f" (after imports: {ali['rss_import']:.0f}; streams: {ali['stream_cpu']:.1f} s CPU for "
                     f"{ali['stream_points']} points, {1e3 * ali['stream_cpu'] / max(ali['stream_points'], 1):.2f} ms each)")
        print(f"| {fam} | {det} | {cpu:.2f} | {wall:.2f} | {rss:.0f}{extra} |")
    for pname, _, cpu in rows:
        print(f"distfeat embed CPU for the {pname} streams: {cpu:.2f} s")


if __name__ == "__main__":
    main()
