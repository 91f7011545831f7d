"""The Go shared library (``_libdistfeat.so``), loaded with ctypes on first use.

The library embeds a Go runtime. Loading it starts the runtime's threads in this process, so
``os.fork()`` after the first call is unsafe: the child inherits one thread and the runtime's
locks in whatever state the other threads left them, and a call into Go may deadlock or
crash. This module refuses such calls with :class:`ForkedAfterLoadError` instead. Use the
``spawn`` or ``forkserver`` start method of :mod:`multiprocessing` (or load distfeat only in
the children).
"""

from __future__ import annotations

import ctypes
import json
import os
import threading
from typing import Any

_LIB_NAME = "_libdistfeat.so"

_lock = threading.Lock()
_state: dict[str, Any] = {"lib": None, "pid": None}


class ForkedAfterLoadError(RuntimeError):
    """A call into the Go library from a process fork()ed after the library was loaded."""


class NativeError(ValueError):
    """An error reported by the Go library (a bad spec, bad points, a bad layout)."""


def library_path() -> str:
    """The path of the shared library inside the installed package."""
    return os.environ.get("PYDISTFEAT_LIBRARY") or os.path.join(os.path.dirname(__file__), _LIB_NAME)


def loaded() -> bool:
    """Whether this process (or a parent it was forked from) has loaded the library."""
    return _state["lib"] is not None


def lib() -> ctypes.CDLL:
    """The loaded library (loading it on first use)."""
    l = _state["lib"]
    if l is not None:
        if _state["pid"] != os.getpid():
            raise ForkedAfterLoadError(
                f"distfeat: the Go library was loaded in process {_state['pid']} and this process "
                f"({os.getpid()}) was fork()ed from it; a Go runtime does not survive fork(). Use "
                "multiprocessing.get_context('spawn') or 'forkserver' (docs/python.md)")
        return l
    with _lock:
        if _state["lib"] is None:
            path = library_path()
            if not os.path.exists(path):
                raise ImportError(f"distfeat: native library {path} is missing: reinstall the package "
                                  "with `pip install ./python` (needs Go and a C compiler)")
            l = ctypes.CDLL(path)
            _declare(l)
            _state["pid"] = os.getpid()
            _state["lib"] = l
    return _state["lib"]


def _declare(l: ctypes.CDLL) -> None:
    c_char_p, vp = ctypes.c_char_p, ctypes.c_void_p
    i64, u64, cint = ctypes.c_int64, ctypes.c_uint64, ctypes.c_int
    uptr = ctypes.c_size_t
    l.distfeat_free.argtypes, l.distfeat_free.restype = [vp], None
    l.distfeat_version.argtypes, l.distfeat_version.restype = [], vp
    l.distfeat_new.argtypes, l.distfeat_new.restype = [c_char_p, c_char_p], vp
    l.distfeat_close.argtypes, l.distfeat_close.restype = [uptr], None
    l.distfeat_embed.argtypes = [uptr, vp, i64, vp, i64, vp, i64, cint]
    l.distfeat_embed.restype = vp
    l.distfeat_points.argtypes = [uptr, vp, i64, vp, i64, vp, i64, vp, i64, cint]
    l.distfeat_points.restype = vp
    l.distfeat_calibrate.argtypes = [vp, i64, vp, i64, cint, c_char_p]
    l.distfeat_calibrate.restype = vp
    l.distfeat_uniform.argtypes, l.distfeat_uniform.restype = [u64, c_char_p, vp, i64], vp
    l.distfeat_model_seal.argtypes, l.distfeat_model_seal.restype = [c_char_p], vp
    l.distfeat_stream_new.argtypes, l.distfeat_stream_new.restype = [uptr], uptr
    l.distfeat_stream_add.argtypes, l.distfeat_stream_add.restype = [uptr, vp, i64], vp
    l.distfeat_stream_count.argtypes, l.distfeat_stream_count.restype = [uptr], i64
    l.distfeat_stream_features.argtypes, l.distfeat_stream_features.restype = [uptr, vp, i64, cint], vp


def take_string(p: int | None) -> str | None:
    """The C string p as str, freed; None for NULL."""
    if not p:
        return None
    try:
        return ctypes.string_at(p).decode("utf-8")
    finally:
        lib().distfeat_free(p)


def check(p: int | None) -> None:
    """Raise NativeError for a non-NULL error string."""
    msg = take_string(p)
    if msg is not None:
        raise NativeError(msg)


def take_json(p: int | None) -> Any:
    """The JSON document p (freed); NativeError for {"error": …}."""
    doc = json.loads(take_string(p) or "null")
    if isinstance(doc, dict) and "error" in doc and len(doc) == 1:
        raise NativeError(doc["error"])
    return doc


def version() -> str:
    """The Go library's build version."""
    return take_string(lib().distfeat_version()) or ""
