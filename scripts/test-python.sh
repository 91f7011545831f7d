#!/usr/bin/env bash
# make test-python: installs the Python package from this checkout into the virtualenv
# bin/pyenv (.ci/run creates it with the pinned python/requirements.txt; otherwise it is
# created here and sees the system site's packages) with one `pip install ./python`
# (building the Go shared library),
# then runs its pytest suite against bin/distfeat (make build). Without Python 3.9+ or a
# dependency the suite is skipped with the reason; under CI=true that is a failure.
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-python3}

skip() {
  if [ "${CI:-}" = true ]; then
    echo "test-python: $1 (.ci/run installs python/requirements.txt)" >&2
    exit 1
  fi
  echo "test-python: SKIPPED: $1 (pip install -r python/requirements.txt)"
  exit 0
}

venv=bin/pyenv
if [ ! -x "$venv/bin/python" ]; then
  command -v "$PYTHON" >/dev/null 2>&1 || skip "$PYTHON not found"
  "$PYTHON" -c 'import sys; sys.exit(sys.version_info < (3, 9))' || skip "$PYTHON is older than 3.9"
  "$PYTHON" -m venv --system-site-packages "$venv" || skip "$PYTHON -m venv failed (Debian: apt-get install python3-venv)"
fi
missing=$("$venv/bin/python" - <<'PY'
import importlib.util
mods = ["numpy", "sklearn", "scipy", "pyarrow", "confluent_kafka", "pytest", "setuptools", "wheel"]
print(" ".join(m for m in mods if importlib.util.find_spec(m) is None))
PY
)
[ -z "$missing" ] || skip "missing Python modules: $missing"
[ -x bin/distfeat ] || { echo "test-python: bin/distfeat missing: run make build" >&2; exit 1; }

start=$(date +%s)
# --no-build-isolation: build with the pinned setuptools/wheel already installed, offline.
"$venv/bin/python" -m pip install -q --no-build-isolation --no-deps --force-reinstall ./python
echo "test-python: pip install ./python took $(( $(date +%s) - start )) s"
rm -rf python/build
# From the repository root, so that `import distfeat` is the installed package (python/ is
# not on the path), with its shared library.
PYDISTFEAT_BIN=$PWD/bin/distfeat exec "$venv/bin/python" -m pytest -q -p no:cacheprovider --durations=5 python/tests
