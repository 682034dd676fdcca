#!/usr/bin/env bash
# Build amber for one CPython into .venv-X.Y and run the whole Python suite there.
#   scripts/pythons/test-one.sh PYTHON
# PYTHON is an interpreter's path or name (python3.14). Each version gets its own virtual
# environment (.venv-X.Y) and Cargo target folder (target/pyX.Y), so runs for several versions
# reuse their builds. The build uses the `suite` profile (release optimisation, no fat LTO):
# the same code, built in a fraction of the time; `make build` and wheels use `release`.
set -euo pipefail
cd "$(dirname "$0")/../.."
py=$1
v=$("$py" -c 'import sys; print("%d.%d" % sys.version_info[:2])')
echo "== CPython $v ($("$py" -c 'import sys; print(sys.version.split()[0])'), $py)"
venv=.venv-$v
[ -x "$venv/bin/python" ] || "$py" -m venv "$venv"
"$venv/bin/python" -m pip install --quiet --upgrade pip "maturin>=1.16,<2"
VIRTUAL_ENV=$PWD/$venv CARGO_TARGET_DIR=target/py$v \
  "$venv/bin/maturin" develop --profile suite --quiet --extras dev,bench
"$venv/bin/python" -m pytest -q -p no:cacheprovider
