#!/usr/bin/env bash
# Issue 20: tools/torch_eager.py (what `cutegen eval --torch` runs) times torch.compile of the
# same op beside eager, same protocol, same process: mode "default", "max-autotune" for a GEMM
# with a bias or an activation; a failing torch.compile is reported, the eager figure kept.
# PyTorch is stood in for by tests/data/fake_torch (a fake clock: eager op 1 ms, compiled
# 0.5 ms, max-autotune 0.25 ms), so this runs on any CPU.
set -u
: "${REPO:?}"
T=$(mktemp -d)
[ -n "${KEEP_TMP:-}" ] || trap 'rm -rf "$T"' EXIT
fails=0
ok() { echo "ok - $1"; }
bad() { echo "not ok - $1"; fails=$((fails + 1)); }
check() { if eval "$2"; then ok "$1"; else bad "$1"; return 1; fi; }
jq_() { python3 -c "import json,sys; d=json.load(open('$1')); print($2)"; }
run() { PYTHONDONTWRITEBYTECODE=1 PYTHONPATH="$REPO/tests/data/fake_torch" python3 "$REPO/tools/torch_eager.py" "$@"; }
G="$REPO/tests/gpu/tasks"

run "$G/bf16_odd_k.json" "$T/plain.json"
check "a plain GEMM: eager and torch.compile (default) both timed" \
    '[ "$(jq_ "$T/plain.json" "d[\"ms\"], d[\"compile_ms\"], d[\"compile_mode\"], d[\"compile_trials\"] >= 5")" = "2.0 1.0 default True" ]' || cat "$T/plain.json"
run "$G/fp16_odd_n.json" "$T/epi.json"
check "a GEMM with bias + GELU: torch.compile in max-autotune" \
    '[ "$(jq_ "$T/epi.json" "d[\"ms\"], d[\"compile_ms\"], d[\"compile_mode\"]")" = "3.0 0.75 max-autotune" ]' || cat "$T/epi.json"
run "$G/softmax_odd.json" "$T/sm.json"
check "a softmax: torch.compile default" \
    '[ "$(jq_ "$T/sm.json" "d[\"compile_mode\"], d[\"compile_ms\"] < d[\"ms\"]")" = "default True" ]' || cat "$T/sm.json"
FAKE_TORCH_COMPILE_FAIL=1 run "$G/bf16_odd_k.json" "$T/fail.json"
rc=$?
check "torch.compile failing: reported, not fatal, eager kept (rc $rc)" \
    '[ $rc -eq 0 ] && [ "$(jq_ "$T/fail.json" "d[\"ms\"], \"compile_ms\" in d, d[\"compile_error\"]")" = "2.0 False RuntimeError: BackendCompilerFailed: fake torch has no Triton" ]' || cat "$T/fail.json"
run "$G/bf16_odd_k.json" "$T/nc.json" --no-compile
check "--no-compile: eager only" '[ "$(jq_ "$T/nc.json" "\"compile_mode\" in d, d[\"ms\"]")" = "False 2.0" ]'
# issue 16: timed under the runner's protocol: the task's distributions, a median for each, the
# largest reported, input sets rotated
python3 - "$G/bf16_odd_k.json" "$T/dists_task.json" <<'PY'
import json, sys
t = json.load(open(sys.argv[1]))
t["distributions"] = ["normal", "sparse"]
json.dump(t, open(sys.argv[2], "w"))
PY
run "$T/dists_task.json" "$T/dists.json" --no-compile
check "the runner's protocol: a median per drawn distribution of the task's, the largest reported, 3 input sets" \
    '[ "$(jq_ "$T/dists.json" "d[\"protocol\"], \",\".join(sorted(d[\"median_ms_by_dist\"])), d[\"ms\"] == max(d[\"median_ms_by_dist\"].values()), d[\"input_sets\"], d[\"trials\"] >= 10")" = "regenerated-v1 normal,sparse True 3 True" ]' || cat "$T/dists.json"
# the GPU kept busy while the host issues the timed call: every timed call (and the estimate) is
# flush, spin, start event, call, end event, synchronize (a torch that records what it is asked)
cat >"$T/order.py" <<'PY'
import sys
sys.path.insert(0, sys.argv[1])
import torch_timing as tt
log = []
class Ev:
    def __init__(self, enable_timing=False): pass
    def record(self): log.append("record")
    def elapsed_time(self, end): return 1.0
class Cuda:
    Event = Ev
    @staticmethod
    def synchronize(): log.append("sync")
    @staticmethod
    def _sleep(cycles): log.append("spin" if cycles >= 1000000 else "short spin")
class Torch:
    cuda = Cuda
class Flush:
    def zero_(self): log.append("flush")
tt.cuda_timing(Torch, lambda *a: log.append("call"), Flush(), lambda i: ("k", ()), (),
               min_trials=4, max_trials=4)
timed = log[log.index("flush"):]
want = ["flush", "spin", "record", "call", "record", "sync"] * 5
print(" ".join(timed))
sys.exit(0 if timed == want else 1)
PY
check "each timed call: flush, the GPU spinning while the host issues it, events around the call alone" \
    'python3 "$T/order.py" "$REPO/tools" >"$T/order.out"' || cat "$T/order.out"
[ $fails -eq 0 ]
