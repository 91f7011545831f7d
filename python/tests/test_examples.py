"""The Python downstream examples against the embedded broker and a worker."""

import json
import os
import subprocess
import sys

import numpy as np

from conftest import STALL, produce_sets, repo_path, worker_topics

EXAMPLES = repo_path("python", "examples")


def run(args, **kw):
    p = subprocess.run([sys.executable, *args], capture_output=True, text=True, **kw)
    assert p.returncode == 0, p.stderr + p.stdout
    return p.stdout


def test_mixture_count(broker, workers):
    """Ridge on hdd_js features of 4000 sets predicts the component count of 1000 held-out
    sets with an RMSE well below the constant predictor's (paper: constant 2.8, HDD well
    below). Measured 1.49 against 2.90 on this seed (1.47 against 2.88 and 1.53
    against 2.87 on seeds 2 and 3); the bound 0.7 × constant leaves room for seed-to-seed spread and fails if
    the features carry no information about the count. Linear mmd features stay near the
    constant, as in the paper."""
    topics, env = worker_topics(broker)
    w = workers.start(spec=os.path.join(EXAMPLES, "mixture-spec.json"), **env)
    out = run([os.path.join(EXAMPLES, "mixture_count.py"), "--brokers", broker.addr, "--points-topic", topics["points"],
               "--features-topic", topics["features"], "--group", "mc-" + topics["features"], "--json",
               "--stall", str(STALL)])
    res = json.loads(out.strip().splitlines()[-1])
    print(res)
    assert res["sets"] == 5000
    r = res["rmse"]
    assert 2.5 < r["constant"] < 3.2  # Unif{1..10} has standard deviation 2.87
    assert r["hdd_js"] < 0.7 * r["constant"], r
    assert w.alive()


def test_drift_monitor(broker, workers):
    """Steady windows (same distribution as the reference) are mostly not flagged, every
    shifted one is (docs/drift.md: all 20 shifted windows have p ≤ 0.001; 2 of 20 steady at
    α = 0.05, about 1 expected; at most 5 of 20 allows for chance: P(Bin(20, 0.05) ≥ 6) < 0.001)."""
    topics, env = worker_topics(broker)
    workers.start(spec=repo_path("examples", "drift", "spec.json"), **env)
    sets, ids = [], []
    for kind in ("steady", "shifted"):
        with open(repo_path("examples", "drift", f"{kind}.jsonl")) as f:
            for line in f:
                r = json.loads(line)
                ids.append(r["set"])
                sets.append(np.asarray(r["points"], dtype=float))
    produce_sets(broker.addr, topics["points"], sets, ids)
    out = run([os.path.join(EXAMPLES, "drift_monitor.py"), "--brokers", broker.addr, "--features-topic", topics["features"],
               "--group", "dm-" + topics["features"], "--max-windows", "40", "--stall", str(STALL), "--json"])
    rows = {r["set"]: r for r in map(json.loads, out.strip().splitlines())}
    assert sorted(rows) == sorted(ids)
    steady = [r for s, r in rows.items() if s.startswith("steady")]
    shifted = [r for s, r in rows.items() if s.startswith("shifted")]
    assert all(r["alert"] and r["p_value"] <= 0.001 for r in shifted)
    assert sum(r["alert"] for r in steady) <= 5
