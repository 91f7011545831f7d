"""Functions run in child processes by test_multiprocessing (importable by spawn children)."""

import numpy as np


def embed_bytes(seed: int) -> bytes:
    import distfeat
    rng = np.random.default_rng(seed)
    return distfeat.embed([rng.random((50, 2)), rng.random((70, 2))]).tobytes()


def loaded_here(_: int = 0) -> bool:
    from distfeat import _native
    return _native.loaded()


def embed_error(seed: int) -> str:
    try:
        embed_bytes(seed)
    except Exception as e:  # the error type travels back as text
        return type(e).__name__ + ": " + str(e)
    return "no error"
