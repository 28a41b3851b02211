#!/usr/bin/env bash
# The reference process's prepare op (issue 18; docs/tasks.md, "The reference process"), without
# a GPU: tools/reference.py runs for real over tests/fake_torch, the numpy stand-in. With no CUDA
# it answers kind "gpu"; with the fake's pretend device (FAKE_TORCH_CUDA=FREE_MIB) it makes the
# cases, and the arrays it "shares" are saved by handle (FAKE_TORCH_IPC_DIR) so that this script
# reads what the runner would: inputs per distribution, parameters once, the reference and the
# float64 truth, TF32 off unless precision tf32, the memory budget, IPC failures, the baselines.
# Needs python3 with numpy (scripts/deps-test.sh installs it). Needs neither cutegen nor nvcc.
set -u
: "${REPO:?}"
T=$(mktemp -d)
[ -n "${KEEP_TMP:-}" ] || trap 'rm -rf "$T"' EXIT
fails=0
ok() { echo "ok - $1"; }
bad() { echo "not ok - $1"; echo "# output:"; sed 's/^/# /' "$T/out" | cut -c1-400 | head -20; fails=$((fails + 1)); }
check() { if eval "$2"; then ok "$1"; else bad "$1"; fi; }
if ! python3 -c "import numpy" 2>/dev/null; then
    echo "not ok - module_prepare: python3 has no numpy (scripts/deps-test.sh installs it)"; exit 1
fi
M=$REPO/tests/data/modules
P=$M/prepare
export PYTHONPATH=$REPO/tests/fake_torch PYTHONDONTWRITEBYTECODE=1
unset FAKE_TORCH_CUDA FAKE_TORCH_IPC FAKE_TORCH_IPC_DIR FAKE_TORCH_COMPILE_FAIL

# req FILE [CASES] [PRECISION] [BASELINES]: a prepare request line
req() {
    local cases=${2:-'[{"seed":1,"dist":"module"},{"seed":2,"dist":"normal"},{"seed":3,"dist":"large"}]'}
    printf '{"op":"prepare","file":"%s","seed":42,"device":0,"cases":%s,"precision":"%s","baselines":%s,"memory_fraction":0.35}\n' \
        "$1" "$cases" "${3:-strict}" "${4:-false}"
}
# ref LINES...: runs the reference process on these request lines; replies in $T/out, exit in $T/rc
ref() {
    rm -rf "$T/ipc" && mkdir -p "$T/ipc"
    printf '%s\n' "$@" | FAKE_TORCH_IPC_DIR=$T/ipc python3 "$REPO/tools/reference.py" >"$T/out" 2>"$T/err"
    echo $? >"$T/rc"
}
# py EXPR: a python check over the replies (R[1] = the reply to the first request) and the arrays
# shared (arr(H) reads the array behind a handle)
py() {
    python3 - "$T" "$1" <<'PY'
import json, os, sys
import numpy as np
T, expr = sys.argv[1], sys.argv[2]
R = [json.loads(l) for l in open(os.path.join(T, "out"))]
rc = int(open(os.path.join(T, "rc")).read())
def arr(h):
    assert len(h["ipc"]) == 128 and all(c in "0123456789abcdef" for c in h["ipc"]), h["ipc"]
    a = np.load(os.path.join(T, "ipc", h["ipc"] + ".npy"))
    assert a.nbytes == h["bytes"] and list(a.shape) == h["shape"], (a.shape, h)
    return a
P = R[1].get("prepare", {})
C = P.get("cases", [])
ok = eval(expr)
if not ok:
    print("# check failed: " + expr, file=sys.stderr)
sys.exit(0 if ok else 1)
PY
}

# ---- 1. no CUDA: kind gpu, and the process still ends cleanly ----
ref "$(req "$M/suite/4_linear.py")" '{"op":"release"}'
check "no CUDA: kind gpu, says it needs a CUDA GPU and where to run it" \
    'py "R[1][\"kind\"] == \"gpu\" and \"needs a CUDA GPU: run it where PyTorch sees one\" in R[1][\"message\"] and R[2] == {\"ok\": True} and rc == 0"'

export FAKE_TORCH_CUDA=1000
# ---- 2. a module with parameters: the cases, the tensors in ABI order, the numbers ----
ref "$(req "$M/suite/4_linear.py" '' strict true)" '{"op":"release"}'
check "linear: tensors in describe's order (input, parameters in state_dict order, output)" \
    'py "[(t[\"name\"], t[\"role\"], t[\"shape\"]) for t in P[\"tensors\"]] == [(\"x\", \"input\", [32, 64]), (\"fc.weight\", \"parameter\", [48, 64]), (\"fc.bias\", \"parameter\", [48]), (\"out\", \"output\", [32, 48])]"'
check "linear: three cases, a handle per input and parameter, per output a reference and a truth" \
    'py "[(c[\"seed\"], c[\"dist\"], len(c[\"inputs\"]), len(c[\"ref\"]), len(c[\"truth\"])) for c in C] == [(1, \"module\", 3, 1, 1), (2, \"normal\", 3, 1, 1), (3, \"large\", 3, 1, 1)]"'
check "linear: the parameters are the same tensors in every case, the inputs differ" \
    'py "all(c[\"inputs\"][1:] == C[0][\"inputs\"][1:] for c in C) and len({c[\"inputs\"][0][\"ipc\"] for c in C}) == 3"'
check "linear: module = get_inputs() (torch.rand: in [0,1)), normal = N(0,1), large = 64 N(0,1)" \
    'py "arr(C[0][\"inputs\"][0]).min() >= 0 and arr(C[0][\"inputs\"][0]).max() < 1 and 0.8 < arr(C[1][\"inputs\"][0]).std() < 1.2 and 50 < arr(C[2][\"inputs\"][0]).std() < 80"'
check "linear: truth is fp64 and equals x W^T + b in float64; the reference is fp32 and close to it" \
    'py "P[\"truth\"] == \"fp64\" and all(c[\"truth\"][0][\"dtype\"] == \"fp64\" and c[\"ref\"][0][\"dtype\"] == \"fp32\" and np.abs(arr(c[\"truth\"][0]) - (arr(c[\"inputs\"][0]).astype(np.float64) @ arr(c[\"inputs\"][1]).astype(np.float64).T + arr(c[\"inputs\"][2]))).max() < 1e-9 * max(1, np.abs(arr(c[\"truth\"][0])).max()) and np.abs(arr(c[\"ref\"][0]) - arr(c[\"truth\"][0])).max() < 1e-4 * max(1, np.abs(arr(c[\"truth\"][0])).max()) for c in C)"'
check "linear: baselines eager and torch.compile timed per distribution; release answered, exit 0" \
    'py "P[\"baselines\"][\"eager_ms\"] > 0 and P[\"baselines\"][\"compile_ms\"] > 0 and P[\"baselines\"][\"compile_mode\"] == \"default\" and P[\"baselines\"][\"trials\"] >= 5 and set(P[\"baselines\"][\"median_ms_by_dist\"][\"eager\"]) <= {\"module\", \"normal\", \"large\"} and P[\"baselines\"][\"eager_ms\"] == max(P[\"baselines\"][\"median_ms_by_dist\"][\"eager\"].values()) and R[2] == {\"ok\": True} and rc == 0"'
ref "$(req "$M/suite/4_linear.py")" "$(req "$M/suite/4_linear.py")"
check "the same seeds draw the same cases (a second prepare, same bytes); normal and large differ" \
    'py "[arr(c[\"inputs\"][0]).tobytes() for c in C] == [arr(c[\"inputs\"][0]).tobytes() for c in R[2][\"prepare\"][\"cases\"]] and arr(C[1][\"inputs\"][0]).tobytes() != (arr(C[2][\"inputs\"][0]) / 64).tobytes()"'
FAKE_TORCH_COMPILE_FAIL=1 ref "$(req "$M/suite/4_linear.py" '' strict true)"
check "torch.compile failing is compile_error, not a failure of prepare (end of input: exit 0)" \
    'py "R[1][\"ok\"] and \"fake torch has no Triton\" in P[\"baselines\"][\"compile_error\"] and \"compile_ms\" not in P[\"baselines\"] and P[\"baselines\"][\"eager_ms\"] > 0 and rc == 0"'
ref "$(req "$M/suite/4_linear.py")"
check "no baselines unless asked" 'py "R[1][\"ok\"] and \"baselines\" not in P"'

# ---- 3. distributions named by the module, TF32, the float64 fallback, inputs written in place ----
ref "$(req "$P/positive_log.py")"
check "CUTEGEN positive: x keeps its own draw in normal and large, y does not" \
    'py "all(arr(c[\"inputs\"][0]).min() >= 0.5 for c in C) and arr(C[2][\"inputs\"][1]).std() > 30 and np.isfinite(arr(C[2][\"truth\"][0])).all()"'
ref "$(req "$P/int_input.py")"
check "an integer input keeps get_inputs()'s draw (re-seeded) in every distribution" \
    'py "all(c[\"inputs\"][1][\"dtype\"] == \"i64\" and arr(c[\"inputs\"][1]).min() >= 0 and arr(c[\"inputs\"][1]).max() < 10 for c in C) and arr(C[2][\"inputs\"][0]).std() > 30 and np.array_equal(arr(C[2][\"truth\"][0]), arr(C[2][\"inputs\"][0]).astype(np.float64) * arr(C[2][\"inputs\"][1]))"'
ref "$(req "$P/tf32_probe.py" '' strict)"
check "precision strict: the reference runs with TF32 off for matmul and cuDNN" \
    'py "all(np.array_equal(arr(c[\"ref\"][0]), arr(c[\"inputs\"][0])) for c in C)"'
ref "$(req "$P/tf32_probe.py" '' tf32)"
check "precision tf32: the reference runs with TF32 on for both, the truth with it off" \
    'py "all(np.array_equal(arr(c[\"ref\"][0]), 2 * arr(c[\"inputs\"][0])) and np.array_equal(arr(c[\"truth\"][0]), arr(c[\"inputs\"][0]).astype(np.float64)) for c in C)"'
ref "$(req "$P/no_fp64.py")"
check "a module that cannot run in float64: truth fp32, truth_why says why" \
    'py "P[\"truth\"] == \"fp32\" and \"no float64 kernel\" in P[\"truth_why\"] and C[0][\"truth\"][0][\"dtype\"] == \"fp32\" and np.array_equal(arr(C[0][\"truth\"][0]), 3 * arr(C[0][\"inputs\"][0]))"'
ref "$(req "$P/inplace.py")"
check "forward writing into its input: the exported input is get_inputs()'s draw, noted" \
    'py "np.array_equal(arr(C[0][\"ref\"][0]), 2 * arr(C[0][\"inputs\"][0])) and any(\"in place\" in n for n in P[\"notes\"])"'
check "... and the truth is forward of that draw too, in every case (not of the input it wrote)" \
    'py "all(np.array_equal(arr(c[\"truth\"][0]), 2 * arr(c[\"inputs\"][0]).astype(np.float64)) for c in C)"'
ref "$(req "$M/bad/random_forward.py")"
check "forward drawing random numbers: prepare refuses it, kind forward, says why" \
    'py "R[1][\"kind\"] == \"forward\" and \"forward is not deterministic\" in R[1][\"message\"]"'

# ---- 4. memory: the cases kept fit memory_fraction of free memory, at least 2 ----
# a linear case is 8192 + 6144 + 12288 bytes (x, the fp32 reference, the fp64 truth): 0.35 of
# 0.18 MiB holds 2 of them, not 3
FAKE_TORCH_CUDA=0.18 ref "$(req "$M/suite/4_linear.py")"
check "memory for 2 of 3 cases: keeps one per distribution first (module, normal), says so" \
    'py "[c[\"dist\"] for c in C] == [\"module\", \"normal\"] and any(\"kept 2 of 3\" in n for n in P[\"notes\"])"'
FAKE_TORCH_CUDA=0.05 ref "$(req "$M/suite/4_linear.py")"
check "memory for fewer than 2 cases: kind memory, says how much was needed, the budget and what it was taken from" \
    'py "R[1][\"kind\"] == \"memory\" and \"MiB needed\" in R[1][\"message\"] and \"memory_fraction 0.35 of the 0 MiB that was free once the module was built: 0 MiB\" in R[1][\"message\"] and \"use a GPU with more memory\" in R[1][\"message\"]"'

# ---- 5. CUDA IPC: torch's handle forms, and where it is unsupported ----
FAKE_TORCH_IPC=raw ref "$(req "$M/suite/4_linear.py")"
check "a bare 64-byte handle (older torch) is exported as it is" 'py "R[1][\"ok\"] and arr(C[0][\"inputs\"][0]).size == 2048"'
FAKE_TORCH_IPC=fail ref "$(req "$M/suite/4_linear.py")"
check "CUDA IPC unsupported: kind ipc, says what to do" \
    'py "R[1][\"kind\"] == \"ipc\" and \"CUDA IPC is not available here\" in R[1][\"message\"]"'
FAKE_TORCH_IPC=expandable ref "$(req "$M/suite/4_linear.py")"
check "an expandable segment: kind ipc, says to unset expandable_segments" \
    'py "R[1][\"kind\"] == \"ipc\" and \"expandable_segments\" in R[1][\"message\"]"'

# ---- 6. bad requests ----
ref "$(req "$M/suite/4_linear.py" '[{"seed":1,"dist":"module"},{"seed":2,"dist":"uniform"}]')"
check "an unknown distribution: kind request" 'py "R[1][\"kind\"] == \"request\" and \"module, normal, large\" in R[1][\"message\"]"'
ref "$(req "$M/suite/4_linear.py" '[{"seed":1,"dist":"module"}]')"
check "fewer than 2 cases asked: kind request" 'py "R[1][\"kind\"] == \"request\" and \"a list of 2 to 64\" in R[1][\"message\"]"'
ref '{"op":"prepare","file":"'"$M"'/suite/4_linear.py","cases":[{"seed":1,"dist":"module"},{"seed":2,"dist":"normal"}],"memory_fraction":3}'
check "memory_fraction out of (0, 1]: kind request" 'py "R[1][\"kind\"] == \"request\" and \"memory_fraction\" in R[1][\"message\"]"'
ref "$(req "$M/bad/no_model.py")"
check "a module without Model: the describe kinds hold for prepare" 'py "R[1][\"kind\"] == \"no_model\""'

# ---- 7. the describe fixtures of the prompt's unit tests are what the reference process says ----
for m in 4_linear 5_row_sum; do
    printf '{"op":"describe","file":"%s","seed":42}\n' "$M/suite/$m.py" | env -u FAKE_TORCH_CUDA python3 "$REPO/tools/reference.py" >"$T/out" 2>&1
    check "tests/data/modules/prompt/$m.describe.json is the reference process's describe of $m.py" \
        'python3 -c "import json,sys; d=json.loads(open(sys.argv[1]).read().splitlines()[-1])[\"describe\"]; d[\"file\"]=\"tests/data/modules/suite/$m.py\"; sys.exit(0 if d == json.load(open(sys.argv[2])) else 1)" "$T/out" "$M/prompt/$m.describe.json"'
done

[ $fails -eq 0 ] && echo "# module_prepare: all passed"
[ $fails -eq 0 ]
