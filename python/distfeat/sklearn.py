"""The scikit-learn transformer: sets of points in, one fixed-length feature row per set."""

from __future__ import annotations

from typing import Any

import numpy as np
from sklearn.base import BaseEstimator, TransformerMixin
from sklearn.utils.validation import check_is_fitted

from .core import Spec
from ._sets import ragged


class Embedder(TransformerMixin, BaseEstimator):
    """Random-feature embeddings of sets (distributions) for scikit-learn.

    ``X`` is a list of (n_i, d) arrays (ragged sets), a (sets, points, d) array or a
    :class:`distfeat.Ragged`; ``transform`` returns (n_sets, D) float32: every column of the
    spec in spec order, or the columns of ``family`` only. The bytes are those of
    ``distfeat embed`` and of a worker for the same spec and points.

    Parameters (stored unchanged, so ``clone`` and ``GridSearchCV`` work):

    spec: None (the built-in default), a spec dict, a JSON string, a path to a spec file, or
        ``"calibrate"``: ``fit`` proposes one from its sets (the Go calibrate, unlabelled:
        the default families mmd, hdd_js, l2; seconds for tens of sets).
    family: a family name to keep only its columns; None keeps all.
    n_jobs: goroutines sketching and finalising one call's sets (same bits for any value).

    Fitted attributes: ``spec_`` (the resolved spec dict), ``spec_id_``, ``columns_`` (names),
    ``n_features_out_``, ``dim_``.
    """

    def __init__(self, spec: Any = None, family: str | None = None, n_jobs: int = 1) -> None:
        self.spec = spec
        self.family = family
        self.n_jobs = n_jobs

    def fit(self, X: Any, y: Any = None) -> "Embedder":
        """Compile the spec (or calibrate one on X when spec="calibrate") and check X's
        dimension; the features of a set do not depend on the other sets."""
        r = ragged(X)
        if isinstance(self.spec, str) and self.spec == "calibrate":
            from .core import calibrate
            compiled = Spec(calibrate(r, n_jobs=self.n_jobs))
        else:
            compiled = Spec(self.spec)
        if len(r) and r.dim != compiled.dim:
            raise ValueError(f"X has points of dimension {r.dim}, spec {compiled.spec_id} has dim {compiled.dim}")
        self._compiled = compiled
        self.spec_ = compiled.document
        self.spec_id_ = compiled.spec_id
        self.dim_ = compiled.dim
        if self.family is None:
            self._cols = None
            self.columns_ = [c.name for c in compiled.columns]
            self.n_features_out_ = compiled.width
        else:
            self._cols = compiled.family_slice(self.family)
            self.columns_ = [c.name for c in compiled.columns if c.family == self.family or c.name == self.family]
            self.n_features_out_ = len(self._cols)
        return self

    def _spec(self) -> Spec:
        c = getattr(self, "_compiled", None)
        if c is None:  # unpickled: compile the fitted document again (same spec_id)
            c = self._compiled = Spec(self.spec_)
        return c

    def transform(self, X: Any) -> np.ndarray:
        """(n_sets, n_features_out_) float32 features of the sets X."""
        check_is_fitted(self, "spec_id_")
        out = self._spec().embed(X, n_jobs=self.n_jobs)
        if self._cols is not None:
            out = np.ascontiguousarray(out[:, self._cols])
        return out

    def get_feature_names_out(self, input_features: Any = None) -> np.ndarray:
        """Column names: <column>_<i> for each value."""
        check_is_fitted(self, "spec_id_")
        spec = self._spec()
        names = [f"{c.name}_{i}" for c in spec.columns for i in range(c.len)]
        if self._cols is not None:
            names = [names[i] for i in self._cols]
        return np.asarray(names, dtype=object)

    def __getstate__(self) -> dict:
        state = self.__dict__.copy()
        state.pop("_compiled", None)  # a handle into this process's Go runtime
        return state

    def __sklearn_tags__(self):  # type: ignore[no-untyped-def]
        tags = super().__sklearn_tags__()
        tags.input_tags.two_d_array = False
        tags.input_tags.three_d_array = True
        tags.requires_fit = True
        return tags
