#!/usr/bin/env bash
# Modules written to break the description, with real PyTorch (never in CI: it has none; on
# the CPU where PyTorch sees no GPU): tuple, bool, int64, transposed and aliased outputs, an
# in-place forward, int, float and bool arguments, a tuple init value, buffers, fp16
# parameters, a random forward, a complex input, KernelBench names missing, tensors kept as plain
# attributes (an RNN's initial state, a tensor init input), eval and training modes. Each `cutegen
# task show FILE` must exit and print as tests/data/modules/torch_cases/expect.txt says.
# Prints "N passed, N failed".
# usage: BUILD=build [CUTEGEN_PYTHON=PY] bash tests/gpu/module_describe_torch.sh
set -u
cd "$(dirname "$0")/../.."
CG="$PWD/${BUILD:-build}/cutegen"
D=tests/data/modules/torch_cases
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
passed=0 failed=0
while read -r line; do
    case "$line" in ''|'#'*) continue ;; esac
    eval "set -- $line"
    file=$1 want=$2; shift 2
    timeout 300 "$CG" task show "$D/$file" >"$T/out" 2>&1; rc=$?
    why=
    [ "$rc" = "$want" ] || why="exit $rc, not $want"
    for p in "$@"; do
        case "$p" in
            '!'*) ! grep -Eq -- "${p#!}" "$T/out" || why="$why; prints '${p#!}'" ;;
            *) grep -Eq -- "$p" "$T/out" || why="$why; does not print '$p'" ;;
        esac
    done
    if [ -z "$why" ]; then echo "ok - $file"; passed=$((passed + 1))
    else echo "not ok - $file: ${why#; }"; sed 's/^/# /' "$T/out" | head -15; failed=$((failed + 1)); fi
done <"$D/expect.txt"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
