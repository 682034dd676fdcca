#!/usr/bin/env bash
# Run a command inside the CPython 3.14/3.15 root that sid-root.sh builds, in this clone (bound at
# the same path), with the host's Rust toolchain, CA bundle and DNS. Needs root (mount, chroot).
#   scripts/pythons/in-root.sh python3.14 -m pytest -q
set -euo pipefail
here=$(cd "$(dirname "$0")/../.." && pwd)
root=$(bash "$here/scripts/pythons/sid-root.sh")

mounts=()
bind() { # bind SRC [DEST inside the root]
  local dest=$root${2:-$1}
  mkdir -p "$dest"
  mount --bind "$1" "$dest"
  mounts=("$dest" "${mounts[@]}")
}
cleanup() {
  for m in "${mounts[@]}"; do umount -l "$m" 2>/dev/null || true; done
}
trap cleanup EXIT

mkdir -p "$root/dev/shm" "$root/proc"
mount -t proc proc "$root/proc" && mounts=("$root/proc" "${mounts[@]}")
bind /dev
mount -t tmpfs -o size=2g,mode=1777 shm "$root/dev/shm" && mounts=("$root/dev/shm" "${mounts[@]}")
bind "$here"
for d in "${CARGO_HOME:-$HOME/.cargo}" "${RUSTUP_HOME:-$HOME/.rustup}"; do
  [ -d "$d" ] && bind "$d"
done
cp -L /etc/resolv.conf "$root/etc/resolv.conf"
[ -f /etc/ssl/certs/ca-certificates.crt ] && cp -L /etc/ssl/certs/ca-certificates.crt "$root/etc/ssl/certs/ca-certificates.crt"

path="${CARGO_HOME:-$HOME/.cargo}/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
chroot "$root" /usr/bin/env -i HOME="$HOME" PATH="$path" LANG=C.UTF-8 TERM="${TERM:-dumb}" \
  CARGO_HOME="${CARGO_HOME:-$HOME/.cargo}" RUSTUP_HOME="${RUSTUP_HOME:-$HOME/.rustup}" \
  PIP_CERT=/etc/ssl/certs/ca-certificates.crt SSL_CERT_FILE=/etc/ssl/certs/ca-certificates.crt \
  PIP_DISABLE_PIP_VERSION_CHECK=1 CI="${CI:-}" \
  /bin/bash -c 'cd "$0" && exec "$@"' "$here" "$@"
