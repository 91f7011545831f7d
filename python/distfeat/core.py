"""Compiled specs and the offline feature functions, over the Go library."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from typing import Any, Mapping

import numpy as np

from . import _native
from ._sets import Ragged, ragged

# The values of a two_sample family's vector before the per-band MMD²s (docs/drift.md).
TWO_SAMPLE_FIELDS = ("mmd2", "statistic", "p_value", "n", "T_mean", "p_mean", "T_mom", "p_mom", "T_rff", "p_rff")


def _release(obj: Any) -> None:
    """Closes obj's native handle, in the process that opened it (never in a forked child)."""
    h = getattr(obj, "_handle", 0)
    if h and _native.loaded() and getattr(obj, "_pid", None) == os.getpid():
        try:
            _native.lib().distfeat_close(h)
        except Exception:  # interpreter shutdown
            pass
    obj._handle = 0


@dataclass(frozen=True)
class Column:
    """One output vector of a spec: its name, family, length and kind."""

    name: str
    family: str
    len: int
    kind: str


class Spec:
    """A compiled spec: the resolved document, its spec_id and output columns, and the Go
    embedder that computes its features (released when this object is collected).

    ``source`` is None (the built-in default), a dict (the spec document), a JSON string
    starting with ``{``, or a path to a spec file (relative two_sample references resolve
    against its directory)."""

    def __init__(self, source: Any = None) -> None:
        l = _native.lib()
        self._handle = 0
        if source is None:
            doc = _native.take_json(l.distfeat_new(None, None))
        elif isinstance(source, Mapping):
            doc = _native.take_json(l.distfeat_new(json.dumps(source).encode(), None))
        elif isinstance(source, str) and source.lstrip().startswith("{"):
            doc = _native.take_json(l.distfeat_new(source.encode(), None))
        elif isinstance(source, (str, os.PathLike)):
            doc = _native.take_json(l.distfeat_new(None, os.fsencode(source)))
        elif isinstance(source, Spec):
            doc = _native.take_json(l.distfeat_new(json.dumps(source.document).encode(), None))
        else:
            raise TypeError(f"spec must be None, a dict, a JSON string or a path, got {type(source).__name__}")
        self._handle = doc["handle"]
        self._pid = os.getpid()
        self.document: dict = doc["spec"]
        self.spec_id: str = doc["spec_id"]
        self.dim: int = doc["dim"]
        self.width: int = doc["width"]
        self.columns = [Column(**c) for c in doc["columns"] or []]
        self.point_maps = [Column(**c) for c in doc["point_maps"] or []]
        self.drift = doc["drift"] or []

    def __del__(self) -> None:
        _release(self)

    def __repr__(self) -> str:
        return f"distfeat.Spec(spec_id={self.spec_id!r}, columns={[c.name for c in self.columns]})"

    def column_slices(self) -> dict[str, slice]:
        """Each column's slice of a set's concatenated feature vector."""
        out, at = {}, 0
        for c in self.columns:
            out[c.name] = slice(at, at + c.len)
            at += c.len
        return out

    def family_slice(self, family: str) -> np.ndarray:
        """The positions of one family's columns (an hdd family's coefficients included)."""
        sl = self.column_slices()
        idx = [np.arange(sl[c.name].start, sl[c.name].stop) for c in self.columns if c.family == family or c.name == family]
        if not idx:
            names = sorted({c.family for c in self.columns})
            raise ValueError(f"family {family!r} has no columns in spec {self.spec_id} (families with columns: {names})")
        return np.concatenate(idx)

    def _check_sets(self, sets: Any) -> Ragged:
        r = ragged(sets, dim=self.dim)
        if r.dim != self.dim:
            raise ValueError(f"points have dimension {r.dim}, the spec's dim is {self.dim}")
        return r

    def embed(self, sets: Any, n_jobs: int = 1) -> np.ndarray:
        """The features of every set, (n_sets, width) float32, all columns in spec order —
        the bytes `distfeat embed` and a worker emit for the same points. One call into Go
        for the whole batch."""
        r = self._check_sets(sets)
        out = np.empty((len(r), self.width), dtype=np.float32)
        if len(r) == 0:
            return out
        _native.check(_native.lib().distfeat_embed(
            self._handle, r.points.ctypes.data, r.points.size, r.offsets.ctypes.data, len(r),
            out.ctypes.data, out.size, int(n_jobs)))
        return out

    def point_features(self, sets: Any, n_jobs: int = 1) -> "PointFeatures":
        """The per-point features of the spec's marginal_transfer families for every point
        of every set, against the set's own window features (the rows of `embed --points`
        and of the worker's per-point topic)."""
        if not self.point_maps:
            raise ValueError(f"spec {self.spec_id} has no marginal_transfer family (docs/marginal-transfer.md)")
        r = self._check_sets(sets)
        windows = self.embed(r, n_jobs=n_jobs)
        pw = sum(m.len for m in self.point_maps)
        total = int(r.offsets[-1])
        out = np.empty((total, pw), dtype=np.float32)
        if total:
            _native.check(_native.lib().distfeat_points(
                self._handle, r.points.ctypes.data, r.points.size, r.offsets.ctypes.data, len(r),
                windows.ctypes.data, windows.size, out.ctypes.data, out.size, int(n_jobs)))
        sizes = r.sizes
        return PointFeatures(
            set=np.repeat(np.arange(len(r), dtype=np.int64), sizes),
            index=np.arange(total, dtype=np.int64) - np.repeat(r.offsets[:-1], sizes),
            features=out,
            columns={m.name: slice(sum(p.len for p in self.point_maps[:k]), sum(p.len for p in self.point_maps[:k + 1]))
                     for k, m in enumerate(self.point_maps)})

    def stream(self) -> "Stream":
        """An empty Stream: one set fed in parts, as a worker's window receives a set."""
        return Stream(self)

    def two_sample(self, sets: Any, family: str | None = None, n_jobs: int = 1) -> "TwoSample":
        """The two_sample test of each set against the spec's reference, with named fields."""
        if not self.drift:
            raise ValueError(f"spec {self.spec_id} has no two_sample family (docs/drift.md)")
        fams = {d["family"]: d for d in self.drift}
        if family is None:
            if len(fams) > 1:
                raise ValueError(f"the spec has several two_sample families {sorted(fams)}: name one")
            family = next(iter(fams))
        if family not in fams:
            raise ValueError(f"{family!r} is not a two_sample family of the spec (those are {sorted(fams)})")
        feats = self.embed(sets, n_jobs=n_jobs)
        return TwoSample.from_vectors(feats[:, self.column_slices()[self.columns[fams[family]["column"]].name]],
                                      family=family, alpha=fams[family]["alpha"])


class Stream:
    """One set fed in parts (``add`` each batch of points as it arrives); ``features()`` is
    the set's feature row so far — the bytes of Spec.embed on all the points added, and of a
    worker whose window got them in several records. A part with a bad point adds nothing."""

    def __init__(self, spec: Spec) -> None:
        self._spec = spec  # keeps the compiled spec alive
        self._pid = os.getpid()
        self._handle = _native.lib().distfeat_stream_new(spec._handle)
        if not self._handle:
            raise ValueError("invalid spec")

    def __del__(self) -> None:
        _release(self)

    def add(self, points: Any) -> "Stream":
        x = np.ascontiguousarray(points, dtype=np.float64)
        if x.ndim != 2 or x.shape[1] != self._spec.dim:
            raise ValueError(f"points must be (n, {self._spec.dim}), got shape {x.shape}")
        _native.check(_native.lib().distfeat_stream_add(self._handle, x.ctypes.data, x.size))
        return self

    @property
    def count(self) -> int:
        return int(_native.lib().distfeat_stream_count(self._handle))

    def features(self, n_jobs: int = 1) -> np.ndarray:
        """(width,) float32: every column in spec order."""
        out = np.empty(self._spec.width, dtype=np.float32)
        _native.check(_native.lib().distfeat_stream_features(self._handle, out.ctypes.data, out.size, int(n_jobs)))
        return out


@dataclass(frozen=True)
class PointFeatures:
    """Per-point features: row k is point ``index[k]`` of set ``set[k]``; ``features`` is
    (sum n_i, D) float32, ``columns`` each marginal_transfer family's slice of it."""

    set: np.ndarray
    index: np.ndarray
    features: np.ndarray
    columns: dict = field(default_factory=dict)


@dataclass(frozen=True)
class TwoSample:
    """A two_sample family's output per set (docs/drift.md): each field an array over sets,
    ``band_mmd2`` (n_sets, K) the MMD² of each band; ``flagged`` is ``p_value <= alpha``."""

    family: str
    alpha: float
    mmd2: np.ndarray
    statistic: np.ndarray
    p_value: np.ndarray
    n: np.ndarray
    T_mean: np.ndarray
    p_mean: np.ndarray
    T_mom: np.ndarray
    p_mom: np.ndarray
    T_rff: np.ndarray
    p_rff: np.ndarray
    band_mmd2: np.ndarray

    @classmethod
    def from_vectors(cls, v: np.ndarray, family: str, alpha: float) -> "TwoSample":
        """From the family's (n_sets, 10 + K) float32 vectors (a feature record's column)."""
        v = np.asarray(v)
        if v.ndim != 2 or v.shape[1] < len(TWO_SAMPLE_FIELDS):
            raise ValueError(f"a two_sample column has at least {len(TWO_SAMPLE_FIELDS)} values per row, got shape {v.shape}")
        named = {f: v[:, i] for i, f in enumerate(TWO_SAMPLE_FIELDS)}
        return cls(family=family, alpha=alpha, band_mmd2=v[:, len(TWO_SAMPLE_FIELDS):], **named)

    @property
    def flagged(self) -> np.ndarray:
        return self.p_value <= self.alpha


def embed(sets: Any, spec: Any = None, n_jobs: int = 1) -> np.ndarray:
    """Features of sets under spec (see Spec.embed)."""
    return (spec if isinstance(spec, Spec) else Spec(spec)).embed(sets, n_jobs=n_jobs)


def two_sample(sets: Any, spec: Any, family: str | None = None, n_jobs: int = 1) -> TwoSample:
    """The two_sample test of each set against the reference of spec's two_sample family."""
    return (spec if isinstance(spec, Spec) else Spec(spec)).two_sample(sets, family=family, n_jobs=n_jobs)


def point_features(sets: Any, spec: Any, n_jobs: int = 1) -> PointFeatures:
    """Per-point marginal-transfer features (see Spec.point_features)."""
    return (spec if isinstance(spec, Spec) else Spec(spec)).point_features(sets, n_jobs=n_jobs)


@dataclass(frozen=True)
class Calibration:
    """calibrate's proposal: the spec document, its spec_id, the rule behind each value and
    each family's self-check against the exact kernel."""

    spec: dict
    spec_id: str
    notes: list
    checks: list


def calibrate(sets: Any, labels: Any = None, base: Any = None, families: Any = None,
              max_sets: int = 0, error: float = 0.0, target_r2: float = 0.0,
              n_jobs: int = 0, full: bool = False) -> Any:
    """Propose a spec for these sets — the Go calibrate that `distfeat calibrate` runs.

    labels: one class per set (labelled calibration chooses by cross-validated accuracy);
    base: a spec (dict or path) whose families are tuned; families: names to calibrate
    (mmd, l2, hdd_js, hdd_hellinger, hdd_tv) without a base. Returns the spec dict, or the
    whole Calibration with full=True."""
    r = ragged(sets)
    if len(r) == 0:
        raise ValueError("calibrate needs at least one set")
    base_doc = None
    if base is not None:
        base_doc = base.document if isinstance(base, Spec) else Spec(base).document
    req = {"labels": None if labels is None else [str(x) for x in labels], "base": base_doc,
           "families": list(families) if families else None, "max_sets": int(max_sets),
           "error": float(error), "target_r2": float(target_r2), "workers": int(n_jobs)}
    doc = _native.take_json(_native.lib().distfeat_calibrate(
        r.points.ctypes.data, r.points.size, r.offsets.ctypes.data, len(r), r.dim, json.dumps(req).encode()))
    cal = Calibration(spec=doc["spec"], spec_id=doc["spec_id"], notes=doc["notes"] or [], checks=doc["checks"] or [])
    return cal if full else cal.spec


def uniform(seed: int, stream: str, n: int) -> np.ndarray:
    """n uniform draws of the project's frozen generator (NewRNG(seed, stream).Float64):
    the point sets of the golden test vectors, shared by the Go and Python tests."""
    out = np.empty(n, dtype=np.float64)
    _native.check(_native.lib().distfeat_uniform(seed, stream.encode(), out.ctypes.data, n))
    return out
