#!/usr/bin/env bash
# The hand-written kernels for module tasks (tests/gpu/module_kernels/*.cu) through cutegen's
# own build path, with real nvcc and no GPU: `cutegen build` runs the policy, compiles, checks
# the object and links; the .so must export cutegen_launch and cutegen_abi_version. Each kernel
# names its module (tasks/modules/levelN/STEM.py, which must exist) and README.md lists it; the
# kernels sharing a body are those scripts/gen-module-kernels.sh writes from its maintained copy.
# Cost: about 4 minutes on a shared 2-core machine with an empty cache (17 kernels, 9-25 s each; the cumsum and
# the losses are the longest); tests/gpu/module_kernels.sh judges them on the H200.
set -u
: "${CUTEGEN:?}" "${REPO:?}"
T=$(mktemp -d)
[ -n "${KEEP_TMP:-}" ] || trap 'rm -rf "$T"' EXIT
export XDG_CACHE_HOME="$T/cache"
fails=0
ok() { echo "ok - $1"; }
bad() { echo "not ok - $1"; [ -s "$T/out" ] && sed 's/^/# /' "$T/out" | head -20; fails=$((fails + 1)); }
if ! command -v nvcc >/dev/null && [ ! -x /usr/local/cuda/bin/nvcc ]; then
    echo "ok - skipped: no nvcc"; exit 0
fi
KD="$REPO/tests/gpu/module_kernels"
# the kernels that share a body are generated from its one maintained copy
same=0
if bash "$REPO/scripts/gen-module-kernels.sh" "$T/gen" >"$T/out" 2>&1; then
    same=1
    for g in "$T"/gen/*.cu; do
        cmp -s "$g" "$KD/$(basename "$g")" || { echo "differs: $(basename "$g")" >>"$T/out"; same=0; }
    done
fi
if [ $same -eq 1 ]; then
    ok "the kernels sharing a body are what scripts/gen-module-kernels.sh writes"
else
    bad "the kernels sharing a body are what scripts/gen-module-kernels.sh writes (run it after editing their source)"
fi
: >"$T/out"
n=0
for k in "$KD"/*.cu; do
    stem=$(basename "$k" .cu)
    n=$((n + 1))
    mod=""
    for lv in level1 level2; do
        [ -f "$REPO/tasks/modules/$lv/$stem.py" ] && mod="tasks/modules/$lv/$stem.py"
    done
    : >"$T/out"
    if [ -z "$mod" ] || ! head -3 "$k" | grep -q "$mod"; then
        echo "# $stem.cu names no module of tasks/modules/level1|level2 (its first lines must)" >"$T/out"
        bad "$stem: names its module"; continue
    fi
    if ! grep -q "^| \`$stem.cu\` |" "$KD/README.md"; then
        bad "$stem: listed in tests/gpu/module_kernels/README.md"; continue
    fi
    start=$(date +%s)
    if ! "$CUTEGEN" build "$k" --json >"$T/build.json" 2>"$T/out"; then
        cat "$T/build.json" >>"$T/out"; bad "$stem: cutegen build (policy, compile, object check)"; continue
    fi
    so=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["so_path"])' "$T/build.json")
    if nm -D "$so" | grep -q " T cutegen_launch$" && nm -D "$so" | grep -q " cutegen_abi_version$"; then
        ok "$stem: builds through cutegen build for $mod ($(( $(date +%s) - start )) s)"
    else
        nm -D "$so" >"$T/out" 2>&1; bad "$stem: the .so exports cutegen_launch and cutegen_abi_version"
    fi
done
[ "$n" -ge 12 ] && ok "$n module kernels (at least 12)" || bad "only $n module kernels (want at least 12)"
echo "# module_kernels_compile: $fails failed"
[ $fails -eq 0 ]
