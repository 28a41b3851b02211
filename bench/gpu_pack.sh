#!/usr/bin/env bash
# Run HERE before a device call: builds this checkout and packs what the GPU machine needs into
# .gpu/ (git-ignored; carry [".gpu"]): tree.tar.gz (the committed tree, build/ binaries, the
# CUTLASS headers, COMMIT), lib/ (the shared libraries the GPU image may lack), include/dlpack.
# OLD=DIR also copies DIR/build/{cutegen,cutegen-runner,cutegen-baseline} to .gpu/old/ (a build to compare with).
# There: mkdir -p /tmp/t && tar -xzf .gpu/tree.tar.gz -C /tmp/t && cd /tmp/t &&
#        LD_LIBRARY_PATH=$OLDPWD/.gpu/lib OUT=$OUT OLD_CUTEGEN=$OLDPWD/.gpu/old/cutegen bash bench/gpu_round.sh
set -euo pipefail
cd "$(dirname "$0")/.."
make -j2 all >/dev/null
mkdir -p .gpu/lib .gpu/include/dlpack
cp /usr/include/dlpack/dlpack.h .gpu/include/dlpack/
skip='libc\.so|libm\.so|libpthread|libdl\.so|librt\.so|ld-linux|libcuda\.so|libcublas|libcudart|libstdc\+\+|libgcc_s'
for b in build/cutegen build/cutegen-runner build/cutegen-baseline; do
    [ -x "$b" ] && ldd "$b" | awk '/=> \//{print $3}'
done | sort -u | grep -Ev "$skip" | while read -r lib; do cp -L "$lib" .gpu/lib/; done
if [ -n "${OLD:-}" ]; then
    mkdir -p .gpu/old && cp "$OLD/build/cutegen" "$OLD/build/cutegen-runner" .gpu/old/
    [ ! -x "$OLD/build/cutegen-baseline" ] || cp "$OLD/build/cutegen-baseline" .gpu/old/
fi
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
git archive HEAD | tar -x -C "$tmp"
git rev-parse HEAD >"$tmp/COMMIT"
mkdir -p "$tmp/build" "$tmp/third_party/cutlass"
cp build/cutegen build/cutegen-runner "$tmp/build/"
[ -x build/cutegen-baseline ] && cp build/cutegen-baseline "$tmp/build/"
cp -rL third_party/cutlass/include third_party/cutlass/VERSION "$tmp/third_party/cutlass/"
tar -czf .gpu/tree.tar.gz -C "$tmp" .
du -sh .gpu/tree.tar.gz .gpu
