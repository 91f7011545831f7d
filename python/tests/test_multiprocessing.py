"""The Go runtime and processes: the library loads lazily; spawn and forkserver children
compute the same bytes; a fork()ed child of a loaded parent gets ForkedAfterLoadError (a
Go runtime does not survive fork: golang/go#15538) instead of a hang."""

import multiprocessing as mp
import subprocess
import sys

import pytest

import mp_helper


def test_import_does_not_load_the_runtime():
    code = "import distfeat, distfeat._native as n; assert not n.loaded(); distfeat.Spec(); assert n.loaded()"
    subprocess.run([sys.executable, "-c", code], check=True)


@pytest.mark.parametrize("method", ["spawn", "forkserver"])
def test_spawn_and_forkserver_children_compute_the_same_bytes(method):
    want = [mp_helper.embed_bytes(s) for s in (1, 2, 3)]  # loads the library in this process
    with mp.get_context(method).Pool(2) as pool:
        assert not any(pool.map(mp_helper.loaded_here, range(2)))  # children start without it
        assert pool.map(mp_helper.embed_bytes, (1, 2, 3)) == want


def test_fork_after_load_is_refused():
    mp_helper.embed_bytes(0)
    with mp.get_context("fork").Pool(1) as pool:
        msg = pool.apply(mp_helper.embed_error, (0,))
    assert msg.startswith("ForkedAfterLoadError") and "spawn" in msg, msg


def test_joblib_loky_workers():
    """joblib's default backend (what GridSearchCV(n_jobs=…) uses) starts fresh
    interpreters, so a parent that loaded the library is fine."""
    from joblib import Parallel, delayed
    want = [mp_helper.embed_bytes(s) for s in (4, 5)]
    assert Parallel(n_jobs=2, backend="loky")(delayed(mp_helper.embed_bytes)(s) for s in (4, 5)) == want
