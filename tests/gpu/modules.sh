#!/usr/bin/env bash
# Module tasks on a GPU machine with real PyTorch (never in CI; the lead runs it on the H200):
#   1. kb1 tasks written as KernelBench modules lower to exactly their JSON twins in tasks/kb1.json
#      (the real reference process, real torch, on CUDA, at KernelBench's shapes);
#   2. `cutegen eval` of kernels/relu_fp32.cu and kernels/softmax_fp32.cu gives the same verdict
#      on the module as on the JSON task, and times within 15%;
#   3. real torch's flop counter and profiler: a Linear module reports 2*M*N*K FLOPs and
#      gemm-like; a Conv2d module is classed convolution; neither lowers.
# usage: BUILD=build bash tests/gpu/modules.sh     (PYTHON=... names a python with torch)
set -u
cd "$(dirname "$0")/../.."
CG="$PWD/${BUILD:-build}/cutegen"
PY=${PYTHON:-python3}
T=$(mktemp -d)
[ -n "${KEEP_TMP:-}" ] || trap 'rm -rf "$T"' EXIT
fails=0
ok() { echo "ok - $1"; }
bad() { echo "not ok - $1"; fails=$((fails + 1)); }
if ! "$PY" -c "import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)"; then
    echo "not ok - $PY has no torch with CUDA: install it (pip install torch) or set PYTHON"; exit 1
fi
export CUTEGEN_PYTHON=$PY CUTEGEN_REFERENCE_TIMEOUT=900
mod() { # file body get_inputs
    cat >"$T/$1.py" <<PYEOF
import torch
import torch.nn as nn
import torch.nn.functional as F
class Model(nn.Module):
    def __init__(self, *a):
        super().__init__()
        $4
    def forward(self, $2
def get_inputs():
    return [$3]
def get_init_inputs():
    return []
PYEOF
}
mod 1_square_matmul "A, B): return torch.matmul(A, B)" "torch.rand(4096, 4096), torch.rand(4096, 4096)" "pass"
mod 4_matvec "A, B): return torch.matmul(A, B)" "torch.rand(2048, 1048576), torch.rand(1048576, 1)" "pass"
mod 11_4d_tensor_matmul "A, B): return torch.einsum('bijl,lk->bijk', A, B)" "torch.rand(8, 256, 512, 256), torch.rand(256, 768)" "pass"
mod 12_diag_matmul "A, B): return torch.diag(A) @ B" "torch.rand(4096), torch.rand(4096, 4096)" "pass"
mod 14_upper_triangular_matmul "A, B): return torch.triu(torch.matmul(A, B))" "torch.triu(torch.rand(4096, 4096)), torch.triu(torch.rand(4096, 4096))" "pass"
mod 17_matmul_transposed_b "A, B): return torch.matmul(A, B.T)" "torch.rand(2048, 8192), torch.rand(4096, 8192)" "pass"
mod 19_relu "x): return torch.relu(x)" "torch.rand(4096, 393216)" "pass"
mod 23_softmax "x): return torch.softmax(x, dim=1)" "torch.rand(4096, 393216)" "pass"
mod 26_gelu "x): return F.gelu(x)" "torch.rand(4096, 393216)" "pass"
mod 88_mingpt_gelu "x): return 0.5 * x * (1.0 + torch.tanh(0.7978845608028654 * (x + 0.044715 * torch.pow(x, 3.0))))" "torch.rand(8192, 8192)" "pass"
for f in "$T"/[0-9]*.py; do
    n=$(basename "$f" .py)
    "$CG" task show --json "$f" >"$T/$n.json" 2>"$T/$n.err"
    if "$PY" - "$T/$n.json" "$n" <<'PYEOF'
import json, sys
d = json.load(open(sys.argv[1]))
kb = {t["name"]: t for t in json.load(open("tasks/kb1.json"))["tasks"]}
want = kb["kb1/" + sys.argv[2]]
got = d["lowered"]
if not got:
    sys.exit("not lowered: %s" % d["lowered_why"])
keys = ["op", "dtype", "precision", "m", "n", "k", "batch", "m_dims", "shape", "a_layout", "b_layout",
        "a_structure", "b_structure", "mask", "activation", "params", "scalar"]
dflt = {"batch": 1, "a_layout": "row", "b_layout": "row", "a_structure": "general",
        "b_structure": "general", "mask": "none"}
bad = [(k, got.get(k, dflt.get(k)), want.get(k, dflt.get(k))) for k in keys
       if got.get(k, dflt.get(k)) != want.get(k, dflt.get(k)) and not (k == "m" and "m_dims" in want)]
sys.exit("differs: %s" % bad if bad else 0)
PYEOF
    then ok "$n lowers to its kb1 twin (workload $(python3 -c "import json;print(json.load(open('$T/$n.json'))['workload'])"))"
    else bad "$n lowers to its kb1 twin ($(tail -c 300 "$T/$n.err"))"; fi
done

for pair in "relu_fp32:19_relu" "softmax_fp32:23_softmax"; do
    k=${pair%%:*} n=${pair#*:}
    "$CG" eval "kernels/$k.cu" --task "$T/$n.py" --json >"$T/e_mod.json" 2>"$T/e_mod.err"
    "$CG" eval "kernels/$k.cu" --task "kb1/$n" --json >"$T/e_json.json" 2>"$T/e_json.err"
    if "$PY" - "$T/e_mod.json" "$T/e_json.json" <<'PYEOF'
import json, sys
a, b = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
ms = lambda d: ((d.get("report") or {}).get("metrics") or {}).get("ms") or 0
print("# module: %s %.4f ms; json: %s %.4f ms" % (a.get("verdict"), ms(a), b.get("verdict"), ms(b)))
same = a.get("verdict") == b.get("verdict") == "pass"
close = ms(a) > 0 and ms(b) > 0 and abs(ms(a) - ms(b)) <= 0.15 * ms(b)
sys.exit(0 if same and close and a.get("module") else 1)
PYEOF
    then ok "eval $k: the module and kb1/$n agree (pass, times within 15%)"
    else bad "eval $k: the module and kb1/$n agree"; fi
done

cat >"$T/linear.py" <<'PYEOF'
import torch
import torch.nn as nn
class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4096, 4096)
    def forward(self, x):
        return self.fc(x)
def get_inputs():
    return [torch.rand(8192, 4096)]
def get_init_inputs():
    return []
PYEOF
cat >"$T/conv.py" <<'PYEOF'
import torch
import torch.nn as nn
class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(64, 128, 3, padding=1)
    def forward(self, x):
        return self.conv(x)
def get_inputs():
    return [torch.rand(16, 64, 128, 128)]
def get_init_inputs():
    return []
PYEOF
"$CG" task show --json "$T/linear.py" >"$T/lin.json" 2>&1
"$PY" -c "import json,sys; d=json.load(open('$T/lin.json')); sys.exit(0 if d['flops']==2*8192*4096*4096 and d['workload']=='gemm-like' and not d['lowered'] and [t['name'] for t in d['tensors']]==['x','fc.weight','fc.bias','out'] else 1)" \
    && ok "Linear: flop counter 2*M*N*K, gemm-like, arguments x, fc.weight, fc.bias, out" || bad "Linear: flops/workload/arguments ($(head -c 400 "$T/lin.json"))"
"$CG" task show --json "$T/conv.py" >"$T/conv.json" 2>&1
"$PY" -c "import json,sys; d=json.load(open('$T/conv.json')); sys.exit(0 if d['workload']=='convolution' and d['flops'] and not d['lowered'] else 1)" \
    && ok "Conv2d: classed convolution from eager's kernels" || bad "Conv2d: workload ($(head -c 400 "$T/conv.json"))"
"$CG" eval kernels/relu_fp32.cu --task "$T/linear.py" >"$T/out" 2>&1; rc=$?
# judged through the reference process now (tests/gpu/modules_eval.sh has the passing kernels):
# relu's kernel on Linear's arguments is refused by a verdict about the kernel, not the judge
[ $rc -eq 1 ] && grep -q "^verdict   FAIL: " "$T/out" && ! grep -q "FAIL: \(runner_error\|task_error\|untrusted_report\)" "$T/out" \
    && ok "eval of relu's kernel on Linear: judged, a verdict against the kernel ($(grep -o "FAIL: [a-z_]*" "$T/out"))" || bad "eval on Linear (rc $rc): $(head -c 600 "$T/out")"
echo "$fails failed"
[ $fails -eq 0 ]
