#!/usr/bin/env bash
# The module suites (tasks/modules/level1, tasks/modules/level2, tasks/kb1_modules), read
# without torch: every file is a KernelBench task (parses, Model/forward/get_inputs/
# get_init_inputs, argument counts agree, CUTEGEN metadata is valid, names unique), the
# counts are met, and each kb1 twin passes exactly the tensors and scalars of its JSON task
# (`cutegen task show kb1/N`). Then the checker is shown to catch planted faults. With torch
# installed, each module also runs on tiny shapes (tests/gpu/module_suite_torch.py); without it
# that part says SKIP.
set -u
: "${CUTEGEN:?}" "${REPO:?}"
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
fail=0
ok()  { echo "ok - $1"; }
bad() { echo "not ok - $1"; fail=1; }
check() { if eval "$2"; then ok "$1"; else bad "$1"; echo "# output:"; sed 's/^/# /' "$tmp/out" | head -30; fi; }
chk="$REPO/tests/e2e/module_suite_check.py"
M="$REPO/tasks/modules"

# the suites themselves: the checker's own ok/not ok lines are this script's
python3 "$chk" --cutegen "$CUTEGEN" --level1 "$M/level1" --level2 "$M/level2" \
    --kb1 "$REPO/tasks/kb1_modules" >"$tmp/out" 2>&1; rc=$?
cat "$tmp/out"
[ $rc -eq 0 ] || fail=1
check "the checker ran every check" '[ "$(grep -c "^ok - \|^not ok - " "$tmp/out")" -eq 6 ]'

# with torch: each module runs on the CPU at tiny shapes, deterministically
if python3 -c "import torch" 2>/dev/null; then
    python3 "$REPO/tests/gpu/module_suite_torch.py" >"$tmp/out" 2>&1; rc=$?
    check "every module runs on tiny shapes, twice alike ($(tail -1 "$tmp/out"))" '[ $rc -eq 0 ]'
else
    echo "# SKIP running each module on tiny shapes: python3 has no torch (not counted as a pass)"
fi

# planted faults, each in a copy of a good file; the checker must fail on each and name it
plant() {  # NAME SRC SUBDIR SED_EXPR: a copy of SRC under $tmp/NAME/SUBDIR, edited by SED_EXPR
    mkdir -p "$tmp/$1/$3"; sed "$4" "$2" >"$tmp/$1/$3/$(basename "$2")"
}
caught() {  # NAME WHAT PATTERN ARGS...: the checker exits 1 and prints PATTERN
    local name=$1 what=$2 pat=$3; shift 3
    python3 "$chk" --min-level1 1 --min-level2 1 "$@" >"$tmp/out" 2>&1; rc=$?
    check "planted fault caught: $what" '[ $rc -eq 1 ] && grep -q -- "$pat" "$tmp/out"'
}
L1=$M/level1
plant argc "$L1/94_MSELoss.py" l1 's/return \[predictions, targets\]/return [predictions]/'
caught argc "forward's arguments vs get_inputs()" "forward takes 2 arguments but get_inputs() returns 1" --level1 "$tmp/argc/l1"
plant noinit "$L1/89_cumsum.py" l1 's/^def get_init_inputs/def get_init_inputs_typo/'
caught noinit "no get_init_inputs" "defines no get_init_inputs" --level1 "$tmp/noinit/l1"
plant initc "$L1/89_cumsum.py" l1 's/return \[dim\]/return [dim, dim]/'
caught initc "get_init_inputs() vs __init__" "get_init_inputs() returns 2 values" --level1 "$tmp/initc/l1"
plant nomodel "$L1/89_cumsum.py" l1 's/^class Model/class Modell/'
caught nomodel "no class Model" "defines no class Model" --level1 "$tmp/nomodel/l1"
plant syntax "$L1/89_cumsum.py" l1 's/^def get_inputs():/def get_inputs(:/'
caught syntax "a file that does not parse" "does not parse" --level1 "$tmp/syntax/l1"
plant shapec "$L1/89_cumsum.py" l1 's/torch.rand(batch_size, \*input_shape)/torch.rand(batch_size, n_cols)/'
caught shapec "an input shape not made of module constants" "shape is not read from module constants" --level1 "$tmp/shapec/l1"
plant meta "$L1/95_CrossEntropyLoss.py" l1 's/{"targets": "indices"}/{"target": "indices"}/'
caught meta "CUTEGEN naming no argument" "CUTEGEN names 'target'" --level1 "$tmp/meta/l1"
plant dist "$L1/95_CrossEntropyLoss.py" l1 's/"indices"}/"integers"}/'
caught dist "CUTEGEN with an unknown distribution" "unknown distribution 'integers'" --level1 "$tmp/dist/l1"
plant dup "$L1/89_cumsum.py" l1 's/x/x/'; cp "$L1/89_cumsum.py" "$tmp/dup/l1/89_cumsum_again.py"
caught dup "two files of one number" "number 89 is taken" --level1 "$tmp/dup/l1"
caught few "too few level1 problems" "level1 has 1 problems (at least 40)" --min-level1 40 --level1 "$tmp/argc/l1"
K=$REPO/tasks/kb1_modules
plant shape "$K/17_Matmul_with_transposed_B.py" kb1 's/^K = 8192/K = 8190/'
caught shape "a kb1 twin's shape" "17_Matmul_with_transposed_B.py: get_inputs() shapes" --cutegen "$CUTEGEN" --kb1 "$tmp/shape/kb1"
plant layout "$K/17_Matmul_with_transposed_B.py" kb1 's/B = torch.rand(N, K)/B = torch.rand(K, N)/'
caught layout "a kb1 twin's B layout" "17_Matmul_with_transposed_B.py: get_inputs() shapes" --cutegen "$CUTEGEN" --kb1 "$tmp/layout/kb1"
plant scalar "$K/20_LeakyReLU.py" kb1 's/^negative_slope = 0.01/negative_slope = 0.02/'
caught scalar "a kb1 twin's scalar" "scalar 'negative_slope' is 0.02" --cutegen "$CUTEGEN" --kb1 "$tmp/scalar/kb1"
plant names "$K/4_Matrix_vector_multiplication_.py" kb1 's/A: torch.Tensor, x: torch.Tensor/A: torch.Tensor, v: torch.Tensor/'
caught names "a kb1 twin's argument names" "kb1/4 passes \['A', 'x'\]" --cutegen "$CUTEGEN" --kb1 "$tmp/names/kb1"
plant dtype "$K/19_ReLU.py" kb1 's/torch.rand(batch_size, dim)/torch.rand(batch_size, dim, dtype=torch.float16)/'
caught dtype "a kb1 twin's dtype" "'x' is torch.float16, kb1/19 wants fp32" --cutegen "$CUTEGEN" --kb1 "$tmp/dtype/kb1"
caught missing "missing kb1 twins" "not ok - kb1 twins are problems 1-32 and 88" --kb1 "$tmp/dtype/kb1"

exit $fail
