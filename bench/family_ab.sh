#!/usr/bin/env bash
# Run ON THE GPU MACHINE: an A/B of changes to a builtin family (builtin/*.cu) on one task, in
# one run: A is the candidate of the family as built into cutegen, B (C, ...) the same candidate
# of the family with each PATCH applied (a diff of builtin/, as `git diff` writes it; several
# patches separated by commas, one kernel each), each rendered with `cutegen builtin TASK
# --source` (at SET, a --set setting, or the start) and judged in turn by bench/ab_eval.sh
# (A B C A B C ..., each against the task's baseline in the same evaluation).
#   bash bench/family_ab.sh PATCH[,PATCH...] TASK [ROUNDS (default 3)] [SET]
# e.g. the GEMM epilogue of 2026-12-05 (a whole tile's values first, then its stores) against
# the per-pair epilogue before it (with a second patch: PATCH,PATCH2):
#   bash bench/family_ab.sh bench/patches/sm90_epilogue_per_pair.patch \
#       bench/tasks/bf16_bias_gelu_k768.json 3
set -u
cd "$(dirname "$0")/.."
[ $# -ge 2 ] || { echo "usage: bench/family_ab.sh PATCH[,PATCH...] TASK [ROUNDS] [SET]" >&2; exit 2; }
PATCHES=$1 TASK=$2 ROUNDS=${3:-3} SET=${4:-}
CUTEGEN=${CUTEGEN:-build/cutegen}
w=$(mktemp -d)
trap 'rm -rf "$w"' EXIT
render() { # OUT [DIR]
    if [ -n "$SET" ]; then
        CUTEGEN_BUILTIN_DIR=${2:-} "$CUTEGEN" builtin "$TASK" --source --set "$SET" >"$1"
    else
        CUTEGEN_BUILTIN_DIR=${2:-} "$CUTEGEN" builtin "$TASK" --source >"$1"
    fi
}
render "$w/A.cu" || { echo "family_ab: cannot render A" >&2; exit 2; }
kernels=("$w/A.cu")
IFS=, read -ra list <<<"$PATCHES"
for patch in "${list[@]}"; do
    [ -f "$patch" ] || { echo "family_ab: no such patch '$patch'" >&2; exit 2; }
    name=$(basename "$patch" .patch)
    tree="$w/$name"
    mkdir -p "$tree" && cp -r builtin "$tree/"
    if command -v patch >/dev/null; then
        patch -s -p1 -d "$tree" <"$patch"
    elif command -v git >/dev/null; then
        (cd "$tree" && git apply "$(realpath "$OLDPWD/$patch")")
    else
        echo "family_ab: neither patch nor git is installed to apply '$patch'" >&2; false
    fi || { echo "family_ab: '$patch' does not apply to builtin/" >&2; exit 2; }
    render "$w/$name.cu" "$tree/builtin" ||
        { echo "family_ab: cannot render the candidate of the family with '$patch'" >&2; exit 2; }
    if cmp -s "$w/A.cu" "$w/$name.cu"; then
        echo "family_ab: '$patch' does not change this candidate: left out" >&2
        continue
    fi
    kernels+=("$w/$name.cu")
done
[ ${#kernels[@]} -ge 2 ] || { echo "family_ab: no patch changes this candidate" >&2; exit 2; }
bash bench/ab_eval.sh "${kernels[@]}" "$TASK" "$ROUNDS"
