"""A drift monitor: read the two_sample p-values a worker publishes (examples/drift: a
reference sample in the spec) and raise an alert when a window's p-value is at or below
the family's alpha. Each batch is committed after it was judged.

    bin/distfeat broker &
    DISTFEAT_SPEC=examples/drift/spec.json bin/distfeat worker &
    bin/distfeat produce --in examples/drift/steady.jsonl
    bin/distfeat produce --in examples/drift/shifted.jsonl
    python python/examples/drift_monitor.py --max-windows 40
"""

import argparse
import json
import os
import sys
import time

import distfeat

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--brokers", default="127.0.0.1:9092")
    ap.add_argument("--features-topic", default="features")
    ap.add_argument("--group", default="drift-monitor")
    ap.add_argument("--spec", default=os.path.join(REPO, "examples", "drift", "spec.json"))
    ap.add_argument("--family", default=None, help="the two_sample family (default: the spec's only one)")
    ap.add_argument("--max-windows", type=int, default=0, help="stop after this many windows (0: run forever)")
    ap.add_argument("--stall", type=float, default=0, help="with --max-windows: give up after this many seconds without a record")
    ap.add_argument("--json", action="store_true", help="one JSON line per window")
    a = ap.parse_args()

    spec = distfeat.Spec(a.spec)
    fams = {d["family"]: d for d in spec.drift}
    family = a.family or next(iter(fams))
    col = spec.columns[fams[family]["column"]].name
    seen, last = 0, time.monotonic()
    with distfeat.FeatureReader(a.features_topic, a.brokers, group=a.group, expected_spec=spec) as r:
        while not a.max_windows or seen < a.max_windows:
            b = r.read(timeout=0.5)
            if b is None:
                if a.stall and time.monotonic() - last > a.stall:
                    sys.exit(f"drift_monitor: {seen} windows, then nothing for {a.stall}s")
                continue
            last = time.monotonic()
            ts = distfeat.TwoSample.from_vectors(b.features(col), family=family, alpha=fams[family]["alpha"])
            for k, s in enumerate(b.column("set")):
                row = {"set": s, "n": int(ts.n[k]), "p_value": float(ts.p_value[k]), "mmd2": float(ts.mmd2[k]),
                       "alert": bool(ts.flagged[k])}
                if a.json:
                    print(json.dumps(row), flush=True)
                else:
                    flag = "DRIFT" if row["alert"] else "ok"
                    print(f"{s:14s} n={row['n']:5d} p={row['p_value']:.4f} MMD²={row['mmd2']:.5f} {flag}", flush=True)
            seen += len(b)
            r.commit()  # judged: do not read these windows again


if __name__ == "__main__":
    main()
