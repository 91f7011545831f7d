"""distfeat in Python: the stream's feature embeddings of sets, offline and from Kafka.

The features are computed by the Go packages the worker runs (a shared library loaded on
first use), so a set's float32 features here are the bytes ``distfeat embed`` and a worker
emit for the same spec and points. See docs/python.md.

Do not ``fork()`` a process after its first call into distfeat: use the ``spawn`` or
``forkserver`` start method of multiprocessing (distfeat raises ForkedAfterLoadError
otherwise).
"""

from ._native import ForkedAfterLoadError, NativeError, version
from ._sets import Ragged, ragged
from .core import (TWO_SAMPLE_FIELDS, Calibration, Column, PointFeatures, Spec, Stream, TwoSample, calibrate, embed,
                   point_features, two_sample, uniform)
from .export import export_model

__all__ = [
    "Calibration", "Column", "Embedder", "FeatureReader", "ForkedAfterLoadError", "NativeError", "PointFeatures",
    "Ragged", "Spec", "SpecMismatchError", "Stream", "TWO_SAMPLE_FIELDS", "TwoSample", "calibrate", "embed", "export_model", "point_features",
    "ragged", "read_arrow", "two_sample", "uniform", "version",
]


def __getattr__(name: str):  # scikit-learn, confluent-kafka and pyarrow load only when used
    if name == "Embedder":
        from .sklearn import Embedder
        return Embedder
    if name in ("FeatureReader", "SpecMismatchError", "read_arrow", "features_of"):
        from . import reader
        return getattr(reader, name)
    raise AttributeError(f"module 'distfeat' has no attribute {name!r}")
