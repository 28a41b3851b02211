#!/usr/bin/env bash
# Run HERE (the CPU machine) before a device call: builds cutegen, copies the shared libraries
# the binaries need that the GPU image may lack into .gpu/lib, and precompiles the example and
# red-team kernels into .gpu/cache so the GPU's time goes to evaluation. The device call then
# carries build, third_party and .gpu (all git-ignored).
set -euo pipefail
cd "$(dirname "$0")/.."
grep -qx '/.gpu/' .git/info/exclude 2>/dev/null || echo '/.gpu/' >> "$(git rev-parse --git-common-dir)/info/exclude"
make -j2 all
mkdir -p .gpu/lib .gpu/cache .gpu/include/dlpack
cp /usr/include/dlpack/dlpack.h .gpu/include/dlpack/   # candidates include it; the GPU image may lack it
skip='libc\.so|libm\.so|libpthread|libdl\.so|librt\.so|ld-linux|libcuda\.so|libcublas|libcudart|libstdc\+\+|libgcc_s'
for b in build/cutegen build/cutegen-runner build/cutegen-baseline; do
    ldd "$b" | awk '/=> \//{print $3}'
done | sort -u | grep -Ev "$skip" | while read -r lib; do cp -L "$lib" .gpu/lib/; done
for k in kernels/*.cu tests/redteam/*.cu bench/loop/*.cu; do
    [ -f "$k" ] || continue
    if ! build/cutegen build "$k" --cache-dir .gpu/cache >/dev/null 2>&1; then
        echo "gpu_bundle: $k does not build (expected for policy red-team kernels)"
    fi
done
# BUNDLE_BUILTIN=1: the builtin agent's start kernels for every suite and GPU-test task, and
# the first stage of the kb1 SIMT GEMM walks (bench/builtin_precompile.sh; ~10 min on 2 cores)
if [ -n "${BUNDLE_BUILTIN:-}" ]; then
    bash bench/builtin_precompile.sh .gpu/cache 0
    STAGE1_FAMILIES=gemm_simt bash bench/builtin_precompile.sh .gpu/cache 1 $(build/cutegen tasks --json |
        python3 -c 'import json,sys; print(" ".join(t["name"] for t in json.load(sys.stdin) if t["suite"] == "kb1"))')
fi
du -sh .gpu build third_party
# one compressed file travels (the device call's carry limit is 64 MiB; headers compress well)
tar -czf .gpu/bundle.tar.gz build/cutegen build/cutegen-runner build/cutegen-baseline third_party/cutlass/include \
    third_party/cutlass/VERSION .gpu/lib .gpu/cache .gpu/include
ls -la .gpu/bundle.tar.gz
