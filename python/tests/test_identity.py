"""Byte identity: the Python features are the float32 bytes of `distfeat embed` (window
records and per-point rows) and of a worker reading the same points from Kafka. The inputs
are the repository's example sets and sets `distfeat produce --synthetic` writes."""

import json
import os
import subprocess

import numpy as np
import pytest

import distfeat
from conftest import produce_sets, read_n, repo_path, worker_topics

MT_SPEC = {"version": 1, "seed": 42, "dim": 2, "bounds": {"lo": [0, 0], "hi": [1, 1]}, "families": [
    {"name": "mmd", "kind": "mmd", "features": 256, "bandwidth": 0.26},
    {"name": "l2", "kind": "l2", "basis": 30},
    {"name": "mt", "kind": "marginal_transfer", "set_family": "mmd", "sigma_p": 0.36, "sigma_x": 0.17, "features": 128}]}


def read_jsonl(path):
    ids, sets = [], []
    with open(path) as f:
        for line in f:
            if line.strip():
                r = json.loads(line)
                ids.append(r["set"])
                sets.append(np.asarray(r["points"], dtype=np.float64))
    return ids, sets


@pytest.fixture(scope="module")
def synthetic(distfeat_bin, tmp_path_factory):
    """12 truncated Gaussian mixtures in [0,1]² (produce --synthetic gmm), 1 to 2500 points."""
    path = str(tmp_path_factory.mktemp("synth") / "sets.jsonl")
    subprocess.run([distfeat_bin, "produce", "--synthetic", "gmm", "--sets", "12", "--points", "700",
                    "--seed", "5", "--out", path], check=True, capture_output=True)
    ids, sets = read_jsonl(path)
    sizes = [1, 9, 700, 120, 700, 400, 700, 60, 700, 2, 333, 700]
    sets = [s[:n] for s, n in zip(sets, sizes)]
    with open(path, "w") as f:
        for i, s in zip(ids, sets):
            f.write(json.dumps({"set": i, "points": s.tolist()}) + "\n")
    return path, ids, sets


CASES = {
    "default": (None, "synthetic"),
    "default_v1": (repo_path("examples", "default-spec-v1.json"), "synthetic"),
    "examples": (repo_path("examples", "spec.json"), repo_path("examples", "sets.jsonl")),
    "drift": (repo_path("examples", "drift", "spec.json"), repo_path("examples", "drift", "shifted.jsonl")),
    # between_windows: rank p-values among the reference's own windows, and the sequential column
    "wandering": (repo_path("examples", "wandering", "spec.json"), repo_path("examples", "wandering", "stream.jsonl")),
}


def embed_cli(binary, spec, inp, tmp, *extra):
    out = os.path.join(tmp, "out.arrow")
    args = [binary, "embed", "--in", inp, "--format", "arrow", "--out", out, *extra]
    if spec is not None:
        args += ["--spec", spec if isinstance(spec, str) else write_spec(spec, tmp)]
    subprocess.run(args, check=True, capture_output=True)
    return out


def write_spec(doc, tmp):
    p = os.path.join(tmp, "spec.json")
    with open(p, "w") as f:
        json.dump(doc, f)
    return p


@pytest.mark.parametrize("case", sorted(CASES))
def test_python_equals_embed(case, distfeat_bin, synthetic, tmp_path):
    spec_src, inp = CASES[case]
    if inp == "synthetic":
        inp, ids, sets = synthetic
    else:
        ids, sets = read_jsonl(inp)
    spec = distfeat.Spec(spec_src)
    table = distfeat.read_arrow(embed_cli(distfeat_bin, spec_src, inp, str(tmp_path)), expected_spec=spec)
    assert table.column("set").to_pylist() == ids
    assert table.column("n").to_pylist() == [len(s) for s in sets]
    mine = spec.embed(sets)
    seq = {spec.columns[d["column"]].name + "_seq" for d in spec.drift}
    for c, sl in spec.column_slices().items():
        theirs = distfeat.features_of(table, c)
        assert theirs.dtype == np.float32
        if c in seq:
            # Spec.embed finalises each set alone: of the sequential detector's column it has
            # the constants (threshold, ert); the statistic, alarm and run need a key's windows
            # in order, which embed (here) and the worker run (docs/python.md).
            assert np.ascontiguousarray(mine[:, sl][:, 1:3]).tobytes() == np.ascontiguousarray(theirs[:, 1:3]).tobytes(), c
            assert theirs[:, 3].max() == 1, "the example's stream alarms"
            continue
        assert np.ascontiguousarray(mine[:, sl]).tobytes() == theirs.tobytes(), c
    if spec.drift:  # the named two_sample fields are the column's values
        ts = spec.two_sample(sets)
        col = distfeat.features_of(table, spec.columns[spec.drift[0]["column"]].name)
        assert ts.p_value.tobytes() == np.ascontiguousarray(col[:, 2]).tobytes()
        assert ts.band_mmd2.shape[1] == col.shape[1] - len(distfeat.TWO_SAMPLE_FIELDS) > 0
        assert ts.flagged.dtype == bool


def test_spec_mismatch_is_refused(distfeat_bin, synthetic, tmp_path):
    inp, _, _ = synthetic
    out = embed_cli(distfeat_bin, None, inp, str(tmp_path))
    with pytest.raises(distfeat.SpecMismatchError, match=distfeat.Spec().spec_id):
        distfeat.read_arrow(out, expected_spec=repo_path("examples", "default-spec-v1.json"))


def test_point_features_equal_embed_points(distfeat_bin, synthetic, tmp_path):
    inp, ids, sets = synthetic
    spec = distfeat.Spec(MT_SPEC)
    out = embed_cli(distfeat_bin, MT_SPEC, inp, str(tmp_path), "--points", str(tmp_path / "points.arrow"))
    pts = distfeat.read_arrow(str(tmp_path / "points.arrow"), expected_spec=spec)
    mine = spec.point_features(sets)
    assert mine.features.shape == (sum(len(s) for s in sets), 128)
    assert pts.column("set").to_pylist() == [ids[i] for i in mine.set]
    assert pts.column("index").to_numpy().tolist() == mine.index.tolist()
    assert distfeat.features_of(pts, "mt").tobytes() == mine.features.tobytes()
    windows = distfeat.read_arrow(out)
    assert distfeat.features_of(windows, "mmd").tobytes() == np.ascontiguousarray(spec.embed(sets)[:, :256]).tobytes()


def test_worker_equals_python(broker, workers, synthetic, tmp_path):
    """The worker's feature records and per-point records, read with FeatureReader, carry the
    bytes Python computes; commits happen only when asked (a new reader in the group after a
    commit sees nothing; before it, everything again)."""
    _, ids, sets = synthetic
    topics, env = worker_topics(broker, points_features=True)
    w = workers.start(spec=write_spec(MT_SPEC, str(tmp_path)), **env)
    spec = distfeat.Spec(MT_SPEC)
    produce_sets(broker.addr, topics["points"], sets, ids, chunk=250)
    group = "py-" + topics["features"]
    with distfeat.FeatureReader(topics["features"], broker.addr, group=group, expected_spec=MT_SPEC) as r:
        got = read_n(r, len(ids), [w])
    # Nothing was committed: a new member of the group reads every record again.
    with distfeat.FeatureReader(topics["features"], broker.addr, group=group, expected_spec=spec.spec_id) as r:
        again = read_n(r, len(ids), [w])
        r.commit()
    with distfeat.FeatureReader(topics["features"], broker.addr, group=group) as r:
        assert r.read(timeout=2.0) is None
    for batches in (got, again):
        rows = {}
        for b in batches:
            F = b.features()
            for k, s in enumerate(b.column("set")):
                rows[s] = F[k]
        assert sorted(rows) == sorted(ids)
        mine = spec.embed(sets)
        for i, sid in enumerate(ids):
            assert rows[sid].tobytes() == mine[i].tobytes(), sid
    # Per-point topic: the same reader, the rows of point_features.
    pf = spec.point_features(sets)
    with distfeat.FeatureReader(topics["pointfeatures"], broker.addr, group=group + "-p", expected_spec=spec) as r:
        total, seen = len(pf.set), {}
        while sum(len(v) for v in seen.values()) < total:
            for b in read_n(r, 1, [w]):
                F = b.features("mt")
                for k, (s, idx) in enumerate(zip(b.column("set"), b.column("index"))):
                    seen.setdefault(s, {})[int(idx)] = F[k]
    for row, (si, idx) in enumerate(zip(pf.set, pf.index)):
        assert seen[ids[si]][int(idx)].tobytes() == pf.features[row].tobytes()


def test_reader_refuses_another_spec(broker, workers, synthetic, tmp_path):
    _, ids, sets = synthetic
    topics, env = worker_topics(broker)
    w = workers.start(**env)  # the built-in default
    produce_sets(broker.addr, topics["points"], sets[:2], ids[:2])
    with distfeat.FeatureReader(topics["features"], broker.addr, group="py-mismatch",
                                expected_spec=repo_path("examples", "default-spec-v1.json")) as r:
        with pytest.raises(distfeat.SpecMismatchError, match="expected"):
            read_n(r, 2, [w])
