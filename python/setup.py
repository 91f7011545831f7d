"""Builds distfeat's native part: the Go shared library python/native, with
`go build -buildmode=c-shared` (needs Go and a C compiler), from the repository this
directory belongs to (or PYDISTFEAT_GO_MODULE, a checkout of github.com/distfeat/distfeat)."""

import os
import shutil
import subprocess
import sys

from setuptools import setup
from setuptools.command.build_py import build_py
from setuptools.dist import Distribution

MODULE = "github.com/distfeat/distfeat"
LIB = "_libdistfeat.so"


def module_root():
    env = os.environ.get("PYDISTFEAT_GO_MODULE")
    cands = [env] if env else []
    here = os.path.dirname(os.path.abspath(__file__))
    cands.append(os.path.dirname(here))
    for c in cands:
        gomod = os.path.join(c, "go.mod")
        if os.path.exists(gomod):
            with open(gomod) as f:
                if f.readline().split()[-1:] == [MODULE]:
                    return c
    sys.exit("distfeat: cannot find the Go module %s next to %s; install from a checkout "
             "(pip install ./python) or set PYDISTFEAT_GO_MODULE to one" % (MODULE, here))


def go_build(out):
    go = os.environ.get("GO") or shutil.which("go")
    if not go:
        sys.exit("distfeat: building the native library needs Go (1.26, https://go.dev/dl/) on PATH; "
                 "none found")
    env = dict(os.environ, CGO_ENABLED="1")
    cc = subprocess.run([go, "env", "CC"], capture_output=True, text=True, env=env).stdout.strip() or "gcc"
    if not shutil.which(cc.split()[0]):
        sys.exit("distfeat: building the native library needs a C compiler (cgo, for -buildmode=c-shared); "
                 "%r not found (Debian: apt-get install gcc; or set CC)" % cc)
    root = module_root()
    described = subprocess.run(["git", "describe", "--tags", "--always", "--dirty"], cwd=root,
                               capture_output=True, text=True) if shutil.which("git") else None
    version = described.stdout.strip() if described and described.returncode == 0 else "dev"
    ldflags = "-s -w -X %s/internal/buildinfo.Version=%s" % (MODULE, version)
    cmd = [go, "build", "-buildmode=c-shared", "-trimpath", "-ldflags", ldflags, "-o", out, "./python/native"]
    print("distfeat: " + " ".join(cmd), flush=True)
    res = subprocess.run(cmd, cwd=root, env=env)
    if res.returncode != 0:
        sys.exit("distfeat: go build of the native library failed (exit %d)" % res.returncode)
    header = os.path.splitext(out)[0] + ".h"
    if os.path.exists(header):
        os.remove(header)


class BuildPyWithGo(build_py):
    def run(self):
        super().run()
        target = os.path.join(self.build_lib, "distfeat", LIB)
        os.makedirs(os.path.dirname(target), exist_ok=True)
        go_build(os.path.abspath(target))


class BinaryDistribution(Distribution):
    """The wheel holds a native library: tag it for this platform."""

    def has_ext_modules(self):
        return True


setup(cmdclass={"build_py": BuildPyWithGo}, distclass=BinaryDistribution)
