#!/usr/bin/env bash
# `cutegen export` of modules, without torch or a GPU (tests/fake_torch stands in for torch):
# a kernel with its module file (--kernel K.cu --task M.py) and a module run (a lowered module,
# scripted model, recorded evaluation) both get NAME_model.py, a ModelNew; under the fake torch
# it imports, subclasses Model and builds exactly the argument list `task show` prints (inputs,
# parameters in state_dict order, scalars); --check says it needs a GPU; every usage error says
# what to do. The GPU half (--check on real kernels) is tests/gpu/module_kernels.sh.
set -u
: "${CUTEGEN:?}" "${REPO:?}"
T=$(mktemp -d)
[ -n "${KEEP_TMP:-}" ] || trap 'rm -rf "$T"' EXIT
cd "$T" || exit 1
export XDG_CACHE_HOME="$T/cache" CUTEGEN_CONFIG="$T/config.json"
echo "{}" >"$CUTEGEN_CONFIG"
unset OPENAI_API_KEY ANTHROPIC_API_KEY CUTEGEN_BACKEND CUTEGEN_LLM_CMD CUTEGEN_REPLAY CUTEGEN_RECORDED_EVALS CUTEGEN_PYTHON
fails=0
ok() { echo "ok - $1"; }
bad() { echo "not ok - $1"; echo "# output:"; sed 's/^/# /' "$T/out" | head -20; fails=$((fails + 1)); }
check() { if eval "$2"; then ok "$1"; else bad "$1"; fi; }
if ! python3 -c "import numpy" 2>/dev/null; then
    echo "not ok - module_export: python3 has no numpy (scripts/deps-test.sh installs it)"; exit 1
fi
export PYTHONPATH=$REPO/tests/fake_torch
M=$REPO/tests/data/modules
K=$REPO/tests/gpu/module_kernels/36_RMSNorm_.cu
C() { "$CUTEGEN" "$@" >"$T/out" 2>&1; }

# the argument list `task show --json` gives, without outputs: "name role dtype shape" lines
# and the scalars' values
show_list() {
    "$CUTEGEN" task show --json "$1" | python3 -c '
import json, sys
d = json.load(sys.stdin)
for t in d["tensors"]:
    if t["role"] != "output":
        print(t["name"], t["role"], t["dtype"], t["shape"])
print("scalars", [s["value"] for s in d["scalars"]])'
}
# the same from ModelNew (python3 NAME_model.py --abi): built from a live instance
abi_list() {
    (cd "$(dirname "$1")" && python3 "$1" --abi) | python3 -c '
import json, sys
d = json.load(sys.stdin)
for t in d["tensors"]:
    print(t["name"], t["role"], t["dtype"], t["shape"])
print("scalars", d["scalars"])'
}

# ---- 1. a kernel and a module with parameters: --kernel K.cu --task M.py ----
C export --kernel "$K" --task "$M/suite/4_linear.py" --out "$T/lin" --name lin; rc=$?
check "export --kernel --task writes the kernel, ModelNew and the module (rc $rc)" \
    '[ $rc -eq 0 ] && for f in lin.cu lin_model.py lin_reference.py export.json include/cutegen/kernel_abi.h; do [ -s "$T/lin/$f" ] || exit 1; done'
check "the kernel is written as given, the module file copied" \
    'cmp -s "$K" "$T/lin/lin.cu" && cmp -s "$M/suite/4_linear.py" "$T/lin/lin_reference.py"'
check "it says the kernel was not judged here" 'grep -q "has not judged this kernel" "$T/out"'
show_list "$M/suite/4_linear.py" >"$T/want1"
abi_list "$T/lin/lin_model.py" >"$T/got1" 2>"$T/out"
check "ModelNew builds the ABI list task show prints: x, fc.weight, fc.bias, scalars 64 48" \
    'cmp -s "$T/want1" "$T/got1" && grep -q "^fc.bias parameter fp32 \[48\]$" "$T/got1" && grep -qx "scalars \[64.0, 48.0\]" "$T/got1"'
check "ModelNew subclasses the module's Model and keeps its state_dict names" \
    '(cd "$T/lin" && python3 -c "import lin_model as m; assert issubclass(m.ModelNew, m.Model); n = m.ModelNew(64, 48); assert list(n.state_dict()) == [\"fc.weight\", \"fc.bias\"]")' 
(cd "$T/lin" && python3 lin_model.py --check) >"$T/out" 2>&1; rc=$?
check "--check without a GPU: exit 4, says it needs one (rc $rc)" '[ $rc -eq 4 ] && grep -q "needs a CUDA GPU" "$T/out"'
# a module whose state_dict differs from the exported list is refused, not run with wrong arguments
sed 's/"fc.bias"/"fc.bias_renamed"/' "$T/lin/lin_model.py" >"$T/lin/lin2_model.py"
cp "$T/lin/lin_reference.py" "$T/lin/lin2_reference.py"
sed -i 's/^NAME = "lin"/NAME = "lin2"/' "$T/lin/lin2_model.py"
(cd "$T/lin" && python3 lin2_model.py --abi) >"$T/out" 2>&1; rc=$?
check "a state_dict that is not the exported list: a clear error (rc $rc)" \
    '[ $rc -ne 0 ] && grep -q "the kernel was exported for" "$T/out"'

# a module with a forward scalar: numbers of get_inputs() come first
C export --kernel "$K" --task "$M/scalar_mul.py" --out "$T/sm"
show_list "$M/scalar_mul.py" >"$T/want2"
abi_list "$T/sm/scalar_mul_model.py" >"$T/got2" 2>"$T/out"
check "a number among forward's arguments is the scalar ModelNew passes" 'cmp -s "$T/want2" "$T/got2" && grep -qx "scalars \[3.14\]" "$T/got2"'

# a module keeping tensors as plain attributes: ModelNew passes them after state_dict's, as
# the reference process does, and its state_dict stays the module's own
C export --kernel "$K" --task "$M/state_attr.py" --out "$T/sa"
show_list "$M/state_attr.py" >"$T/want4"
abi_list "$T/sa/state_attr_model.py" >"$T/got4" 2>"$T/out"
check "tensor attributes: ModelNew passes them as task show lists them (w, h0 after fc's)" \
    'cmp -s "$T/want4" "$T/got4" && [ "$(grep -c " buffer " "$T/got4")" = 2 ] && grep -qx "h0 buffer fp32 \[8, 6\]" "$T/got4"' ||
    { diff "$T/want4" "$T/got4"; cat "$T/out"; }
check "... and load_state_dict of the module's own state_dict works" \
    '(cd "$T/sa" && python3 -c "import torch, state_attr_model as m; a = m.Model(torch.randn(4, 6), 0.5); n = m.ModelNew(torch.randn(4, 6), 0.5); n.load_state_dict(a.state_dict()); assert list(n.state_dict()) == [\"fc.weight\", \"fc.bias\"]")' 

# ---- 2. usage errors ----
C export --kernel "$K" --task kb1/19_relu --out "$T/x"; rc=$?
check "--task that is not a module: exit 2, says to export a run (rc $rc)" '[ $rc -eq 2 ] && grep -q "is not a module file" "$T/out"'
C export --kernel "$T/nope.cu" --task "$M/suite/4_linear.py" --out "$T/x"; rc=$?
check "a kernel that cannot be read: exit 3 (rc $rc)" '[ $rc -eq 3 ] && grep -q "cannot read kernel" "$T/out"'
C export --kernel "$K" --out "$T/x"; rc=$?
check "--kernel without --task: usage, exit 2 (rc $rc)" '[ $rc -eq 2 ] && grep -q "usage: cutegen export --kernel" "$T/out"'
C export --kernel "$K" --task "$M/bad/noimport.py" --out "$T/x"; rc=$?
check "a module that does not import: exit 3 with the reference's message (rc $rc)" '[ $rc -eq 3 ] && grep -q "does not import" "$T/out" && [ ! -e "$T/x" ]'
echo "# changed" >>"$T/lin/lin_model.py"
C export --kernel "$K" --task "$M/suite/4_linear.py" --out "$T/lin" --name lin; rc=$?
check "a ModelNew the user changed is not overwritten: exit 2 (rc $rc)" '[ $rc -eq 2 ] && grep -q "lin_model.py" "$T/out"'

# ---- 3. a module run (lowered to the built-in elementwise): export adds ModelNew ----
if command -v nvcc >/dev/null || [ -x /usr/local/cuda/bin/nvcc ]; then
    D="$REPO/tests/data/loop"
    sed 's/\t\ty\[i\] = clamp_positive(x\[i\]);/\t\ty[i] = x[i] > 0.0f ? x[i] : 0.0f;/' "$D/k_bad.cu" >"$T/k_good.cu"
    R="$T/evals"; mkdir -p "$R"
    printf '{"verdict":"pass","message":"","metrics":{"ms":0.05,"speedup_vs_baseline":1.0},"runner_s":1.5}\n' \
        >"$R/$(sha256sum "$T/k_good.cu" | cut -d' ' -f1).json"
    MD="$T/m1"; mkdir -p "$MD"
    { printf 'Change: a relu\n```cuda\n'; cat "$T/k_good.cu"; printf '```\n'; } >"$MD/reply-1.txt"
    "$CUTEGEN" run "$M/suite/2_relu.py" --llm-cmd "python3 $D/model.py $MD" --recorded-evals "$R" \
        --iters 1 --out "$T/run" --quiet >"$T/out" 2>&1; rc=$?
    check "a run of a lowered module (rc $rc)" '[ $rc -eq 0 ]'
    C export "$T/run" --out "$T/rexp" --name relu_mod; rc=$?
    check "export of the module run: the C API and ModelNew (rc $rc)" \
        '[ $rc -eq 0 ] && for f in relu_mod.cu relu_mod.h CMakeLists.txt relu_mod_model.py relu_mod_reference.py; do [ -s "$T/rexp/$f" ] || exit 1; done'
    show_list "$M/suite/2_relu.py" >"$T/want3"
    abi_list "$T/rexp/relu_mod_model.py" >"$T/got3" 2>"$T/out"
    check "its ModelNew passes x, as task show lists it" 'cmp -s "$T/want3" "$T/got3" && grep -q "^x input fp32 \[16, 1024\]$" "$T/got3"'
    CUTEGEN_PYTHON=$T/no-python "$CUTEGEN" export "$T/run" --out "$T/rnp" --name relu_np >"$T/out" 2>&1; rc=$?
    check "a module run whose module cannot be described: the twin's files, a warning, no ModelNew (rc $rc)" \
        '[ $rc -eq 0 ] && [ -s "$T/rnp/relu_np.h" ] && [ ! -e "$T/rnp/relu_np_model.py" ] && grep -q "^warning: no ModelNew written" "$T/out"'
    C export "$T/run" --out "$T/rk" --kernel-only --name rk; rc=$?
    check "--kernel-only of a module run stays the kernel alone (rc $rc)" '[ $rc -eq 0 ] && [ "$(ls "$T/rk")" = rk.cu ]'
else
    echo "ok - skipped the module run: no nvcc"
fi

echo "# module_export: $fails failed"
[ $fails -eq 0 ]
