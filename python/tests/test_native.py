"""The Go library through ctypes: golden bytes, layouts, errors."""

import hashlib
import json

import numpy as np
import pytest

import distfeat
from conftest import repo_path


def sha(a: np.ndarray) -> str:
    return hashlib.sha256(np.ascontiguousarray(a, dtype="<f4").tobytes()).hexdigest()


@pytest.fixture(scope="module")
def golden():
    with open(repo_path("embedding", "testdata", "golden.json")) as f:
        return json.load(f)


# The golden specs a Python user can name: the built-in default and the former default
# (examples/default-spec-v1.json, the spec golden_test.go pins as default_v1).
GOLDEN_SPECS = {"default": None, "default_v1": repo_path("examples", "default-spec-v1.json")}


@pytest.mark.parametrize("name", sorted(GOLDEN_SPECS))
def test_golden_vectors(golden, name):
    """The features of the golden point set (embedding/testdata/golden.json: 1000 points of
    NewRNG(7, "golden-points")) have the committed SHA-256 per column."""
    spec = distfeat.Spec(GOLDEN_SPECS[name])
    assert spec.spec_id == golden["spec_ids"][name]
    inp = golden["input"]
    u = distfeat.uniform(inp["seed"], inp["stream"], inp["points"] * spec.dim).reshape(-1, spec.dim)
    f = spec.embed([u])
    assert f.dtype == np.float32 and f.shape == (1, spec.width)
    checked = 0
    for col, sl in spec.column_slices().items():
        assert sha(f[0, sl]) == golden["features"][f"{name}/{col}"], col
        checked += 1
    assert checked == len(spec.columns) >= 3


def test_uniform_is_the_frozen_generator(golden):
    """distfeat.uniform is NewRNG(seed, stream).Float64: its first draws' bits are pinned."""
    r = golden["rng"]
    u = distfeat.uniform(r["seed"], r["stream"], len(r["float64_bits"]))
    assert [hex(int(x)) for x in u.view(np.uint64)] == [hex(int(b, 16)) for b in r["float64_bits"]]


def test_batch_equals_one_by_one():
    """One call for many ragged sets gives each set the bytes of its own call, for any n_jobs
    (sets are finalised in batches; FinalizeBatch is bit-identical to one by one)."""
    rng = np.random.default_rng(3)
    sets = [rng.random((n, 2)) for n in (1, 7, 300, 2500, 64, 130)] * 12  # > one finalisation batch
    spec = distfeat.Spec()
    many = spec.embed(sets)
    assert many.shape == (len(sets), spec.width)
    for i in (0, 1, 3, 70):
        assert many[i].tobytes() == spec.embed([sets[i]])[0].tobytes()
    assert spec.embed(sets, n_jobs=3).tobytes() == many.tobytes()
    r = distfeat.ragged(sets)
    assert spec.embed(r).tobytes() == many.tobytes()


def test_errors_name_the_problem():
    spec = distfeat.Spec()
    with pytest.raises(ValueError, match="dimension 3"):
        spec.embed([np.zeros((4, 3))])
    with pytest.raises(distfeat.NativeError, match=r"set 1: point 2, coordinate 1: NaN.*non-finite|set 1: point 2, coordinate 1: NaN"):
        spec.embed([np.zeros((3, 2)), np.array([[0, 0], [0, 0], [0, np.nan]])])
    with pytest.raises(distfeat.NativeError, match="set 0: no points"):
        spec.embed([np.zeros((0, 2))])
    with pytest.raises(distfeat.NativeError, match="families"):
        distfeat.Spec({"dim": 2, "families": [{"name": "m", "kind": "mmd", "features": 0}]})
    with pytest.raises(distfeat.NativeError, match="no such file|read spec"):
        distfeat.Spec("/nonexistent/spec.json")


def test_spec_forms_agree():
    """A spec as a dict, a JSON string, a file and a Spec compile to one spec_id."""
    path = repo_path("examples", "spec.json")
    with open(path) as f:
        doc = json.load(f)
    ids = {distfeat.Spec(path).spec_id, distfeat.Spec(doc).spec_id, distfeat.Spec(json.dumps(doc)).spec_id,
           distfeat.Spec(distfeat.Spec(doc)).spec_id}
    assert len(ids) == 1


def test_family_slices_cover_the_row():
    spec = distfeat.Spec()
    idx = np.concatenate([spec.family_slice(c.family) for c in spec.columns])
    assert sorted(idx.tolist()) == list(range(spec.width))
    with pytest.raises(ValueError, match="no columns"):
        spec.family_slice("nope")


def test_stream_in_parts_equals_whole():
    """A set added in parts has the bytes of the whole set (and of a worker that got it in
    several records: test_identity); a part with a NaN adds nothing; an empty stream fails."""
    rng = np.random.default_rng(9)
    x = rng.random((700, 2))
    spec = distfeat.Spec()
    s = spec.stream()
    with pytest.raises(distfeat.NativeError, match="no points"):
        s.features()
    for part in (x[:1], x[1:40], x[40:]):
        s.add(part)
    with pytest.raises(distfeat.NativeError, match="non-finite"):
        s.add(np.array([[0.5, np.nan]]))
    assert s.count == 700
    assert s.features().tobytes() == spec.embed([x])[0].tobytes()
    s.add(x[:10])  # more points after a read: the stream goes on
    assert s.features().tobytes() == spec.embed([np.vstack([x, x[:10]])])[0].tobytes()
