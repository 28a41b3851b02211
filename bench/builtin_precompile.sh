#!/usr/bin/env bash
# Run HERE (the CPU machine), from bench/gpu_bundle.sh: compiles the builtin agent's first
# candidates into a build cache, so that a suite on the GPU machine starts evaluating at once.
#   [STAGE1_FAMILIES=REGEX] bash bench/builtin_precompile.sh CACHE_DIR MAX_STAGE [TASK...]
# For each task (default: every kb1 and hopper task and tests/gpu/tasks/*.json), the
# candidates of the walk's stages 0..MAX_STAGE when none beats the start (`cutegen builtin
# --plan`): stage 0 is the start alone, stage 1 is fixed by it; later stages move with what
# is measured; STAGE1_FAMILIES limits the stages after the start to the families it matches
# (the walks of memory-bound ops often end at the start, at the roofline). Each candidate is
# rendered exactly as the agent renders it and built with `cutegen build --arch sm_90a`; the
# cache key names what is compiled, not where, so the entries hit on the GPU machine.
# Identical candidates of different tasks compile once.
set -u
cd "$(dirname "$0")/.."
CACHE=${1:?usage: builtin_precompile.sh CACHE_DIR MAX_STAGE [TASK...]}
MAX_STAGE=${2:?usage: builtin_precompile.sh CACHE_DIR MAX_STAGE [TASK...]}
shift 2
CG=${CUTEGEN:-build/cutegen}
JOBS=${JOBS:-$(nproc)}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
if [ $# -eq 0 ]; then
    set -- $("$CG" tasks --json | python3 -c 'import json,sys; print(" ".join(t["name"] for t in json.load(sys.stdin)))') \
        tests/gpu/tasks/*.json
fi
for task in "$@"; do
    n=0
    # "  2  stage 1  builtin gemm_simt, tile: CG_P_BK 16 -> 8" -> "CG_P_BK=8"
    "$CG" builtin "$task" --plan 2>/dev/null | python3 -c '
import re, sys
for line in sys.stdin:
    m = re.match(r"\s*\d+\s+stage (\d+)\s+builtin (\w+)(.*)", line)
    if not m or int(m.group(1)) > int(sys.argv[1]) or (
            int(m.group(1)) > 0 and not re.search(sys.argv[2], m.group(2))):
        continue
    print(" ".join("%s=%s" % (k, v) for k, v in re.findall(r"(CG_P_\w+) \S+ -> (\S+)", m.group(3))) or "-")
' "$MAX_STAGE" "${STAGE1_FAMILIES:-.}" | while read -r set; do
        n=$((n + 1))
        f="$work/$(echo "$task" | tr '/.' '__')_$n.cu"
        if [ "$set" = - ]; then "$CG" builtin "$task" --source >"$f"; else "$CG" builtin "$task" --source --set "$set" >"$f"; fi
        echo "$f"
    done
done | sort -u >"$work/list"
# the same source from two tasks is one compile: keep one file per content
: >"$work/uniq"
declare -A seen
while read -r f; do
    h=$(sha256sum "$f" | cut -c1-64)
    [ -n "${seen[$h]:-}" ] && continue
    seen[$h]=1
    echo "$f" >>"$work/uniq"
done <"$work/list"
echo "builtin_precompile: $(wc -l <"$work/uniq") distinct candidates of $(wc -l <"$work/list"), $JOBS at a time"
[ -n "${DRY_RUN:-}" ] && exit 0
xargs -P "$JOBS" -I{} sh -c '"$0" build "$1" --arch sm_90a --cache-dir "$2" >/dev/null 2>&1 || echo "builtin_precompile: $1 does not build"' \
    "$CG" {} "$CACHE" <"$work/uniq"
