"""scikit-learn conventions: clone, params, Pipeline, GridSearchCV, cross_val_score, pickling,
and the estimator checks that apply to ragged input."""

import pickle

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.linear_model import Ridge
from sklearn.model_selection import GridSearchCV, KFold, cross_val_score
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.svm import LinearSVC

import distfeat
from conftest import repo_path


def shapes(n_sets: int, seed: int):
    """Labelled sets of three kinds that share mean and covariance per coordinate
    (a ring, a blob, a square: only their shapes differ), 80–200 points each."""
    rng = np.random.default_rng(seed)
    X, y = [], []
    for i in range(n_sets):
        k, n = i % 3, int(rng.integers(80, 200))
        if k == 0:
            a = rng.uniform(0, 2 * np.pi, n)
            p = np.c_[np.cos(a), np.sin(a)] * np.sqrt(2) * 0.15
        elif k == 1:
            p = rng.normal(0, 0.15, (n, 2))
        else:
            p = rng.uniform(-np.sqrt(3) * 0.15, np.sqrt(3) * 0.15, (n, 2))
        X.append(0.5 + p)
        y.append(k)
    return X, np.array(y)


def test_params_and_clone():
    spec = {"dim": 2, "families": [{"name": "m", "kind": "mmd", "features": 64, "bandwidth": 0.2}]}
    e = distfeat.Embedder(spec=spec, family="m", n_jobs=2)
    assert e.get_params() == {"spec": spec, "family": "m", "n_jobs": 2}
    c = clone(e)
    assert c.get_params()["spec"] == spec and not hasattr(c, "spec_id_")
    c.set_params(family=None)
    assert c.family is None and e.family == "m"


def test_transform_shapes_and_families():
    X, _ = shapes(9, 1)
    full = distfeat.Embedder().fit(X)
    F = full.transform(X)
    spec = distfeat.Spec()
    assert F.dtype == np.float32 and F.shape == (9, spec.width) == (9, full.n_features_out_)
    assert full.spec_id_ == spec.spec_id and full.spec_["families"][0]["name"] == "mmd"
    for c in spec.columns:
        one = distfeat.Embedder(family=c.family).fit(X)
        G = one.transform(X)
        assert G.tobytes() == np.ascontiguousarray(F[:, spec.family_slice(c.family)]).tobytes()
        assert len(one.get_feature_names_out()) == G.shape[1]
    with pytest.raises(ValueError, match="no columns"):
        distfeat.Embedder(family="nope").fit(X)


def test_not_fitted_and_bad_dim():
    from sklearn.exceptions import NotFittedError
    with pytest.raises(NotFittedError):
        distfeat.Embedder().transform([np.zeros((3, 2))])
    with pytest.raises(ValueError, match="dimension 3"):
        distfeat.Embedder().fit([np.zeros((3, 3))])


def test_pickle_roundtrip_same_bytes():
    X, _ = shapes(6, 2)
    e = distfeat.Embedder(spec=repo_path("examples", "spec.json")).fit(X)
    e2 = pickle.loads(pickle.dumps(e))
    assert e2.spec_id_ == e.spec_id_
    assert e2.transform(X).tobytes() == e.transform(X).tobytes()


def test_pipeline_cross_val_linear_svc():
    """Ring / blob / square share their first two moments: a linear classifier on raw means
    is at chance (1/3); on mmd features it separates them. 0.8 is far above chance and below
    what every seed here reaches (≥ 0.95 in trials), so the check is not knife-edge."""
    for seed in (11, 12):
        X, y = shapes(90, seed)
        pipe = make_pipeline(distfeat.Embedder(family="mmd"), StandardScaler(), LinearSVC(C=1.0, max_iter=20000))
        acc = cross_val_score(pipe, X, y, cv=KFold(3, shuffle=True, random_state=0))
        assert acc.mean() > 0.8, (seed, acc)


def test_grid_search_over_family_and_ridge():
    X, y = shapes(60, 5)
    pipe = make_pipeline(distfeat.Embedder(), Ridge())
    gs = GridSearchCV(pipe, {"embedder__family": ["mmd", "l2"], "ridge__alpha": [0.1, 1.0]},
                      cv=KFold(3, shuffle=True, random_state=1), scoring="neg_mean_squared_error")
    gs.fit(X, y.astype(float))
    assert set(gs.best_params_) == {"embedder__family", "ridge__alpha"}
    assert gs.best_estimator_[0].spec_id_ == distfeat.Spec().spec_id
    assert np.isfinite(gs.best_score_)


def test_calibrate_spec_in_fit_is_distfeat_calibrate():
    """spec="calibrate" runs the Go calibrate on the fitted sets: on examples/sets.jsonl (in
    set ID order, the order calibrate takes them in) it proposes examples/spec.json, which
    `distfeat calibrate --in examples/sets.jsonl` writes (a Go test pins that file)."""
    import json
    with open(repo_path("examples", "sets.jsonl")) as f:
        recs = sorted((json.loads(line) for line in f if line.strip()), key=lambda r: r["set"])
    X = [np.asarray(r["points"], dtype=float) for r in recs]
    e = distfeat.Embedder(spec="calibrate", n_jobs=2).fit(X)
    assert e.spec_id_ == distfeat.Spec(repo_path("examples", "spec.json")).spec_id
    assert e.transform(X[:3]).shape == (3, e.n_features_out_)
    with pytest.raises(distfeat.NativeError, match="1 labels for 3 sets"):
        distfeat.calibrate(X[:3], labels=["a"])


def test_estimator_checks_that_apply():
    """scikit-learn's checks written for ragged-agnostic estimators: no mutation in
    __init__, get/set params, clone, repr, and no fitted state leaking into params."""
    from sklearn.utils import estimator_checks as ec
    e = distfeat.Embedder()
    for name in ("check_no_attributes_set_in_init", "check_get_params_invariance", "check_set_params",
                 "check_parameters_default_constructible"):
        getattr(ec, name)("Embedder", e)
