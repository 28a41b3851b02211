#!/usr/bin/env bash
# Run ON THE GPU MACHINE: an A/B of a change to a builtin family (builtin/*.cu) on one task, in
# one run: A is the candidate of the family as built into cutegen, B the same candidate of the
# family with PATCH applied (a diff of builtin/, as `git diff` writes it), each rendered with
# `cutegen builtin TASK --source` (at SET, a --set setting, or the start) and judged in turn by
# bench/ab_eval.sh (A B A B ..., each against the task's baseline in the same evaluation).
#   bash bench/family_ab.sh PATCH TASK [ROUNDS (default 3)] [SET]
# e.g. the GEMM epilogue reverted on 2026-12-05 (bias + GELU 0.37x on one H100, 0.50x with the
# kept code on another; never compared in one run):
#   bash bench/family_ab.sh bench/patches/sm90_epilogue_values_first.patch \
#       bench/tasks/bf16_bias_gelu_k768.json 3
set -u
cd "$(dirname "$0")/.."
[ $# -ge 2 ] || { echo "usage: bench/family_ab.sh PATCH TASK [ROUNDS] [SET]" >&2; exit 2; }
PATCH=$1 TASK=$2 ROUNDS=${3:-3} SET=${4:-}
CUTEGEN=${CUTEGEN:-build/cutegen}
[ -f "$PATCH" ] || { echo "family_ab: no such patch '$PATCH'" >&2; exit 2; }
PATCH=$(realpath "$PATCH")
w=$(mktemp -d)
trap 'rm -rf "$w"' EXIT
mkdir -p "$w/tree" && cp -r builtin "$w/tree/"
if command -v patch >/dev/null; then
    patch -s -p1 -d "$w/tree" <"$PATCH"
elif command -v git >/dev/null; then
    (cd "$w/tree" && git apply "$PATCH")
else
    echo "family_ab: neither patch nor git is installed to apply '$PATCH'" >&2; false
fi || { echo "family_ab: '$PATCH' does not apply to builtin/" >&2; exit 2; }
render() { # OUT [DIR]
    if [ -n "$SET" ]; then
        CUTEGEN_BUILTIN_DIR=${2:-} "$CUTEGEN" builtin "$TASK" --source --set "$SET" >"$1"
    else
        CUTEGEN_BUILTIN_DIR=${2:-} "$CUTEGEN" builtin "$TASK" --source >"$1"
    fi
}
render "$w/A.cu" || { echo "family_ab: cannot render A" >&2; exit 2; }
render "$w/B.cu" "$w/tree/builtin" || { echo "family_ab: cannot render B from the patched family" >&2; exit 2; }
cmp -s "$w/A.cu" "$w/B.cu" && { echo "family_ab: the patch does not change this candidate" >&2; exit 2; }
bash bench/ab_eval.sh "$w/A.cu" "$w/B.cu" "$TASK" "$ROUNDS"
