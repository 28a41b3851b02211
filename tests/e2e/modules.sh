#!/usr/bin/env bash
# Module tasks (KernelBench-format .py files) end to end, without torch or a GPU: the real
# reference process (tools/reference.py, embedded in cutegen) runs over tests/fake_torch, a numpy
# stand-in for torch. task show / check of modules that lower to a built-in op and of ones that
# do not; every error kind (does not import, no Model, no get_inputs, non-tensor input or
# output, a GPU it lacks, a hang killed at the deadline, no python, no torch); a directory as a
# suite; `eval` of a real kernel on a lowered module (real nvcc) stopping at "no CUDA device"
# exit 4 as its JSON twin does; run on a module that is not lowered. Needs python3 with numpy
# (scripts/deps-test.sh installs it).
set -u
: "${CUTEGEN:?}" "${REPO:?}"
T=$(mktemp -d)
[ -n "${KEEP_TMP:-}" ] || trap 'rm -rf "$T"' EXIT
export XDG_CACHE_HOME="$T/cache" CUTEGEN_CONFIG="$T/config.json"
echo "{}" >"$CUTEGEN_CONFIG"
unset OPENAI_API_KEY ANTHROPIC_API_KEY CUTEGEN_BACKEND CUTEGEN_LLM_CMD CUTEGEN_REPLAY CUTEGEN_PYTHON
fails=0
ok() { echo "ok - $1"; }
bad() { echo "not ok - $1"; echo "# output:"; sed 's/^/# /' "$T/out" | head -20; fails=$((fails + 1)); }
check() { if eval "$2"; then ok "$1"; else bad "$1"; fi; }
M=$REPO/tests/data/modules

if ! python3 -c "import numpy" 2>/dev/null; then
    echo "not ok - modules: python3 has no numpy (scripts/deps-test.sh installs it)"; exit 1
fi
export PYTHONPATH=$REPO/tests/fake_torch
C() { "$CUTEGEN" "$@" >"$T/out" 2>&1; }

# ---- 1. task show: the tensor list as the ABI passes it ----
C task show "$M/suite/4_linear.py"; rc=$?
check "linear: inputs, then parameters in state_dict order, then outputs (rc $rc)" \
    '[ $rc -eq 0 ] && grep -A4 "^arguments" "$T/out" | sed -n 2,5p | awk "{print \$2, \$3, \$5 \$6}" | tr "\n" ";" | grep -qx "input x \[32,64\];parameter fc.weight \[48,64\];parameter fc.bias \[48\];output out \[32,48\];"'
check "linear: init values are scalars, the lowering is refused and says why" \
    'grep -q "in_features *64 (from get_init_inputs)" "$T/out" && grep -q "^lowered   no: the module has parameters" "$T/out"'
C task show "$M/suite/1_matmul.py"; rc=$?
check "matmul lowers to the built-in gemm of the same sizes (rc $rc)" \
    '[ $rc -eq 0 ] && grep -q "^lowered   to the built-in gemm" "$T/out" && grep -q "sizes       M=64 N=96 K=128" "$T/out"'
C task show --json "$M/matmul_tb.py"; rc=$?
check "A @ B.T lowers with b_layout col" \
    '[ $rc -eq 0 ] && python3 -c "import json,sys; l=json.load(open(sys.argv[1]))[\"lowered\"]; sys.exit(0 if l[\"b_layout\"]==\"col\" and l[\"a_layout\"]==\"row\" and (l[\"m\"],l[\"n\"],l[\"k\"])==(32,40,48) else 1)" "$T/out"'
C task show --json "$M/upper_matmul.py"
check "triu(A @ B) of triangular inputs lowers to the masked, structured gemm (kb1/14's form)" \
    'python3 -c "import json,sys; l=json.load(open(sys.argv[1]))[\"lowered\"]; sys.exit(0 if (l[\"mask\"],l[\"a_structure\"],l[\"b_structure\"])==(\"upper\",\"upper\",\"upper\") else 1)" "$T/out"'
cat >"$T/tuple_out.py" <<'PYEOF'
import torch
import torch.nn as nn
class Model(nn.Module):
    def forward(self, x):
        return tuple([x * 2, x + 1])  # a tuple, as torch.max(x, dim) gives (torch.return_types)
def get_inputs():
    return [torch.randn(4, 8)]
def get_init_inputs():
    return []
PYEOF
C task show "$T/tuple_out.py"; rc=$?
check "a forward returning a tuple is described: one output per element (rc $rc)" \
    '[ $rc -eq 0 ] && grep -q "output *out0" "$T/out" && grep -q "output *out1" "$T/out"'
# ---- 1b. what a module may not be, each refused saying what to change ----
mk() { # NAME ARGS RETURN GET_INPUTS [INIT_INPUTS] [INIT_BODY] [HEADER]: a module file in $T
    printf 'import torch\nimport torch.nn as nn\n%s\nclass Model(nn.Module):\n    def __init__(self, *a):\n        super().__init__()\n        self.a = a\n%s\n    def forward(self, %s):\n        return %s\ndef get_inputs():\n    return %s\ndef get_init_inputs():\n    return %s\n' \
        "${7:-}" "${6:-}" "$2" "$3" "$4" "${5:-[]}" >"$T/$1.py"
}
mk int_b "a, b" "a @ b.float()" "[torch.randn(16, 16), torch.randint(-8, 8, (16, 16), dtype=torch.int32)]"
C task show "$T/int_b.py"; rc=$?
check "an fp32 GEMM with an int32 operand is not lowered to the fp32 gemm (rc $rc)" \
    '[ $rc -eq 0 ] && grep -q "^lowered   no: the inputs are not all fp32, fp16 or bf16 of one dtype (they are fp32, i[0-9]*)" "$T/out"'
mk meta_key x "x * 2" "[torch.randn(8, 8)]" "" "" 'CUTEGEN = {"input": {"x": "positive"}}'
C task show "$T/meta_key.py"; rc=$?
check "CUTEGEN with an unknown key: exit 3, names it and the keys (rc $rc)" \
    '[ $rc -eq 3 ] && grep -q "unknown key .input. (the keys: inputs, dtype, precision, requires, mode)" "$T/out"'
mk meta_name x "x * 2" "[torch.randn(8, 8)]" "" "" 'CUTEGEN = {"inputs": {"y": "positive"}}'
C task show "$T/meta_name.py"; rc=$?
check "CUTEGEN inputs naming no argument of forward: exit 3, lists forward's (rc $rc)" \
    '[ $rc -eq 3 ] && grep -q "names .y., which is not an argument of forward (its arguments: x)" "$T/out"'
mk meta_prec x "x * 2" "[torch.randn(8, 8)]" "" "" 'CUTEGEN = {"precision": "fp7"}'
C task show "$T/meta_prec.py"; rc=$?
check "CUTEGEN with a precision no contract has: exit 3 (rc $rc)" \
    '[ $rc -eq 3 ] && grep -q "\"precision\" must be one of strict, tf32, fp16, bf16 (got .fp7.)" "$T/out"'
mk clash "x, out" "x + out + self.x" "[torch.randn(8, 8), torch.randn(8, 8)]" "" "        self.x = nn.Parameter(torch.randn(8, 8))"
C task show "$T/clash.py"; rc=$?
check "labels repeated across forward's arguments, the state and the outputs get suffixes (rc $rc)" \
    '[ $rc -eq 0 ] && grep -A4 "^arguments" "$T/out" | sed -n 2,5p | awk "{print \$2, \$3}" | tr "\n" ";" | grep -qx "input x_1;input out;parameter x;output out_1;"'
mk scalars x "x * self.a[0]" "[torch.randn(8, 8)]" "[0.5] * 70"
C task show "$T/scalars.py"; rc=$?
check "70 scalars: exit 3, says the limit and what to do (rc $rc)" \
    '[ $rc -eq 3 ] && grep -q "receive 70 scalars .*at most 64: pass them as a tensor \[inputs\]" "$T/out"'
mk nested x "x * 2, (x + 1, x - 1)" "[torch.randn(8, 8)]"
C task show "$T/nested.py"; rc=$?
check "a nested tuple of outputs: exit 3, names the item (rc $rc)" \
    '[ $rc -eq 3 ] && grep -q "forward returned a tuple whose item 1 is a tuple, not a tensor or a flat tuple" "$T/out"'
mk noisy x "x + 1e-4 * torch.randn(8, 8) * x" "[torch.randn(8, 8)]"
C task show "$T/noisy.py"; rc=$?
check "noise of 1e-4 in forward is refused: the judge's budget would widen with it (rc $rc)" \
    '[ $rc -eq 3 ] && grep -q "forward is not deterministic" "$T/out"'
cp "$M/suite/1_matmul.py" "$T/my model.py"
C task show --json "$T/my model.py"; rc=$?
check "a module file named with a space lowers to a twin named within the task-name characters (rc $rc)" \
    '[ $rc -eq 0 ] && python3 -c "import json,sys; sys.exit(0 if json.load(open(sys.argv[1]))[\"lowered\"][\"name\"] == \"my_model\" else 1)" "$T/out"'
for odd in "$T/new
line.py" "$T/$(printf 'bad\377name').py"; do
    cp "$M/suite/1_matmul.py" "$odd"
    C task show "$odd"; rc=$?
    check "a module path with a newline or bytes that are not UTF-8: exit 3, says to rename it (rc $rc)" \
        '[ $rc -eq 3 ] && grep -q "its path has a control character or bytes that are not UTF-8.*rename" "$T/out"'
done
C task show --json "$M/leaky.py"
check "leaky_relu takes its slope from get_init_inputs" \
    'python3 -c "import json,sys; l=json.load(open(sys.argv[1]))[\"lowered\"]; sys.exit(0 if l[\"activation\"]==\"leaky_relu\" and l[\"params\"][\"negative_slope\"]==0.2 else 1)" "$T/out"'
C task show --json "$M/scalar_mul.py"
check "A * s with s from get_inputs is scalar_mul with that scalar" \
    'python3 -c "import json,sys; d=json.load(open(sys.argv[1])); l=d[\"lowered\"]; sys.exit(0 if l[\"op\"]==\"scalar_mul\" and l[\"scalar\"]==3.14 and d[\"scalars\"][0][\"name\"]==\"s\" else 1)" "$T/out"'
C task show "$M/lookalike_relu.py"
check "a relu lookalike is never lowered" 'grep -q "^lowered   no: no built-in op gives the module" "$T/out"'
C task show "$M/positive_log.py"
check "a module that names its own input distribution is not lowered" 'grep -q "^lowered   no:" "$T/out"'
C task show "$M/suite/3_softmax.py"
check "softmax over the last dim lowers, workload reduction" \
    'grep -q "^lowered   to the built-in softmax" "$T/out" && grep -q "^workload  reduction" "$T/out"'

C task show "$M/state_attr.py"; rc=$?
check "plain tensor attributes are passed as buffers, after state_dict's tensors (rc $rc)" \
    '[ $rc -eq 0 ] && grep -A6 "^arguments" "$T/out" | sed -n 2,7p | awk "{print \$2, \$3, \$5 \$6}" | tr "\n" ";" | grep -qx "input x \[8,4\];parameter fc.weight \[6,6\];parameter fc.bias \[6\];buffer w \[4,6\];buffer h0 \[8,6\];output out \[8,6\];"' || cat "$T/out"
check "eval mode by default; the dropout it changes is named with how to judge training mode" \
    'grep -q "^mode      eval (Model().eval()): Dropout drop computes as in inference (running statistics, no dropout); KernelBench runs Model() in training mode: CUTEGEN = {\"mode\": \"train\"} judges that" "$T/out"'
sed 's/^def get_inputs/CUTEGEN = {"mode": "train"}\ndef get_inputs/' "$M/state_attr.py" >"$T/state_train.py"
C task show "$T/state_train.py"; rc=$?
check "CUTEGEN mode train with a dropout: forward is random, refused (rc $rc)" \
    '[ $rc -eq 3 ] && grep -q "forward is not deterministic.*dropout in training mode" "$T/out"'
sed 's/^def get_inputs/CUTEGEN = {"mode": "training"}\ndef get_inputs/' "$M/state_attr.py" >"$T/state_bad.py"
C task show "$T/state_bad.py"; rc=$?
check "an unknown mode: exit 3, names the two (rc $rc)" \
    '[ $rc -eq 3 ] && grep -q "CUTEGEN.s \"mode\" in .* must be \"eval\" (Model().eval(), the default) or \"train\"" "$T/out"'

C task show "$M/stdin_stdout.py"; rc=$?
check "a module that prints to stdout cannot disturb the protocol (rc $rc)" \
    '[ $rc -eq 0 ] && grep -q "^lowered   to the built-in elementwise" "$T/out"'

# ---- 2. task check: modules and JSON together ----
C task check "$M/suite/1_matmul.py" "$M/suite/2_relu.py" "$M/suite/5_row_sum.py" kb1/19_relu; rc=$?
check "task check: lowered and not-lowered modules are ok (rc $rc)" \
    '[ $rc -eq 0 ] && grep -q "2_relu.py (module .2_relu., lowered to the built-in elementwise)" "$T/out" && grep -q "5_row_sum.py (module .5_row_sum., not lowered: no built-in op has this signature" "$T/out"'

# ---- 3. every error kind, with a message that says what to do ----
err_case() { # name file exit pattern
    C task check "$2"; local rc=$?
    check "$1 (exit $rc)" "[ $rc -eq $3 ] && grep -q \"$4\" \"\$T/out\""
}
err_case "does not import: exit 3, names the line and the missing package" "$M/bad/noimport.py" 3 "does not import (line 3): ModuleNotFoundError.*a_package_that_does_not_exist"
err_case "no class Model" "$M/bad/no_model.py" 3 "defines no class Model.*\[no_model\]"
err_case "no get_inputs" "$M/bad/no_get_inputs.py" 3 "has no function get_inputs().*\[no_get_inputs\]"
err_case "get_inputs returns a string" "$M/bad/inputs_string.py" 3 "item 1 ('mode') is a str.*must be tensors"
err_case "forward returns a number" "$M/bad/returns_number.py" 3 "forward returned float, not a tensor.*\[output\]"
err_case "a complex input: kind inputs, names the dtypes kernels take" "$M/bad/complex_input.py" 3 "tensor 'x' is complex64, which no kernel here takes (tensors are fp32, fp16, bf16.*\[inputs\]"
err_case "an input with no elements: kind inputs, says there is no work to time" "$M/bad/empty_input.py" 3 "tensor 'x' has no elements (shape \[0, 64\]): there is no work to time.*\[inputs\]"
err_case "forward drawing random numbers: not deterministic, says what to change" "$M/bad/random_forward.py" 3 "forward is not deterministic: called twice on the same inputs, output 'out' differs by up to.*draw no random numbers in forward.*\[forward\]"
err_case "the reference process SIGKILLed (as by the OOM killer): says memory ran out, where it runs" "$M/bad/killed.py" 3 "was killed (SIGKILL) before describing it; the kernel's out-of-memory killer.*at full size (on the GPU where PyTorch sees one, else on the CPU)"
C task show "$M/prepare/int_dim.py"; rc=$?
check "an int from get_inputs reaches forward's probes as an int (rc $rc)" \
    '[ $rc -eq 0 ] && grep -q "^  dim  *1 (from get_inputs)" "$T/out" && ! grep -q "probe .* failed" "$T/out"'
C task show "$M/prepare/inplace.py"; rc=$?
check "a forward writing into its input is described (the second call sees the same draw) (rc $rc)" \
    '[ $rc -eq 0 ] && ! grep -q "not deterministic" "$T/out"'
err_case "needs CUDA the machine lacks: exit 4" "$M/bad/needs_cuda.py" 4 "lacks what it needs (a CUDA GPU.*\[gpu\]"
sed 's/^import torch$/import torch\nCUTEGEN = {"requires": "cuda"}/' "$M/suite/2_relu.py" >"$T/requires_cuda.py"
C task check "$T/requires_cuda.py"; rc=$?
check "CUTEGEN requires cuda on a machine without: exit 4, kind gpu (rc $rc)" \
    '[ $rc -eq 4 ] && grep -q "says it requires CUDA.*\[gpu\]" "$T/out"'
sed -e 's/return \[64, 48\]/return [64, float("inf")]/' -e 's/nn.Linear(in_features, out_features)/nn.Linear(in_features, 48)/' \
    "$M/suite/4_linear.py" >"$T/inf_scalar.py"
C task check "$T/inf_scalar.py"; rc=$?
check "an infinite scalar: exit 3 with a message, not a broken protocol (rc $rc)" \
    '[ $rc -eq 3 ] && grep -q "a value JSON cannot carry.*NaN or infinite" "$T/out"'
C task check "$T/nope.py"; rc=$?
check "a missing module file: exit 3 (rc $rc)" '[ $rc -eq 3 ] && grep -q "cannot read module file" "$T/out"'

# a hang: killed at the deadline, the whole process group, no python left behind
export HANG_PIDFILE="$T/hang.pid"
cat >"$T/hang.py" <<'PY'
import os, torch
import torch.nn as nn
class Model(nn.Module):
    def forward(self, x):
        return x
def get_inputs():
    open(os.environ["HANG_PIDFILE"], "w").write(str(os.getpid()))
    while True:
        pass
def get_init_inputs():
    return []
PY
t0=$(date +%s)
CUTEGEN_REFERENCE_TIMEOUT=2 C task show "$T/hang.py"; rc=$?
t1=$(date +%s)
pid=$(cat "$T/hang.pid" 2>/dev/null || echo 0)
check "a hang is killed at the deadline: exit 5 in $((t1 - t0)) s" \
    '[ $rc -eq 5 ] && [ $((t1 - t0)) -le 10 ] && grep -q "did not answer within 2 s and was killed" "$T/out"'
check "the hung python is gone (pid $pid)" '[ "$pid" != 0 ] && ! kill -0 "$pid" 2>/dev/null'

# no python, not a python, no torch; --python chooses the interpreter
CUTEGEN_PYTHON=$T/no/python3 C task show "$M/suite/2_relu.py"; rc=$?
check "no python: exit 4, says to install one or name it (rc $rc)" \
    '[ $rc -eq 4 ] && grep -q "cannot run the reference process with .*--python PATH" "$T/out"'
C --python /bin/false task show "$M/suite/2_relu.py"; rc=$?
check "--python naming a program that is no python: exit 4 (rc $rc)" \
    '[ $rc -eq 4 ] && grep -q "./bin/false. exited with status 1 before speaking the reference protocol" "$T/out"'
mkdir -p "$T/notorch/torch"
echo 'raise ModuleNotFoundError("No module named torch (planted by tests/e2e/modules.sh)")' >"$T/notorch/torch/__init__.py"
PYTHONPATH=$T/notorch C task show "$M/suite/2_relu.py"; rc=$?
check "no torch: exit 4, says pip install torch (rc $rc)" \
    '[ $rc -eq 4 ] && grep -q "cannot import torch .*pip install torch.*\[no_torch\]" "$T/out"'
echo '{"python": "/bin/false"}' >"$T/pyconf.json"
CUTEGEN_CONFIG=$T/pyconf.json C task show "$M/suite/2_relu.py"; rc=$?
check "the config file's key python names the interpreter (rc $rc)" \
    '[ $rc -eq 4 ] && grep -q "./bin/false. exited with status 1" "$T/out"'
CUTEGEN_CONFIG=$T/pyconf.json C --python "$(command -v python3)" task check "$M/suite/2_relu.py"; rc=$?
check "--python with a real python works, over the config file's key (rc $rc)" '[ $rc -eq 0 ]'

"$CUTEGEN" doctor >"$T/out" 2>&1
check "doctor names the python and its torch for module tasks" \
    'grep -q "^python (modules) .*, torch 0.0+cutegen-fake-numpy: module tasks (.py) can be described" "$T/out"'
PYTHONPATH=$T/notorch "$CUTEGEN" doctor >"$T/out" 2>&1
check "doctor says when that python has no torch" 'grep -q "^python (modules) .* has no torch (ModuleNotFoundError" "$T/out"'

# ---- 4. a directory is a suite ----
C tasks --suite "$M/suite"; rc=$?
check "tasks --suite DIR lists its five modules in name order (rc $rc)" \
    '[ $rc -eq 0 ] && [ "$(grep -c "\.py " "$T/out")" = 5 ] && [ "$(sed -n 2p "$T/out" | cut -d" " -f1)" = 1_matmul.py ] && grep -q "^4_linear.py *- (module only)" "$T/out"'
C tasks --suite "$M/suite" --json; rc=$?
check "tasks --suite DIR --json: one object per module, lowered_to null where it does not lower (rc $rc)" \
    '[ $rc -eq 0 ] && python3 -c "import json,sys; a=json.load(open(sys.argv[1])); sys.exit(0 if [x[\"lowered_to\"] for x in a]==[\"gemm\",\"elementwise\",\"softmax\",None,None] else 1)" "$T/out"'
PYTHONPATH=$T/notorch C tasks --suite "$M/suite"; rc=$?
check "tasks --suite DIR without torch: exit 4 and one error, not one per module (rc $rc)" \
    '[ $rc -eq 4 ] && [ "$(grep -c "^error: .*\[no_torch\]" "$T/out")" = 1 ]'
check "... and still names every module, saying describing it needs PyTorch" \
    '[ "$(grep -c "^[0-9a-z_]*\.py .*describing it needs PyTorch" "$T/out")" = 5 ]' || cat "$T/out"
mkdir -p "$T/msuite"
cp "$M/suite/4_linear.py" "$M/suite/5_row_sum.py" "$T/msuite/"
"$CUTEGEN" suite "$T/msuite/" --out "$T/s1" --gpus cpu:1 --recorded-evals "$T/evals" --iters 1 \
    --llm-cmd "cat" >"$T/out" 2>&1; rc=$?
n=$(sqlite3 "$T/s1/suite.db" "select count(*) from tasks" 2>/dev/null || echo 0)
nm=0
for db in "$T"/s1/runs/*/run.db; do
    sqlite3 "$db" "select config_json from runs" 2>/dev/null | grep -q '"lowered_to":null,"module":"' && nm=$((nm + 1))
done
check "suite DIR/: one task per module file ($n), each a run of the agent loop on its module ($nm) (rc $rc)" \
    '[ "$n" = 2 ] && [ "$nm" = 2 ] && grep -q "2 done" "$T/out"'

# ---- 4b. the kb1 twins of tasks/kb1_modules (at small sizes) lower to their JSON tasks' ops ----
if [ -d "$REPO/tasks/kb1_modules" ]; then
    mkdir -p "$T/kb1m"
    python3 "$M/kb1_twins_check.py" shrink "$REPO/tasks/kb1_modules" "$T/kb1m"
    for f in "$T"/kb1m/*.py; do "$CUTEGEN" task show --json "$f" >"${f%.py}.json" 2>/dev/null; done
    python3 "$M/kb1_twins_check.py" check "$REPO/tasks/kb1.json" "$T/kb1m" >"$T/out" 2>&1; rc=$?
    check "$(tail -1 "$T/out")" '[ $rc -eq 0 ]'
else
    echo "not ok - no tasks/kb1_modules"; fails=$((fails + 1))
fi
# a named distribution other than "module" keeps a module from lowering
sed 's/^CUTEGEN = .*/CUTEGEN = {"inputs": {"A": "positive", "B": "module"}}/' \
    "$T/kb1m/14_Matmul_for_upper_triangular_matrices.py" >"$T/kb1m_pos.py"
C task show "$T/kb1m_pos.py"
check "CUTEGEN naming a distribution other than module refuses the lowering" \
    'grep -q "^lowered   no: CUTEGEN names its own input distributions (A: positive, B: module)" "$T/out"'

# ---- 5. run and builtin ----
C run "$M/suite/5_row_sum.py" --out "$T/r1"; rc=$?
check "run of a module that is no built-in op, without a model: exit 4, says it needs a model (rc $rc)" \
    '[ $rc -eq 4 ] && grep -q "so a run needs a model" "$T/out"'
mkdir -p "$T/evals"
C run "$M/suite/2_relu.py" --out "$T/r2" --recorded-evals "$T/evals" --iters 1 --compile-deadline 1; rc=$?
check "run of a lowered module with the builtin agent: the store records the module, the op and the twin (rc $rc)" \
    '[ -f "$T/r2/run.db" ] && sqlite3 "$T/r2/run.db" "select config_json from runs" | grep -q "\"lowered_to\":\"elementwise\",\"module\":\".*2_relu.py\"" && sqlite3 "$T/r2/run.db" "select task_json from runs" | grep -q "\"activation\": *\"relu\""'
# with a model: the prompt describes the twin and shows the module's source (the model command
# saves what it is sent and answers without code; no GPU is reached)
C run "$M/suite/2_relu.py" --out "$T/r3" --recorded-evals "$T/evals" --iters 1 --fix-attempts 0 \
    --llm-cmd "cat >>$T/prompt.txt; echo no kernel"
check "run of a lowered module with a model: the prompt shows the twin's arguments and the module's source" \
    'grep -q "this task is the PyTorch module .*2_relu.py, judged as the built-in op" "$T/prompt.txt" && grep -q "^    def forward(self, x):" "$T/prompt.txt" && grep -q "inputs\[0\] x" "$T/prompt.txt"'
C builtin "$M/suite/2_relu.py" --plan; rc=$?
check "builtin takes a lowered module as its JSON twin (rc $rc)" \
    '[ $rc -eq 0 ] && grep -q "judged as the built-in elementwise task" "$T/out"'
"$CUTEGEN" builtin "$M/suite/2_relu.py" --plan 2>/dev/null | grep -v "2_relu" >"$T/plan_mod"
"$CUTEGEN" task show --json "$M/suite/2_relu.py" | python3 -c "import json,sys; print(json.dumps(json.load(sys.stdin)['lowered']))" >"$T/twin.json"
"$CUTEGEN" builtin "$T/twin.json" --plan 2>/dev/null | grep -v "2_relu" >"$T/plan_json"
check "the builtin plan of the module equals its JSON twin's" '[ -s "$T/plan_mod" ] && cmp -s "$T/plan_mod" "$T/plan_json"'

# ---- 6. eval of a real kernel on a lowered module: compiles, stops at "no CUDA device" ----
if command -v nvcc >/dev/null || [ -x /usr/local/cuda/bin/nvcc ]; then
    if [ -e /dev/nvidia0 ]; then
        echo "ok - eval on a module: skipped, this machine has a GPU (tests/gpu/ covers it)"
    else
        C eval "$REPO/kernels/relu_fp32.cu" --task "$M/suite/2_relu.py" --cache-dir "$T/kc" --json; rc=$?
        check "eval on the relu module compiles and stops at no_device, exit 4, recording the module (rc $rc)" \
            '[ $rc -eq 4 ] && grep -q "\"no_device\"" "$T/out" && grep -q "\"module\": \".*2_relu.py\"" "$T/out" && grep -q "\"lowered_to\": \"elementwise\"" "$T/out"'
        "$CUTEGEN" eval "$REPO/kernels/relu_fp32.cu" --task "$T/twin.json" --cache-dir "$T/kc" >"$T/out" 2>&1; rc2=$?
        check "its JSON twin gives the same exit and verdict (rc $rc2)" '[ $rc2 -eq $rc ] && grep -q "FAIL: no_device" "$T/out"'
        C eval "$REPO/kernels/relu_fp32.cu" --task "$M/suite/4_linear.py" --cache-dir "$T/kc"; rc=$?
        check "eval on a module that is not lowered: judged through the reference process, so no_device here, exit 4 (rc $rc)" \
            '[ $rc -eq 4 ] && grep -q "FAIL: no_device" "$T/out" && grep -q "reference process needs the GPU too" "$T/out"'
    fi
else
    echo "ok - eval on a module: skipped, no nvcc"
fi

[ $fails -eq 0 ]
