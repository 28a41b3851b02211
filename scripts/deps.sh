#!/usr/bin/env bash
# Installs what cutegen needs to build on a fresh Debian machine that has the CUDA toolkit:
# the -dev packages it links against and the CUTLASS/CuTe headers (from PyPI, into third_party/).
# Idempotent: does nothing when everything is already there. `--ci` also installs clang
# (libFuzzer) and valgrind for .ci/run. CUTLASS_DIR=/path/to/cutlass skips
# the PyPI download and uses that checkout's include/ instead.
set -euo pipefail
cd "$(dirname "$0")/.."

need_pkgs=()
have_hdr() { [ -e "/usr/include/$1" ] || compgen -G "/usr/include/*/$1" >/dev/null; }
have_hdr curl/curl.h     || need_pkgs+=(libcurl4-openssl-dev)
have_hdr sqlite3.h       || need_pkgs+=(libsqlite3-dev)
have_hdr jansson.h       || need_pkgs+=(libjansson-dev)
have_hdr dlpack/dlpack.h || need_pkgs+=(libdlpack-dev)
command -v python3 >/dev/null || need_pkgs+=(python3)
command -v make >/dev/null    || need_pkgs+=(make)
command -v gcc >/dev/null     || need_pkgs+=(gcc)
command -v objdump >/dev/null || need_pkgs+=(binutils)  # the object check of every build
command -v sqlite3 >/dev/null || need_pkgs+=(sqlite3)   # the e2e tests read run.db with it
# --ci: also the tools of the CI's hardening steps (libFuzzer's clang, valgrind)
if [ "${1:-}" = --ci ]; then
    command -v clang >/dev/null    || need_pkgs+=(clang)
    command -v valgrind >/dev/null || need_pkgs+=(valgrind)
fi
if [ ${#need_pkgs[@]} -gt 0 ]; then
    echo "deps: installing Debian packages: ${need_pkgs[*]}"
    SUDO=""; [ "$(id -u)" = 0 ] || SUDO="sudo"
    export DEBIAN_FRONTEND=noninteractive
    $SUDO apt-get update -qq
    $SUDO apt-get install -y -qq "${need_pkgs[@]}" >/dev/null
fi

if ! command -v nvcc >/dev/null && [ ! -x /usr/local/cuda/bin/nvcc ]; then
    echo "deps: error: nvcc not found; install the CUDA toolkit (12.4 or newer) and put nvcc on PATH" >&2
    exit 1
fi

CUTLASS_VERSION=4.2.0.0
dest=third_party/cutlass
if [ -n "${CUTLASS_DIR:-}" ]; then
    [ -f "$CUTLASS_DIR/include/cute/tensor.hpp" ] || {
        echo "deps: error: CUTLASS_DIR='$CUTLASS_DIR' has no include/cute/tensor.hpp" >&2; exit 1; }
elif [ ! -f "$dest/include/cute/tensor.hpp" ] || [ "$(cat "$dest/VERSION" 2>/dev/null)" != "$CUTLASS_VERSION" ]; then
    echo "deps: fetching CUTLASS/CuTe headers (nvidia-cutlass==$CUTLASS_VERSION from PyPI)"
    tmp=$(mktemp -d)
    trap 'rm -rf "$tmp"' EXIT
    python3 -m pip download -q --no-deps --only-binary=:all: -d "$tmp" "nvidia-cutlass==$CUTLASS_VERSION"
    whl=$(ls "$tmp"/nvidia_cutlass-*.whl)
    python3 - "$whl" "$tmp/x" <<'PY'
import sys, zipfile
z = zipfile.ZipFile(sys.argv[1])
for n in z.namelist():
    if '/source/include/' in n or '/source/examples/cute/' in n:
        z.extract(n, sys.argv[2])
PY
    src=$(find "$tmp/x" -type d -path '*source/include' | head -1)
    rm -rf "$dest"; mkdir -p "$dest"
    cp -r "$src" "$dest/include"
    ex=$(find "$tmp/x" -type d -path '*source/examples/cute' | head -1)
    [ -n "$ex" ] && mkdir -p "$dest/examples" && cp -r "$ex" "$dest/examples/cute"
    echo "$CUTLASS_VERSION" > "$dest/VERSION"
fi
echo "deps: ok"
