"""distfeat.export_model: scikit-learn's Ridge, RidgeClassifier, LogisticRegression and LinearSVC
fitted on distfeat features, exported to the model file and applied by `distfeat embed --model`,
predict what scikit-learn predicts on the same features; `distfeat fit --classifier logistic`
agrees with scikit-learn's LogisticRegression at C = 1/λ."""

import json
import subprocess

import numpy as np
import pytest
from sklearn.linear_model import (LogisticRegression, LogisticRegressionCV, Ridge, RidgeClassifier, RidgeClassifierCV,
                                  RidgeCV, SGDClassifier)
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.svm import LinearSVC

import distfeat
from test_sklearn import shapes

NAMES = np.array(["ring", "gauss", "square"])
ULP32 = 2.0 ** -24  # float32's relative rounding unit


@pytest.fixture(scope="module")
def spec():
    return distfeat.Spec()  # the built-in default: mmd, hdd_js, l2 on [0, 1]²


def scales(n_sets: int, seed: int):
    """Gaussian sets around (0.5, 0.5) whose sd, the label, is uniform on [0.05, 0.2]."""
    rng = np.random.default_rng(seed)
    sd = rng.uniform(0.05, 0.2, n_sets)
    return [0.5 + rng.normal(0, s, (int(rng.integers(80, 200)), 2)) for s in sd], sd


def write_sets(path, sets, labels=None, label="shape"):
    """JSON lines as embed/fit read them; the float64 coordinates round-trip exactly."""
    with open(path, "w") as f:
        for i, s in enumerate(sets):
            rec = {"set": f"s{i:03d}", "points": s.tolist()}
            if labels is not None:
                rec[label] = str(labels[i])
            f.write(json.dumps(rec) + "\n")


def embed_model(distfeat_bin, sets_path, model_path, *extra):
    """embed --model's Arrow output: the set IDs and the model's columns as float64 arrays."""
    out = subprocess.run([distfeat_bin, "embed", "--in", str(sets_path), "--model", str(model_path), "--format", "arrow",
                          *extra], capture_output=True, check=False)
    assert out.returncode == 0, out.stderr.decode()
    t = distfeat.read_arrow(out.stdout)
    cols = {c: np.array(t.column(c).to_pylist(), dtype=np.float64) for c in t.column_names if c.startswith("model.")}
    return t.column("set").to_pylist(), t, cols


def features(F, spec, families):
    return np.ascontiguousarray(np.hstack([F[:, spec.family_slice(f)] for f in families]))


def score_tolerance(X, coef, intercept):
    """Per row and score, the difference allowed between embed --model's score and
    scikit-learn's: 4·2⁻²⁴·S with S = |b| + Σ_j |w_j·x_j|, the scale of the sum. Go sums in
    float64 (error ≈ D·2⁻⁵³·S) and writes float32 (≤ 2⁻²⁴·|s| ≤ 2⁻²⁴·S); scikit-learn
    computes X·Wᵀ in float32 when coef_ is float32 (Ridge, RidgeClassifier and
    LogisticRegression keep float32 features' dtype; measured ≤ 1.5·2⁻²⁴·S on these
    5220-wide rows), in float64 otherwise (LinearSVC). 4 units leave a margin over both."""
    W = np.atleast_2d(np.asarray(coef, dtype=np.float64))
    return 4 * ULP32 * (np.abs(X.astype(np.float64)) @ np.abs(W).T + np.abs(np.atleast_1d(intercept)))


def check_classifier(est, doc, X, cols):
    """Class, scores and (logistic) probabilities of embed --model against scikit-learn's
    predict, decision_function and predict_proba on the same features X."""
    tol = score_tolerance(X, est.coef_, est.intercept_)
    dec = est.decision_function(X).reshape(len(X), -1)
    scores = cols["model.scores"]
    assert scores.shape == dec.shape
    diff = np.abs(scores - dec)
    assert np.all(diff <= tol), f"scores: max diff {diff.max():.3g}, allowed there {tol[np.unravel_index(diff.argmax(), diff.shape)]:.3g}"
    got = np.array(doc["classes"])[cols["model.prediction"][:, 0].astype(int)]
    want = est.predict(X).astype(str)
    # a class may differ only where scikit-learn's deciding margin is within the tolerance
    margin = np.abs(dec[:, 0]) if dec.shape[1] == 1 else np.diff(np.sort(dec, axis=1)[:, -2:], axis=1)[:, 0]
    decided = margin > 2 * tol.max(axis=1)
    assert decided.sum() >= len(X) - 1 and np.array_equal(got[decided], want[decided]), (got, want)
    out = {"scores": diff.max()}
    if hasattr(est, "predict_proba"):
        # softmax's Jacobian rows sum to 2p(1−p) ≤ ½ (σ' ≤ ¼), then each side's float32 rounding of p
        p = cols["model.probabilities"]
        pd = np.abs(p - est.predict_proba(X))
        assert np.all(pd <= 0.5 * tol.max(axis=1, keepdims=True) + 2 * ULP32), pd.max()
        assert np.allclose(p.sum(axis=1), 1, atol=len(doc["classes"]) * ULP32)
        out["probabilities"] = pd.max()
    else:
        assert "model.probabilities" not in cols
    return out


CASES = {
    # name: (estimator, families (None: all), binary)
    "RidgeClassifier": (lambda: RidgeClassifier(alpha=1.0), ["l2", "mmd"], False),
    "LogisticRegression-multinomial": (lambda: LogisticRegression(C=1.0, max_iter=5000), None, False),
    "LogisticRegression-binary": (lambda: LogisticRegression(C=10.0, max_iter=5000), ["hdd_js"], True),
    "LinearSVC-ovr": (lambda: LinearSVC(C=1.0, max_iter=20000), None, False),
    "LinearSVC-binary": (lambda: LinearSVC(C=1.0, max_iter=20000), ["mmd"], True),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_exported_classifier_predicts_as_sklearn(name, spec, distfeat_bin, tmp_path):
    make, families, binary = CASES[name]
    Xtr, ytr = shapes(60, 21)
    Xte, _ = shapes(30, 22)
    if binary:
        keep = ytr != 2
        Xtr, ytr = [x for x, k in zip(Xtr, keep) if k], ytr[keep]
    F, G = spec.embed(Xtr), spec.embed(Xte)
    fams = families or [c.family for c in spec.columns]
    est = make().fit(features(F, spec, fams), NAMES[ytr])
    doc = distfeat.export_model(est, spec, families=families, path=tmp_path / "model.json")
    assert doc["kind"] == "classification" and doc["spec_id"] == spec.spec_id and doc["families"] == fams
    assert doc["classes"] == list(est.classes_) and len(doc["weights"]) == (1 if binary else 3)
    assert doc.get("link") == ("logistic" if "Logistic" in name else None) and "scikit-learn" in doc["estimator"]
    write_sets(tmp_path / "test.jsonl", Xte)
    ids, t, cols = embed_model(distfeat_bin, tmp_path / "test.jsonl", tmp_path / "model.json")
    assert ids == [f"s{i:03d}" for i in range(len(Xte))]
    assert t.schema.metadata[b"distfeat.model_version"].decode() == doc["model_version"]
    diffs = check_classifier(est, doc, features(G, spec, fams), cols)
    print(f"{name}: max abs diff " + ", ".join(f"{k} {v:.3g}" for k, v in diffs.items()))


def test_exported_ridge_with_intervals(spec, distfeat_bin, tmp_path):
    """Ridge on all columns with split-conformal intervals from 40 calibration sets: the
    prediction is Ridge.predict's and the 90% interval ±(the 37th smallest calibration
    residual: ⌈41·0.9⌉ = 37)."""
    X, y = scales(140, 31)
    F = spec.embed(X)
    est = Ridge(alpha=0.1).fit(F[:60], y[:60])
    doc = distfeat.export_model(est, spec, label="sd", calibration=(F[60:100], y[60:100]), path=tmp_path / "m.json")
    res = np.sort(np.abs(est.predict(F[60:100]).astype(np.float64) - y[60:100]))
    c = doc["conformal"]
    assert c["n_calibration"] == 40 and c["levels"] == [0.5, 0.8, 0.9, 0.95] and c["quantiles"][2] == res[36]
    assert doc["holdout"]["n"] == 40 and doc["label"] == "sd" and "link" not in doc and "cv" not in doc
    write_sets(tmp_path / "test.jsonl", X[100:])
    _, _, cols = embed_model(distfeat_bin, tmp_path / "test.jsonl", tmp_path / "m.json", "--coverage", "0.9")
    G = F[100:]
    want = est.predict(G).astype(np.float64)
    tol = score_tolerance(G, est.coef_, est.intercept_)[:, 0]
    d = np.abs(cols["model.prediction"][:, 0] - want)
    assert np.all(d <= tol), d.max()
    q = c["quantiles"][2]
    iv = cols["model.interval"]  # lo, hi: value ∓ q in float64, then float32
    assert np.all(np.abs(iv[:, 0] - (want - q)) <= tol + ULP32 * (np.abs(want) + q))
    assert np.all(np.abs(iv[:, 1] - (want + q)) <= tol + ULP32 * (np.abs(want) + q))
    # the intervals cover the held-out sds about as often as asked (40 sets: sd ≈ 0.05)
    cover = np.mean((y[100:] >= iv[:, 0]) & (y[100:] <= iv[:, 1]))
    print(f"Ridge: max abs diff prediction {d.max():.3g}; 90% interval coverage on 40 held-out sets {cover:.3f}")


def test_pipeline_export_takes_the_embedders_spec(spec, distfeat_bin, tmp_path):
    """A Pipeline(Embedder(family=…), estimator) exports with the Embedder's spec and family."""
    Xtr, ytr = shapes(45, 41)
    pipe = make_pipeline(distfeat.Embedder(family="mmd"), LogisticRegression(C=5.0, max_iter=5000)).fit(Xtr, NAMES[ytr])
    doc = distfeat.export_model(pipe, path=tmp_path / "m.json")
    assert doc["families"] == ["mmd"] and doc["spec_id"] == spec.spec_id and doc["width"] == spec.family_slice("mmd").size
    Xte, _ = shapes(15, 42)
    write_sets(tmp_path / "t.jsonl", Xte)
    _, _, cols = embed_model(distfeat_bin, tmp_path / "t.jsonl", tmp_path / "m.json")
    check_classifier(pipe[-1], doc, pipe[0].transform(Xte), cols)


def test_cv_variants_export_their_chosen_penalty(spec):
    """RidgeCV, RidgeClassifierCV and LogisticRegressionCV export the penalty they chose
    (alpha_, 1/C_) and their coefficients exactly (float32 or float64, both exact in the
    file's float64)."""
    X, y = shapes(30, 55)
    F = spec.embed(X)[:, spec.family_slice("l2")]
    for est, lam in ((RidgeCV(alphas=[0.1, 1.0]), lambda e: e.alpha_), (RidgeClassifierCV(alphas=[0.1, 1.0]), lambda e: e.alpha_),
                     (LogisticRegressionCV(Cs=[0.5, 5.0], l1_ratios=(0,), scoring="neg_log_loss",
                                           use_legacy_attributes=False, max_iter=5000), lambda e: 1 / np.ravel(e.C_)[0])):
        est.fit(F, y.astype(float) if isinstance(est, RidgeCV) else NAMES[y])
        doc = distfeat.export_model(est, spec, families="l2")
        assert doc["lambda"] == lam(est) and doc["width"] == F.shape[1], type(est).__name__
        assert np.array_equal(np.array(doc["weights"]).reshape(np.shape(est.coef_)), est.coef_.astype(np.float64))


def test_export_refuses(spec, tmp_path):
    Xtr, ytr = shapes(30, 51)
    F = spec.embed(Xtr)
    mmd = F[:, spec.family_slice("mmd")]
    lr = LogisticRegression(max_iter=2000).fit(mmd, ytr)
    hdd = spec.family_slice("hdd_js").size
    with pytest.raises(ValueError, match=rf"fitted on {mmd.shape[1]} features.*width {hdd}"):
        distfeat.export_model(lr, spec, families=["hdd_js"], path=tmp_path / "m.json")
    with pytest.raises(ValueError, match="is a spec_id"):
        distfeat.export_model(lr, spec.spec_id, families=["mmd"])
    with pytest.raises(ValueError, match="family 'nope' has no columns"):
        distfeat.export_model(lr, spec, families=["nope"])
    with pytest.raises(ValueError, match="needs the spec"):
        distfeat.export_model(lr)
    with pytest.raises(ValueError, match="not fitted"):
        distfeat.export_model(LogisticRegression(), spec, families=["mmd"])
    with pytest.raises(ValueError, match="3 targets"):
        distfeat.export_model(Ridge().fit(mmd, np.c_[ytr, ytr, ytr]), spec, families=["mmd"])
    with pytest.raises(TypeError, match="cannot export SGDClassifier"):
        distfeat.export_model(SGDClassifier().fit(mmd, ytr), spec, families=["mmd"])
    with pytest.raises(ValueError, match="calibration sets give prediction intervals of a regressor"):
        distfeat.export_model(lr, spec, families=["mmd"], calibration=(mmd, ytr))
    pipe = make_pipeline(distfeat.Embedder(family="mmd"), StandardScaler(), LinearSVC()).fit(Xtr, ytr)
    with pytest.raises(ValueError, match=r"StandardScaler"):
        distfeat.export_model(pipe)
    assert not list(tmp_path.iterdir())  # a refused export writes nothing


def test_go_logistic_equals_sklearn(spec, distfeat_bin, tmp_path):
    """`distfeat fit --classifier logistic` and scikit-learn's LogisticRegression(C=1/λ) at the
    λ fit chose solve the same problem (Σ log-loss + λ/2·‖W‖², intercept unpenalised), binary
    (one weight row; mmd features, 1024 wide) and multinomial (l2 features, 100 wide: the
    3-class fit at 1024 takes seconds). 20% of the labels are drawn at random so the classes
    overlap and the optimum is well conditioned (separable classes drive CV to the smallest
    λ, where the optimum is flat and optimisers stop at different points). scikit-learn runs
    on float64 copies of the float32 features (so its arithmetic is not the limit) with
    tol=1e-10; its solution then has a gradient ≈ 1e-8 per set against fit's ≤ 1e-9 (both
    computed and printed), which moved the probabilities by ≤ 3e-6 in trials: 1e-4 is the
    bound, the weights within 1e-3 relative to the largest."""
    rng = np.random.default_rng(61)
    for k, fam in ((3, "l2"), (2, "mmd")):
        Xtr, ytr = shapes(60, 62 + k)
        ytr = np.where(rng.random(len(ytr)) < 0.2, rng.integers(0, 3, len(ytr)), ytr)
        if k == 2:
            keep = ytr != 2
            Xtr, ytr = [x for x, kp in zip(Xtr, keep) if kp], ytr[keep]
        Xte, _ = shapes(30, 72 + k)
        write_sets(tmp_path / "train.jsonl", Xtr, NAMES[ytr])
        write_sets(tmp_path / "test.jsonl", Xte)
        fit = subprocess.run([distfeat_bin, "fit", "--in", str(tmp_path / "train.jsonl"), "--label", "shape", "--task",
                              "classification", "--classifier", "logistic", "--families", fam, "--out",
                              str(tmp_path / "m.json")], capture_output=True, text=True)
        assert fit.returncode == 0, fit.stderr
        with open(tmp_path / "m.json") as f:
            m = json.load(f)
        assert m["link"] == "logistic" and m["cv"]["metric"] == "log_loss" and len(m["weights"]) == (1 if k == 2 else 3)
        F = spec.embed(Xtr)[:, spec.family_slice(fam)].astype(np.float64)
        sk = LogisticRegression(C=1 / m["lambda"], tol=1e-10, max_iter=100000).fit(F, NAMES[ytr])
        assert list(sk.classes_) == m["classes"]
        W = np.array(m["weights"])
        wd = np.abs(W - sk.coef_).max() / np.abs(sk.coef_).max()
        assert wd < 1e-3, wd
        _, t, cols = embed_model(distfeat_bin, tmp_path / "test.jsonl", tmp_path / "m.json")
        md = t.schema.metadata
        assert md[b"distfeat.model_link"] == b"logistic" and cols["model.scores"].shape[1] == len(m["weights"])
        if k == 2:  # the one score is classes[1]'s
            assert json.loads(md[b"distfeat.model_score_classes"]) == m["classes"][1:]
        G = spec.embed(Xte)[:, spec.family_slice(fam)].astype(np.float64)
        pd = np.abs(cols["model.probabilities"] - sk.predict_proba(G)).max()
        assert pd < 1e-4, pd
        # fit's optimum, checked here in float64 from the file: its stopping rule (1e-9 per
        # set in centred coordinates) with room for the change of coordinates (|x̄| ≲ 1)
        y = NAMES[ytr]
        g_fit = gradient(W, np.array(m["intercept"]), F, y, m["classes"], m["lambda"])
        g_sk = gradient(sk.coef_, sk.intercept_, F, y, m["classes"], m["lambda"])
        assert g_fit < 1e-8, g_fit
        print(f"fit --classifier logistic ({k} classes, {fam}, λ={m['lambda']:.4g}) vs LogisticRegression(C=1/λ): "
              f"weights {wd:.3g} relative, probabilities max abs diff {pd:.3g}; largest gradient entry per set: "
              f"fit {g_fit:.2g}, scikit-learn {g_sk:.2g}")


def gradient(W, b, X, y, classes, lam):
    """The largest entry of the gradient of Σ log-loss + λ/2·‖W‖² divided by the number of
    sets, at weights W (one row: binary, the score of classes[1]) and intercepts b."""
    S = X @ W.T + b
    if W.shape[0] == 1:
        r = (1 / (1 + np.exp(-S[:, 0])) - (y == classes[1]))[:, None]
    else:
        P = np.exp(S - S.max(axis=1, keepdims=True))
        r = P / P.sum(axis=1, keepdims=True) - (y[:, None] == np.array(classes)[None, :])
    return max(np.abs(r.T @ X + lam * W).max(), np.abs(r.sum(axis=0)).max()) / len(y)
