#!/usr/bin/env bash
# Builds and runs tests/gpu/devkern_laws.cu against the runner's device code (runner/devkern.cu):
# the input generator's laws and determinism, and the sampled check split along K agreeing with
# the tiled reference. Needs a GPU; prints "ok - ..." / "not ok - ..." and exits 1 on a failure.
#   bash tests/gpu/devkern_laws.sh
set -u
cd "$(dirname "$0")/../.."
NVCC=${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
OUT=$(mktemp -d)
trap 'rm -rf "$OUT"' EXIT
"$NVCC" -std=c++17 -O2 -gencode arch=compute_90a,code=sm_90a -gencode arch=compute_80,code=compute_80 \
    -Isrc -Irunner tests/gpu/devkern_laws.cu runner/devkern.cu -o "$OUT/laws" || { echo "not ok - devkern_laws does not build"; exit 1; }
"$OUT/laws"
