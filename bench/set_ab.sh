#!/usr/bin/env bash
# Run ON THE GPU MACHINE: one builtin family's candidates for one task at several settings,
# judged in turn in one run (bench/ab_eval.sh: A B C ... ROUNDS times, each evaluation timing
# its kernel with the task's baseline in one process). A setting is what `cutegen builtin TASK
# --set` takes (changes from the start, e.g. "CG_P_BN=128 CG_P_STAGES=6"), or "start".
# Where a class walk is starved of compiles (several rounds of nvcc on one host), this measures
# the neighbours of a start at the cost of one parallel compile.
#   bash bench/set_ab.sh TASK ROUNDS SETTING SETTING [SETTING ...]
set -u
cd "$(dirname "$0")/.."
[ $# -ge 4 ] || { echo "usage: bench/set_ab.sh TASK ROUNDS SETTING SETTING [SETTING ...]" >&2; exit 2; }
TASK=$1 ROUNDS=$2
shift 2
CUTEGEN=${CUTEGEN:-build/cutegen}
w=$(mktemp -d)
trap 'rm -rf "$w"' EXIT
kernels=() settings=()
i=0
for set in "$@"; do
    i=$((i + 1))
    k="$w/s$i.cu"
    if [ "$set" = start ]; then
        "$CUTEGEN" builtin "$TASK" --source >"$k"
    else
        "$CUTEGEN" builtin "$TASK" --source --set "$set" >"$k"
    fi || { echo "set_ab: no candidate for '$TASK' at '$set'" >&2; continue; }
    kernels+=("$k")
    settings+=("$(head -1 "$k" | sed 's/.*family=//')")
done
[ ${#kernels[@]} -ge 2 ] || { echo "set_ab: fewer than two candidates to compare" >&2; exit 2; }
# which kernel is which setting, first: the rows and the summary name the kernel files
python3 -c 'import json, sys; a = sys.argv[1:-1]; n = len(a) // 2; print(json.dumps({"task": sys.argv[-1], "settings": dict(zip(a[:n], a[n:]))}))' \
    "${kernels[@]}" "${settings[@]}" "$TASK"
# one parallel compile (the build cache keeps them for the evaluations)
printf '%s\n' "${kernels[@]}" | xargs -P "${CUTEGEN_BUILD_JOBS:-8}" -n 1 "$CUTEGEN" build >/dev/null 2>&1
bash bench/ab_eval.sh "${kernels[@]}" "$TASK" "$ROUNDS"
