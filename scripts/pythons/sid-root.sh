#!/usr/bin/env bash
# Build (once) a Debian unstable root that holds CPython 3.14 and 3.15, for `make test-pythons`.
# The root lives in a cache folder outside the clone (AMBER_CACHE, default ~/.cache/amber) and is
# rebuilt only when missing or when this script's package list changes. Prints the root's path.
# Needs root (debootstrap, chroot); installs debootstrap from Debian's registry if it is missing.
set -euo pipefail

cache=${AMBER_CACHE:-$HOME/.cache/amber}
packages=python3.14,python3.14-venv,python3.14-dev,python3.15,python3.15-venv,python3.15-dev,gcc,libc6-dev,ca-certificates
mirror=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
stamp_want="sid $packages"
root=$cache/sid-root

if [ -f "$root/.amber-root" ] && [ "$(cat "$root/.amber-root")" = "$stamp_want" ]; then
  echo "$root"
  exit 0
fi

if ! command -v debootstrap >/dev/null; then
  { apt-get update -qq && apt-get install -y -qq debootstrap; } >&2
fi

mkdir -p "$cache"
tmp=$(mktemp -d "$cache/sid-root.new.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
echo "building the CPython 3.14/3.15 root in $root (about 4 minutes)" >&2
debootstrap --variant=minbase --include="$packages" sid "$tmp" "$mirror" >"$cache/debootstrap.log" 2>&1 || {
  tail -n 30 "$cache/debootstrap.log" >&2
  exit 1
}
echo "$stamp_want" >"$tmp/.amber-root"
rm -rf "$root"
mv "$tmp" "$root"
trap - EXIT
echo "$root"
