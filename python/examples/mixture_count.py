"""The paper's mixture-count task end to end through Kafka (Sutherland et al., AAAI 2016, §5):
predict how many Gaussian components a set of 200 points was drawn from.

Python produces 5000 sets to the points topic, a distfeat worker turns each into a feature
record, and this script reads them back with distfeat.FeatureReader (spec_id checked,
committed after they are used), fits scikit-learn ridge regression on 4000 training sets'
features and reports the RMSE on the 1000 held-out sets against the constant predictor
(the paper: constant 2.8, AIC 2.3–2.7, HDD features well below; linear MMD features no
better than the constant).

    bin/distfeat broker &
    DISTFEAT_SPEC=python/examples/mixture-spec.json bin/distfeat worker &
    python python/examples/mixture_count.py

mixture-spec.json is what distfeat.calibrate proposes for 400 of these sets (python
mixture_count.py --calibrate prints it again) with hdd_js at D = 1024 instead of the proposed
3216: the held-out RMSE moves by 0.01 (1.49 against 1.48 on seed 1) and ridge runs 3× faster.
"""

import argparse
import json
import os
import sys
import time

import numpy as np
from sklearn.linear_model import Ridge

import distfeat

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from mixtures import mixture_sets  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))


def produce(brokers, topic, sets, ids):
    """Each set as one JSON record keyed by its ID (murmur2, as the worker's producers must
    partition), end=true: the worker closes its window on it."""
    from confluent_kafka import Producer
    p = Producer({"bootstrap.servers": brokers, "partitioner": "murmur2_random", "linger.ms": 20})
    for sid, s in zip(ids, sets):
        v = json.dumps({"set": sid, "points": s.round(6).tolist(), "end": True}).encode()
        while True:
            try:
                p.produce(topic, key=sid.encode(), value=v)
                break
            except BufferError:
                p.poll(0.1)
        p.poll(0)
    if p.flush(60) != 0:
        sys.exit("mixture_count: records not delivered")


def read_features(reader, ids, stall):
    """Feature rows by set ID, for the given sets; committed once stored."""
    want, rows, last = set(ids), {}, time.monotonic()
    while len(rows) < len(want):
        b = reader.read(max_records=1000, timeout=0.5)
        if b is None:
            if time.monotonic() - last > stall:
                sys.exit(f"mixture_count: {len(rows)} of {len(want)} feature records, none for {stall}s: is a worker running?")
            continue
        last = time.monotonic()
        F = b.features()
        for k, s in enumerate(b.column("set")):
            if s in want:
                rows[s] = F[k]
        reader.commit()  # processed (kept): at-least-once
    return np.stack([rows[i] for i in ids])


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--brokers", default="127.0.0.1:9092")
    ap.add_argument("--points-topic", default="points")
    ap.add_argument("--features-topic", default="features")
    ap.add_argument("--group", default="mixture-count")
    ap.add_argument("--spec", default=os.path.join(HERE, "mixture-spec.json"))
    ap.add_argument("--train", type=int, default=4000)
    ap.add_argument("--test", type=int, default=1000)
    ap.add_argument("--points", type=int, default=200)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--alpha", type=float, default=1.0,
                    help="ridge penalty (RidgeCV over 1e-4…1e2 picks 1 for both families on these data)")
    ap.add_argument("--stall", type=float, default=90, help="seconds without a record before giving up")
    ap.add_argument("--calibrate", action="store_true", help="print the spec distfeat.calibrate proposes and exit")
    ap.add_argument("--json", action="store_true", help="print the results as one JSON line")
    a = ap.parse_args()

    sets, y = mixture_sets(a.train + a.test, a.points, a.seed)
    if a.calibrate:
        print(json.dumps(distfeat.calibrate(sets[:400], families=["hdd_js", "mmd"]), indent=2))
        return
    spec = distfeat.Spec(a.spec)
    ids = [f"mix-{a.seed}-{i:05d}" for i in range(len(sets))]
    t0 = time.monotonic()
    produce(a.brokers, a.points_topic, sets, ids)
    with distfeat.FeatureReader(a.features_topic, a.brokers, group=a.group, expected_spec=spec) as r:
        F = read_features(r, ids, a.stall)
    t_stream = time.monotonic() - t0

    tr, te = slice(0, a.train), slice(a.train, a.train + a.test)
    res = {"sets": len(sets), "points": a.points, "spec_id": spec.spec_id, "seconds_kafka": round(t_stream, 2),
           "rmse": {"constant": float(np.sqrt(np.mean((y[tr].mean() - y[te]) ** 2)))}}
    for fam in sorted({c.family for c in spec.columns}):
        X = F[:, spec.family_slice(fam)]
        m = Ridge(alpha=a.alpha).fit(X[tr], y[tr])
        res["rmse"][fam] = float(np.sqrt(np.mean((m.predict(X[te]) - y[te]) ** 2)))
    if a.json:
        print(json.dumps(res))
        return
    print(f"{len(sets)} sets of {a.points} points through Kafka and the worker in {t_stream:.1f} s (spec {spec.spec_id})")
    print(f"ridge on {a.train} training sets, RMSE on {a.test} held-out sets:")
    for k, v in sorted(res["rmse"].items(), key=lambda kv: kv[1]):
        print(f"  {k:10s} {v:.2f}")


if __name__ == "__main__":
    main()
