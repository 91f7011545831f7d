"""Ragged sets as one float64 buffer and int64 offsets — what the Go library reads in place."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np


@dataclass(frozen=True)
class Ragged:
    """Sets of points in one buffer: ``points`` is (total, dim) float64 C-contiguous and set
    i is ``points[offsets[i]:offsets[i+1]]``. Pass it instead of a list to embed without the
    one concatenating copy a list needs."""

    points: np.ndarray
    offsets: np.ndarray

    def __post_init__(self) -> None:
        p = np.ascontiguousarray(self.points, dtype=np.float64)
        if p.ndim != 2:
            raise ValueError(f"points must be 2-D (total points, dim), got shape {p.shape}")
        o = np.ascontiguousarray(self.offsets, dtype=np.int64)
        if o.ndim != 1 or len(o) < 1 or o[0] != 0 or o[-1] != len(p) or np.any(np.diff(o) < 0):
            raise ValueError("offsets must be non-decreasing, start at 0 and end at len(points)")
        object.__setattr__(self, "points", p)
        object.__setattr__(self, "offsets", o)

    def __len__(self) -> int:
        return len(self.offsets) - 1

    def __getitem__(self, i: int) -> np.ndarray:
        return self.points[self.offsets[i]:self.offsets[i + 1]]

    @property
    def dim(self) -> int:
        return self.points.shape[1]

    @property
    def sizes(self) -> np.ndarray:
        return np.diff(self.offsets)


def ragged(sets: Any, dim: int | None = None) -> Ragged:
    """Sets as Ragged: a Ragged as is; a sequence of (n_i, d) arrays concatenated once."""
    if isinstance(sets, Ragged):
        return sets
    if isinstance(sets, np.ndarray) and sets.dtype != object:
        if sets.ndim != 3:
            raise ValueError(f"a numpy array of sets must be 3-D (sets, points, dim), got shape {sets.shape}")
        n, m, d = sets.shape
        return Ragged(sets.reshape(n * m, d), np.arange(n + 1, dtype=np.int64) * m)
    if not isinstance(sets, Sequence) and not isinstance(sets, np.ndarray):
        raise TypeError(f"sets must be a list of (n_i, d) arrays or a distfeat.Ragged, got {type(sets).__name__}")
    arrs = []
    for i, s in enumerate(sets):
        a = np.asarray(s, dtype=np.float64)
        if a.ndim == 1 and dim is not None and a.size % dim == 0:
            a = a.reshape(-1, dim)
        if a.ndim != 2:
            raise ValueError(f"set {i}: want a 2-D (points, dim) array, got shape {a.shape}")
        if dim is None:
            dim = a.shape[1]
        elif a.shape[1] != dim:
            raise ValueError(f"set {i}: points have dimension {a.shape[1]}, want {dim}")
        arrs.append(a)
    if not arrs:
        return Ragged(np.zeros((0, dim or 1)), np.zeros(1, dtype=np.int64))
    offsets = np.zeros(len(arrs) + 1, dtype=np.int64)
    np.cumsum([len(a) for a in arrs], out=offsets[1:])
    return Ragged(np.concatenate(arrs, axis=0), offsets)
