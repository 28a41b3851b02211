#!/usr/bin/env bash
# Regenerates the nvcc log fixtures (*.log) from src/*.cu, compiling each the way src/eval/build.c
# does: copied to a scratch directory as kernel.cu and compiled there, so logs name "kernel.cu".
# Usage: bash tests/data/nvcc/regen.sh [NAME...]   (slow: CuTe compiles take tens of seconds)
set -u
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../../.." && pwd)
nvcc=${NVCC:-/usr/local/cuda/bin/nvcc}
cutlass=$(cd "$repo/${CUTLASS_DIR:-third_party/cutlass}/include" && pwd)
names=("$@")
[ ${#names[@]} -eq 0 ] && names=($(cd "$here/src" && ls *.cu | sed 's/\.cu$//'))
for n in "${names[@]}"; do
    d=$(mktemp -d)
    cp "$here/src/$n.cu" "$d/kernel.cu"
    arch="-gencode arch=compute_90a,code=sm_90a"
    extra=""
    [ "$n" = bad_arch ] && arch="-gencode arch=compute_99,code=sm_99"
    [ "$n" = ptxas_verbose ] && extra="-Xptxas -v"
    (cd "$d" && "$nvcc" -std=c++17 -O3 -shared -Xcompiler -fPIC $arch -I"$cutlass" \
        -I"$repo/include" --expt-relaxed-constexpr -DNDEBUG -lineinfo $extra -o kernel.so kernel.cu) \
        >"$here/$n.log" 2>&1
    echo "$n: exit $?"
    rm -rf "$d"
done
