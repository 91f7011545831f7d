"""Export a scikit-learn linear model fitted on distfeat features to distfeat's model file
(docs/fitting.md), which ``distfeat embed --model`` (and the worker) apply."""

from __future__ import annotations

import json
import math
import os
import re
import tempfile
from typing import Any, Sequence

import numpy as np

from . import _native
from .core import Spec

# The interval coverages stored by default, as `distfeat fit` stores them.
DEFAULT_LEVELS = (0.5, 0.8, 0.9, 0.95)


def export_model(estimator: Any, spec: Any = None, families: Any = None, path: Any = None, *,
                 label: str | None = None, calibration: tuple | None = None,
                 levels: Sequence[float] = DEFAULT_LEVELS) -> dict:
    """Write a fitted scikit-learn linear model as a distfeat model file.

    estimator: a fitted ``Ridge``/``RidgeCV`` (regression), ``RidgeClassifier``/
        ``RidgeClassifierCV``, ``LogisticRegression``/``LogisticRegressionCV`` (binary or
        multinomial) or ``LinearSVC``; or a ``Pipeline`` of a fitted ``distfeat.Embedder``
        and one of those (spec and families then come from the Embedder).
    spec: the spec the features came from — a ``distfeat.Spec``, anything ``distfeat.Spec``
        accepts (dict, JSON, path), or a fitted ``distfeat.Embedder``. A spec_id alone is not
        enough: the columns and their widths come from the spec.
    families: the families (or column names) whose columns the estimator was fitted on, in
        the order its features are laid out: the feature row is
        ``np.hstack([F[:, spec.family_slice(f)] for f in families])`` of ``F = spec.embed(sets)``
        (one family: ``Embedder(family=f)``'s output). None: every column, ``spec.embed``'s
        layout.
    path: where to write the file (replaced only when complete); None writes nothing.
    label: the label's name, recorded in the file.
    calibration: regressors only, optional: ``(X_cal, y_cal)``, features and labels of sets
        the estimator was not fitted on; their absolute residuals give split-conformal
        intervals at each of ``levels`` (the ⌈(n+1)·L⌉-th smallest residual, stored when
        ⌈(n+1)·L⌉ ≤ n), and the file's ``holdout`` their RMSE.

    The estimator must have been fitted on exactly those columns: its ``n_features_in_``
    must equal their width (and its ``feature_names_in_``, when it has them, the
    Embedder's names of those columns), else ValueError naming both. Returns the model
    file's document (with its ``model_version``, the hash distfeat checks on loading).
    """
    estimator, spec, families = _unwrap(estimator, spec, families)
    if spec is None:
        raise ValueError("export_model needs the spec the features came from (a distfeat.Spec, a spec document or path, "
                         "or a fitted distfeat.Embedder)")
    sp = _spec_of(spec)
    cols, fams = _columns(sp, families)
    width = sum(c.len for c in cols)
    _check_width(estimator, sp, cols, width, families)

    doc: dict = {"format": 1, "estimator": _describe(estimator), "spec_id": sp.spec_id, "families": fams,
                 "columns": [{"name": c.name, "len": c.len} for c in cols], "width": width}
    if label:
        doc["label"] = str(label)
    kind, body = _linear_part(estimator, width)
    doc["kind"] = kind
    doc.update(body)
    if calibration is not None:
        if kind != "regression":
            raise ValueError("calibration sets give prediction intervals of a regressor; "
                             f"{type(estimator).__name__} is a classifier (its scores or probabilities are its output)")
        doc.update(_conformal(estimator, calibration, width, levels))
    else:
        doc["holdout"] = {"n": 0}
    for k in ("intercept", "weights"):
        if not np.all(np.isfinite(np.asarray(doc[k], dtype=float))):
            raise ValueError(f"{type(estimator).__name__} has non-finite coefficients: refit it (more regularisation)")
    sealed = _native.take_json(_native.lib().distfeat_model_seal(json.dumps(doc, allow_nan=False).encode()))
    if path is not None:
        _write_atomic(os.fspath(path), sealed["file"])
    return json.loads(sealed["file"])


def _unwrap(estimator: Any, spec: Any, families: Any) -> tuple:
    """A Pipeline(Embedder, estimator) gives its Embedder's spec and family."""
    from .sklearn import Embedder
    steps = getattr(estimator, "steps", None)
    if steps is None:
        return estimator, spec, families
    emb = [s for _, s in steps[:-1] if isinstance(s, Embedder)]
    other = [type(s).__name__ for _, s in steps[:-1] if not isinstance(s, Embedder) and s != "passthrough"]
    if other or len(emb) != 1:
        raise ValueError(f"a Pipeline exports only as (distfeat.Embedder, linear estimator); this one has {other or 'no Embedder'} "
                         "before the estimator: the model file applies weights to the spec's features as they are")
    e = emb[0]
    if spec is None:
        spec = e
    if families is None and e.family is not None:
        families = [e.family]
    return steps[-1][1], spec, families


def _spec_of(spec: Any) -> Spec:
    from .sklearn import Embedder
    if isinstance(spec, Embedder):
        if not hasattr(spec, "spec_id_"):
            raise ValueError("the Embedder is not fitted: fit it (or pass its spec)")
        return spec._spec()
    if isinstance(spec, Spec):
        return spec
    if isinstance(spec, str) and re.fullmatch(r"[0-9a-f]{16}", spec):
        raise ValueError(f"spec {spec!r} is a spec_id: pass the spec itself (its columns and widths are needed)")
    return Spec(spec)


def _columns(sp: Spec, families: Any) -> tuple[list, list]:
    if families is None:
        cols = list(sp.columns)
    else:
        if isinstance(families, str):
            families = [families]
        cols = []
        for f in families:
            mine = [c for c in sp.columns if c.family == f or c.name == f]
            if not mine:
                names = sorted({c.family for c in sp.columns})
                raise ValueError(f"family {f!r} has no columns in spec {sp.spec_id} (families with columns: {names})")
            dup = [c.name for c in mine if c in cols]
            if dup:
                raise ValueError(f"families {list(families)} name column {dup[0]!r} twice")
            cols += mine
    fams: list = []
    for c in cols:
        if c.family not in fams:
            fams.append(c.family)
    return cols, fams


def _check_width(estimator: Any, sp: Spec, cols: list, width: int, families: Any) -> None:
    n = getattr(estimator, "n_features_in_", None)
    if n is None:
        raise ValueError(f"{type(estimator).__name__} is not fitted (no n_features_in_)")
    what = ", ".join(f"{c.name}: {c.len}" for c in cols)
    if n != width:
        raise ValueError(f"{type(estimator).__name__} was fitted on {n} features; the columns of "
                         f"{'all families' if families is None else 'families ' + str(list(families))} of spec "
                         f"{sp.spec_id} have width {width} ({what})")
    names = getattr(estimator, "feature_names_in_", None)
    if names is not None:
        want = [f"{c.name}_{i}" for c in cols for i in range(c.len)]
        bad = [(i, a, b) for i, (a, b) in enumerate(zip(names, want)) if a != b]
        if bad:
            i, a, b = bad[0]
            raise ValueError(f"{type(estimator).__name__}'s feature {i} is {a!r}; column {i} of spec {sp.spec_id}'s "
                             f"chosen columns is {b!r} (Embedder.get_feature_names_out names)")


def _describe(estimator: Any) -> str:
    import sklearn
    return f"scikit-learn {sklearn.__version__} " + re.sub(r"\s+", " ", repr(estimator))


def _rows(a: Any, width: int) -> list:
    a = np.asarray(a, dtype=np.float64)
    return a.reshape(-1, width).tolist()


def _intercepts(estimator: Any, k: int) -> list:
    b = np.asarray(estimator.intercept_, dtype=np.float64).reshape(-1)
    if b.size == 1 and k > 1:  # fit_intercept=False: one 0.0
        b = np.repeat(b, k)
    return b.tolist()


def _linear_part(estimator: Any, width: int) -> tuple[str, dict]:
    """kind and the fields that say how the estimator computes its output."""
    from sklearn.linear_model import (LogisticRegression, LogisticRegressionCV, Ridge, RidgeClassifier,
                                      RidgeClassifierCV, RidgeCV)
    from sklearn.svm import LinearSVC
    name = type(estimator).__name__
    if isinstance(estimator, (Ridge, RidgeCV)):
        coef = np.asarray(estimator.coef_)
        if coef.ndim == 2 and coef.shape[0] != 1:
            raise ValueError(f"{name} has {coef.shape[0]} targets: a distfeat regression model has one")
        return "regression", {"lambda": _penalty(estimator, "alpha"), "intercept": _intercepts(estimator, 1)[:1],
                              "weights": _rows(coef, width)}
    if isinstance(estimator, (LogisticRegression, LogisticRegressionCV, RidgeClassifier, RidgeClassifierCV, LinearSVC)):
        classes = [str(c) for c in estimator.classes_]
        coef = _rows(estimator.coef_, width)
        if len(coef) not in (1, len(classes)) or (len(coef) == 1 and len(classes) != 2):
            raise ValueError(f"{name} has {len(coef)} coefficient rows for {len(classes)} classes")
        body = {"classes": classes, "weights": coef, "intercept": _intercepts(estimator, len(coef))}
        if isinstance(estimator, (LogisticRegression, LogisticRegressionCV)):
            if getattr(estimator, "multi_class", "auto") == "ovr" and len(classes) > 2:
                raise ValueError(f"{name}(multi_class='ovr') normalises one-vs-rest sigmoids; distfeat's logistic link is "
                                 "the multinomial softmax: fit it multinomial")
            c = _penalty(estimator, "C")
            body.update(link="logistic", **{"lambda": 0.0 if math.isinf(c) else 1.0 / c})
        elif isinstance(estimator, LinearSVC):
            body["lambda"] = 1.0 / float(estimator.C)
        else:
            body["lambda"] = _penalty(estimator, "alpha")
        return "classification", body
    raise TypeError(f"cannot export {name}: distfeat applies Ridge, RidgeClassifier, LogisticRegression and LinearSVC "
                    "(and their CV variants)")


def _penalty(estimator: Any, name: str) -> float:
    """The penalty parameter: the chosen one of a CV estimator (alpha_, C_: one value, the
    same for every class of a multinomial model) or the parameter."""
    v = getattr(estimator, name + "_") if hasattr(estimator, name + "_") else getattr(estimator, name)
    return float(np.asarray(v, dtype=float).reshape(-1)[0])


def _conformal(estimator: Any, calibration: tuple, width: int, levels: Sequence[float]) -> dict:
    X, y = calibration
    X = np.asarray(X)
    y = np.asarray(y, dtype=np.float64).reshape(-1)
    if X.ndim != 2 or X.shape[1] != width or X.shape[0] != y.size or y.size == 0:
        raise ValueError(f"calibration: features of shape {X.shape} and {y.size} labels; want (n, {width}) and n labels, n ≥ 1")
    res = np.sort(np.abs(np.asarray(estimator.predict(X), dtype=np.float64).reshape(-1) - y))
    n = res.size
    keep_l, keep_q = [], []
    for lv in levels:
        if not 0 < lv < 1:
            raise ValueError(f"coverage level {lv}: want a level in (0, 1)")
        k = math.ceil((n + 1) * float(lv))
        if k <= n:  # else too few calibration sets for this coverage
            keep_l.append(float(lv))
            keep_q.append(float(res[k - 1]))
    return {"conformal": {"n_calibration": n, "levels": keep_l, "quantiles": keep_q},
            "holdout": {"n": n, "rmse": float(np.sqrt(np.mean(res ** 2)))}}


def _write_atomic(path: str, text: str) -> None:
    d = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(dir=d, prefix=".model-", suffix=".json")
    try:
        with os.fdopen(fd, "w") as f:
            f.write(text)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
